// Boot: config, theme, routes (#/chat/<id>, #/indexes, #/verify, #/settings), responsive sidebar.
import { initAccount } from "./account.js";
import { renderAccount } from "./admin.js";
import { gateway, loadConfig } from "./api.js";
import { initChat, openSession, renderPicker } from "./chat.js";
import { renderIndexes } from "./indexes.js";
import { initSessions, refreshSessions } from "./sessions.js";
import { applyTheme, renderSettings, setCapabilities } from "./settings.js";
import { el } from "./util.js";
import { renderVerify } from "./verify.js";
import { initViewer } from "./viewer.js";
import { closeSidePanel, initSidePanel } from "./inspector.js";

const views = { chat: "view-chat", indexes: "view-indexes", verify: "view-verify", settings: "view-settings", account: "view-account" };
const titles = { chat: "Chat", indexes: "Indexes", verify: "Check a text", settings: "Settings", account: "Account" };
let models = { backends: [] };
let modelsReady = Promise.resolve();

function show(name) {
  if (name !== "chat") closeSidePanel();
  for (const [k, id] of Object.entries(views)) document.getElementById(id).hidden = k !== name;
  document.getElementById("view-title").textContent = titles[name];
  document.body.dataset.view = name;
  for (const a of document.querySelectorAll(".navlink")) a.toggleAttribute("aria-current", a.getAttribute("href") === `#/${name}`);
  closeSidebar();
}

async function route() {
  const [, name = "chat", id = ""] = location.hash.split("/");
  if (name === "indexes") { show("indexes"); await renderIndexes(document.getElementById("view-indexes")); return; }
  if (name === "verify") { show("verify"); await renderVerify(document.getElementById("view-verify")); return; }
  if (name === "account") { show("account"); await renderAccount(document.getElementById("view-account")); return; }
  if (name === "settings") { show("settings"); await modelsReady; renderSettings(document.getElementById("view-settings"), models); return; }
  show("chat");
  renderPicker();
  await openSession(id || null);
}

function closeSidebar() {
  document.body.classList.remove("sidebar-open");
  document.getElementById("scrim").hidden = true;
  document.getElementById("menu-toggle").setAttribute("aria-expanded", "false");
}

function initSidebar() {
  const toggle = document.getElementById("menu-toggle");
  toggle.addEventListener("click", () => {
    const open = !document.body.classList.contains("sidebar-open");
    document.body.classList.toggle("sidebar-open", open);
    document.getElementById("scrim").hidden = !open;
    toggle.setAttribute("aria-expanded", String(open));
    if (open) document.getElementById("new-chat").focus();
  });
  document.getElementById("scrim").addEventListener("click", closeSidebar);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && document.body.classList.contains("sidebar-open")) closeSidebar(); });
  document.getElementById("new-chat").addEventListener("click", () => {
    if (location.hash === "#/chat" || location.hash === "") route(); else location.hash = "#/chat";
    setTimeout(() => document.getElementById("question")?.focus(), 0);
  });
}

async function checkServices() {
  const box = document.getElementById("service-status");
  let ok = false;
  try {
    const health = await gateway("GET", "/health");
    ok = health.status === "ok";
    box.replaceChildren(el("span", { class: `health ${ok ? "ok" : "warn"}`, title: ok ? "Gateway and RAG API are up" : "The RAG API is not ready",
      text: ok ? "Ready" : "RAG API unavailable" }));
  } catch (err) {
    box.replaceChildren(el("span", { class: "health bad", title: err.message, text: "Gateway unreachable" }));
  }
  setTimeout(checkServices, ok ? 60_000 : 5_000); // a service coming back shows up by itself
}

async function boot() {
  applyTheme();
  await loadConfig();
  await initAccount(); // the login page first, when accounts are on
  initViewer();
  initSidePanel();
  initSidebar();
  initSessions(() => { location.hash = "#/chat"; });
  initChat(document.getElementById("view-chat"));
  window.addEventListener("hashchange", route);
  checkServices();
  modelsReady = gateway("GET", "/models").then((m) => { models = { ...m, backends: m.backends || [] }; setCapabilities(models); }).catch(() => {});
  await refreshSessions();
  await route();
  document.body.dataset.ready = "true";
}

boot();
