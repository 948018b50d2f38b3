// The day panel (/painel): GET /api/v1/day every 30 s, drawn as figures and short lists. Every figure is the
// API's (which takes them from the measurement and the reports); the page only arranges them.
import { api, el, explain, fmt } from "./api.js";
import { format } from "./formats.js";
import { RUN_STATES, RUN_TONE } from "./fisc/names.js";

const REFRESH_MS = 30_000;
const status = document.getElementById("d-status");
const figures = document.getElementById("d-figures");
const result = document.getElementById("d-result");

const figure = (label, value, id) => el("div", {}, el("dt", {}, label), el("dd", { "data-figure": id }, value));
const empty = (text) => el("p", { class: "muted" }, text);
const pct = (share) => (share === null || share === undefined ? "—" : `${format("share", share)} %`);

function alerts(a) {
  // The list on the same days as the count (yesterday and today), so it shows exactly the ones counted, page by page.
  const list = (extra) => `/ocorrencias?${new URLSearchParams({ from: a.from, to: a.to, ...extra, status: "detected" })}`;
  const open = a.by_kind.filter((k) => k.count > 0);
  if (!open.length) return empty("Nenhum alerta esperando revisão.");
  return el("div", {},
    el("ul", { class: "day-list" }, open.map((k) => el("li", { "data-kind": k.kind },
      el("a", { href: list({ kind: k.kind }) }, k.name), " ", el("span", { class: "badge warn" }, String(k.count))))),
    el("p", {}, el("a", { href: list({}) }, "Revisar todos")));
}

function silent(items) {
  if (!items.length) return empty("Todos os veículos em horário de serviço estão transmitindo.");
  return el("ul", { class: "day-list" }, items.map((v) => el("li", { "data-vehicle": v.plate },
    el("strong", {}, v.plate), ` · rota ${v.route}, corrida ${v.run_no}`,
    el("span", { class: "meta" }, v.time ? `última posição ${fmt.clock(v.time)} (${fmt.age(v.age_s)})` : "nunca transmitiu"))));
}

function service(v) {
  if (!v.items.length) return empty("Nenhum veículo em serviço neste momento.");
  return el("ul", { class: "day-list" }, v.items.map((x) => el("li", { "data-vehicle": x.plate },
    el("a", { href: `/historico?vehicle_id=${x.vehicle_id}` }, x.plate), x.route ? ` · rota ${x.route}` : "",
    el("span", { class: "meta" }, `${fmt.kmh(x.speed_kmh)} · ${fmt.age(x.age_s)}${x.contractor ? " · " + x.contractor : ""}`))));
}

function reporting(r) {
  if (!r.vehicles) return empty("Nenhum veículo em serviço hoje ainda.");
  return el("div", {},
    el("p", {}, el("strong", { "data-figure": "coverage" }, pct(r.coverage)), ` do tempo em serviço coberto a cada 30 s (${r.vehicles} veículo(s), ${fmt.duration(r.in_service_s)}).`),
    el("p", { class: "muted" }, `${r.gaps_over_30s} lacuna(s) acima de 30 s em movimento · ${r.late_fixes} posição(ões) enviada(s) com atraso.`),
    el("p", { class: "muted" }, "Menor cobertura:"),
    el("ul", { class: "day-list" }, r.worst.map((w) => el("li", {}, `${w.plate}: ${pct(w.coverage)}`))),
    el("p", {}, el("a", { href: "/relatorios/reporting" }, "Relatório de regularidade de transmissão")));
}

// A run's window as the servidor reads it; a route without a timetable has one run over the whole day.
function runWindow(x) {
  const a = fmt.clock(x.start).slice(0, 5), b = fmt.clock(x.end).slice(0, 5);
  return a === "00:00" && b === "00:00" ? "o dia todo (sem horário)" : `${a}–${b}`;
}

function runs(r) {
  if (!r.items.length) return empty("Nenhuma corrida devida hoje (sem dia letivo, contrato ou atribuição).");
  const head = ["Janela", "Rota", "Corrida", "Veículo", "Situação", "Cobertura", "Contrato"];
  return el("div", { class: "table-wrap" }, el("table", { class: "data", id: "d-runs-table" },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, r.items.map((x) => el("tr", { "data-state": x.state },
      el("td", {}, runWindow(x)),
      el("td", {}, x.code), el("td", { class: "n" }, String(x.run_no)),
      el("td", {}, x.plate || "—", x.substitution ? el("span", { class: "badge warn" }, " substituto") : null),
      el("td", {}, el("span", { class: `badge ${RUN_TONE[x.state] || ""}`.trim() }, RUN_STATES[x.state] || x.state)),
      el("td", { class: "n" }, `${format("pct", x.coverage_pct)} %`), el("td", {}, x.contract))))));
}

async function refresh() {
  try {
    const d = await api("/api/v1/day");
    const c = d.runs.counts;
    figures.replaceChildren(
      figure("Em serviço agora", String(d.vehicles.in_service), "in_service"),
      figure("Corridas devidas hoje", String(d.runs.due), "due"),
      figure("Realizadas", String(c.made), "made"),
      figure("Em andamento", String(c.in_progress), "in_progress"),
      figure("Não iniciadas no horário", String(c.not_started), "not_started"),
      figure("Não realizadas", String(c.not_made), "not_made"),
      figure("Alertas a revisar", String(d.alerts.open), "alerts"),
      figure("Rastreadores mudos", String(d.silent.length), "silent"),
      figure("Regra dos 30 s", pct(d.reporting.coverage), "reporting"));
    document.getElementById("d-alerts").replaceChildren(alerts(d.alerts));
    document.getElementById("d-silent").replaceChildren(silent(d.silent));
    document.getElementById("d-service").replaceChildren(service(d.vehicles));
    document.getElementById("d-reporting").replaceChildren(reporting(d.reporting));
    document.getElementById("d-runs").replaceChildren(runs(d.runs));
    figures.hidden = false;
    result.hidden = false;
    const notes = d.notes.length ? ` ${d.notes.join(" ")}` : "";
    status.textContent = `Dia ${fmt.time(d.day)} · atualizado às ${fmt.clock(d.now)}.${notes}`;
    document.body.dataset.dayUpdated = d.now;
  } catch (err) {
    status.textContent = "Não foi possível carregar o painel. " + explain(err);
  } finally {
    setTimeout(refresh, REFRESH_MS);
  }
}
refresh();
