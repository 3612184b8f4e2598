// Model output is always rendered as sanitised Markdown; [n] markers become citation chips.
import { marked } from "/vendor/marked.esm.js";
import DOMPurify from "/vendor/purify.es.mjs";

marked.use({ gfm: true, breaks: false });

// A marker as the answer check reads it (native/src/markers.rs): "[1]", "[1, 4]", "[2-4]", "[2–4, 9]";
// the model writes grouped markers too, and each number gets its own chip.
const NUM = "[1-9]\\d{0,3}";
const ITEM = `${NUM}(?:[-\u2013]${NUM})?`;
const CITE = new RegExp(`\\[(${ITEM}(?:\\s*,\\s*${ITEM})*)\\](?!\\()`, "g");
const MAX_RANGE = 50;

// The numbers a marker names, or null when it is not one the check accepts ("[3-2]", a range over 50).
function markerNumbers(body) {
  const out = [];
  for (const item of body.split(/\s*,\s*/)) {
    const [a, b = a] = item.split(/[-\u2013]/).map(Number);
    if (b < a || b - a >= MAX_RANGE) return null;
    for (let n = a; n <= b; n++) if (!out.includes(n)) out.push(n);
  }
  return out;
}

export function renderMarkdown(target, text, citations = []) {
  const html = DOMPurify.sanitize(marked.parse(cleanText(text)), { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form", "input"] });
  target.innerHTML = html;
  for (const p of target.querySelectorAll("p")) letteredList(p);
  const known = new Map(citations.map((c) => [Number(c.n), c]));
  const walker = document.createTreeWalker(target, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement.closest("code, pre")) continue;
    if (CITE.test(node.nodeValue)) nodes.push(node);
    CITE.lastIndex = 0;
  }
  for (const node of nodes) {
    const frag = document.createDocumentFragment();
    let last = 0;
    for (const m of node.nodeValue.matchAll(CITE)) {
      const numbers = markerNumbers(m[1]);
      if (!numbers) continue;
      frag.append(node.nodeValue.slice(last, m.index));
      for (const n of numbers) frag.append(chipFor(n, known));
      last = m.index + m[0].length;
    }
    frag.append(node.nodeValue.slice(last));
    node.replaceWith(frag);
  }
}

function chipFor(n, known) {
  const chip = document.createElement("button");
  chip.type = "button";
  chip.className = "cite";
  chip.dataset.n = String(n);
  chip.textContent = String(n);
  const c = known.get(n);
  chip.title = c ? `${displayName(c.document_name)}, ${where(c)}` : `Source ${n}`;
  chip.setAttribute("aria-label", `Citation ${n}${c ? `: ${displayName(c.document_name)}, ${where(c)}` : ""}`);
  if (!c) chip.disabled = known.size > 0;
  return chip;
}

// The RAG API names documents by their stored file (`<sha256>_report.pdf`); people see `report.pdf`.
export function displayName(name) {
  return String(name || "").replace(/^[0-9a-f]{64}_/, "");
}

// Chunk text opens with the stored file name (`<sha256>_report.pdf > Heading`); show `report.pdf`.
export function cleanText(text) {
  return String(text || "").replace(/\b[0-9a-f]{64}_/g, "");
}

export function pages(c) {
  if (!c.page_start) return "";
  return c.page_end && c.page_end !== c.page_start ? `pages ${c.page_start}–${c.page_end}` : `page ${c.page_start}`;
}

// Where a citation or passage is, in the terms of its format: the page of a paged document (the cited
// sentence's own page when known); the section and lines of a text file; the section of HTML or Markdown.
export function where(c) {
  const loc = c.location || {};
  if (loc.label) return loc.label; // a table's rows: "Sheet Q3, rows 12–40"
  if (loc.paged !== false) return loc.page ? `page ${loc.page}` : pages(c);
  const parts = [];
  if (loc.section) parts.push(`§ ${loc.section}`);
  if (loc.lines) parts.push(loc.lines[0] === loc.lines[1] ? `line ${loc.lines[0]}` : `lines ${loc.lines[0]}–${loc.lines[1]}`);
  return parts.join(", ") || pages(c);
}

// "(a) … (b) … (c) …" in one paragraph, as models and contracts write lists: an ordered list, lettered,
// roman or numbered like its markers. Needs at least two markers in sequence from the first ("(a)", "(b)").
const SEQUENCES = [
  ["a", "abcdefghijklmnopqrstuvwxyz".split("")], ["i", ["i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x"]],
  ["1", Array.from({ length: 30 }, (_, i) => String(i + 1))],
];

function letteredList(p) {
  const text = p.textContent;
  for (const [type, seq] of SEQUENCES) {
    const found = [];
    let from = 0;
    for (const marker of seq) {
      const at = findMarker(text, `(${marker})`, from);
      if (at < 0) break;
      found.push([at, marker.length + 2]);
      from = at + marker.length + 2;
    }
    if (found.length >= 2) return splitIntoList(p, found, type);
  }
}

// A marker counts at the start or after a space or colon, and before a space: "(b) lists", not "f(b)".
function findMarker(text, marker, from) {
  for (let at = text.indexOf(marker, from); at >= 0; at = text.indexOf(marker, at + 1)) {
    const before = at === 0 ? " " : text[at - 1];
    const after = text[at + marker.length] ?? "";
    if (/[\s:;,—–-]/.test(before) && /\s/.test(after)) return at;
  }
  return -1;
}

// Cuts the paragraph's nodes at the markers with Ranges, so links, emphasis and citations survive.
function splitIntoList(p, found, type) {
  const point = textPoints(p);
  const doc = p.ownerDocument;
  const rangeOf = (start, end) => { const r = doc.createRange(); r.setStart(...point(start)); r.setEnd(...point(end)); return r; };
  const total = p.textContent.length;
  const items = found.map(([at, len], i) => rangeOf(at + len, i + 1 < found.length ? found[i + 1][0] : total).cloneContents());
  const intro = rangeOf(0, found[0][0]).cloneContents();
  const list = doc.createElement("ol");
  list.type = type;
  list.className = "lettered";
  for (const frag of items) {
    const li = doc.createElement("li");
    li.append(frag);
    trimEdges(li);
    list.append(li);
  }
  const head = doc.createElement("p");
  head.append(intro);
  trimEdges(head);
  p.replaceWith(...(head.textContent.trim() ? [head, list] : [list]));
}

function textPoints(root) {
  const nodes = [];
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let offset = 0;
  while (walker.nextNode()) { nodes.push([walker.currentNode, offset]); offset += walker.currentNode.nodeValue.length; }
  return (pos) => {
    for (let i = nodes.length - 1; i >= 0; i -= 1) if (nodes[i][1] <= pos) return [nodes[i][0], Math.min(pos - nodes[i][1], nodes[i][0].nodeValue.length)];
    return [root, 0];
  };
}

function trimEdges(node) {
  const first = node.firstChild, last = node.lastChild;
  if (first?.nodeType === 3) first.nodeValue = first.nodeValue.replace(/^\s+/, "");
  if (last?.nodeType === 3) last.nodeValue = last.nodeValue.replace(/(?:[\s;,]+(?:and|or))?[\s;,]*$/, "");
}

const STOP = new Set("a an and are as at be by for from has have how in is it its of on or that the this to was what when where which who why will with does do did can".split(" "));

export function queryTerms(query) {
  return [...new Set((query || "").toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) || [])].filter((t) => !STOP.has(t));
}

