// The index manager: create, drag-and-drop upload with per-file progress, build with live progress, documents, delete.
import { gateway, uploadFile } from "./api.js";
import { countsText, followBuild, stopFollowing } from "./build.js";
import { shareSection } from "./sharing.js";
import { syncSection } from "./sync.js";
import { confirmDialog, el, errorBox, plainReason, toast } from "./util.js";
import { removeDocumentButton } from "./documents.js";

const num = (n) => Number(n || 0).toLocaleString("en");
const FILE_TYPES = ".pdf,.docx,.pptx,.xlsx,.xls,.csv,.tsv,.tab,.html,.htm,.md,.markdown,.txt,.epub,.odt,.ods,.odp,.rtf,"
  + ".eml,.mbox,.doc,.ppt";
let root = null;
let selected = null;
export const indexState = { list: [] };

export async function loadIndexes() {
  indexState.list = (await gateway("GET", "/indexes")).indexes;
  return indexState.list;
}

export async function renderIndexes(container, selectId = selected) {
  root = container;
  selected = selectId;
  stopFollowing();
  root.textContent = "";
  const createForm = el("form", { class: "card create-index", id: "create-index", "aria-label": "Create an index" },
    el("h2", { text: "New index" }),
    el("div", { class: "row wrap" },
      el("label", { class: "field grow" }, el("span", { text: "Name" }), el("input", { name: "name", required: true, maxlength: 120, placeholder: "e.g. Handbooks" })),
      el("label", { class: "field grow" }, el("span", { text: "Description" }), el("input", { name: "description", maxlength: 500, placeholder: "optional" })),
      // The embedder is chosen once per index (Documentation/indexing.md, "Embedders").
      el("label", { class: "field" }, el("span", { text: "Language" }),
        el("select", { name: "embedder", id: "index-embedder", title: "Chosen once: the search model suited to the documents' language" },
          el("option", { value: "", text: "Detect from the files" }),
          el("option", { value: "bge-small", text: "English (bge-small)" }),
          el("option", { value: "minilm", text: "English (MiniLM, older)" }),
          el("option", { value: "e5-small", text: "Any language (multilingual e5)" }))),
      el("button", { type: "submit", class: "btn primary", text: "Create" })));
  createForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = new FormData(createForm);
    try {
      const body = { name: data.get("name").trim(), description: data.get("description").trim() };
      if (data.get("embedder")) body.embedder = data.get("embedder");
      const { index_id: id } = await gateway("POST", "/indexes", body);
      await renderIndexes(root, id);
    } catch (err) { toast(err.message); }
  });
  const layout = el("div", { class: "index-layout" });
  root.append(createForm, layout);
  let list;
  try {
    list = await loadIndexes();
  } catch (err) {
    layout.append(errorBox(err, () => renderIndexes(root, selected)));
    return;
  }
  const ul = el("ul", { class: "index-list card", role: "list", "aria-label": "Indexes" });
  if (!list.length) ul.append(el("li", { class: "muted", text: "No index yet: create one above." }));
  for (const ix of list) {
    ul.append(el("li", { class: ix.id === selected ? "active" : "" },
      el("button", { type: "button", class: "index-pick", "aria-pressed": String(ix.id === selected), dataset: { id: ix.id },
        onclick: () => renderIndexes(root, ix.id).then(showDetail) },
      el("span", { class: "index-name", text: ix.name }),
      el("span", { class: `status s-${ix.metadata?.status || "created"}`, text: ix.metadata?.status || "created" }),
      el("span", { class: "muted small count", text: docCount(ix) }))));
  }
  layout.append(ul);
  const current = list.find((i) => i.id === selected);
  if (current) layout.append(detail(current));
}

// At phone width the detail opens below the form and the list: bring it into view, or the click seems to do nothing.
function showDetail() {
  document.getElementById("index-detail")?.scrollIntoView({ block: "nearest" });
}

