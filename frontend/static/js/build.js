// Build progress: the RAG API's job event stream folded into per-file rows as each file moves on;
// polling the gateway instead when the stream cannot be opened or breaks off.
import { gateway, streamJobEvents } from "./api.js";
import { el, errorBox } from "./util.js";

// The same fold as the RAG API's job record (rag_system/api/jobs.py), so streamed rows match a polled record.
const FILE_STATES = {
  file_started: "running", file_converted: "converting", file_chunked: "chunked", file_embedded: "embedded",
  file_written: "done", file_unchanged: "unchanged", file_failed: "failed", file_duplicate: "duplicate", file_removed: "removed",
};
const FILE_DONE = new Set(["file_written", "file_unchanged", "file_failed", "file_duplicate"]);
const FINISHED = new Set(["done", "failed", "cancelled"]);
const POLL_MS = 400;
let following = null; // the AbortController of the build shown now; a new one stops the old

export function stopFollowing() {
  following?.abort();
  following = null;
}

export function shortName(path) {
  return String(path).split("/").pop().replace(/^[0-9a-f]{64}_/, "");
}

export function countsText(pages, chunks) {
  const parts = [];
  if (pages != null) parts.push(`${pages} page${pages === 1 ? "" : "s"}`);
  if (chunks != null) parts.push(`${chunks} chunk${chunks === 1 ? "" : "s"}`);
  return parts.join(" · ");
}

// Follows job `jobId` of index `indexId` in `box`; `onFinished(job)` runs once the gateway recorded the outcome.
export function followBuild(indexId, jobId, box, onFinished) {
  following?.abort();
  const ctl = new AbortController();
  following = ctl;
  const bar = el("progress", { max: 1, value: 0, id: "build-bar", "aria-label": "Build progress" });
  const label = el("span", { class: "small", id: "build-label", role: "status", text: "Build queued…" });
  const list = el("ul", { class: "job-files", role: "list", "aria-label": "Files of this build" });
  box.replaceChildren(el("div", { class: "row" }, bar, label), list);
  delete box.dataset.state;
  const rows = new Map();
  const progress = { done: 0, total: 0 };

  const row = (path) => {
    let r = rows.get(path);
    if (!r) {
      r = { path, state: "queued", pages: null, chunks: null, error: null,
        li: el("li", { class: "job-file", dataset: { state: "queued" } },
          el("span", { class: "fname", text: shortName(path) }), el("span", { class: "status" }),
          el("span", { class: "muted small counts" }), el("span", { class: "bad small file-error" })) };
      rows.set(path, r);
      list.append(r.li);
    }
    return r;
  };
  const paint = (r) => {
    const [, status, counts, error] = r.li.children;
    r.li.dataset.state = r.state;
    r.li.className = `job-file s-${r.state}`;
    status.className = `status s-${r.state}`;
    status.textContent = r.state;
    counts.textContent = countsText(r.pages, r.chunks);
    error.textContent = r.error || "";
  };
  const paintBar = (state) => {
    bar.max = Math.max(progress.total, 1);
    bar.value = progress.done;
    label.textContent = `${state}: ${progress.done} / ${progress.total} files`;
  };
  const showRecord = (job) => {
    Object.assign(progress, job.progress || {});
    for (const f of job.files || []) {
      const r = row(f.path);
      Object.assign(r, { state: f.state, pages: f.pages ?? r.pages, chunks: f.chunks ?? r.chunks, error: f.error });
      paint(r);
    }
    paintBar(job.state);
  };
  const fail = (err, retry) => {
    if (ctl.signal.aborted) return;
    box.replaceChildren(errorBox(err, retry));
  };

  // The gateway's job route also records the outcome on the index and its documents.
  const settle = async () => {
    let job;
    try {
      job = await gateway("GET", `/indexes/${indexId}/jobs/${jobId}`);
    } catch (err) { fail(err, () => followBuild(indexId, jobId, box, onFinished)); return; }
    if (ctl.signal.aborted) return;
    showRecord(job);
    if (!FINISHED.has(job.state)) { setTimeout(settle, POLL_MS); return; } // polling, or the stream ended early
    box.dataset.state = job.state;
    label.textContent = job.state === "done" ? `Build finished: ${progress.done} / ${progress.total} files`
      : `Build ${job.state}: ${job.error?.message || job.error || ""}`;
    onFinished(job);
  };

  const onEvent = (type, data) => {
    if (type === "build_started") {
      progress.total = Number(data.to_process || 0) + Number(data.unchanged || 0);
      paintBar("running");
      return;
    }
    if (!data.path || !(type in FILE_STATES)) return;
    const r = row(data.path);
    r.state = FILE_STATES[type];
    if (data.pages != null) r.pages = data.pages;
    if (data.chunks != null) r.chunks = data.chunks;
    if (type === "file_failed") r.error = data.reason || "unknown error";
    if (type === "file_duplicate") progress.total += 1;
    if (FILE_DONE.has(type)) progress.done += 1;
    paint(r);
    paintBar("running");
  };

  box.dataset.transport = "sse";
  streamJobEvents(jobId, onEvent, ctl.signal)
    .catch((err) => { if (err?.name !== "AbortError") box.dataset.transport = "poll"; })
    .finally(() => { if (!ctl.signal.aborted) settle(); });
  return ctl;
}
