// The chat view: index picker, history, streaming answers with live pipeline phases, citations, sources.
import { gateway, streamChat } from "./api.js";
import { bestSentence, bestSnippet, cleanText, displayName, highlightInto, queryTerms, renderMarkdown, where } from "./markdown.js";
import { chatOptions, save, settings } from "./settings.js";
import { createSession, markCurrent, touchSession } from "./sessions.js";
import { el, errorBox, fmtMs, toast, uuid } from "./util.js";
import { openCitation } from "./viewer.js";
import { indexState, loadIndexes } from "./indexes.js";
import { PHASES, keepPhasePlaces, possiblePhases, reachedPhases, replayPhases, settlePhases } from "./phases.js";
import { attachInspector, taskOptions, taskPicker } from "./inspector.js";
import { confidenceLabel, sourceLabel, statusLabel } from "./labels.js";
import { attachFeedback } from "./feedback.js";
import { exportControl } from "./export.js";
import { filterControl, filterOptions } from "./filters.js";

// The stream events (Documentation/api.md, "Stream events") this view takes nothing from but the `message` and
// `source_documents` every event is read for; `ask` handles the others by name. A test holds the two lists
// together against the RAG API's declared event table, so a new event is a decision here, not an accident.
const PASSIVE_EVENTS = new Set(["sources", "generation_started", "checking", "document_scope", "rerank_skipped",
  "refusal", "task_resolved", "inspector"]);

let view = null;
let sessionId = null;
let controller = null;
let picked = new Set(settings.indexes || []);

export function initChat(container) {
  view = container;
  view.append(
    el("div", { class: "index-picker", id: "index-picker", role: "group", "aria-label": "Indexes to search" }),
    el("div", { class: "thread", id: "thread", "aria-live": "off" }),
    composer());
}

function composer() {
  const input = el("textarea", { id: "question", rows: 2, maxlength: 8000, placeholder: "Ask about your documents…", "aria-label": "Question (Enter sends, Shift+Enter adds a line)", title: "Enter sends, Shift+Enter adds a line" });
  const send = el("button", { type: "submit", class: "btn primary", id: "send", text: "Send" });
  const stop = el("button", { type: "button", class: "btn danger", id: "stop", text: "Stop", hidden: true });
  const filters = filterControl(() => indexState.list.filter((ix) => picked.has(ix.id)));
  const form = el("form", { class: "composer", id: "composer" }, input, el("div", { class: "composer-actions" }, filters, taskPicker(), send, stop));
  form.addEventListener("submit", (e) => { e.preventDefault(); ask(input.value); });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); form.requestSubmit(); }
    if (e.key === "Escape" && controller) { e.preventDefault(); controller.abort(); }
  });
  stop.addEventListener("click", () => controller?.abort());
  return form;
}

let pickerCalls = 0; // renders overlap (opening a session while the list loads): only the latest draws

export async function renderPicker() {
  const box = view.querySelector("#index-picker");
  const call = ++pickerCalls;
  try { await loadIndexes(); } catch (err) { if (call === pickerCalls) box.replaceChildren(errorBox(err, renderPicker)); return; }
  if (call !== pickerCalls) return; // two overlapping renders drew "Search in:" and every chip twice
  box.textContent = "";
  box.append(el("span", { class: "small muted", text: "Search in:" }));
  if (!indexState.list.length) box.append(el("a", { href: "#/indexes", class: "small", text: "Create an index first" }));
  for (const ix of indexState.list) {
    const input = el("input", { type: "checkbox", value: ix.id, checked: picked.has(ix.id), "aria-label": `Search ${ix.name}` });
    input.addEventListener("change", () => {
      if (input.checked) picked.add(ix.id); else picked.delete(ix.id);
      settings.indexes = [...picked];
      save();
      if (sessionId) linkIndex(sessionId, ix.id, input.checked);
    });
    box.append(el("label", { class: "chip-check" }, input, el("span", { text: ix.name })));
  }
  for (const id of [...picked]) if (!indexState.list.some((i) => i.id === id)) picked.delete(id);
  box.append(exportControl(() => sessionId));
}

