// The citation viewer for documents without page images: a text or Markdown file opens at the cited lines
// (read from the original file, the sentence marked), anything else (HTML, Office) at its section, with the
// cited passage and its sentence marked.
import { gatewayBlob } from "./api.js";
import { cleanText } from "./markdown.js";
import { el } from "./util.js";

const TEXT_FILES = /\.(txt|md|markdown)$/i;
const CONTEXT_LINES = 4;

export async function showSection(c, frame, fallback) {
  const loc = c.location || {};
  const head = loc.section ? el("p", { class: "small viewer-section", text: `Section: ${loc.section}` }) : null;
  if (TEXT_FILES.test(c.document_name || "")) {
    try {
      const blob = await gatewayBlob(`/documents/${encodeURIComponent(c.document_id)}/file`);
      const lines = (await blob.text()).replace(/\r\n?/g, "\n").split("\n");
      const range = citedLines(lines, c.quote, loc.lines);
      if (range) {
        frame.replaceChildren(...[head, excerpt(lines, range)].filter(Boolean));
        frame.removeAttribute("aria-busy");
        return;
      }
    } catch (err) {
      if (err.name === "AbortError") return;
      frame.replaceChildren(el("p", { class: "muted", text: err.message }));
      return;
    }
  }
  const passage = c.source?.text ? marked(cleanText(c.source.text), c.quote, "p", "viewer-passage") : null;
  frame.replaceChildren(...[head, passage || el("p", { class: "muted", text: fallback })].filter(Boolean));
  frame.removeAttribute("aria-busy");
}

// The lines the quote is on: found in the file itself (whitespace may differ), else the RAG API's range.
function citedLines(lines, quote, known) {
  const words = (quote || "").split(/\s+/).filter(Boolean);
  if (words.length) {
    const flat = [];
    const lineOf = [];
    lines.forEach((line, i) => { for (const w of line.split(/\s+/).filter(Boolean)) { flat.push(w); lineOf.push(i + 1); } });
    const head = words.slice(0, 8);
    for (let i = 0; i + head.length <= flat.length; i += 1) {
      if (head.every((w, j) => flat[i + j] === w)) return [lineOf[i], lineOf[Math.min(i + words.length, flat.length) - 1]];
    }
  }
  return Array.isArray(known) && known[0] ? [known[0], known[1]] : null;
}

function excerpt(lines, [first, last]) {
  const from = Math.max(1, first - CONTEXT_LINES), to = Math.min(lines.length, last + CONTEXT_LINES);
  const rows = [];
  for (let n = from; n <= to; n += 1) {
    const cited = n >= first && n <= last;
    rows.push(el("div", { class: `text-line${cited ? " cited" : ""}`, dataset: { line: String(n) } },
      el("span", { class: "line-no", "aria-hidden": "true", text: String(n) }), el("span", { class: "line-text", text: lines[n - 1] || " " })));
  }
  const box = el("div", { class: "text-excerpt", role: "region", "aria-label": `Lines ${first} to ${last}` }, rows);
  setTimeout(() => box.querySelector(".cited")?.scrollIntoView({ block: "center" }), 0);
  return box;
}

// Text with the quote marked (built with DOM nodes, never innerHTML).
function marked(text, quote, tag, cls) {
  const node = el(tag, { class: cls });
  const q = (quote || "").trim();
  const at = q ? text.indexOf(q) : -1;
  if (at < 0) { node.textContent = text; return node; }
  node.append(text.slice(0, at), el("mark", { text: q }), text.slice(at + q.length));
  return node;
}
