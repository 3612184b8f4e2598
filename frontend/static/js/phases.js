// The pipeline phases of an answer: which event shows which phase was reached, and how a finished answer's
// chips end up. The live stream (chat.js) and an answer reloaded from history (its saved `steps`, where one
// `first_token` marker stands for the tokens) go through the same rules, so both show the same chips.

export const PHASES = [
  ["analyzing", "Analyzing"], ["retrieving", "Retrieving"], ["reranking", "Reranking"],
  ["expanding", "Expanding"], ["writing", "Writing"], ["checking", "Checking citations"],
];

// A refusal reaches no phase of its own: it is the outcome, shown by the badge.
const PHASE_OF = {
  analyze: "analyzing", decomposition: "analyzing",
  retrieval_started: "retrieving", retrieval_retry: "retrieving", retrieval_done: "retrieving",
  rerank_started: "reranking", rerank_done: "reranking",
  context_expand_started: "expanding", context_expand_done: "expanding",
  token: "writing", first_token: "writing", backend_fallback: "writing", direct_answer: "writing", cache_hit: "writing",
  generation_started: "writing", checking: "writing", // the model writes; each sentence is checked before it shows
  task_part: "writing",
  citations: "checking", answer_repaired: "checking", answer_replaced: "checking", answer_corroborated: "checking",
};

// Answer sources that were written (by the model or by quoting), and those whose citations the validator checked.
const WRITTEN = new Set(["llm", "llm_repaired", "extractive", "direct", "mixed"]);
const CHECKED = new Set(["llm", "llm_repaired"]);

export function phaseOf(type) { return PHASE_OF[type]; }

// The phases a finished answer reached: those its events reached, plus what its source implies.
export function reachedPhases(types, source) {
  const reached = new Set(types.map(phaseOf).filter(Boolean));
  if (WRITTEN.has(source)) reached.add("writing");
  if (CHECKED.has(source)) reached.add("checking");
  return reached;
}

// Marks each chip done or skipped (skipped chips are hidden once the answer is over); a stopped or failed
// turn keeps the phases after the one it stopped in pending, and shows that one stopped.
export function settlePhases(list, reached, status = "complete") {
  const chips = [...list.querySelectorAll("[data-phase]")];
  const last = chips.findLastIndex((chip) => reached.has(chip.dataset.phase));
  chips.forEach((chip, i) => {
    const unreached = status === "complete" || i < last ? "skipped" : "pending";
    chip.dataset.state = reached.has(chip.dataset.phase) ? "done" : unreached;
  });
  if (status !== "complete" && last >= 0) chips[last].dataset.state = "stopped";
}

// History: returns false when there is nothing to show (an answer saved without its steps).
export function replayPhases(list, steps, { status = "complete", answer_source: source } = {}) {
  if (!Array.isArray(steps) || !steps.length) return false;
  settlePhases(list, reachedPhases(steps.map((s) => s?.type), source), status);
  list.dataset.replayed = "true";
  return true;
}

// The phases a request can reach: re-ranking only when it asks for it, expanding only with surrounding text.
// A chip for a phase that cannot run would vanish at the end and shift the chips after it.
export function possiblePhases(options = {}) {
  return PHASES.filter(([key]) => (key !== "reranking" || options.ai_rerank !== false)
    && (key !== "expanding" || options.context_expand !== false));
}

// When a live answer ends, a skipped phase before one that ran keeps its place (invisible), so the chips
// after it do not move; skipped phases at the end of the row go.
export function keepPhasePlaces(list) {
  const chips = [...list.querySelectorAll("[data-phase]:not([hidden])")];
  const last = chips.findLastIndex((chip) => chip.dataset.state === "done" || chip.dataset.state === "stopped");
  chips.forEach((chip, i) => { chip.dataset.keepPlace = String(chip.dataset.state === "skipped" && i < last); });
}
