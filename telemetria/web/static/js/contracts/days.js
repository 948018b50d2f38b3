// Calendar dates as "YYYY-MM-DD" text, computed in UTC so no browser time zone moves a day; pure.

export const MONTHS = ["janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro",
  "outubro", "novembro", "dezembro"];
export const WEEKDAYS = ["domingo", "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira",
  "sábado"];
export const WEEK_HEAD = [["Seg", "segunda"], ["Ter", "terça"], ["Qua", "quarta"], ["Qui", "quinta"], ["Sex", "sexta"],
  ["Sáb", "sábado"], ["Dom", "domingo"]];

const iso = (ms) => new Date(ms).toISOString().slice(0, 10);
const ms = (d) => Date.UTC(+d.slice(0, 4), +d.slice(5, 7) - 1, +d.slice(8, 10));

// Every date of a month (month 1-12), in order.
export function monthDays(year, month) {
  const n = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return Array.from({ length: n }, (_, i) => iso(Date.UTC(year, month - 1, i + 1)));
}

// 1 = Monday … 7 = Sunday (ISO), as the API's weekdays.
export function isoWeekday(d) {
  return ((new Date(ms(d)).getUTCDay() + 6) % 7) + 1;
}

export function lastDay(year, month) {
  return iso(Date.UTC(year, month, 0));
}

export function nextDay(d) {
  return iso(ms(d) + 86400000);
}

// "2026-03-10" → "10/03/2026"; long: "terça-feira, 10 de março de 2026".
export function dmy(d) {
  return `${d.slice(8, 10)}/${d.slice(5, 7)}/${d.slice(0, 4)}`;
}

export function longDate(d) {
  return `${WEEKDAYS[new Date(ms(d)).getUTCDay()]}, ${Number(d.slice(8, 10))} de ${MONTHS[+d.slice(5, 7) - 1]} de ${d.slice(0, 4)}`;
}

// The months (year, month) from one date's month to another's, both included.
export function monthsBetween(from, to) {
  const out = [];
  let y = +from.slice(0, 4), m = +from.slice(5, 7);
  const ey = +to.slice(0, 4), em = +to.slice(5, 7);
  while (y < ey || (y === ey && m <= em)) {
    out.push([y, m]);
    m += 1;
    if (m > 12) { m = 1; y += 1; }
  }
  return out;
}
