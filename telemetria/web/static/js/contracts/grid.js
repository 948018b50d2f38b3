// A route's runs in a month as a grid: one column per day, one row per run of the day (by run_no); each cell
// coloured by status AND marked with a letter (readable without colour, and in print), linking to the vehicle's
// history on the map for that day. Days without a run are greyed: no school that day, or a run not due.
import { el } from "../api.js";
import { format } from "../formats.js";
import { WEEK_HEAD, dmy, isoWeekday, monthDays } from "./days.js";

export const STATUS = {
  made: ["R", "Realizada"],
  partial: ["P", "Parcial"],
  not_made: ["N", "Não realizada"],
  justified: ["J", "Justificada"],
  pending: ["…", "Prevista"], // its window has not closed: not judged, not in the totals
  in_progress: ["»", "Em andamento"], // pending, with the vehicle already on the route
  no_school: ["–", "Sem aula"],
  not_due: ["·", "Não prevista"],
};

// The history page for a vehicle's whole local day (its parameters: vehicle_id, from, to as local wall times).
export function historyLink(vehicleId, date) {
  return `/historico?vehicle_id=${encodeURIComponent(vehicleId)}&from=${date}T00:00&to=${date}T23:59`;
}

export function legend() {
  return el("ul", { class: "b-legend", "aria-label": "Legenda do calendário de corridas" },
    Object.entries(STATUS).map(([k, [letter, name]]) =>
      el("li", {}, el("span", { class: `swatch st-${k}`, "aria-hidden": "true" }, letter), name)),
    el("li", {}, el("span", { class: "swatch", "aria-hidden": "true" }, "*"), "Realizada por outro veículo (substituição)"));
}

// The status a run is shown with: a pending run the vehicle has already started is "em andamento".
export function shownStatus(run) {
  return run.status === "pending" && run.start ? "in_progress" : run.status;
}

function runLabel(run) {
  const [, name] = STATUS[shownStatus(run)] || [null, run.status];
  const parts = [`${dmy(run.date)}, corrida ${run.run_no || 1}: ${name.toLowerCase()}`,
    `cobertura ${format("share", run.coverage)} %`];
  if (run.plate) parts.push(`veículo ${run.plate}${run.substitution ? " (substituição)" : ""}`);
  if (run.unauthorized) parts.push("veículo não autorizado");
  if (run.justification) {
    const late = run.justification_kind === "feito_fora_do_horario" ? " (realizada fora do horário)" : "";
    parts.push(`justificativa${late}: ${run.justification}`);
  }
  return parts.join("; ");
}

// year, month (1-12); runs: this route's run lines; school: Set of school days, or null when not known.
export function runGrid({ code, year, month, runs, school }) {
  const days = monthDays(year, month);
  const byCell = new Map(runs.map((r) => [`${r.date}#${r.run_no || 1}`, r]));
  const rowsN = Math.max(1, ...runs.map((r) => r.run_no || 1));
  const head = el("thead", {},
    el("tr", {}, el("th", { scope: "col" }, "Dia"), days.map((d) => el("th", { scope: "col" }, String(Number(d.slice(8)))))),
    el("tr", {}, el("th", { scope: "col", class: "wd" }, ""), days.map((d) => {
      const [short, long] = WEEK_HEAD[isoWeekday(d) - 1];
      return el("th", { scope: "col", class: "wd", abbr: long }, short);
    })));
  const rows = [];
  for (let n = 1; n <= rowsN; n++) {
    rows.push(el("tr", {}, el("th", { scope: "row" }, rowsN > 1 ? `Corrida ${n}` : "Corrida"), days.map((d) => {
      const run = byCell.get(`${d}#${n}`);
      if (!run) {
        const kind = school && !school.has(d) ? "no_school" : "not_due";
        const [letter, name] = STATUS[kind];
        return el("td", { class: `st-${kind}`, "data-date": d, "data-status": kind },
          el("span", { class: "cell", title: `${dmy(d)}: ${name.toLowerCase()}`, "aria-label": `${dmy(d)}: ${name.toLowerCase()}`,
            role: "img" }, letter));
      }
      const shown = shownStatus(run);
      const [letter] = STATUS[shown] || ["?"];
      const label = runLabel(run);
      const mark = [letter, run.substitution ? el("span", { class: "subst", "aria-hidden": "true" }, "*") : null];
      return el("td", { class: `st-${shown}`, "data-date": d, "data-status": run.status, "data-run": String(n) },
        run.vehicle_id ? el("a", { href: historyLink(run.vehicle_id, run.date), title: `${label}. Abrir o histórico do veículo.`,
          "aria-label": `${label}. Abrir o histórico do veículo neste dia.` }, mark)
          : el("span", { class: "cell", title: label, "aria-label": label, role: "img" }, mark));
    })));
  }
  return el("div", { class: "run-grid-wrap", tabindex: "0", role: "region", "aria-label": `Corridas da rota ${code} no mês` },
    el("table", { class: "run-grid", "data-route": code }, el("caption", { class: "sr-only" }, `Corridas da rota ${code}`),
      head, el("tbody", {}, rows)));
}