function detail(ix) {
  const box = el("div", { class: "card index-detail", id: "index-detail", dataset: { id: ix.id } });
  const fileInput = el("input", { type: "file", multiple: true, accept: FILE_TYPES, class: "visually-hidden", id: "file-input" });
  const drop = el("div", { class: "dropzone", id: "dropzone", tabindex: "0", role: "button", "aria-label": "Upload files: drop them here or press Enter to choose" },
    el("strong", { text: "Drop files here" }), el("span", { class: "muted", text: ` or press to choose (${FILE_TYPES.replaceAll(",", " ")})` }));
  const uploads = el("ul", { class: "uploads", role: "list", "aria-label": "Uploads" });
  const buildBtn = el("button", { type: "button", class: "btn primary", id: "build-index", text: "Build index", disabled: ix.metadata?.status === "building" });
  const progress = el("div", { class: "build-progress", id: "build-progress" });
  const docs = el("ul", { class: "documents", role: "list", id: "documents", "aria-label": "Documents" });
  renderDocs(docs, ix.documents, ix);

  box.append(
    el("div", { class: "row between" }, el("h2", { text: ix.name }),
      el("button", { type: "button", class: "btn danger small", id: "delete-index", text: "Delete index", onclick: async () => {
        if (!(await confirmDialog(`Delete the index “${ix.name}”, its documents and its uploaded files?`))) return;
        try { await gateway("DELETE", `/indexes/${ix.id}`); selected = null; renderIndexes(root, null); } catch (err) { toast(err.message); }
      } })),
    ix.description ? el("p", { class: "muted", text: ix.description }) : "", // (append(null) would print "null")
    ix.metadata?.embedder ? el("p", { class: "muted small", id: "index-embedder-name", text: `Embedder: ${ix.metadata.embedder}` }) : "",
    syncSection(ix, async () => { // a sync ended: the index's status and counts may have changed
      const fresh = await gateway("GET", `/indexes/${ix.id}`);
      refreshListItem(fresh);
      renderDocs(docs, fresh.documents, fresh);
    }),
    fileInput, drop, uploads, el("div", { class: "row" }, buildBtn), progress,
    el("h3", { text: "Documents" }), docs, shareSection(ix));

  const handleFiles = async (files) => {
    const jobs = [...files].map((file) => {
      const bar = el("progress", { max: 1, value: 0, "aria-label": `Upload of ${file.name}` });
      const state = el("span", { class: "small muted", text: "uploading" });
      const li = el("li", { class: "upload", dataset: { name: file.name, state: "uploading" } }, el("span", { class: "fname", text: file.name }), bar, state);
      uploads.append(li);
      // The bar measures bytes sent; only the gateway's answer says whether the file was taken.
      return uploadFile(ix.id, file, (p) => { bar.value = Math.min(p, 0.99); })
        .then(() => { bar.value = 1; state.textContent = "uploaded"; state.className = "small ok"; li.dataset.state = "uploaded"; })
        .catch((err) => {
          bar.remove();
          state.textContent = `not uploaded: ${plainReason(err.message)}`;
          state.className = "small bad";
          li.dataset.state = "rejected";
        });
    });
    await Promise.all(jobs);
    const fresh = await gateway("GET", `/indexes/${ix.id}`);
    renderDocs(docs, fresh.documents, fresh);
    refreshListItem(fresh);
  };
  drop.addEventListener("click", () => fileInput.click());
  drop.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); fileInput.click(); } });
  fileInput.addEventListener("change", () => { handleFiles(fileInput.files); fileInput.value = ""; });
  for (const t of ["dragenter", "dragover"]) drop.addEventListener(t, (e) => { e.preventDefault(); drop.classList.add("over"); });
  for (const t of ["dragleave", "drop"]) drop.addEventListener(t, () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => { e.preventDefault(); handleFiles(e.dataTransfer.files); });

  buildBtn.addEventListener("click", async () => {
    buildBtn.disabled = true;
    try {
      const started = await gateway("POST", `/indexes/${ix.id}/build`, {});
      if (started.index) refreshListItem(started.index); // the card says "building" at once
      follow(ix.id, started.job_id, progress, docs, buildBtn);
    } catch (err) {
      progress.replaceChildren(errorBox(err, () => buildBtn.click()));
      buildBtn.disabled = false;
    }
  });
  if (ix.metadata?.status === "building" && ix.metadata?.last_job_id) follow(ix.id, ix.metadata.last_job_id, progress, docs, buildBtn);
  return box;
}

