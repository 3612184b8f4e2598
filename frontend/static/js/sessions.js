// The conversations sidebar: new, rename, delete, search.
import { gateway } from "./api.js";
import { confirmDialog, el, toast } from "./util.js";

export const sessionState = { list: [], current: null, filter: "" };
let onSelect = () => {};

export function initSessions(selectCallback) {
  onSelect = selectCallback;
  document.getElementById("session-search").addEventListener("input", (e) => {
    sessionState.filter = e.target.value.trim().toLowerCase();
    renderList();
  });
}

export async function refreshSessions() {
  try {
    sessionState.list = (await gateway("GET", "/sessions")).sessions;
  } catch (err) {
    toast(err.message);
  }
  renderList();
}

export async function createSession() {
  const { session } = await gateway("POST", "/sessions", { title: "New Chat" });
  sessionState.list.unshift(session);
  renderList();
  return session;
}

function renderList() {
  const nav = document.getElementById("session-list");
  nav.textContent = "";
  const shown = sessionState.list.filter((s) => !sessionState.filter || s.title.toLowerCase().includes(sessionState.filter));
  if (!shown.length) nav.append(el("p", { class: "muted small", text: sessionState.filter ? "No conversation matches." : "No conversations yet." }));
  const ul = el("ul", { role: "list" });
  for (const s of shown) {
    const active = s.id === sessionState.current;
    const li = el("li", { class: `session${active ? " active" : ""}`, dataset: { id: s.id } },
      el("a", { href: `#/chat/${s.id}`, class: "session-link", "aria-current": active ? "page" : null, text: s.title || "Untitled" }),
      el("button", { type: "button", class: "btn icon small", "aria-label": `Rename “${s.title}”`, title: "Rename", onclick: () => rename(s, li), text: "✎" }),
      el("button", { type: "button", class: "btn icon small", "aria-label": `Delete “${s.title}”`, title: "Delete", onclick: () => remove(s), text: "×" }));
    ul.append(li);
  }
  nav.append(ul);
}

function rename(s, li) {
  const input = el("input", { type: "text", class: "rename-input", value: s.title, "aria-label": "New title", maxlength: 200 });
  li.replaceChildren(input);
  input.focus();
  input.select();
  let done = false;
  const finish = async (commit) => {
    if (done) return;
    done = true;
    const title = input.value.trim();
    if (commit && title && title !== s.title) {
      try {
        const { session } = await gateway("POST", `/sessions/${s.id}/rename`, { title });
        Object.assign(s, session);
      } catch (err) { toast(err.message); }
    }
    renderList();
  };
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") finish(true);
    if (e.key === "Escape") finish(false);
  });
  input.addEventListener("blur", () => finish(true));
}

async function remove(s) {
  if (!(await confirmDialog(`Delete the conversation “${s.title}”? Its messages are removed.`))) return;
  try {
    await gateway("DELETE", `/sessions/${s.id}`);
    sessionState.list = sessionState.list.filter((x) => x.id !== s.id);
    if (sessionState.current === s.id) onSelect(null);
    renderList();
  } catch (err) { toast(err.message); }
}

export function markCurrent(id) {
  sessionState.current = id;
  renderList();
}

export function touchSession(session) {
  const i = sessionState.list.findIndex((s) => s.id === session.id);
  if (i >= 0) sessionState.list.splice(i, 1);
  sessionState.list.unshift(session);
  renderList();
}
