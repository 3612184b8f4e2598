// Build progress: the RAG API's job event stream folded into per-file rows as each file moves on;
// polling the gateway instead when the stream cannot be opened or breaks off.
import { gateway, streamJobEvents } from "./api.js";
import { el, errorBox, plainReason } from "./util.js";

// The same fold as the RAG API's job record (rag_system/api/jobs.py), so streamed rows match a polled record.
const FILE_STATES = {
  file_started: "running", file_converted: "converting", file_chunked: "chunked", file_embedding: "embedding", file_embedded: "embedded",
  file_written: "done", file_unchanged: "unchanged", file_failed: "failed", file_duplicate: "duplicate", file_removed: "removed",
  file_held: "held",
};
const FILE_DONE = new Set(["file_written", "file_unchanged", "file_failed", "file_duplicate", "file_held"]);
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

export function countsText(pages, chunks, embedded = null) {
  const parts = [];
  if (pages != null) parts.push(`${pages} page${pages === 1 ? "" : "s"}`);
  if (embedded != null && chunks) parts.push(`embedding ${embedded}/${chunks} chunks`);
  else if (chunks != null) parts.push(`${chunks} chunk${chunks === 1 ? "" : "s"}`);
  return parts.join(" · ");
}

const STAGES = { planning: "Starting", detecting_language: "Detecting the documents' language", converting: "Reading files", embedding: "Embedding", refreshing: "Updating the search index",
  finishing: "Finishing", done: "Done" };
// What the builder is doing to a file, after its latest event.
const ACTIVITY = { file_started: "reading", file_converted: "chunking", file_chunked: "queued for embedding", file_embedding: "embedding",
  file_embedded: "saving", file_written: "saved", file_unchanged: "unchanged:", file_failed: "failed:", file_duplicate: "duplicate:",
  file_held: "changed while read, taken next time:" };
const num = (n) => Number(n || 0).toLocaleString("en");
const secs = (s) => (s >= 90 ? `${Math.round(s / 60)} min` : `${Math.max(1, Math.round(s))} s`);

// "3 files: 2 indexed, 1 failed — blank.txt: no text found": what a finished build did, failures apart.
export function outcomeText(rows) {
  const counts = { done: 0, unchanged: 0, failed: 0, duplicate: 0, held: 0 };
  for (const r of rows) if (r.state in counts) counts[r.state] += 1;
  const parts = [[counts.done, "indexed"], [counts.unchanged, "unchanged"], [counts.duplicate, "duplicate"], [counts.held, "held"],
    [counts.failed, "failed"]]
    .filter(([n]) => n).map(([n, what]) => `${n} ${what}`);
  const total = rows.length;
  const failed = rows.filter((r) => r.state === "failed");
  const why = failed.length ? ` — ${failed.map((r) => `${shortName(r.path)}: ${plainReason(r.error || "unknown error")}`).join("; ")}` : "";
  return `${total} file${total === 1 ? "" : "s"}: ${parts.join(", ") || "nothing to do"}${why}`;
}

