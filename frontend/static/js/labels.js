// Plain words for what the RAG API reports in codes: where an answer came from, how a turn ended.
// Each label has a one-line explanation shown as its tooltip. The codes stay in data attributes.

export const SOURCES = {
  llm: ["Answer from the documents", "Written by the model from the cited passages; every citation was checked against its passage."],
  llm_repaired: ["Answer from the documents", "Written by the model from the cited passages; its citations were corrected once and checked again."],
  extractive: ["Quoted from the documents", "Sentences copied word for word from the cited passages."],
  mixed: ["Partly quoted", "Some parts written by the model, the others quoted where the model's text did not pass the check."],
  refusal: ["Not in the documents", "The indexed documents do not answer this, so nothing was made up."],
  direct: ["Not from the documents", "A reply that needed no document: a greeting, or no index was picked."],
  clarification: ["Which document?", "A document name matched several documents, or none: pick one."],
};

export const STATUSES = {
  stopped: ["Stopped", "You stopped this answer; the text so far is kept."],
  cancelled: ["Stopped", "This answer was stopped before it was complete."],
  error: ["Failed", "This answer could not be completed."],
};

export function sourceLabel(code) {
  return SOURCES[code] || [String(code || ""), ""];
}

export function statusLabel(code) {
  return STATUSES[code] || [String(code || ""), ""];
}

// `confidence` (0-1, with `verify` on: how well the cited passages support the answer) in plain words.
export function confidenceLabel(value) {
  if (typeof value !== "number" || Number.isNaN(value)) return null;
  const level = value >= 0.8 ? "high" : value >= 0.5 ? "medium" : "low";
  const words = { high: "Well supported", medium: "Partly supported", low: "Weakly supported" }[level];
  return { level, text: words, why: `How well the cited passages support this answer (checked because "Rate how well the answer is supported" is on): ${Math.round(value * 100)}%` };
}
