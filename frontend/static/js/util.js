export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

export function uuid() {
  return crypto.randomUUID ? crypto.randomUUID().replaceAll("-", "") :
    Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

let toastTimer = 0;
export function toast(message) {
  const t = document.getElementById("toast");
  t.textContent = message;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, 5000);
}

export function confirmDialog(text, okLabel = "Delete") {
  const dlg = document.getElementById("confirm-dialog");
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-ok").textContent = okLabel;
  dlg.returnValue = "";
  dlg.showModal();
  return new Promise((resolve) => dlg.addEventListener("close", () => resolve(dlg.returnValue === "ok"), { once: true }));
}

// What a person can do about an error the API names by its code, instead of the API's own words
// ("index '3f9c…' does not exist" for an index that was created but never built).
const REMEDIES = {
  index_not_found: {
    title: "This index has not been built yet. ",
    text: "Add documents to it and press Build, or untick it and ask again.",
    link: { href: "#/indexes", text: "Open Indexes" },
  },
};

export function errorBox(err, onRetry) {
  const remedy = REMEDIES[err?.code];
  const box = el("div", { class: "error-box", role: "alert", "data-code": err?.code || "" },
    el("strong", { text: remedy ? remedy.title : "Something went wrong. " }),
    el("span", { class: "error-message", text: remedy ? remedy.text : err?.message || String(err) }));
  if (remedy?.link) box.append(" ", el("a", { class: "remedy", href: remedy.link.href, text: remedy.link.text }));
  if (onRetry) box.append(el("button", { type: "button", class: "btn small retry", onclick: onRetry, text: "Retry" }));
  return box;
}

export function fmtMs(ms) {
  if (ms === undefined || ms === null) return "";
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

// A reason as a person should read it: stored paths become the file's name, upload hashes disappear.
export function plainReason(text) {
  return String(text || "")
    .replace(/(?:[A-Za-z]:)?(?:[\\/][^\s'"()\[\]:;,\\/]+)+[\\/]([^\s'"()\[\]:;,\\/]+)/g, "$1")
    .replace(/\b[0-9a-f]{64}_/g, "")
    .replace(/\b[0-9a-f]{32,64}\b/g, "…");
}
