// The index card's synced-folder line: "Synced 2 minutes ago · 3 files updated", a Sync now button, and
// (while no folder is bound) a field to bind a folder on the server. The RAG API does the work
// (Documentation/indexing.md, "Synced folders"); this only shows it and asks for a sync.
import { gateway } from "./api.js";
import { el, plainReason, toast } from "./util.js";

const REFRESH_MS = 30000; // the "N minutes ago" moves on while the card is open
const POLL_MS = 1000; // while a sync runs

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function ago(iso, now = Date.now()) {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${plural(m, "minute")} ago`;
  const h = Math.round(m / 60);
  return h < 24 ? `${plural(h, "hour")} ago` : `${plural(Math.round(h / 24), "day")} ago`;
}

export function syncText(state, now = Date.now()) {
  if (state.state === "queued" || state.state === "running") return "Syncing…";
  const last = state.last_sync;
  if (!last) return state.folders?.length ? "Not synced yet" : "";
  if (last.error) return `Sync failed ${ago(last.at, now)}: ${plainReason(last.error)}`;
  const parts = [`Synced ${ago(last.at, now)}`];
  parts.push(last.files_changed ? `${plural(last.files_changed, "file")} updated` : "no changes");
  if (last.failed?.length) parts.push(`${last.failed.length} could not be read`);
  if (last.held?.length) parts.push(`${last.held.length} still being written`);
  return parts.join(" · ");
}

export function syncSection(ix, onSynced) {
  const line = el("p", { class: "small sync-line", id: "sync-line", "aria-live": "polite" });
  const folders = el("p", { class: "muted small", id: "sync-folders" });
  const button = el("button", { type: "button", class: "btn small", id: "sync-now", text: "Sync now" });
  const input = el("input", { name: "folder", id: "sync-folder", maxlength: 4096, placeholder: "/path/on/the/server" });
  const bindForm = el("form", { class: "row wrap", id: "sync-bind", "aria-label": "Sync a folder" },
    el("label", { class: "field grow" }, el("span", { text: "Keep in sync with a folder" }), input),
    el("button", { type: "submit", class: "btn small", text: "Sync folder" }));
  const box = el("div", { class: "sync", id: "index-sync" }, el("div", { class: "row wrap" }, line, button), folders, bindForm);
  let timer = 0;
  let first = true;
  let running = false;

  const show = (state) => {
    const bound = state.folders || [];
    line.textContent = syncText(state);
    const last = state.last_sync;
    const files = last && !last.error ? (last.added || 0) + (last.updated || 0) + (last.unchanged || 0) : null;
    folders.textContent = bound.length ? `Folder${bound.length === 1 ? "" : "s"}: ${bound.join(", ")}`
      + (files === null ? "" : ` · ${plural(files, "file")} indexed`) : "";
    button.hidden = !bound.length;
    bindForm.hidden = bound.length > 0;
    running = state.state === "queued" || state.state === "running";
    button.disabled = running;
  };
  const refresh = async () => {
    clearTimeout(timer);
    if (!box.isConnected && !first) return; // the card was replaced: stop
    first = false;
    const wasRunning = running;
    try {
      show(await gateway("GET", `/indexes/${ix.id}/sync`));
    } catch (err) {
      line.textContent = `Sync status unavailable: ${plainReason(err.message)}`;
    }
    if (wasRunning && !running && onSynced) Promise.resolve(onSynced()).catch((err) => toast(err.message));
    timer = setTimeout(refresh, running ? POLL_MS : REFRESH_MS);
  };
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await gateway("POST", `/indexes/${ix.id}/sync`, {});
      running = true;
      line.textContent = "Syncing…";
    } catch (err) { toast(err.message); }
    refresh();
  });
  bindForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await gateway("POST", `/indexes/${ix.id}/sync/folders`, { folder: input.value.trim() });
      running = true;
    } catch (err) { toast(err.message); }
    refresh();
  });
  button.hidden = true;
  refresh();
  return box;
}
