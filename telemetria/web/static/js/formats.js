// How pages write numbers and periods: the same rules as the CSV files (telemetria/formats.py,
// telemetria/period.py), so a figure reads the same on screen and in a spreadsheet. Returns text, never HTML.

// --- numbers --------------------------------------------------------------------------------------
// Decimals per kind of figure: the same table as RULES in telemetria/formats.py (a test compares them).
export const RULES = { km: 2, km_step: 3, kmh: 1, pct: 1, min: 1, m: 0, deg: 0, coord: 6, count: 0 };

// `x` with `places` decimals: decimal comma, half away from zero on the exact value (toFixed), "-0" written
// "0", the thousands grouped with "." (grouped below); "—" when there is no number.
export function number(x, places) {
  if (x === null || x === undefined || x === "" || !Number.isFinite(Number(x))) return "—";
  let s = Number(x).toFixed(places);
  if (/^-0(\.0*)?$/.test(s)) s = s.slice(1);
  return grouped(s.replace(".", ","));
}

// A number as written above with its thousands grouped by "." as people read them (issue 36: "2.819,63 km",
// "14.441 posições"): a number with decimals from 1.000 on, a whole number from 10.000 on, so a year (2026) or
// a small count reads as it always did. telemetria/formats.py's grouped() is the same rule (the PDF's cells).
export function grouped(s) {
  const m = /^(-?)(\d+)(,\d+)?$/.exec(s);
  if (!m) return s;
  const [, sign, whole, frac = ""] = m;
  if (whole.length < (frac ? 4 : 5)) return s;
  return sign + whole.replace(/\B(?=(\d{3})+(?!\d))/g, ".") + frac;
}

// `x` by the rule of its kind; "share" is a fraction written as a percentage (0.5 → "50,0").
export function format(rule, x) {
  if (rule === "share") return x === null || x === undefined ? "—" : number(Number(x) * 100, RULES.pct);
  return number(x, RULES[rule]);
}

// --- periods --------------------------------------------------------------------------------------
// The service's zone (America/Porto_Velho) is UTC−4 all year: an instant → its local wall clock.
export function localWall(iso) {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? String(iso) : new Date(t - 4 * 3600 * 1000).toISOString().slice(0, 19);
}

// "YYYY-MM-DDTHH:MM:SS…" as written (offset ignored) → milliseconds of that wall clock read as UTC.
export function wallMs(iso) {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?/.exec(iso || "");
  if (!m) return null;
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, "0")) : 0;
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] || 0), +(m[5] || 0), +(m[6] || 0), ms);
}

const DAY_MS = 86400000;
const dmy = (ms) => { const s = new Date(ms).toISOString(); return `${s.slice(8, 10)}/${s.slice(5, 7)}/${s.slice(0, 4)}`; };
const hm = (ms) => new Date(ms).toISOString().slice(11, 16);
const hms = (ms) => new Date(ms).toISOString().slice(11, 19);

// A period [from, to) as people read it, the last day, minute or second included (the rule of
// telemetria/period.py): "23/11/2026", "23/11/2026 a 30/11/2026", "23/11/2026 08:00 a 11:59".
export function period(from, to) {
  const a = wallMs(from), b = wallMs(to);
  if (a === null || b === null) return `${from || "—"} a ${to || "—"}`;
  if (a % DAY_MS === 0 && b % DAY_MS === 0) {
    const last = b - DAY_MS;
    return last <= a ? dmy(a) : `${dmy(a)} a ${dmy(last)}`;
  }
  const [step, clock] = a % 60000 === 0 && b % 60000 === 0 ? [60000, hm] : [1000, hms];
  const last = b - step;
  const end = dmy(last) === dmy(a) ? clock(last) : `${dmy(last)} ${clock(last)}`;
  return `${dmy(a)} ${clock(a)} a ${end}`;
}

// The rule, as the forms state it next to their "Até" fields.
export const PERIOD_RULE = "O fim do período está incluído: até 23/11 é o dia inteiro, até 23:59 vai até 23:59:59.";
