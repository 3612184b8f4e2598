// The evidence inspector: a collapsible panel below an answer that shows why it says what it says
// (or beside it, in the side panel, when the reader asks).
// Questions: the queries that ran, each retrieval leg's ranked candidates with scores, the fused list,
// what the reranker kept and why, the packed evidence blocks, and the citation validator's findings.
// Tasks (summary/compare): how each document name was resolved, and each part's source and validation.
// Also the task picker of the composer (qa / summary / compare / auto).
import { sourceLabel } from "./labels.js";
import { displayName } from "./markdown.js";
import { el } from "./util.js";

const TASKS = [["qa", "Question"], ["summary", "Summary"], ["compare", "Compare"], ["auto", "Auto"]];
const LEG_NAMES = { fts: "Full text", fts_exact: "Exact words", vector: "Vector", vector_focus: "Vector (question sentence)" };
let task = "qa";

export function taskPicker() {
  const select = el("select", { id: "task-picker", class: "task-picker", "aria-label": "Task",
    title: "Question: answer from passages. Summary: one document. Compare: 2-4 documents, named in your message." },
  TASKS.map(([value, label]) => el("option", { value, text: label, selected: value === task })));
  select.addEventListener("change", () => { task = select.value; });
  return select;
}

// Extra body fields for /chat/stream; nothing for a plain question.
export function taskOptions() {
  return task === "qa" ? {} : { task };
}

export function attachInspector(wrap, result) {
  wrap.querySelector(":scope > details.inspector")?.remove();
  const data = result && result.inspector;
  if (!data) return;
  const body = el("div", { class: "inspector-body" });
  if (data.kind === "qa") renderQa(body, data); else renderTask(body, data);
  const beside = el("button", { type: "button", class: "btn small insp-beside", text: "Show beside the answer",
    title: "Open the inspector in a side panel, so the answer and its evidence can be read together" });
  beside.addEventListener("click", () => openSidePanel("Inspector", body, beside));
  const panel = el("details", { class: "inspector", dataset: { kind: data.kind } },
    el("summary", { text: "Inspector", title: "Why this answer: searches, candidates, reranking and citation checks" }),
    el("div", { class: "insp-tools" }, beside), body);
  wrap.append(panel);
}

// The side panel holds a copy of one inspector at a time; closing it gives the focus back to its opener.
let opener = null;

export function initSidePanel() {
  document.getElementById("side-close").addEventListener("click", closeSidePanel);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !document.getElementById("side-panel").hidden && !document.querySelector("dialog[open]")) closeSidePanel();
  });
}

function openSidePanel(title, content, from) {
  const panel = document.getElementById("side-panel");
  document.getElementById("side-title").textContent = title;
  document.getElementById("side-body").replaceChildren(content.cloneNode(true));
  panel.hidden = false;
  document.body.classList.add("side-open");
  opener = from;
  document.getElementById("side-close").focus();
}

export function closeSidePanel() {
  const panel = document.getElementById("side-panel");
  if (panel.hidden) return;
  panel.hidden = true;
  document.body.classList.remove("side-open");
  opener?.focus();
  opener = null;
}

function section(title, ...children) {
  return el("section", { class: "insp-section" }, el("h4", { text: title }), ...children);
}

