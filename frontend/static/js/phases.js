// The phase chips of an answer reloaded from history, rebuilt from the pipeline events saved with it
// (the RAG API stores them as `steps`: every event but tokens, plus one `first_token` marker).

// Which phase each saved event shows was reached; the live stream in chat.js moves through the same ones.
const PHASE_OF = {
  analyze: "analyzing", decomposition: "analyzing",
  retrieval_started: "retrieving", retrieval_retry: "retrieving", retrieval_done: "retrieving",
  rerank_started: "reranking", rerank_done: "reranking",
  context_expand_started: "expanding", context_expand_done: "expanding",
  first_token: "writing", backend_fallback: "writing", direct_answer: "writing", cache_hit: "writing", complete: "writing",
  citations: "checking", answer_repaired: "checking", answer_replaced: "checking", refusal: "checking",
};

// Marks each chip of `list` done or skipped; a stopped or failed turn shows the phase it stopped in.
// Returns false when there is nothing to show (an answer saved without its steps).
export function replayPhases(list, steps, { status = "complete", answer_source: source } = {}) {
  if (!Array.isArray(steps) || !steps.length) return false;
  const reached = new Set(steps.map((s) => PHASE_OF[s?.type]).filter(Boolean));
  if (source === "llm" || source === "llm_repaired") reached.add("checking");
  const chips = [...list.querySelectorAll("[data-phase]")];
  const last = chips.findLastIndex((chip) => reached.has(chip.dataset.phase));
  chips.forEach((chip, i) => {
    // A turn that ended early never got to the phases after the last one it reached: they stay pending.
    const unreached = status === "complete" || i < last ? "skipped" : "pending";
    chip.dataset.state = reached.has(chip.dataset.phase) ? "done" : unreached;
  });
  if (status !== "complete" && last >= 0) chips[last].dataset.state = "stopped";
  list.dataset.replayed = "true";
  return true;
}
