// Retrieval settings: presets plus individual options, kept in localStorage.
import { el } from "./util.js";

const KEY = "docent.settings.v1";

export const PRESETS = {
  fast: { label: "Fast", retrieval_mode: "hybrid", retrieval_k: 10, reranker_top_k: 5, ai_rerank: false,
    context_expand: false, context_window_size: 1, query_decompose: false, verify: false },
  balanced: { label: "Balanced", retrieval_mode: "hybrid", retrieval_k: 20, reranker_top_k: 8, ai_rerank: false,
    context_expand: true, context_window_size: 1, query_decompose: true, verify: false },
  high_recall: { label: "High recall", retrieval_mode: "hybrid", retrieval_k: 50, reranker_top_k: 12, ai_rerank: true,
    context_expand: true, context_window_size: 2, query_decompose: true, verify: true },
};

const OPTION_KEYS = ["retrieval_mode", "retrieval_k", "reranker_top_k", "ai_rerank", "context_expand",
  "context_window_size", "query_decompose", "verify"];

const DEFAULTS = { preset: "balanced", ...PRESETS.balanced, backend: "", theme: "system", indexes: [] };
delete DEFAULTS.label;

export const settings = load();

function load() {
  try {
    return { ...DEFAULTS, ...JSON.parse(localStorage.getItem(KEY) || "{}") };
  } catch {
    return { ...DEFAULTS };
  }
}

export function save() {
  localStorage.setItem(KEY, JSON.stringify(settings));
  applyTheme();
}

export function applyTheme() {
  const root = document.documentElement;
  if (settings.theme === "light" || settings.theme === "dark") root.dataset.theme = settings.theme;
  else delete root.dataset.theme;
}

// The chat request options (snake_case, as the RAG API reads them).
export function chatOptions() {
  const out = {};
  for (const k of OPTION_KEYS) out[k] = settings[k];
  if (settings.backend) out.backend = settings.backend;
  return out;
}

function matchingPreset() {
  for (const [name, p] of Object.entries(PRESETS)) if (OPTION_KEYS.every((k) => p[k] === settings[k])) return name;
  return "custom";
}

export function renderSettings(root, backends) {
  root.textContent = "";
  const form = el("form", { class: "settings card", id: "settings-form", "aria-label": "Retrieval settings" });
  form.addEventListener("submit", (e) => e.preventDefault());
  const presetGroup = el("fieldset", { class: "presets" }, el("legend", { text: "Preset" }));
  for (const [name, p] of Object.entries(PRESETS)) {
    presetGroup.append(el("label", { class: "chip-radio" },
      el("input", { type: "radio", name: "preset", value: name, checked: settings.preset === name }), el("span", { text: p.label })));
  }
  presetGroup.append(el("label", { class: "chip-radio" },
    el("input", { type: "radio", name: "preset", value: "custom", checked: settings.preset === "custom" }), el("span", { text: "Custom" })));

  const num = (key, label, min, max, help) => el("label", { class: "field" }, el("span", { text: label }),
    el("input", { type: "number", name: key, min, max, value: settings[key], inputmode: "numeric" }), el("small", { text: help }));
  const bool = (key, label, help) => el("label", { class: "field check" },
    el("input", { type: "checkbox", name: key, checked: !!settings[key] }), el("span", { text: label }), el("small", { text: help }));
  const select = (key, label, options, help) => el("label", { class: "field" }, el("span", { text: label }),
    el("select", { name: key }, options.map(([v, t]) => el("option", { value: v, selected: settings[key] === v, text: t }))),
    el("small", { text: help }));

  form.append(presetGroup,
    el("fieldset", {}, el("legend", { text: "Retrieval" }),
      select("retrieval_mode", "Search mode", [["hybrid", "Hybrid (keywords + meaning)"], ["vector_only", "Meaning only"], ["fts_only", "Keywords only"]], "How candidates are found"),
      num("retrieval_k", "Candidates", 1, 1000, "First-stage results"),
      num("reranker_top_k", "Evidence blocks", 1, 100, "Passages kept for the answer"),
      bool("ai_rerank", "Rerank", "Re-score candidates with the reranker"),
      bool("context_expand", "Expand context", "Add neighbouring passages"),
      num("context_window_size", "Neighbours", 0, 10, "On each side, when expanding"),
      bool("query_decompose", "Split compound questions", "Answer each part separately"),
      bool("verify", "Verify", "Compute a groundedness confidence")),
    el("fieldset", {}, el("legend", { text: "Answering and display" }),
      select("backend", "Model backend", [["", "Server default"], ...backends.map((b) => [b.name, `${b.name}${b.available ? "" : " (unavailable)"}`])], "Which backend writes answers"),
      select("theme", "Theme", [["system", "System"], ["light", "Light"], ["dark", "Dark"]], "Colour scheme")),
    el("p", { class: "muted", id: "settings-saved", role: "status", "aria-live": "polite", text: "Saved in this browser." }));

  form.addEventListener("change", (e) => {
    const t = e.target;
    if (t.name === "preset") {
      settings.preset = t.value;
      if (PRESETS[t.value]) for (const k of OPTION_KEYS) settings[k] = PRESETS[t.value][k];
      save();
      return renderSettings(root, backends);
    }
    if (t.type === "checkbox") settings[t.name] = t.checked;
    else if (t.type === "number") {
      const v = Math.round(Number(t.value));
      if (!Number.isFinite(v) || v < Number(t.min) || v > Number(t.max)) { t.setCustomValidity(`Between ${t.min} and ${t.max}`); t.reportValidity(); return; }
      t.setCustomValidity("");
      settings[t.name] = v;
    } else settings[t.name] = t.value;
    if (OPTION_KEYS.includes(t.name)) {
      settings.preset = matchingPreset();
      for (const r of form.querySelectorAll("input[name=preset]")) r.checked = r.value === settings.preset;
    }
    save();
    form.querySelector("#settings-saved").textContent = "Saved in this browser.";
  });
  root.append(form);
}
