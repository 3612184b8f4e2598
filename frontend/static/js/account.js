// Accounts: the login page, the user's name and "Sign out" in the header (Documentation/security.md).
// Without accounts (single-user mode) none of this shows and the app behaves as before.
import { config, gateway, session } from "./api.js";
import { el } from "./util.js";

// Without credentials: in single-user mode the gateway grants no credentialed CORS, and none is needed.
async function status() {
  const resp = await fetch(`${config.gatewayUrl}/auth/status`, { credentials: "omit", cache: "no-store" });
  if (!resp.ok) throw new Error(`The gateway answered ${resp.status}`);
  return resp.json();
}

async function currentUser() {
  const resp = await fetch(`${config.gatewayUrl}/auth/me`, { credentials: "include", cache: "no-store" });
  return resp.ok ? resp.json() : null; // 401: not signed in (or the session ended)
}

// Resolves once someone is signed in (at once when accounts are off or the cookie is still good).
export async function initAccount() {
  let state;
  try { state = await status(); } catch { return; } // the service banner says the gateway is down
  if (!state.accounts) return;
  session.accounts = true;
  const me = await currentUser().catch(() => null);
  if (me?.user) signedIn(me.user, me.csrf_token);
  else {
    const { user, csrf_token: csrf } = await loginPage();
    signedIn(user, csrf);
  }
  session.onSignedOut = () => { location.reload(); }; // a 401 later: the session ended, show the login page
}

function signedIn(user, csrf) {
  session.user = user;
  session.csrf = csrf || "";
  const box = document.getElementById("account");
  const out = el("button", { type: "button", class: "btn", id: "sign-out", text: "Sign out" });
  out.addEventListener("click", async () => {
    out.disabled = true;
    await gateway("POST", "/auth/logout").catch(() => {});
    location.reload();
  });
  box.replaceChildren(el("span", { class: "who", id: "account-name", title: `Signed in as ${user.username} (${user.role})`, text: user.username }),
    el("span", { class: "small muted role", text: user.role }), out);
  box.hidden = false;
  document.getElementById("nav-account").hidden = false;
}

function loginPage() {
  const app = document.getElementById("app");
  app.hidden = true;
  const error = el("p", { class: "login-error", id: "login-error", role: "alert" });
  const name = el("input", { id: "login-username", name: "username", autocomplete: "username", required: true, autocapitalize: "none", spellcheck: "false" });
  const pass = el("input", { id: "login-password", name: "password", type: "password", autocomplete: "current-password", required: true });
  const submit = el("button", { type: "submit", class: "btn primary wide", id: "login-submit", text: "Sign in" });
  const form = el("form", { class: "card login-card", "aria-labelledby": "login-title", novalidate: true },
    el("div", { class: "brand" }, el("span", { class: "logo", "aria-hidden": "true", text: "D" }), " Docent"),
    el("h1", { id: "login-title", text: "Sign in" }),
    el("div", { class: "field" }, el("label", { for: "login-username", text: "User name" }), name),
    el("div", { class: "field" }, el("label", { for: "login-password", text: "Password" }), pass),
    error, submit);
  const screen = el("main", { class: "login", id: "login" }, form);
  document.body.append(screen);
  name.focus();
  return new Promise((resolve) => {
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (!name.value.trim() || !pass.value) { error.textContent = "Enter your user name and password."; (name.value.trim() ? pass : name).focus(); return; }
      submit.disabled = true;
      error.textContent = "";
      try {
        const resp = await fetch(`${config.gatewayUrl}/auth/login`, {
          method: "POST", credentials: "include", headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ username: name.value.trim(), password: pass.value }),
        });
        const body = await resp.json().catch(() => ({}));
        if (!resp.ok) throw new Error(body.message || `Sign-in failed (${resp.status})`);
        pass.value = "";
        screen.remove();
        app.hidden = false;
        resolve(body);
      } catch (err) {
        error.textContent = err.message === "Failed to fetch" ? `Cannot reach the gateway at ${config.gatewayUrl}.` : err.message;
        pass.select();
        pass.focus();
      } finally {
        submit.disabled = false;
      }
    });
  });
}
