// The one way pages talk to the server: the JSON API with the session cookie, the CSRF token on
// writes, and errors turned into plain Portuguese that names the field at fault.

import { format } from "./formats.js";

export const config = JSON.parse(document.getElementById("config").textContent);

function cookie(name) {
  const found = document.cookie.split("; ").find((c) => c.startsWith(name + "="));
  return found ? decodeURIComponent(found.slice(name.length + 1)) : "";
}

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.detail ? String(body.detail) : `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
    this.field = this.body.field || (this.body.errors && this.body.errors[0] && this.body.errors[0].field) || null;
  }
}

// The last part of a field path ("body.plate" → "plate", "query.from" → "from").
export function fieldName(path) {
  if (!path) return null;
  const parts = String(path).split(".").filter((p) => !["body", "query", "path"].includes(p) && !/^\d+$/.test(p));
  return parts.length ? parts[parts.length - 1] : null;
}

const STATUS_PT = {
  400: "O pedido tem um valor inválido",
  401: "Sua sessão terminou. Entre de novo",
  403: "Seu perfil não tem permissão para isso",
  404: "Não encontrado (ou fora do que seu perfil pode ver)",
  409: "Já existe um registro com esse valor ou ele conflita com outro",
  413: "O arquivo ou pedido é grande demais",
  415: "Tipo de arquivo não aceito",
  422: "Um campo está vazio ou com valor inválido",
  429: "Muitas tentativas. Aguarde um pouco e tente de novo",
  503: "O sistema está temporariamente indisponível. Tente de novo em instantes",
};

// A sentence in Portuguese for an error; `labels` maps field names to the labels shown on the form.
export function explain(err, labels = {}) {
  if (!(err instanceof ApiError)) {
    return "Não foi possível falar com o servidor. Verifique a conexão e tente de novo.";
  }
  // A refusal the server already wrote for a person (the process's 409s: "Ainda no prazo de defesa até …")
  // is shown as it is: the generic opening of its status would contradict it ("Já existe um registro…").
  if (typeof err.body.message === "string" && err.body.message) {
    const m = err.body.message.trim();
    return /[.!?]$/.test(m) ? m : `${m}.`;
  }
  const base = STATUS_PT[err.status] || (err.status >= 500 ? "Erro no servidor" : `Erro ${err.status}`);
  const name = fieldName(err.field);
  const where = name ? ` em «${labels[name] || name}»` : "";
  // The API's detail is English, for scripts: shown only where it adds what the field's name cannot (a 404's
  // "no vehicle 5" adds nothing to "Não encontrado", issue 36).
  const detail = err.body.detail && err.status !== 404 ? ` (${err.body.detail})` : "";
  return `${base}${where}.${err.status === 401 ? "" : detail}`;
}

// Set while logging out: a poll answered 401 then (the session just ended) must not race the logout's own
// way to the login page with a "come back here" one.
let leaving = false;
export function leave(on = true) {
  leaving = on;
}

export async function api(path, { method = "GET", body, form, signal } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-CSRF-Token"] = cookie("telemetria_csrf");
  let payload;
  if (form) {
    payload = form;
  } else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const resp = await fetch(path, { method, headers, body: payload, signal, credentials: "same-origin" });
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { detail: text.slice(0, 200) }; }
  if (!resp.ok) {
    if (resp.status === 401 && !leaving && !path.startsWith("/api/v1/auth/login")) {
      location.assign("/entrar?next=" + encodeURIComponent(location.pathname + location.search));
    }
    throw new ApiError(resp.status, data);
  }
  return data;
}

// Download `url` as the API sends it, showing progress; the file keeps the server's name.
export async function download(url, onProgress) {
  const resp = await fetch(url, { credentials: "same-origin" });
  if (!resp.ok) {
    let data = null;
    try { data = await resp.json(); } catch { /* not JSON */ }
    throw new ApiError(resp.status, data);
  }
  const reader = resp.body.getReader();
  const chunks = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.length;
    if (onProgress) onProgress(received);
  }
  const disposition = resp.headers.get("content-disposition") || "";
  const match = /filename="?([^";]+)"?/.exec(disposition);
  const name = match ? match[1] : url.split("/").pop().split("?")[0];
  const blob = new Blob(chunks, { type: resp.headers.get("content-type") || "application/octet-stream" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  return { name, bytes: received };
}

// --- formatting, pt-BR (numbers by the rules of formats.js, the CSV's) ------------------------------
const unit = (rule, u) => (x) => (x === null || x === undefined ? "—" : `${format(rule, x)} ${u}`);

export const fmt = {
  num: (x) => format("pct", x), // one decimal: percentages and the like
  km: unit("km", "km"),
  kmh: unit("kmh", "km/h"),
  coord: (x) => format("coord", x),
  // An ISO time with offset → "dd/mm/aaaa HH:MM:SS" as written (the report's zone), no browser conversion.
  time: (iso) => {
    if (!iso) return "—";
    const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2}))?/.exec(iso);
    if (!m) return String(iso);
    return m[4] ? `${m[3]}/${m[2]}/${m[1]} ${m[4]}:${m[5]}:${m[6]}` : `${m[3]}/${m[2]}/${m[1]}`;
  },
  clock: (iso) => (iso ? fmt.time(iso).slice(11) : "—"),
  duration: (s) => {
    if (s === null || s === undefined) return "—";
    s = Math.round(s);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    if (h) return `${h} h ${String(m).padStart(2, "0")} min`;
    if (m) return `${m} min ${String(sec).padStart(2, "0")} s`;
    return `${sec} s`;
  },
  age: (s) => {
    if (s === null || s === undefined) return "nunca transmitiu";
    if (s >= 2 * 86400) return `há ${Math.floor(s / 86400)} dias`;
    return "há " + fmt.duration(s);
  },
};

// Small DOM helper: el("td", {class: "x"}, "text", child, ...). Text is always text, never HTML.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

export function toast(message, kind = "info") {
  const box = document.getElementById("toast");
  box.textContent = message;
  box.className = "toast " + kind;
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, kind === "error" ? 8000 : 4000);
}

// Today's date and a date `days` before, in the service's zone (America/Porto_Velho, UTC−4 all year).
export function localDate(offsetDays = 0) {
  const now = new Date(Date.now() - 4 * 3600 * 1000 + offsetDays * 86400 * 1000);
  return now.toISOString().slice(0, 10);
}