export async function openSession(id) {
  if (controller) controller.abort();
  sessionId = id;
  markCurrent(id);
  const thread = view.querySelector("#thread");
  thread.textContent = "";
  if (!id) { thread.append(emptyState()); return; }
  try {
    const { messages } = await gateway("GET", `/sessions/${id}`);
    let question = "";
    for (const m of messages) {
      if (m.sender === "user") { question = m.content; thread.append(userBubble(m.content)); }
      else thread.append(answerFromHistory(m, question));
    }
    if (!messages.length) thread.append(emptyState());
    const linked = (await gateway("GET", `/sessions/${id}/indexes`)).indexes.map((i) => i.id);
    if (linked.length || messages.length) { picked = new Set(linked); renderPicker(); } // a used session searches its links
    thread.scrollTop = thread.scrollHeight;
  } catch (err) {
    thread.append(errorBox(err, () => openSession(id)));
  }
}

function emptyState() {
  return el("div", { class: "empty" }, el("h2", { text: "Ask your documents" }),
    el("p", { class: "muted", text: "Pick one or more indexes above, then ask a question. Answers cite their sources; click a citation to see the page." }));
}

function userBubble(text) {
  return el("div", { class: "msg user" }, el("div", { class: "bubble", text }));
}

function answerShell(options = {}) {
  // A phase the request cannot reach is never shown (it would vanish at the end and move the chips after it).
  const possible = new Set(possiblePhases(options).map(([key]) => key));
  const phases = el("ol", { class: "phases", "aria-label": "Pipeline progress" },
    PHASES.map(([key, label]) => el("li", { class: "phase", hidden: !possible.has(key), dataset: { phase: key, state: possible.has(key) ? "pending" : "skipped" } }, el("span", { class: "dot", "aria-hidden": "true" }), label)));
  const note = el("li", { class: "phase-note", role: "status" });
  phases.append(note);
  const body = el("div", { class: "answer markdown", "aria-live": "polite" });
  const meta = el("div", { class: "meta" });
  const sources = el("details", { class: "sources", hidden: true }, el("summary", { text: "Sources" }), el("ol", { class: "source-list" }));
  const wrap = el("div", { class: "msg assistant" }, phases, body, meta, sources);
  return { wrap, phases, note, body, meta, sources };
}

function answerFromHistory(m, question) {
  const shell = answerShell();
  const md = m.metadata || {};
  // Docent's own pipeline events; `steps` is localGPT's step list (Documentation/api-gateway.md).
  const events = md.events || [];
  if (!replayPhases(shell.phases, events, md)) shell.phases.remove();
  shell.wrap.dataset.state = md.status || "complete";
  const done = events.find((s) => s?.type === "complete")?.data || {};
  finish(shell, { answer: m.content, citations: md.citations || [], source_documents: md.source_documents || [],
    answer_source: md.answer_source, token_usage: md.token_usage, timings_ms: md.timings_ms,
    confidence: md.confidence ?? done.confidence, inspector: done.inspector, models: md.models || done.models }, question);
  if (md.status && md.status !== "complete") shell.meta.prepend(statusBadge(md.status));
  else attachFeedback(shell.meta, { messageId: m.id }, m.feedback);
  return shell.wrap;
}

// Which models the question used: each index's embedder, the reranker when it ran (the answer's `models`).
function modelsNote(models) {
  const embedders = [...new Set((models?.embedders || []).map((m) => m.embedder || m.model))];
  if (!embedders.length) return null;
  const text = `searched with ${embedders.join(", ")}` + (models.reranker ? `, reranked by ${models.reranker}` : "");
  const title = (models.embedders || []).map((m) => `${m.index}: ${m.model}`).join("\n");
  return el("span", { class: "small muted models", title, text });
}

function statusBadge(status) {
  const [label, why] = statusLabel(status);
  return el("span", { class: `badge b-${status}`, dataset: { source: status }, title: why, text: label });
}

// Sources as soon as an event carries them (the answer's own list replaces them at the end).
function showSources(shell, documents, citations, question) {
  const docs = (documents || []).map((x) => ({ ...x, document_name: displayName(x.document_name) }));
  if (!docs.length) return;
  const list = shell.sources.querySelector("ol");
  list.textContent = "";
  const terms = queryTerms(question);
  for (const s of docs) {
    const snippet = el("p", { class: "snippet" });
    highlightInto(snippet, bestSnippet(cleanText(s.text), terms), terms);
    const cite = citations.find((c) => c.chunk_id === s.chunk_id) || { ...s, quote: bestSentence(cleanText(s.text), terms) };
    list.append(el("li", { class: "source", value: s.n },
      el("button", { type: "button", class: "link", onclick: () => openCitation({ ...cite, n: s.n, source: s }) },
        el("strong", { text: s.document_name }), el("span", { class: "muted small", text: ` ${where(s)}` })), snippet));
  }
  shell.sources.querySelector("summary").textContent = `Sources (${docs.length})`;
  shell.sources.hidden = false;
}

