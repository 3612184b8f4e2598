// Talking to the gateway (:8000) and the RAG API (:8001). URLs come from /config.json.

export const config = { gatewayUrl: "http://127.0.0.1:8000", ragUrl: "http://127.0.0.1:8001", apiToken: "" };

// Accounts (account.js fills this in): the login cookie goes with every gateway call, state changes carry
// the CSRF token, and the RAG API gets a short-lived grant per stream instead of any shared token.
export const session = { accounts: false, csrf: "", user: null, onSignedOut: () => {} };

export async function loadConfig() {
  const resp = await fetch("/config.json", { cache: "no-store" });
  Object.assign(config, await resp.json());
  return config;
}

export class ApiError extends Error {
  constructor(message, { status = 0, code = "", retryable = true } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryable = retryable;
  }
}

function authHeaders(extra = {}, method = "GET") {
  const headers = { ...extra };
  if (session.accounts) {
    if (method !== "GET" && method !== "HEAD" && session.csrf) headers["X-CSRF-Token"] = session.csrf;
  } else if (config.apiToken) headers.Authorization = `Bearer ${config.apiToken}`;
  return headers;
}

const credentials = () => (session.accounts ? "include" : "same-origin");

function signedOut(resp) {
  if (resp.status === 401 && session.accounts) session.onSignedOut();
}

// A grant for the RAG API naming what this stream may read (POST /auth/rag-token); none without accounts.
async function ragAuth(grant, extra) {
  if (!session.accounts) return authHeaders(extra);
  const { token } = await gateway("POST", "/auth/rag-token", grant);
  return { ...extra, Authorization: `Bearer ${token}` };
}

async function errorFrom(resp, service) {
  let code = "", message = "";
  try {
    const body = await resp.json();
    code = body?.code || body?.error?.code || "";
    message = body?.message || body?.error?.message || (typeof body?.error === "string" ? body.error : "");
  } catch { /* not JSON */ }
  if (!message) message = `${service} answered ${resp.status} ${resp.statusText}`;
  return new ApiError(message, { status: resp.status, code, retryable: resp.status >= 500 || resp.status === 429 });
}

function unreachable(service, url, err) {
  if (err?.name === "AbortError") return err;
  return new ApiError(`Cannot reach the ${service} at ${url}. Is it running?`, { code: "unreachable" });
}

export async function gateway(method, path, body) {
  const init = { method, headers: authHeaders({}, method), credentials: credentials() };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(config.gatewayUrl + path, init);
  } catch (err) {
    throw unreachable("gateway", config.gatewayUrl, err);
  }
  if (!resp.ok) { signedOut(resp); throw await errorFrom(resp, "The gateway"); }
  return resp.json();
}

async function gatewayGet(path, signal) {
  let resp;
  try {
    resp = await fetch(config.gatewayUrl + path, { headers: authHeaders(), signal, credentials: credentials() });
  } catch (err) {
    throw unreachable("gateway", config.gatewayUrl, err);
  }
  if (!resp.ok) throw await errorFrom(resp, "The gateway");
  return resp;
}

export async function gatewayBlob(path, signal) {
  return (await gatewayGet(path, signal)).blob();
}

// A page image and whether the gateway found the highlighted text on it (`X-Docent-Highlight`).
export async function gatewayImage(path, signal) {
  const resp = await gatewayGet(path, signal);
  const marked = resp.headers.get("X-Docent-Highlight");
  return { blob: await resp.blob(), found: marked ? marked === "found" : null };
}

export function gatewayFileUrl(documentId) {
  return `${config.gatewayUrl}/documents/${encodeURIComponent(documentId)}/file`;
}

// One file per request so each file gets its own progress bar.
export function uploadFile(indexId, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${config.gatewayUrl}/indexes/${encodeURIComponent(indexId)}/upload`);
    xhr.withCredentials = session.accounts;
    for (const [k, v] of Object.entries(authHeaders({}, "POST"))) xhr.setRequestHeader(k, v);
    xhr.upload.addEventListener("progress", (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); });
    xhr.addEventListener("load", () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* ignore */ }
      if (xhr.status >= 200 && xhr.status < 300) return resolve(body);
      reject(new ApiError(body?.message || body?.error?.message || `Upload failed (${xhr.status})`, { status: xhr.status, code: body?.code || body?.error?.code || "" }));
    });
    xhr.addEventListener("error", () => reject(unreachable("gateway", config.gatewayUrl)));
    const form = new FormData();
    form.append("files", file, file.name);
    xhr.send(form);
  });
}

// POST /chat/stream on the RAG API; calls onEvent(type, data) for every SSE frame.
export async function streamChat(body, onEvent, signal) {
  const headers = await ragAuth({ session_id: body.session_id, indexes: body.indexes || [], purpose: "chat" },
    { "Content-Type": "application/json", Accept: "text/event-stream" });
  await ragEvents("/chat/stream", { method: "POST", signal, body: JSON.stringify(body), headers }, onEvent);
}

// GET /index/jobs/<id>/events on the RAG API: the build's events from the start, then live, until the job ends.
// fetch rather than EventSource, because EventSource cannot send the bearer token.
export async function streamJobEvents(jobId, onEvent, signal, indexId) {
  const headers = await ragAuth({ indexes: indexId ? [indexId] : [], purpose: "progress" }, { Accept: "text/event-stream" });
  await ragEvents(`/index/jobs/${encodeURIComponent(jobId)}/events`, { signal, headers }, onEvent);
}

// Opens an event stream on the RAG API and hands each frame to onEvent until the stream ends.
async function ragEvents(path, init, onEvent) {
  let resp;
  try {
    resp = await fetch(`${config.ragUrl}${path}`, init);
  } catch (err) {
    throw unreachable("RAG API", config.ragUrl, err);
  }
  if (!resp.ok) throw await errorFrom(resp, "The RAG API");
  await readEvents(resp, onEvent);
}

// Parses `data: {"type", "data"}` frames (blank-line separated; comment lines are heartbeats).
async function readEvents(resp, onEvent) {
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (!data) continue; // heartbeat comment
      let event;
      try { event = JSON.parse(data); } catch { continue; }
      onEvent(event.type, event.data || {});
    }
  }
}
