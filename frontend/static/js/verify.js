// "Check a text" (#/verify): paste a draft, check each sentence against an index, click through to the page.
// The gateway's POST /verify (Documentation/api-gateway.md, "Checking a text") runs the verifier the answers are
// checked with; each sentence comes back supported / contradicted / unsupported with findings and evidence.
import { gateway } from "./api.js";
import { indexState, loadIndexes } from "./indexes.js";
import { cleanText, where } from "./markdown.js";
import { settings } from "./settings.js";
import { el, errorBox, fmtMs } from "./util.js";
import { openCitation } from "./viewer.js";

const MAX_CHARS = 20000;
const CHAT = "__chat__"; // the select's value for "the indexes the chat searches"
const MARK = { supported: "✓", contradicted: "✗", unsupported: "?" };
const LABEL = { supported: "Supported", contradicted: "Contradicted", unsupported: "Not in the documents" };
const HINT = {
  supported: "A passage of the documents says this.",
  contradicted: "A passage of the documents says otherwise.",
  unsupported: "No passage found says this.",
};
// What the view keeps between visits: the draft, the question and the index chosen.
const draft = { text: "", question: "", target: "" };
let running = 0;

export async function renderVerify(root) {
  root.textContent = "";
  const picker = el("select", { id: "verify-index", name: "index", "aria-describedby": "verify-index-hint" });
  const text = el("textarea", { id: "verify-text", name: "text", rows: 8, maxlength: MAX_CHARS, required: true,
    placeholder: "Paste a draft: a memo, an email, another assistant's answer…", "aria-label": "Text to check" });
  const question = el("input", { id: "verify-question", name: "question", maxlength: 8000, autocomplete: "off",
    placeholder: "optional: the question the text answers" });
  const count = el("span", { class: "small muted", id: "verify-count", "aria-live": "polite" });
  const submit = el("button", { type: "submit", class: "btn primary", id: "verify-submit", text: "Check" });
  const form = el("form", { class: "card verify-form", id: "verify-form", "aria-label": "Check a text against your documents" },
    el("p", { class: "muted small verify-intro", text: "Each sentence is checked against the passages of the index that bear on it, by what it says: who does what, the numbers, the conditions, may or must." }),
    el("label", { class: "field" }, el("span", { text: "Check against" }), picker),
    el("span", { class: "small muted", id: "verify-index-hint" }),
    el("label", { class: "field" }, el("span", { text: "Text" }), text),
    el("label", { class: "field" }, el("span", { text: "Question" }), question),
    el("div", { class: "row between" }, count, submit));
  const results = el("div", { class: "verify-results", id: "verify-results", "aria-live": "polite" });
  root.append(form, results);

  text.value = draft.text;
  question.value = draft.question;
  const counted = () => { count.textContent = `${text.value.length.toLocaleString("en")} / ${MAX_CHARS.toLocaleString("en")} characters`; };
  text.addEventListener("input", () => { draft.text = text.value; counted(); });
  question.addEventListener("input", () => { draft.question = question.value; });
  picker.addEventListener("change", () => { draft.target = picker.value; hint(picker); });
  counted();
  form.addEventListener("submit", (e) => { e.preventDefault(); check(picker, text, question, submit, results); });
  try {
    await loadIndexes();
  } catch (err) {
    results.replaceChildren(errorBox(err, () => renderVerify(root)));
    return;
  }
  fillPicker(picker);
}

// The chat's indexes first (when it has some), then every index the user may read.
function fillPicker(picker) {
  const chat = chatIndexes();
  const options = [];
  if (chat.length) options.push(el("option", { value: CHAT, text: `The chat's indexes (${chat.map((i) => i.name).join(", ")})` }));
  for (const ix of indexState.list) options.push(el("option", { value: ix.id, text: ix.name }));
  if (!options.length) options.push(el("option", { value: "", text: "No index yet", disabled: true }));
  picker.replaceChildren(...options);
  const known = [...picker.options].some((o) => o.value === draft.target && !o.disabled);
  picker.value = known ? draft.target : picker.options[0].value;
  hint(picker);
}

function chatIndexes() {
  const chosen = new Set(settings.indexes || []);
  return indexState.list.filter((i) => chosen.has(i.id));
}

function targets(value) {
  return value === CHAT ? chatIndexes().map((i) => i.id) : value ? [value] : [];
}

function hint(picker) {
  const box = document.getElementById("verify-index-hint");
  const ix = indexState.list.find((i) => i.id === picker.value);
  box.replaceChildren();
  if (!indexState.list.length) box.append(el("a", { href: "#/indexes", text: "Create an index first" }));
  else if (ix && ix.metadata?.status && ix.metadata.status !== "ready") box.textContent = `This index is ${ix.metadata.status}.`;
}

