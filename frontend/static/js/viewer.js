// The page viewer: the cited page as an image from the gateway, the quote highlighted.
import { gatewayFileUrl, gatewayImage } from "./api.js";
import { cleanText, where } from "./markdown.js";
import { el } from "./util.js";
import { showSection } from "./viewer_text.js";

const dialog = () => document.getElementById("page-viewer");
let current = null;
const NOT_A_PDF = "This document is not a PDF, so there is no page image; the cited text is shown above.";

export function initViewer() {
  document.getElementById("viewer-close").addEventListener("click", () => dialog().close());
  dialog().addEventListener("close", () => {
    current?.abort();
    const img = document.querySelector("#viewer-body img");
    if (img?.src.startsWith("blob:")) URL.revokeObjectURL(img.src);
  });
  dialog().addEventListener("click", (e) => { if (e.target === dialog()) dialog().close(); });
}

const setTitle = (c, page) => {
  const at = page ? `page ${page}` : where(c);
  document.getElementById("viewer-title").textContent = `[${c.n}] ${c.document_name}${at ? ` — ${at}` : ""}`;
};

export async function openCitation(c) {
  const body = document.getElementById("viewer-body");
  setTitle(c, null);
  body.textContent = "";
  const quote = el("blockquote", { class: "quote", text: cleanText(c.quote) });
  const frame = el("div", { class: "page-frame", "aria-busy": "true" }, el("div", { class: "spinner", "aria-label": "Loading page" }));
  body.append(quote, frame,
    el("p", {}, el("a", { href: gatewayFileUrl(c.document_id), target: "_blank", rel: "noopener noreferrer", text: "Open the original file" })));
  dialog().showModal();
  // Only PDF pages render as images: do not ask the gateway for the others (it would answer 415);
  // a text file opens at its lines, HTML and the rest at their section.
  if (!/\.pdf$/i.test(c.document_name || "")) { await showSection(c, frame, NOT_A_PDF); return; }
  if (!c.page_start) { frame.replaceChildren(el("p", { class: "muted", text: "This source has no page numbers; the cited text is shown above." })); return; }
  const last = Math.max(c.page_end || c.page_start, c.page_start);
  let n = opening(c);
  let update = () => setTitle(c, n);
  if (last > c.page_start) {
    const label = el("span", { class: "small", id: "viewer-page", "aria-live": "polite" });
    const prev = el("button", { type: "button", class: "btn small", id: "viewer-prev", text: "‹ Previous page" });
    const next = el("button", { type: "button", class: "btn small", id: "viewer-next", text: "Next page ›" });
    const nav = el("div", { class: "row viewer-nav" }, prev, label, next);
    body.insertBefore(nav, frame);
    const go = (delta) => { n = Math.min(last, Math.max(c.page_start, n + delta)); update(); showPage(c, n, frame); };
    update = () => {
      setTitle(c, n); // the title names the page shown, not the one the viewer opened on
      label.textContent = `Page ${n} (cited ${c.page_start}–${last})`; prev.disabled = n === c.page_start; next.disabled = n === last;
    };
    prev.addEventListener("click", () => go(-1));
    next.addEventListener("click", () => go(1));
  }
  update();
  // The sentence is not where the citation said (an answer saved before sentences had pages, a passage
  // across a page break): look for it on the passage's other pages, nearest after first, and open that one.
  if (await showPage(c, n, frame) === false) {
    const others = [...range(n + 1, last), ...range(c.page_start, n - 1)];
    for (const page of others) {
      if (!dialog().open) return;
      if (await showPage(c, page, frame) === true) { n = page; update(); return; }
    }
    await showPage(c, n, frame);
  }
}

const range = (from, to) => Array.from({ length: Math.max(to - from + 1, 0) }, (_, i) => from + i);

// The page of the cited sentence when the RAG API located it, else the first of the cited range.
function opening(c) {
  const page = Number(c.location?.page);
  const last = Math.max(c.page_end || c.page_start, c.page_start);
  return page >= c.page_start && page <= last ? page : c.page_start;
}

// Shows page `n`; returns whether the quote was found on it (null: unknown or failed).
async function showPage(c, n, frame) {
  current?.abort();
  current = new AbortController();
  frame.setAttribute("aria-busy", "true");
  const q = new URLSearchParams({ highlight: (c.quote || "").slice(0, 1000) });
  try {
    const { blob, found } = await gatewayImage(`/documents/${encodeURIComponent(c.document_id)}/pages/${n}.png?${q}`, current.signal);
    const old = frame.querySelector("img");
    if (old?.src.startsWith("blob:")) URL.revokeObjectURL(old.src);
    const img = el("img", { class: "page-image", alt: `Page ${n} of ${c.document_name}, the cited text highlighted`,
      src: URL.createObjectURL(blob), dataset: { page: String(n), highlight: found === null ? "" : String(found) } });
    frame.replaceChildren(img);
    return found;
  } catch (err) {
    if (err.name === "AbortError") return null;
    const msg = err.code === "not_a_pdf" ? NOT_A_PDF : err.message;
    frame.replaceChildren(el("p", { class: "muted", text: msg }));
    return null;
  } finally {
    frame.removeAttribute("aria-busy");
  }
}