function finish(shell, result, question) {
  const named = (x) => ({ ...x, document_name: displayName(x.document_name) });
  const citations = (result.citations || []).map(named);
  renderMarkdown(shell.body, result.answer, citations);
  shell.body.addEventListener("click", (e) => {
    const chip = e.target.closest("button.cite");
    if (!chip) return;
    const c = citations.find((x) => Number(x.n) === Number(chip.dataset.n));
    if (c) openCitation({ ...c, source: (result.source_documents || []).find((d) => d.chunk_id === c.chunk_id) });
  });
  shell.meta.textContent = "";
  if (result.answer_source) {
    const [label, why] = sourceLabel(result.answer_source);
    shell.meta.append(el("span", { class: `badge b-${result.answer_source}`, dataset: { source: result.answer_source }, title: why, text: label }));
  }
  const confidence = confidenceLabel(result.confidence);
  if (confidence) shell.meta.append(el("span", { class: "small confidence", dataset: { level: confidence.level }, title: confidence.why, text: confidence.text }));
  const total = result.token_usage?.total;
  if (total && (total.prompt || total.completion)) shell.meta.append(el("span", { class: "small muted tokens", text: `${total.prompt ?? 0} prompt + ${total.completion ?? 0} completion tokens` }));
  const t = result.timings_ms || {};
  const parts = Object.entries(t).filter(([k, v]) => typeof v === "number" && k !== "total_ms").map(([k, v]) => `${k.replace(/_ms$/, "")} ${fmtMs(v)}`);
  if (t.total_ms !== undefined) shell.meta.append(el("span", { class: "small muted timings", title: parts.join(", "), text: `${fmtMs(t.total_ms)} total` }));
  const models = modelsNote(result.models);
  if (models) shell.meta.append(models);
  showSources(shell, result.source_documents, citations, question);
  // A refusal cites nothing: what it lists are the nearest passages, which did not hold the answer.
  if (result.answer_source === "refusal" && !shell.sources.hidden) {
    shell.sources.querySelector("summary").textContent = `Closest passages, not the answer (${result.source_documents.length})`;
  }
  attachInspector(shell.wrap, result);
}

let phaseSeq = 0;
function setPhase(shell, key, state) {
  const node = shell.phases.querySelector(`[data-phase="${key}"]`);
  if (!node || node.dataset.state === "done") return;
  if (state === "active" && node.dataset.state === "active") return;
  node.dataset.state = state;
  if (!node.dataset.seq) node.dataset.seq = String(++phaseSeq);
}

// Phase bookkeeping: each event starts or ends a phase; earlier active phases are closed.
function activate(shell, key) {
  for (const [k] of PHASES) {
    if (k === key) break;
    const n = shell.phases.querySelector(`[data-phase="${k}"]`);
    if (n?.dataset.state === "active") n.dataset.state = "done";
  }
  setPhase(shell, key, "active");
}

// The session's linked indexes are the ones its answers search; unticking one unlinks it (the index stays).
function linkIndex(sid, indexId, linked) {
  gateway(linked ? "POST" : "DELETE", `/sessions/${sid}/indexes/${indexId}`)
    .catch((err) => toast(`Could not ${linked ? "link" : "unlink"} the index: ${err.message}`));
}

async function ensureSession() {
  if (sessionId) return sessionId;
  const session = await createSession();
  sessionId = session.id;
  history.replaceState(null, "", `#/chat/${session.id}`);
  markCurrent(session.id);
  for (const id of picked) gateway("POST", `/sessions/${session.id}/indexes/${id}`).catch(() => {});
  return sessionId;
}

