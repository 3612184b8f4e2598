// "Export": the open conversation as Markdown (gateway GET /sessions/<id>/export?format=md), downloaded as a file.
// The answers keep their [n] markers; each citation names its document and page and links to the page image.
import { gatewayBlob } from "./api.js";
import { el, toast } from "./util.js";

export function exportControl(currentSession) {
  const btn = el("button", { type: "button", class: "btn small export-chat", id: "export-chat", text: "Export",
    title: "Download this conversation as Markdown, with each citation's document, page and a link to the page" });
  btn.addEventListener("click", async () => {
    const sid = currentSession();
    if (!sid) { toast("Nothing to export yet: ask a question first."); return; }
    btn.disabled = true;
    try {
      const blob = await gatewayBlob(`/sessions/${encodeURIComponent(sid)}/export?format=md`);
      const url = URL.createObjectURL(blob);
      const title = document.querySelector(`.session[data-id="${sid}"] .session-link`)?.textContent || "conversation";
      const a = el("a", { href: url, download: `${title.replace(/[^\p{L}\p{N}._-]+/gu, "-").replace(/^-|-$/g, "").slice(0, 60) || "conversation"}.md` });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      toast(`Could not export: ${err.message}`);
    } finally {
      btn.disabled = false;
    }
  });
  return btn;
}