function table(headers, rows) {
  return el("table", { class: "insp-table" },
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", { text: c === null || c === undefined ? "–" : String(c) }))))));
}

const num = (v) => (typeof v === "number" ? (Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(3)) : v);

function renderQa(body, data) {
  body.append(section("Queries", el("ol", {}, (data.queries || []).map((q) => el("li", { text: q })))));
  if (data.document_scope) {
    const docs = data.document_scope.documents.map((d) => displayName(d.document_name)).join(", ");
    body.append(el("p", { class: "small insp-scope", text: `Restricted to ${docs} (named as "${data.document_scope.name}")` }));
  }
  for (const search of data.searches || []) {
    const legs = Object.entries(search.legs || {}).map(([leg, rows]) => el("div", { class: "insp-leg", dataset: { leg } },
      el("h5", { text: `${LEG_NAMES[leg] || leg} (${rows.length})` }),
      table(["#", "Document", "Page", "Score"], rows.map((r) => [r.rank, displayName(r.document_name || r.chunk_id.slice(0, 8)), r.page, num(r.score)]))));
    const fused = table(["#", "Document", "Page", "Score", "FTS", "Vector", "Kept"], (search.fused || []).map((r) =>
      [r.rank, displayName(r.document_name), r.page, num(r.score), r.ranks.fts, r.ranks.vector, r.kept === null ? "" : r.kept ? "yes" : "no"]));
    const parts = [el("p", { class: "small muted", text: `${search.mode}, evidence score ${num(search.evidence_score)}${search.index ? `, index ${search.index}` : ""}` }),
      el("div", { class: "insp-legs" }, legs), el("h5", { text: "Fused" }), fused];
    if ((search.rerank || []).length) {
      parts.push(el("h5", { text: "Reranker" }),
        table(["Chunk", "Score", "Kept", "Why"], search.rerank.map((r) => [r.chunk_id.slice(0, 8), num(r.rerank_score), r.kept ? "yes" : "no", r.reason.replaceAll("_", " ")])));
    }
    for (const w of search.warnings || []) parts.push(el("p", { class: "small warn", text: w }));
    body.append(section(`Search: ${search.query}`, ...parts));
  }
  const packed = data.packed || { blocks: [] };
  body.append(section(`Evidence given to the answer (${packed.used_tokens ?? 0} of ${packed.budget_tokens ?? 0} tokens)`,
    table(["[n]", "Document", "Page", "Tokens"], packed.blocks.map((b) => [b.n, displayName(b.document_name), b.page,
      `${b.tokens}${b.truncated ? " (cut)" : ""}${b.in_prompt === false ? " (quoting only)" : ""}`]))));
  body.append(section("Citation check", validationList(data.validation || {})));
}

function findings(v) {
  if (!v) return "not run";
  if (v.refused) return "the model declined";
  const out = [];
  if (v.unknown?.length) out.push(`unknown sources ${v.unknown.join(", ")}`);
  if (v.uncited?.length) out.push(`${v.uncited.length} uncited sentence(s)`);
  if (v.bad_quotes?.length) out.push(`${v.bad_quotes.length} quote(s) not in the source`);
  if (v.unsupported?.length) out.push(`${v.unsupported.length} sentence(s) the source does not support`);
  for (const c of v.claims || []) {
    const where = (c.cited || []).map((n) => `[${n}]`).join(", ");
    for (const fact of c.missing || []) out.push(`“${fact}” is not in ${where}`);
    if (c.opposite) out.push(`${where} says the opposite: “${c.opposite}”`);
    if (c.unmatched) out.push(`no sentence of ${where} says yes or no to this`);
    if (c.yes_then_no) out.push("the answer says yes and then the opposite");
  }
  for (const u of v.unasked || []) out.push(`${(u.cited || []).map((n) => `[${n}]`).join(", ")} does not mention ${u.words.join(", ")}`);
  if (v.no_quantity) out.push("the question asks for a number or formula and the answer gives none");
  if (v.other_quantity) out.push(`the question asks for a ${v.other_quantity} and the answer gives a number of another kind`);
  if (v.echo) out.push("the answer only repeats the question");
  if (v.attributed) out.push(`${v.attributed} citation(s) attributed`);
  return (v.valid ? "valid" : "invalid") + (out.length ? `: ${out.join("; ")}` : "");
}

function validationList(v) {
  const items = [el("li", { text: `Answer source: ${v.answer_source ? `${sourceLabel(v.answer_source)[0]} (${v.answer_source})` : "–"}` }),
    el("li", { text: `First draft: ${findings(v.first)}` }), el("li", { text: `Final: ${findings(v.final)}` })];
  if (v.refusal_reason) items.push(el("li", { text: `Refused: ${v.refusal_reason}` }));
  return el("ul", { class: "insp-validation" }, items);
}

function renderTask(body, data) {
  const names = (data.resolution || []).map((r) => [r.name, r.match ? displayName(r.match.document_name) : "–",
    r.match ? "unique" : r.candidates.length ? `ambiguous: ${r.candidates.map((c) => displayName(c.document_name)).join(", ")}` : "no match"]);
  body.append(section("Documents", table(["Name given", "Document", "Match"], names)));
  if (!data.parts) return;
  const info = [`${data.blocks} blocks`, `backend ${data.backend}`];
  if (data.map_reduce) info.push(`${data.map_reduce.windows} window(s), ${data.map_reduce.calls} model call(s)`);
  if (data.model_calls) info.push(`${data.model_calls} model call(s)`);
  body.append(el("p", { class: "small muted", text: info.join(", ") }));
  const docs = new Map((data.resolution || []).filter((r) => r.match).map((r) => [r.match.document_id, displayName(r.match.document_name)]));
  body.append(section("Parts and citation checks", table(["Part", "Document", "Source", "Check", "Note"],
    data.parts.map((p) => [p.key, docs.get(p.document_id) || "", p.source.replace("_", " "), p.validation ? findings(p.validation) : "nothing to check", p.note || ""]))));
}
