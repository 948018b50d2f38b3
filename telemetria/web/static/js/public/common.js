// What the public pages share: reading the public API (no session), km and dates in pt-BR, a table.
import { ApiError, el } from "../api.js";
import { number } from "../formats.js";

// The public API answers without a session; a 404 means the area was switched off meanwhile.
export async function publicJson(path) {
  const resp = await fetch(path, { headers: { Accept: "application/json" }, credentials: "omit" });
  let data = null;
  try { data = await resp.json(); } catch { data = null; }
  if (!resp.ok) throw new ApiError(resp.status, data);
  return data;
}

export function problem(err) {
  if (!(err instanceof ApiError)) return "Não foi possível falar com o servidor. Verifique a conexão e tente de novo.";
  if (err.status === 404) return "A área pública não está disponível.";
  return `Não foi possível mostrar os dados${err.body.detail ? ` (${err.body.detail})` : ""}.`;
}

export const km = (x) => (x === null || x === undefined ? "—" : `${number(x, 3)} km`);

// "2026-03-02" → "02/03/2026"
export function date(iso) {
  if (!iso) return "—";
  const [y, m, d] = String(iso).slice(0, 10).split("-");
  return `${d}/${m}/${y}`;
}

// A table with a header row and body rows; a cell is text, or [text, "n"] for a number column.
// On a phone each row is a card, each cell labelled with its column's header (app.css, table.stack).
export function table(caption, headers, rows, totals = null) {
  const text = (c) => (Array.isArray(c) ? c[0] : c);
  const cell = (tag, c, i) => el(tag, { class: Array.isArray(c) ? c[1] : null,
    "data-label": tag === "td" ? text(headers[i]) : null }, text(c));
  return el("div", { class: "table-wrap" }, el("table", { class: "data stack" },
    el("caption", { class: "sr-only" }, caption),
    el("thead", {}, el("tr", {}, headers.map((h, i) => cell("th", h, i)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c, i) => cell("td", c, i)))),
      totals ? el("tr", { class: "total" }, totals.map((c, i) => cell("td", c, i))) : null)));
}
