// Sharing an index (accounts on): who owns it, who else may read or write it; the owner or an admin changes it.
import { gateway, session } from "./api.js";
import { el, toast } from "./util.js";

export function shareSection(ix) {
  const box = el("section", { class: "sharing", id: "sharing", "aria-labelledby": "sharing-title" });
  if (!session.accounts) return "";
  const list = el("ul", { class: "shares", role: "list", id: "share-list", "aria-label": "Shared with" });
  const owner = el("p", { class: "muted small", id: "share-owner" });
  const who = el("input", { name: "user", id: "share-user", required: true, placeholder: "user name or everyone", autocomplete: "off" });
  const access = el("select", { name: "access", id: "share-access" },
    el("option", { value: "read", text: "may read and ask" }), el("option", { value: "write", text: "may also upload and build" }));
  const form = el("form", { class: "row wrap", id: "share-form" },
    el("label", { class: "field grow" }, el("span", { text: "Share with" }), who),
    el("label", { class: "field" }, el("span", { text: "Access" }), access),
    el("button", { type: "submit", class: "btn", text: "Share" }));
  box.append(el("h3", { id: "sharing-title", text: "Sharing" }), owner, list, form);

  const paint = (data) => {
    owner.textContent = data.owner ? `Owner: ${data.owner}` : "Owner: an admin (made before accounts)";
    list.textContent = "";
    if (!data.shares.length) list.append(el("li", { class: "muted", text: "Not shared: only the owner and admins see it." }));
    for (const s of data.shares) {
      const name = s.username || s.grantee;
      list.append(el("li", { class: "share", dataset: { grantee: name } },
        el("span", { class: "fname", text: name }), el("span", { class: "muted small", text: s.access }),
        el("button", { type: "button", class: "btn small", text: "Revoke", "aria-label": `Stop sharing with ${name}`,
          onclick: async () => {
            try { paint(await gateway("DELETE", `/indexes/${ix.id}/shares/${encodeURIComponent(s.grantee)}`)); } catch (err) { toast(err.message); }
          } })));
    }
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!who.value.trim()) { who.focus(); return; }
    try {
      paint(await gateway("POST", `/indexes/${ix.id}/shares`, { user: who.value.trim(), access: access.value }));
      who.value = "";
    } catch (err) { toast(err.message); }
  });
  gateway("GET", `/indexes/${ix.id}/shares`).then(paint).catch(() => { box.hidden = true; });
  return box;
}
