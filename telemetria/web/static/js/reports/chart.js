// The picture above a report's table where people read a trend: km per day (or per vehicle) beside the
// km the assigned routes plan, and the share of in-service time covered at ≤ 30 s per day against 100 %.
// Drawn from the same JSON as the table, which is the chart's text alternative (linked from it).
import { el, fmt } from "../api.js";
import { barChart } from "../charts.js";
import { format } from "../formats.js";
import { KIND } from "./columns.js";

const box = document.getElementById("report-chart");
const TABLE = "report-table";
const GROUP = "";

export function clearChart() {
  box.replaceChildren();
  box.hidden = true;
}

// Draw the chart of this page's report, if it has one, from the report's JSON.
export function drawChart(data) {
  clearChart();
  const chart = CHARTS[KIND];
  const rows = chart ? data[chart.key] || [] : [];
  if (!rows.length) return;
  box.hidden = false;
  const vehicles = [...new Map(rows.map((r) => [String(r.vehicle_id), r.plate])).entries()];
  let controls = null;
  if (chart.perVehicle(data) && vehicles.length > 1) {
    const select = el("select", { id: "chart-vehicle" },
      el("option", { value: GROUP }, `Grupo (${vehicles.length} veículos)`),
      vehicles.map(([id, plate]) => el("option", { value: id }, plate)));
    select.addEventListener("change", () => barChart(box, chart.spec(data, rows, select.value, vehicles, controls)));
    controls = el("div", { class: "chart-controls" }, el("label", { for: "chart-vehicle" }, "Veículos no gráfico"), select);
  }
  barChart(box, chart.spec(data, rows, vehicles.length > 1 ? GROUP : vehicles[0][0], vehicles, controls));
}

// --- helpers ------------------------------------------------------------------------------------
const plural = (n) => `${n} ${n === 1 ? "dia" : "dias"}`;
const sum = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) : null);
const known = (x) => x !== null && x !== undefined;
const dayLabel = (d) => ({ label: fmt.time(d).slice(0, 5), title: fmt.time(d) });
const who = (choice, vehicles) => (choice === GROUP ? `grupo de ${vehicles.length} veículos`
  : vehicles.find(([id]) => id === choice)[1]);

// Rows by date (in the order of the dates), of one vehicle or all.
function byDay(rows, choice) {
  const days = new Map();
  for (const r of rows) {
    if (choice !== GROUP && String(r.vehicle_id) !== choice) continue;
    if (!days.has(r.date)) days.set(r.date, []);
    days.get(r.date).push(r);
  }
  return [...days.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

// --- km: rodados and planejados -----------------------------------------------------------------
// A row's km counts only when the vehicle sent positions (no data is not 0 km); planned km only where a
// route was assigned.
const driven = (rs) => sum(rs.filter((r) => r.method !== "no_fixes").map((r) => r.km));
const planned = (rs) => sum(rs.filter((r) => known(r.planned_km)).map((r) => r.planned_km));

function kmSpec(data, rows, choice, vehicles, controls) {
  const perDay = data.by === "day";
  const groups = perDay ? byDay(rows, choice) : rows.map((r) => [r.plate, [r]]);
  const km = groups.map(([, rs]) => driven(rs));
  const plan = groups.map(([, rs]) => planned(rs));
  const hasPlan = plan.some(known);
  const series = [{ name: "rodados", cls: "km", values: km }];
  if (hasPlan) series.push({ name: "planejados", cls: "planned", values: plan });
  const total = sum(km.filter(known));
  const top = km.reduce((best, v, i) => (known(v) && (best < 0 || v > km[best]) ? i : best), -1);
  const label = (i) => (perDay ? fmt.time(groups[i][0]).slice(0, 10) : groups[i][0]);
  const words = [
    perDay ? `Km rodados por dia (${who(choice, vehicles)}): ${fmt.km(total)} em ${plural(groups.length)}`
      : `Km rodados por veículo: ${fmt.km(total)} no grupo`,
    hasPlan ? `; as rotas atribuídas planejam ${fmt.km(sum(plan.filter(known)))}` : "; nenhuma rota atribuída no período",
    top >= 0 ? `; o maior valor é ${fmt.km(km[top])}, ${perDay ? "em" : "de"} ${label(top)}.` : "; nenhuma posição.",
  ];
  return {
    class: "km-chart", table: TABLE, unit: "km", places: 2, controls, series,
    title: perDay ? "Km rodados por dia" : "Km rodados por veículo",
    categories: groups.map(([k]) => (perDay ? dayLabel(k) : { label: k })),
    legend: [["km", "Km rodados"], ...(hasPlan ? [["planned", "Km planejado pelas rotas atribuídas"]] : [])],
    summary: words.join(""),
  };
}

// --- reporting: coverage at ≤ 30 s -----------------------------------------------------------------
// The group's share of a day: covered time over in-service time of its vehicles (covered = share × time).
function coverage(rs) {
  const served = rs.filter((r) => known(r.coverage) && r.in_service_s > 0);
  const time = sum(served.map((r) => r.in_service_s));
  return time ? (100 * sum(served.map((r) => r.coverage * r.in_service_s))) / time : null;
}

function coverageSpec(data, rows, choice, vehicles, controls) {
  const days = byDay(rows, choice);
  const values = days.map(([, rs]) => coverage(rs));
  const shown = values.filter(known);
  const low = values.reduce((best, v, i) => (known(v) && (best < 0 || v < values[best]) ? i : best), -1);
  const idle = values.length - shown.length;
  const pct = (v) => `${format("pct", v)} %`;
  const high = Math.max(...shown);
  const words = [
    `Cobertura a cada 30 s do tempo em serviço (${who(choice, vehicles)})`,
    low < 0 ? ": nenhum dia em serviço"
      : shown.length === 1 ? `: ${pct(values[low])} em ${fmt.time(days[low][0])}`
        : `: a menor, ${pct(values[low])} em ${fmt.time(days[low][0])}; a maior, ${pct(high)}`,
    idle && shown.length ? `; ${plural(idle)} sem tempo em serviço, sem barra.` : ".",
  ];
  return {
    class: "coverage-chart", table: TABLE, unit: "%", places: 1, controls, max: 100,
    title: "Cobertura a cada 30 s do tempo em serviço, por dia",
    categories: days.map(([d]) => dayLabel(d)),
    series: [{ name: "cobertura", cls: "coverage", values }],
    refs: [{ value: 100, label: "100 %", cls: "full" }],
    legend: [["coverage", "Cobertura (%)"], ["ref", "100 %: uma posição a cada 30 s em todo o tempo em serviço"]],
    summary: words.join(""),
  };
}

const CHARTS = {
  km: { key: "vehicles", perVehicle: (d) => d.by === "day", spec: kmSpec },
  reporting: { key: "days", perVehicle: () => true, spec: coverageSpec },
};
