// Model output is always rendered as sanitised Markdown; [n] markers become citation chips.
import { marked } from "/vendor/marked.esm.js";
import DOMPurify from "/vendor/purify.es.mjs";

marked.use({ gfm: true, breaks: false });

const CITE = /\[(\d{1,3})\](?!\()/g;

export function renderMarkdown(target, text, citations = []) {
  const html = DOMPurify.sanitize(marked.parse(cleanText(text)), { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form", "input"] });
  target.innerHTML = html;
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
      frag.append(node.nodeValue.slice(last, m.index));
      const n = Number(m[1]);
      const chip = document.createElement("button");
      chip.type = "button";
      chip.className = "cite";
      chip.dataset.n = String(n);
      chip.textContent = String(n);
      const c = known.get(n);
      chip.title = c ? `${displayName(c.document_name)}, ${pages(c)}` : `Source ${n}`;
      chip.setAttribute("aria-label", `Citation ${n}${c ? `: ${displayName(c.document_name)}, ${pages(c)}` : ""}`);
      if (!c) chip.disabled = known.size > 0;
      frag.append(chip);
      last = m.index + m[0].length;
    }
    frag.append(node.nodeValue.slice(last));
    node.replaceWith(frag);
  }
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