function follow(indexId, jobId, box, docs, buildBtn) {
  buildBtn.disabled = true;
  followBuild(indexId, jobId, box, async () => {
    buildBtn.disabled = false;
    try {
      const fresh = await gateway("GET", `/indexes/${indexId}`);
      renderDocs(docs, fresh.documents, fresh);
      refreshListItem(fresh);
    } catch (err) { toast(err.message); }
  });
}

// "2 documents, 5 pages · 1 failed": a file that failed is not a searchable document, so it is counted apart.
function docCount(ix) {
  const documents = ix.documents || [];
  const chunks = ix.metadata?.chunks || 0;
  if (ix.metadata?.origin === "cli" && !documents.length) return `from the command line · ${num(chunks)} chunk${chunks === 1 ? "" : "s"}`;
  if (ix.metadata?.synced && !documents.length) return "from a synced folder";
  const current = documents.filter((d) => !d.replaced); // an older upload of a name is replaced at the next build
  const failed = current.filter((d) => d.status === "failed").length;
  const n = current.length ? current.length - failed : (ix.document_count ?? 0);
  const pages = ix.page_count || 0;
  const docs = `${n} document${n === 1 ? "" : "s"}`;
  return `${pages ? `${docs}, ${pages} page${pages === 1 ? "" : "s"}` : docs}${failed ? ` · ${failed} failed` : ""}`;
}

function refreshListItem(ix) {
  const pick = root?.querySelector(`.index-pick[data-id="${ix.id}"]`);
  if (!pick) return;
  const status = ix.metadata?.status || "created";
  pick.querySelector(".status").textContent = status;
  pick.querySelector(".status").className = `status s-${status}`;
  pick.querySelector(".count").textContent = docCount(ix);
}

function renderDocs(ul, documents = [], ix = null) {
  ul.textContent = "";
  if (!documents.length && ix?.metadata?.origin === "cli") {
    ul.append(el("li", { class: "muted", text: "Built with the command line (python -m rag_system index): its files stay where they are, "
      + "so they are not listed here. Files you upload are added to it." }));
    return;
  }
  if (!documents.length && ix?.metadata?.synced) {
    ul.append(el("li", { class: "muted", text: "The synced folder's files stay where they are, so they are not listed here: "
      + "the sync line above says how many there are and what the last sync changed. Files you upload are added too." }));
    return;
  }
  if (!documents.length) { ul.append(el("li", { class: "muted", text: "No documents yet." })); return; }
  const refresh = async () => {
    const fresh = await gateway("GET", `/indexes/${ix.id}`);
    renderDocs(ul, fresh.documents, fresh);
    refreshListItem(fresh);
  };
  for (const d of documents) {
    ul.append(el("li", { class: "doc", dataset: { name: d.filename, id: d.id, replaced: String(!!d.replaced) } },
      el("span", { class: "fname", text: d.filename }),
      el("span", { class: `status s-${d.replaced ? "replaced" : d.status}`, text: d.replaced ? "replaced at the next build" : d.status }),
      el("span", { class: "muted small size", text: `${(d.size / 1024).toFixed(1)} KB` }),
      el("span", { class: "muted small pages", text: countsText(d.page_count, null) }),
      ix ? removeDocumentButton(ix, d, refresh) : null,
      d.error ? el("span", { class: "bad small doc-error", text: plainReason(d.error) }) : null));
  }
}