// Plain text with the query terms wrapped in <mark> (built with DOM nodes, never innerHTML).
export function highlightInto(target, text, terms) {
  target.textContent = "";
  if (!terms.length) { target.textContent = text; return; }
  const escaped = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const re = new RegExp(`(${escaped.join("|")})`, "giu");
  let last = 0;
  for (const m of text.matchAll(re)) {
    target.append(text.slice(last, m.index));
    const mark = document.createElement("mark");
    mark.textContent = m[0];
    target.append(mark);
    last = m.index + m[0].length;
  }
  target.append(text.slice(last));
}

// The sentence of a passage with the most query terms (the first on a tie): what the viewer highlights.
export function bestSentence(text, terms) {
  const sentences = (text || "").split(/(?<=[.!?])\s+|\n+/).map((x) => x.trim()).filter(Boolean);
  let best = sentences[0] || "", score = -1;
  for (const sentence of sentences) {
    const lower = sentence.toLowerCase();
    const hits = terms.filter((t) => lower.includes(t)).length;
    if (hits > score) { best = sentence; score = hits; }
  }
  return best.slice(0, 1000);
}

// The part of a long passage that holds the most (and rarest) query terms (about `size` characters).
export function bestSnippet(text, terms, size = 420) {
  const t = (text || "").replace(/\s+/g, " ").trim();
  if (t.length <= size || !terms.length) return t.length > size ? `${t.slice(0, size)}…` : t;
  const lower = t.toLowerCase();
  // Rare terms weigh more: a window with "bluejay" beats one with "page" four times.
  const weight = Object.fromEntries(terms.map((x) => [x, 1 / Math.max(1, lower.split(x).length - 1)]));
  let best = 0, bestScore = -1;
  for (const term of [...terms].sort((a, b) => weight[b] - weight[a])) { // ties go to the rarest term's window
    for (let i = lower.indexOf(term); i >= 0; i = lower.indexOf(term, i + 1)) {
      const start = Math.max(0, i - 80);
      const win = lower.slice(start, start + size);
      const score = terms.filter((x) => win.includes(x)).reduce((sum, x) => sum + weight[x], 0);
      if (score > bestScore) { bestScore = score; best = start; }
    }
  }
  return `${best > 0 ? "…" : ""}${t.slice(best, best + size)}${best + size < t.length ? "…" : ""}`;
}
