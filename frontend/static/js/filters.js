// Filters for the next questions: which documents and which file types of the ticked indexes to search
// (the RAG API's `filters`: `document_id` by content id, `file_type` by extension; Documentation/api.md).
// A panel under "Filters" beside Send; its button says how many are on. Nothing ticked: everything is searched.
import { el } from "./util.js";

const chosen = { docs: new Set(), types: new Set() };
let source = () => [];

const extension = (name) => (name.includes(".") ? name.split(".").pop().toLowerCase() : "");

// The documents the ticked indexes hold (their current uploads: not a replaced one, not a failed one).
function available() {
  const docs = source().flatMap((ix) => (ix.documents || []).filter((d) => !d.replaced && d.status !== "failed")
    .map((d) => ({ id: d.sha256, name: d.filename, index: ix.name })));
  const unique = [...new Map(docs.map((d) => [d.id, d])).values()].sort((a, b) => a.name.localeCompare(b.name));
  return { docs: unique, types: [...new Set(unique.map((d) => extension(d.name)).filter(Boolean))].sort() };
}

// `indexes()`: the ticked indexes (with their documents), read each time the panel opens.
export function filterControl(indexes) {
  source = indexes;
  const summary = el("summary", { class: "btn", id: "filters-toggle", title: "Search only some documents or file types" });
  const panel = el("div", { class: "filters-panel", role: "group", "aria-label": "Filters for the next questions" });
  const box = el("details", { class: "filters", id: "filters" }, summary, panel);
  const label = () => {
    const n = chosen.docs.size + chosen.types.size;
    summary.textContent = n ? `Filters · ${n}` : "Filters";
    box.dataset.active = String(n > 0);
  };
  const draw = () => {
    const { docs, types } = available();
    for (const id of [...chosen.docs]) if (!docs.some((d) => d.id === id)) chosen.docs.delete(id);
    for (const t of [...chosen.types]) if (!types.includes(t)) chosen.types.delete(t);
    const check = (set, value, text, title) => {
      const input = el("input", { type: "checkbox", value, checked: set.has(value) });
      input.addEventListener("change", () => { if (input.checked) set.add(value); else set.delete(value); label(); });
      return el("label", { class: "filter-option", title }, input, el("span", { text }));
    };
    panel.replaceChildren(
      el("p", { class: "small muted", text: docs.length ? "Search only what is ticked (nothing ticked: everything)." : "Tick an index with documents first." }),
      docs.length ? el("fieldset", { class: "filter-docs" }, el("legend", { text: "Documents" }),
        ...docs.map((d) => check(chosen.docs, d.id, d.name, `in ${d.index}`))) : "",
      types.length > 1 ? el("fieldset", { class: "filter-types" }, el("legend", { text: "File types" }),
        ...types.map((t) => check(chosen.types, t, t.toUpperCase(), `.${t} files`))) : "",
      el("div", { class: "row end" },
        el("button", { type: "button", class: "btn small", text: "Clear", onclick: () => { chosen.docs.clear(); chosen.types.clear(); label(); draw(); } }),
        el("button", { type: "button", class: "btn small primary", text: "Done", onclick: () => { box.open = false; } })));
    label();
  };
  box.addEventListener("toggle", () => { if (box.open) draw(); });
  box.addEventListener("keydown", (e) => { if (e.key === "Escape" && box.open) { e.stopPropagation(); box.open = false; summary.focus(); } });
  label();
  return box;
}

// Extra body fields for /chat/stream: the filters that are on, for documents still in the ticked indexes.
export function filterOptions() {
  const { docs, types } = available();
  const ids = docs.map((d) => d.id).filter((id) => chosen.docs.has(id));
  const kinds = types.filter((t) => chosen.types.has(t));
  const filters = {};
  if (ids.length) filters.document_id = ids;
  if (kinds.length) filters.file_type = kinds;
  return Object.keys(filters).length ? { filters } : {};
}