// Follows job `jobId` of index `indexId` in `box`; `onFinished(job)` runs once the gateway recorded the outcome.
export function followBuild(indexId, jobId, box, onFinished) {
  following?.abort();
  const ctl = new AbortController();
  following = ctl;
  const bar = el("progress", { max: 1, value: 0, id: "build-bar", "aria-label": "Build progress" });
  const label = el("span", { class: "small", id: "build-label", role: "status", text: "Build queued…" });
  const eta = el("span", { class: "small muted", id: "build-eta" });
  const list = el("ul", { class: "job-files", role: "list", "aria-label": "Files of this build" });
  box.replaceChildren(el("div", { class: "row wrap build-head" }, bar, label, eta), list);
  delete box.dataset.state;
  box.scrollIntoView({ block: "nearest", behavior: "smooth" });
  const rows = new Map();
  const progress = { done: 0, total: 0 };
  let overall = null, overallAt = 0, activity = "";
  label.setAttribute("aria-busy", "true"); // read out once the build ends, not at every step
  // The clock between events: elapsed time and the ETA count down, so a quiet step still shows life.
  const tick = () => {
    if (!overall) return;
    const since = (performance.now() - overallAt) / 1000;
    const left = overall.eta_s == null ? "" : `, about ${secs(Math.max(overall.eta_s - since, 1))} left`;
    eta.textContent = `${secs(overall.elapsed_s + since)} elapsed${left}`;
  };
  const clock = setInterval(() => {
    if (ctl.signal.aborted || box.dataset.state) { clearInterval(clock); return; }
    tick();
  }, 1000);

  const row = (path) => {
    let r = rows.get(path);
    if (!r) {
      r = { path, state: "queued", pages: null, chunks: null, embedded: null, error: null,
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
    counts.textContent = countsText(r.pages, r.chunks, r.state === "embedding" ? r.embedded : null);
    error.textContent = r.error ? plainReason(r.error) : "";
  };
  const paintBar = (state, p = overall) => {
    if (p && p.fraction !== undefined) {
      overall = p;
      overallAt = performance.now();
      if (state === "running") tick(); // the clock shows from the first event, not a second later
      bar.max = 1;
      bar.value = p.fraction;
      const failed = p.files_failed ? `, ${p.files_failed} failed` : "";
      const chunks = p.chunks_total ? ` · ${num(p.chunks_done)} / ${num(p.chunks_total)} chunks` : "";
      const now = activity && p.stage !== "refreshing" ? ` · ${activity}` : "";
      label.textContent = `${STAGES[p.stage] || state}: ${Math.floor(p.fraction * 100)}% · ${progress.done} of ${progress.total} files${failed}${chunks}${now}`;
      return;
    }
    bar.max = Math.max(progress.total, 1);
    bar.value = progress.done;
    label.textContent = `${state}: ${progress.done} / ${progress.total} files`;
  };
  const showRecord = (job) => {
    Object.assign(progress, job.progress || {});
    for (const f of job.files || []) {
      const r = row(f.path);
      Object.assign(r, { state: f.state, pages: f.pages ?? r.pages, chunks: f.chunks ?? r.chunks, embedded: f.chunks_done ?? r.embedded, error: f.error });
      paint(r);
    }
    paintBar(job.state, job.overall?.fraction !== undefined ? job.overall : overall);
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
    label.removeAttribute("aria-busy");
    clearInterval(clock);
    eta.textContent = overall ? `took ${secs(overall.elapsed_s)}` : "";
    bar.max = 1;
    bar.value = job.state === "done" ? 1 : bar.value;
    const outcome = outcomeText([...rows.values()].filter((r) => r.state !== "removed"));
    label.textContent = job.state === "done" ? `Build finished. ${outcome}`
      : `Build ${job.state}: ${plainReason(job.error?.message || job.error || "")}`;
    box.dataset.failed = String([...rows.values()].filter((r) => r.state === "failed").length);
    onFinished(job);
  };

  const onEvent = (type, data) => {
    if (type === "build_preparing") { // before the plan: the build is working from its first second
      progress.total = Number(data.files || 0);
      activity = data.reading ? `reading ${shortName(data.reading)}` : "";
      paintBar("running", data.progress);
      return;
    }
    if (type === "build_started") {
      activity = "";
      progress.total = Number(data.to_process || 0) + Number(data.unchanged || 0);
      paintBar("running", data.progress);
      return;
    }
    if (!data.path || !(type in FILE_STATES)) { if (data.progress) paintBar("running", data.progress); return; }
    const r = row(data.path);
    r.state = FILE_STATES[type];
    activity = `${ACTIVITY[type] || r.state} ${shortName(data.path)}`;
    if (data.pages != null) r.pages = data.pages;
    if (data.chunks != null) r.chunks = data.chunks;
    if (data.chunks_done != null) r.embedded = data.chunks_done;
    if (type === "file_failed") r.error = data.reason || "unknown error";
    if (type === "file_duplicate") progress.total += 1;
    if (FILE_DONE.has(type)) progress.done += 1;
    paint(r);
    paintBar("running", data.progress || overall);
  };

  box.dataset.transport = "sse";
  streamJobEvents(jobId, onEvent, ctl.signal, indexId)
    .catch((err) => { if (err?.name !== "AbortError") box.dataset.transport = "poll"; })
    .finally(() => { if (!ctl.signal.aborted) settle(); });
  return ctl;
}
