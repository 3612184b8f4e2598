// Calls every method of localGPT's `chatAPI` (src/lib/api.ts, compiled with its own TypeScript)
// against Docent's running services, in the order its web app uses them. Each call's result is
// checked for the fields localGPT's components read; any rejection fails the run. Prints one JSON
// line: {"ok": [names...], "failed": [{name, error}...]}. Run by test_localgpt_client.py.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(import.meta.url);
const [apiJs, docPath] = process.argv.slice(2);
const { chatAPI } = require(apiJs);

const ok = [];
const failed = [];
async function step(name, fn) {
  try {
    const value = await fn();
    ok.push(name);
    return value;
  } catch (error) {
    failed.push({ name, error: String(error && error.stack ? error.stack : error) });
    return undefined;
  }
}
function expect(cond, what) {
  if (!cond) throw new Error(`unexpected result: ${what}`);
}

const doc = new File([readFileSync(docPath)], "policy.md", { type: "text/markdown" });
const question = "How many days of annual leave do employees accrue?";

await step("checkHealth", async () => {
  const h = await chatAPI.checkHealth();
  expect(typeof h.ollama_running === "boolean" && Array.isArray(h.available_models), JSON.stringify(h));
});
await step("getModels", async () => {
  const m = await chatAPI.getModels();
  expect(Array.isArray(m.generation_models) && Array.isArray(m.embedding_models), JSON.stringify(m));
});
const index = await step("createIndex", async () => {
  const r = await chatAPI.createIndex("api.ts index", "from Node");
  expect(typeof r.index_id === "string", JSON.stringify(r));
  return r;
});
await step("uploadFilesToIndex", async () => {
  const r = await chatAPI.uploadFilesToIndex(index.index_id, [doc]);
  expect(r.uploaded_files.length === 1, JSON.stringify(r));
});
await step("buildIndex", async () => {
  const r = await chatAPI.buildIndex(index.index_id, { chunkSize: 256 });
  expect(r.status === "ready", JSON.stringify(r).slice(0, 400));
});
await step("listIndexes", async () => {
  const r = await chatAPI.listIndexes();
  expect(r.indexes.some((i) => i.id === index.index_id && i.metadata.status === "ready"), "index listed ready");
});
const session = await step("createSession", async () => {
  const s = await chatAPI.createSession("api.ts session");
  expect(typeof s.id === "string" && s.title === "api.ts session", JSON.stringify(s));
  return s;
});
await step("linkIndexToSession", () => chatAPI.linkIndexToSession(session.id, index.index_id));
await step("getSessionIndexes", async () => {
  const r = await chatAPI.getSessionIndexes(session.id);
  expect(r.indexes.length === 1 && r.indexes[0].metadata.chunk_size === 256, JSON.stringify(r).slice(0, 400));
});
await step("sendSessionMessage", async () => {
  const r = await chatAPI.sendSessionMessage(session.id, question, { model: "extractive", aiRerank: true,
    composeSubAnswers: true, provencePrune: true, searchType: "hybrid", retrievalK: 10 });
  expect(r.response.includes("25 days") && r.used_rag === true && r.source_documents.length > 0,
    JSON.stringify(r).slice(0, 400));
});
let streamed = null;
await step("streamSessionMessage", async () => {
  const kinds = [];
  await chatAPI.streamSessionMessage({ query: question, session_id: session.id,
    table_name: `text_pages_${index.index_id}`, model: "extractive", aiRerank: true }, (evt) => {
    kinds.push(evt.type);
    if (evt.type === "complete") streamed = evt.data;
    if (evt.type === "retrieval_retry") expect(evt.data.signal !== undefined, "retry signal");
  });
  expect(streamed && streamed.answer.includes("25 days") && !kinds.includes("error"), kinds.join(","));
});
await step("saveStreamedTurn", async () => {
  const r = await chatAPI.saveStreamedTurn(session.id, question, streamed.answer, streamed.source_documents, undefined);
  expect(r.session && r.session.id === session.id, JSON.stringify(r));
});
await step("getSession", async () => {
  const r = await chatAPI.getSession(session.id);
  // two turns: the non-streamed one and the streamed one (saved by the RAG API and by this client once)
  expect(r.messages.length === 4, `messages: ${r.messages.length}`);
  const shown = r.messages.map((m) => chatAPI.convertDbMessage(m));
  const last = shown[3];
  const text = typeof last.content === "string" ? last.content
    : last.content.steps.find((s) => s.key === "final").details.answer;
  expect(text.includes("25 days"), JSON.stringify(last).slice(0, 400));
});
await step("messagesToHistory", async () => {
  const h = chatAPI.messagesToHistory([chatAPI.createMessage("hi", "user"), chatAPI.createMessage("hello", "assistant")]);
  expect(h.length === 2 && h[0].role === "user", JSON.stringify(h));
});
await step("renameSession", async () => {
  const r = await chatAPI.renameSession(session.id, "renamed from Node");
  expect(r.session.title === "renamed from Node", JSON.stringify(r));
});
await step("getSessions", async () => {
  const r = await chatAPI.getSessions();
  expect(r.sessions.some((s) => s.id === session.id && s.message_count === 4), JSON.stringify(r).slice(0, 400));
});
await step("uploadFiles", async () => {
  const r = await chatAPI.uploadFiles(session.id, [doc]);
  expect(r.uploaded_files.length === 1, JSON.stringify(r));
});
await step("indexDocuments", async () => {
  const r = await chatAPI.indexDocuments(session.id);
  expect(typeof r.message === "string", JSON.stringify(r));
});
await step("sendMessage", async () => {
  const r = await chatAPI.sendMessage({ message: "What is the capital of France?" });
  expect(typeof r.response === "string" && r.response.length > 0 && typeof r.message_count === "number",
    JSON.stringify(r));
});
await step("streamChatMessage", async () => {
  let done = null;
  await chatAPI.streamChatMessage({ message: "hello", conversation_history: [] }, (evt) => {
    if (evt.type === "complete") done = evt.data;
    if (evt.type === "error") throw new Error(evt.data.error);
  });
  expect(done && typeof done.response === "string" && done.response.length > 0, JSON.stringify(done));
});
await step("deleteSession", async () => {
  const r = await chatAPI.deleteSession(session.id);
  expect(r.deleted === true, JSON.stringify(r));
});
await step("deleteIndex", async () => {
  const r = await chatAPI.deleteIndex(index.index_id);
  expect(typeof r.message === "string", JSON.stringify(r));
});
await step("errors are strings", async () => {
  try {
    await chatAPI.renameSession("no-such-session", "x");
  } catch (error) {
    expect(!String(error).includes("[object Object]") && String(error).includes("no-such-session"), String(error));
    return;
  }
  throw new Error("renaming an unknown session did not fail");
});
process.stdout.write(JSON.stringify({ ok, failed }) + "\n");
