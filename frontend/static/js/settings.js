// Retrieval settings: presets plus individual options, kept in localStorage.
import { el } from "./util.js";

const KEY = "docent.settings.v1";

export const PRESETS = {
  fast: { label: "Fast", retrieval_mode: "hybrid", retrieval_k: 10, reranker_top_k: 5, ai_rerank: false,
    context_expand: false, context_window_size: 1, query_decompose: false, verify: false },
  // Re-ranks, as the RAG API does by default (RERANK=true, chosen by measurement, Documentation/evaluation.md):
  // without it the NDA's "Nothing in this NDA grants any rights to intellectual property" fell out of the
  // passages for "Does signing the NDA give TechCorp a licence to StartupXYZ's patents?".
  balanced: { label: "Balanced", retrieval_mode: "hybrid", retrieval_k: 20, reranker_top_k: 8, ai_rerank: true,
    context_expand: true, context_window_size: 1, query_decompose: true, verify: false },
  high_recall: { label: "High recall", retrieval_mode: "hybrid", retrieval_k: 50, reranker_top_k: 12, ai_rerank: true,
    context_expand: true, context_window_size: 2, query_decompose: true, verify: true },
};

const OPTION_KEYS = ["retrieval_mode", "retrieval_k", "reranker_top_k", "ai_rerank", "context_expand",
  "context_window_size", "query_decompose", "verify"];

const DEFAULTS = { preset: "balanced", ...PRESETS.balanced, backend: "", theme: "system", indexes: [] };
delete DEFAULTS.label;

export const settings = load();
// What the server can do (from /models); an option it cannot honour is shown disabled and never sent on.
const server = { reranker: true };

export function setCapabilities(models) {
  server.reranker = !!models.reranker;
}

function load() {
  let stored = {};
  try {
    stored = JSON.parse(localStorage.getItem(KEY) || "{}") || {};
  } catch {
    stored = {};
  }
  const loaded = { ...DEFAULTS, ...stored };
  // A named preset means what it means today: its options follow a new release's preset, so a browser
  // that saved "Balanced" before it re-ranked re-ranks now. Only "custom" keeps the options as saved.
  if (Object.hasOwn(PRESETS, loaded.preset)) {
    for (const k of OPTION_KEYS) loaded[k] = PRESETS[loaded.preset][k];
  }
  return loaded;
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
  if (!server.reranker) out.ai_rerank = false;
  if (settings.backend) out.backend = settings.backend;
  return out;
}

function matchingPreset() {
  for (const [name, p] of Object.entries(PRESETS)) if (OPTION_KEYS.every((k) => p[k] === settings[k])) return name;
  return "custom";
}

function backendLabel(b) {
  const model = b.model ? `: ${b.model}` : "";
  return `${b.name}${model}${b.available ? "" : " (unavailable)"}`;
}

export function renderSettings(root, models) {
  const backends = models.backends || [];
  const fallback = backends.find((b) => b.name === models.default);
  const serverDefault = fallback ? `Server default (${backendLabel(fallback)})` : "Server default";
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
  const bool = (key, label, help, disabled = false) => el("label", { class: `field check${disabled ? " disabled" : ""}` },
    el("input", { type: "checkbox", name: key, checked: !!settings[key] && !disabled, disabled }), el("span", { text: label }),
    el("small", { text: help }));
  const select = (key, label, options, help) => el("label", { class: "field" }, el("span", { text: label }),
    el("select", { name: key }, options.map(([v, t]) => el("option", { value: v, selected: settings[key] === v, text: t }))),
    el("small", { text: help }));

  form.append(presetGroup,
    el("fieldset", {}, el("legend", { text: "Retrieval" }),
      select("retrieval_mode", "Search by", [["hybrid", "Words and meaning"], ["vector_only", "Meaning only"], ["fts_only", "Exact words only"]],
        "Words finds names and numbers; meaning finds the same idea said differently"),
      num("retrieval_k", "Passages to look at", 1, 1000, "How many passages the first search brings back"),
      num("reranker_top_k", "Passages the answer may use", 1, 100, "The best of those, read and cited by the answer"),
      bool("ai_rerank", "Re-rank with the reranker model", server.reranker ? "A second model sorts the passages again: slower, often better"
        : "Not available: this server has no reranker model (RERANKER_MODEL is not set)", !server.reranker),
      bool("context_expand", "Add surrounding text", "Give the answer the passages just before and after each one it uses"),
      num("context_window_size", "Surrounding passages", 0, 10, "How many on each side, when adding surrounding text"),
      bool("query_decompose", "Split questions with several parts", "Search for each part of a question on its own"),
      bool("verify", "Rate how well the answer is supported", "Shows beside the answer how well its cited passages support it (well, partly, weakly); costs a little time")),
    el("fieldset", {}, el("legend", { text: "Answering and display" }),
      select("backend", "Model that writes answers", [["", serverDefault], ...backends.map((b) => [b.name, backendLabel(b)])],
        "Extractive quotes the documents without a model"),
      select("theme", "Theme", [["system", "System"], ["light", "Light"], ["dark", "Dark"]], "Colour scheme")),
    el("p", { class: "muted", id: "settings-saved", role: "status", "aria-live": "polite", text: "Saved in this browser." }));

  form.addEventListener("change", (e) => {
    const t = e.target;
    if (t.name === "preset") {
      settings.preset = t.value;
      if (PRESETS[t.value]) for (const k of OPTION_KEYS) settings[k] = PRESETS[t.value][k];
      save();
      return renderSettings(root, models);
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