export async function ask(text, existing = null) {
  const question = (text || "").trim();
  if (!question || controller) return;
  const thread = view.querySelector("#thread");
  thread.querySelector(".empty")?.remove();
  const input = view.querySelector("#question");
  input.value = "";
  let sid;
  try { sid = await ensureSession(); } catch (err) { thread.append(errorBox(err, () => ask(question))); return; }
  if (!existing) thread.append(userBubble(question));
  const shell = answerShell(chatOptions());
  if (existing) existing.replaceWith(shell.wrap); else thread.append(shell.wrap);
  const nearBottom = () => thread.scrollHeight - thread.scrollTop - thread.clientHeight < 120;
  const follow = () => { if (nearBottom()) thread.scrollTop = thread.scrollHeight; };
  follow();
  thread.scrollTop = thread.scrollHeight;

  controller = new AbortController();
  view.querySelector("#send").hidden = true;
  view.querySelector("#stop").hidden = false;
  view.querySelector("#stop").focus();
  shell.wrap.dataset.state = "streaming";
  shell.body.setAttribute("aria-busy", "true"); // screen readers read the answer once, not token by token
  let streamed = "", frame = 0, completed = false;
  const seen = []; // event types, for the phases this answer reached
  const paint = () => { frame = 0; renderMarkdown(shell.body, streamed); follow(); };
  const body = { query: question, session_id: sid, turn_id: uuid(), indexes: [...picked], ...chatOptions(), ...taskOptions(), ...filterOptions() };
  try {
    await streamChat(body, (type, data) => {
      seen.push(type);
      if (type !== "token" && typeof data.message === "string" && !data.code) shell.note.textContent = data.message;
      if (Array.isArray(data.source_documents) && type !== "complete") showSources(shell, data.source_documents, [], question);
      switch (type) {
        case "analyze": activate(shell, "analyzing"); break;
        case "decomposition": activate(shell, "analyzing"); break;
        case "retrieval_started": case "retrieval_retry": activate(shell, "retrieving"); break;
        case "retrieval_done": setPhase(shell, "retrieving", "done"); if (!body.ai_rerank && !body.context_expand) activate(shell, "writing"); break;
        case "rerank_started": activate(shell, "reranking"); break;
        case "rerank_done": setPhase(shell, "reranking", "done"); if (!body.context_expand) activate(shell, "writing"); break;
        case "context_expand_started": activate(shell, "expanding"); break;
        case "context_expand_done": setPhase(shell, "expanding", "done"); activate(shell, "writing"); break;
        case "backend_fallback": activate(shell, "writing"); break;
        case "token":
          activate(shell, "writing");
          shell.note.textContent = "";
          streamed += data.text || "";
          if (!frame) frame = requestAnimationFrame(paint);
          break;
        case "citations": activate(shell, "checking"); break;
        case "answer_repaired": case "answer_replaced": case "answer_corroborated":
          activate(shell, "checking"); streamed = data.answer || streamed; paint(); break;
        case "direct_answer": case "cache_hit": activate(shell, "writing"); break;
        case "task_part": // a task's answer so far (a summary's sections, a comparison's columns)
          activate(shell, "writing");
          if (typeof data.markdown === "string") { shell.note.textContent = ""; streamed = data.markdown; paint(); }
          break;
        case "complete":
          completed = true;
          if (frame) cancelAnimationFrame(frame);
          shell.note.textContent = "";
          settlePhases(shell.phases, reachedPhases(seen, data.answer_source));
          keepPhasePlaces(shell.phases);
          finish(shell, data, question);
          attachFeedback(shell.meta, { sessionId: sid, turnId: body.turn_id });
          break;
        case "error":
          throw Object.assign(new Error(data.message || "The answer failed."), { code: data.code });
        default: // the rest only add their message and sources (above)
          if (!PASSIVE_EVENTS.has(type)) console.debug("stream event this view does not know:", type);
          break;
      }
    }, controller.signal);
    if (!completed) throw new Error("The answer stream ended before the answer was complete.");
    shell.wrap.dataset.state = "complete";
  } catch (err) {
    if (frame) cancelAnimationFrame(frame);
    shell.note.textContent = "";
    settlePhases(shell.phases, reachedPhases(seen, null), "stopped");
    if (err.name === "AbortError") {
      shell.wrap.dataset.state = "stopped";
      if (streamed) renderMarkdown(shell.body, streamed);
      shell.meta.replaceChildren(statusBadge("stopped"),
        el("button", { type: "button", class: "btn small retry", text: "Ask again", onclick: () => ask(question, shell.wrap) }));
    } else {
      shell.wrap.dataset.state = "error";
      shell.meta.replaceChildren(errorBox(err, () => ask(question, shell.wrap)));
    }
  } finally {
    shell.body.removeAttribute("aria-busy");
    controller = null;
    view.querySelector("#send").hidden = false;
    view.querySelector("#stop").hidden = true;
    input.focus();
    refreshTitle(sid, 6);
  }
}

// The RAG API saves the turn in the background; the session takes its title from the first question then.
function refreshTitle(sid, tries) {
  gateway("GET", `/sessions/${sid}`).then(({ session, messages }) => {
    touchSession(session);
    if (tries > 1 && (session.title === "New Chat" || messages.length % 2)) setTimeout(() => refreshTitle(sid, tries - 1), 700);
  }).catch(() => {});
}

export function currentSession() { return sessionId; }
export { toast };