async function check(picker, text, question, submit, results) {
  const indexes = targets(picker.value);
  if (!text.value.trim()) { text.focus(); return; }
  if (!indexes.length) { results.replaceChildren(el("p", { class: "error-box", role: "alert", text: "Choose an index to check against." })); return; }
  const call = ++running;
  submit.disabled = true;
  submit.textContent = "Checking…";
  results.setAttribute("aria-busy", "true");
  results.replaceChildren(el("p", { class: "muted verify-busy" }, el("span", { class: "spinner small-spinner", "aria-hidden": "true" }), " Checking each sentence against the documents…"));
  const body = { text: text.value, indexes };
  if (question.value.trim()) body.question = question.value.trim();
  try {
    const out = await gateway("POST", "/verify", body);
    if (call === running) {
      results.replaceChildren(...report(out));
      results.firstChild.scrollIntoView({ block: "nearest" }); // on a phone the marks are below the form
    }
  } catch (err) {
    if (call === running) results.replaceChildren(errorBox(err, () => check(picker, text, question, submit, results)));
  } finally {
    if (call === running) {
      submit.disabled = false;
      submit.textContent = "Check";
      results.removeAttribute("aria-busy");
    }
  }
}

function report(out) {
  const counts = { supported: 0, contradicted: 0, unsupported: 0 };
  for (const s of out.sentences) counts[s.verdict] = (counts[s.verdict] || 0) + 1;
  const n = out.sentences.length;
  const summary = el("div", { class: `verify-summary ${out.supported ? "ok" : "bad"}`, id: "verify-summary", dataset: { supported: String(out.supported) } },
    el("strong", { text: out.supported ? "Every sentence is supported by the documents." : "Not every sentence is supported by the documents." }),
    el("span", { class: "small muted", text: ` ${n} sentence${n === 1 ? "" : "s"}: ${counts.supported} supported, ${counts.contradicted} contradicted, ${counts.unsupported} not in the documents`
      + (out.timings_ms ? ` · ${fmtMs((out.timings_ms.retrieval_ms || 0) + (out.timings_ms.verify_ms || 0))}` : "") }));
  const sources = new Map((out.sources || []).map((s) => [s.n, s]));
  const list = el("ol", { class: "verify-sentences", role: "list" }, ...out.sentences.map((s) => sentence(s, sources)));
  const notes = [...(out.notes || []), ...(out.warnings || [])].map((t) => el("p", { class: "small muted", text: t }));
  return [summary, list, ...notes];
}

function sentence(s, sources) {
  const verdict = s.checked === false ? "supported" : s.verdict;
  const label = s.checked === false ? "Nothing to check" : LABEL[verdict] || verdict;
  const item = el("li", { class: "vsent", dataset: { verdict } },
    el("span", { class: "vmark", "aria-hidden": "true", text: MARK[verdict] || "?" }),
    el("div", { class: "vbody" },
      el("p", { class: "vtext", text: s.text }),
      el("span", { class: "vverdict", title: HINT[verdict] || "", text: label })));
  const body = item.querySelector(".vbody");
  if (s.findings?.length) body.append(el("ul", { class: "vfindings" }, ...s.findings.map((f) => el("li", { text: f }))));
  if (s.evidence?.length) {
    body.append(el("div", { class: "vevidence" }, ...s.evidence.map((e) => evidence(e, sources.get(e.n)))));
  }
  return item;
}

// A button per quote: "[2] policy.pdf, page 3 — “…”"; it opens the page viewer on the quote's page.
function evidence(e, source) {
  const c = {
    n: e.n, quote: e.quote, document_name: e.document || source?.document_name || "",
    document_id: e.document_id || source?.document_id, page_start: source?.page_start || e.page, page_end: source?.page_end || e.page,
    location: e.location || (e.page ? { page: e.page } : undefined), source: source ? { text: source.text } : undefined,
  };
  const place = [cleanText(c.document_name), where(c)].filter(Boolean).join(", ");
  const open = el("button", { type: "button", class: "link vopen", title: "Open the page", "aria-label": `Open ${place || `source ${e.n}`}: ${e.quote}` },
    el("span", { class: "vcite", text: `[${e.n}]` }), " ", el("span", { class: "vplace", text: place }));
  if (c.document_id) open.addEventListener("click", () => openCitation(c));
  else open.disabled = true;
  return el("blockquote", { class: "quote vquote" }, open, el("span", { class: "vq", text: ` “${cleanText(e.quote)}”` }));
}
