// Remove one document from an index (gateway DELETE /indexes/<id>/documents/<document id>), after a confirmation.
// The gateway removes its chunks through the RAG API first, so it is never retrieved or cited again; then the
// document and its uploaded file. The index stays, with its other documents.
import { gateway } from "./api.js";
import { confirmDialog, el, toast } from "./util.js";

export function removeDocumentButton(ix, doc, onRemoved) {
  const btn = el("button", { type: "button", class: "btn icon small remove-doc", text: "×", title: "Remove from the index",
    "aria-label": `Remove ${doc.filename} from ${ix.name}` });
  btn.addEventListener("click", async () => {
    const ok = await confirmDialog(`Remove “${doc.filename}” from the index “${ix.name}”? Its passages are deleted and `
      + "answers will no longer cite it. The other documents stay.", "Remove");
    if (!ok) return;
    btn.disabled = true;
    try {
      await gateway("DELETE", `/indexes/${encodeURIComponent(ix.id)}/documents/${encodeURIComponent(doc.id)}`);
      toast(`Removed ${doc.filename}`);
      await onRemoved();
    } catch (err) {
      btn.disabled = false;
      toast(`Could not remove ${doc.filename}: ${err.message}`);
    }
  });
  return btn;
}
