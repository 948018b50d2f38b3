// How a value is written in a report's cells (pt-BR), and the column builders every report's table uses.
import { el, fmt } from "../api.js";
import { format, number } from "../formats.js";

// --- formatting -------------------------------------------------------------------------------
// Numbers follow the rules of ../formats.js, which the CSV files follow too (telemetria/formats.py).
export const dec = (d) => (x) => number(x, d);
export const rule = (name) => (x) => format(name, x);
export const int = dec(0);
// A km figure of a row: blank ("—") when the vehicle sent no position at all, which is not 0 km.
export const km = (x, r) => (r && r.method === "no_fixes" ? "—" : format("km", x));
export const text = (x) => (x === null || x === undefined || x === "" ? "—" : String(x));
export const yes = (x) => (x === null || x === undefined ? "—" : x ? "Sim" : "Não");
export const pct = (x) => (x === null || x === undefined ? "—" : format("share", x) + " %");
export const bytes = (n) => (n < 1024 ? `${n} bytes` : n < 1048576 ? `${dec(1)(n / 1024)} kB`
  : `${dec(1)(n / 1048576)} MB`);

// The codes the API carries, as people read them (the CSV's words: telemetria/reports/output/report.py).
const WORDS = {
  route: "rota", chord: "linha reta", "route+chord": "rota e linha reta", none: "sem deslocamento",
  no_fixes: "sem posições", road: "estradas", "route+road": "rota e estradas",
  "road+chord": "estradas e linha reta", "route+road+chord": "rota, estradas e linha reta",
  media: "média", grave: "grave", gravissima: "gravíssima",
  boarding: "embarque", school: "escola", garage: "garagem", stop: "parada",
  served: "atendido", passed: "passou sem parar", skipped: "pulado", pending: "pendente",
};
export const word = (x) => (x === null || x === undefined ? "—" : WORDS[x] || String(x));
export const badge = (label, kind = "") => el("span", { class: `badge ${kind}`.trim() }, label);
export const TIER = { media: "warn", grave: "bad", gravissima: "bad" };

// A time as written by the API (the report's zone); the end of a span shows the clock only on the same day.
export const time = (x) => fmt.time(x);
export const until = (key) => (r) => (r.start && r[key] && r.start.slice(0, 10) === r[key].slice(0, 10)
  ? fmt.clock(r[key]) : fmt.time(r[key]));

// --- columns ------------------------------------------------------------------------------------
// A column: header, value getter (key or function of the row), formatter, numeric (right-aligned).
export const col = (h, get, f = text, n = false) => ({ h, key: typeof get === "string" ? get : null,
  get: typeof get === "function" ? get : (r) => r[get], f, n, cls: n ? "n" : null });
export const tcol = (h, get, f = time) => ({ ...col(h, get, f), cls: "nw" }); // dates, times, codes: never wrapped
export const wcol = (h, get, f = text) => ({ ...col(h, get, f), cls: "w" }); // a place: room to be read
export const num = (h, get, f = dec(1)) => col(h, get, f, true);

// One row's cell in a column, and the header row of a set of columns.
export function cell(c, r) {
  const value = c.f(c.get(r), r);
  return el("td", { class: c.cls }, value);
}

export const head = (cols) => el("thead", {}, el("tr", {}, cols.map((c) => el("th", { scope: "col", class: c.n ? "n" : null },
  c.h))));
