// The account page (accounts on): your API tokens; for an admin also users, everyone's tokens and the audit log.
import { gateway, session } from "./api.js";
import { indexState, loadIndexes } from "./indexes.js";
import { el, errorBox, toast } from "./util.js";

const when = (iso) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "short", timeStyle: "short" }) : "never");
// An audit row's target is an index id, a user or a token: an index shows its name (the id stays in the tooltip).
const targetName = (target) => indexState.list.find((ix) => ix.id === target)?.name || target;

export async function renderAccount(container) {
  container.textContent = "";
  if (!session.accounts) {
    container.append(el("p", { class: "muted", text: "Accounts are off: this Docent runs in single-user mode (Documentation/security.md)." }));
    return;
  }
  container.append(tokensCard());
  if (session.user?.role === "admin") container.append(usersCard(), allTokensCard(), auditCard());
}

function card(id, title, ...children) {
  return el("section", { class: "card account-card", id, "aria-labelledby": `${id}-title` }, el("h2", { id: `${id}-title`, text: title }), ...children);
}

function tokensCard() {
  const list = el("ul", { class: "shares", role: "list", id: "token-list" });
  const shown = el("p", { class: "token-once", id: "token-once", role: "status" });
  const name = el("input", { name: "name", id: "token-name", maxlength: 100, placeholder: "e.g. nightly import", required: true });
  const form = el("form", { class: "row wrap", id: "token-form" },
    el("label", { class: "field grow" }, el("span", { text: "Token name" }), name),
    el("button", { type: "submit", class: "btn", text: "Create token" }));
  const load = async () => {
    list.textContent = "";
    const { tokens } = await gateway("GET", "/auth/tokens");
    if (!tokens.length) list.append(el("li", { class: "muted", text: "No API tokens." }));
    for (const t of tokens) {
      list.append(el("li", { class: "share", dataset: { id: t.id } }, el("span", { class: "fname", text: t.name }),
        el("span", { class: "muted small", text: `made ${when(t.created_at)}, last used ${when(t.last_used_at)}` }),
        el("button", { type: "button", class: "btn small", text: "Revoke", "aria-label": `Revoke the token ${t.name}`,
          onclick: async () => { try { await gateway("DELETE", `/auth/tokens/${t.id}`); await load(); } catch (err) { toast(err.message); } } })));
    }
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!name.value.trim()) { name.focus(); return; }
    try {
      const made = await gateway("POST", "/auth/tokens", { name: name.value.trim() });
      shown.replaceChildren("Copy it now, it is shown once: ", el("code", { text: made.token }));
      name.value = "";
      await load();
    } catch (err) { toast(err.message); }
  });
  load().catch((err) => list.replaceChildren(errorBox(err, load)));
  return card("tokens", "Your API tokens", el("p", { class: "muted small", text: "Scripts send a token as Authorization: Bearer <token>." }), list, form, shown);
}

function usersCard() {
  const rows = el("tbody", { id: "user-rows" });
  const table = el("table", { class: "users" }, el("thead", {}, el("tr", {}, ...["User", "Role", "Disabled", "Last sign-in"].map((h) => el("th", { scope: "col", text: h })))), rows);
  const name = el("input", { name: "username", id: "new-user-name", required: true, autocomplete: "off" });
  const role = el("select", { name: "role", id: "new-user-role" }, ...["viewer", "editor", "admin"].map((r) => el("option", { value: r, text: r })));
  const pass = el("input", { name: "password", id: "new-user-password", type: "password", autocomplete: "new-password", required: true, minlength: 8 });
  const form = el("form", { class: "row wrap", id: "user-form" },
    el("label", { class: "field grow" }, el("span", { text: "User name" }), name),
    el("label", { class: "field" }, el("span", { text: "Role" }), role),
    el("label", { class: "field grow" }, el("span", { text: "Password (8+ characters)" }), pass),
    el("button", { type: "submit", class: "btn primary", text: "Add user" }));
  const change = async (id, body) => { try { await gateway("POST", `/admin/users/${id}`, body); } catch (err) { toast(err.message); } await load(); };
  const load = async () => {
    const { users } = await gateway("GET", "/admin/users");
    rows.replaceChildren(...users.map((u) => {
      const pick = el("select", { "aria-label": `Role of ${u.username}` }, ...["viewer", "editor", "admin"].map((r) => el("option", { value: r, text: r, selected: r === u.role })));
      pick.addEventListener("change", () => change(u.id, { role: pick.value }));
      const off = el("input", { type: "checkbox", checked: u.disabled, "aria-label": `${u.username} is disabled` });
      off.addEventListener("change", () => change(u.id, { disabled: off.checked }));
      return el("tr", { dataset: { user: u.username } }, el("td", { text: u.username }), el("td", {}, pick), el("td", {}, off), el("td", { text: when(u.last_login_at) }));
    }));
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await gateway("POST", "/admin/users", { username: name.value.trim(), role: role.value, password: pass.value });
      name.value = ""; pass.value = "";
      await load();
    } catch (err) { toast(err.message); }
  });
  load().catch((err) => rows.replaceChildren(el("tr", {}, el("td", { colspan: 4 }, errorBox(err, load)))));
  return card("users", "Users", el("div", { class: "table-wrap" }, table), form);
}

function allTokensCard() {
  const list = el("ul", { class: "shares", role: "list", id: "all-tokens" });
  gateway("GET", "/admin/tokens").then(({ tokens }) => {
    if (!tokens.length) list.append(el("li", { class: "muted", text: "Nobody has an API token." }));
    for (const t of tokens) {
      list.append(el("li", { class: "share" }, el("span", { class: "fname", text: `${t.username}: ${t.name}` }),
        el("span", { class: "muted small", text: `last used ${when(t.last_used_at)}` }),
        el("button", { type: "button", class: "btn small", text: "Revoke", "aria-label": `Revoke ${t.username}'s token ${t.name}`,
          onclick: async (e) => { try { await gateway("DELETE", `/auth/tokens/${t.id}`); e.target.closest("li").remove(); } catch (err) { toast(err.message); } } })));
    }
  }).catch((err) => list.replaceChildren(errorBox(err, () => {})));
  return card("all-tokens-card", "Everyone's API tokens", list);
}

function auditCard() {
  const rows = el("tbody", { id: "audit-rows" });
  const more = el("button", { type: "button", class: "btn", id: "audit-more", text: "Older entries", hidden: true });
  let before = null;
  const load = async () => {
    if (!indexState.list.length) await loadIndexes().catch(() => null); // names for the "On" column; ids without
    const page = await gateway("GET", `/admin/audit?limit=50${before ? `&before=${before}` : ""}`);
    for (const a of page.entries) {
      rows.append(el("tr", {}, el("td", { text: String(a.seq) }), el("td", { text: when(a.at) }), el("td", { text: a.actor }),
        el("td", { text: a.action }), el("td", { class: "small", title: a.target, text: targetName(a.target) }), el("td", { text: a.address })));
    }
    before = page.next_before;
    more.hidden = !before;
  };
  more.addEventListener("click", () => load().catch((err) => toast(err.message)));
  load().catch((err) => rows.replaceChildren(el("tr", {}, el("td", { colspan: 6 }, errorBox(err, load)))));
  const table = el("table", { class: "audit" }, el("thead", {}, el("tr", {}, ...["#", "When", "Who", "What", "On", "From"].map((h) => el("th", { scope: "col", text: h })))), rows);
  return card("audit", "Audit log", el("p", { class: "muted small", text: "Each row is chained to the one before; python -m backend audit verify checks the chain." }),
    el("div", { class: "table-wrap" }, table), more);
}
