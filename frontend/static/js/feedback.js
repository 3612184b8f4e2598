// Thumbs up or down, with an optional comment, on every finished answer (gateway POST /messages/<id>/feedback).
// One rating per person and answer: pressing the other thumb changes it, the comment goes with it. An answer
// streamed from the RAG API is saved by the RAG API in the background, so its message id is looked up by the
// turn id when the first rating is given (a few tries, while the save lands).
import { gateway } from "./api.js";
import { el } from "./util.js";

const PROMPTS = { up: "Anything to add? (optional)", down: "What was wrong or missing? (optional)" };

// `where`: { messageId } for an answer read from the history, or { sessionId, turnId } for one just streamed.
export function attachFeedback(meta, where, current = null) {
  const state = { messageId: where.messageId || null, rating: current?.rating || null, comment: current?.comment || "" };
  const status = el("span", { class: "small muted feedback-status", role: "status" });
  const thumbs = ["up", "down"].map((rating) => el("button", {
    type: "button", class: "btn icon thumb", dataset: { rating }, "aria-pressed": String(state.rating === rating),
    "aria-label": rating === "up" ? "Good answer" : "Bad answer", title: rating === "up" ? "Good answer" : "Bad answer",
  }, thumbIcon(rating)));
  const text = el("textarea", { class: "feedback-comment", rows: 2, maxlength: 2000, "aria-label": "Comment on this answer" });
  const send = el("button", { type: "submit", class: "btn small", text: "Send comment" });
  const form = el("form", { class: "feedback-form", hidden: true }, text, send);
  const box = el("div", { class: "feedback", role: "group", "aria-label": "Rate this answer" }, ...thumbs, status, form);

  const save = async (rating, comment) => {
    status.textContent = "Saving…";
    try {
      state.messageId = state.messageId || await messageIdOf(where.sessionId, where.turnId);
      const { feedback } = await gateway("POST", `/messages/${encodeURIComponent(state.messageId)}/feedback`, { rating, comment });
      Object.assign(state, { rating: feedback.rating, comment: feedback.comment });
      for (const b of thumbs) b.setAttribute("aria-pressed", String(b.dataset.rating === state.rating));
      box.dataset.rating = state.rating;
      status.textContent = feedback.comment ? "Thanks: rating and comment saved" : "Thanks: rating saved";
      return true;
    } catch (err) {
      status.textContent = `Not saved: ${err.message}`;
      return false;
    }
  };
  for (const b of thumbs) {
    b.addEventListener("click", async () => {
      if (await save(b.dataset.rating, state.comment)) {
        text.placeholder = PROMPTS[state.rating];
        text.value = state.comment;
        form.hidden = false;
      }
    });
  }
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (state.rating && await save(state.rating, text.value.trim())) form.hidden = true;
  });
  if (state.rating) box.dataset.rating = state.rating;
  meta.append(box);
  return box;
}

// A thumb drawn as SVG (no emoji font is needed; it takes the button's colour); "down" is "up" turned over.
const THUMB = "M2 10h4v11H2zM8 10l4-8c1.7 0 3 1.3 3 3v3h5.2c1.2 0 2.1 1.1 1.9 2.3l-1.4 8.2c-.2 1-1 1.5-2 1.5H8z";
function thumbIcon(rating) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [k, v] of Object.entries({ viewBox: "0 0 24 24", width: "18", height: "18", "aria-hidden": "true",
    class: `thumb-icon${rating === "down" ? " down" : ""}` })) svg.setAttribute(k, v);
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", THUMB);
  svg.append(path);
  return svg;
}

async function messageIdOf(sessionId, turnId) {
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const { messages } = await gateway("GET", `/sessions/${encodeURIComponent(sessionId)}`);
    const answer = messages.find((m) => m.sender === "assistant" && m.turn_id === turnId);
    if (answer) return answer.id;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error("the answer is not saved yet; try again in a moment");
}
