// /publico/servico: each route's runs due, runs made and km made in a month, as /public/service counts them
// (a month in progress up to yesterday), and the month's CSV. The page adds nothing up: totals are the API's.
import { el, localDate } from "../api.js";
import { date, km, problem, publicJson, table } from "./common.js";

const form = document.getElementById("s-form");
const input = document.getElementById("s-month");
const status = document.getElementById("s-status");
const result = document.getElementById("s-result");
const csv = document.getElementById("s-csv");

function say(text, kind = "") {
  status.textContent = text;
  status.className = `status ${kind}`.trim();
}

function show(data) {
  const rows = data.routes.map((r) => [r.code, r.name, [String(r.runs_due), "n"], [String(r.runs_made), "n"],
    [km(r.km_made), "n"]]);
  const t = data.totals;
  const totals = ["Total", "", [String(t.runs_due), "n"], [String(t.runs_made), "n"], [km(t.km_made), "n"]];
  const note = data.complete ? `De ${date(data.from)} a ${date(data.to)}.`
    : `Mês em andamento: contado de ${date(data.from)} até ${date(data.to)} (ontem).`;
  result.replaceChildren(
    el("p", { class: "public-lead", "data-testid": "service-note" }, note),
    data.routes.length
      ? table(`Serviço por rota em ${monthWords(data.month)}`, ["Rota", "Nome", ["Corridas devidas", "n"],
        ["Corridas realizadas", "n"], ["Km realizado", "n"]], rows, totals)
      : el("p", { class: "muted" }, "Nenhuma rota medida neste mês."),
    el("p", { class: "hint" }, "Corridas devidas: dias letivos × atribuições de cada rota. Realizadas: as que o GPS mostra "
      + "realizadas conforme o contrato. Km realizado: km percorridos sobre a rota, medidos pelo GPS."));
  result.hidden = false;
}

// "2026-11" as people say it: "novembro de 2026" (issue 36: the public page said "Serviço por rota em 2026-12").
const MONTHS = ["janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
  "novembro", "dezembro"];
function monthWords(iso) {
  const m = /^(\d{4})-(\d{2})$/.exec(iso || "");
  return m ? `${MONTHS[Number(m[2]) - 1]} de ${m[1]}` : String(iso);
}

async function load(month) {
  csv.href = `/public/service?month=${encodeURIComponent(month)}&format=csv`;
  say("Carregando…", "muted");
  try {
    show(await publicJson(`/public/service?month=${encodeURIComponent(month)}`));
    say("");
  } catch (err) {
    result.hidden = true;
    say(problem(err), "error-text");
  }
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  if (!/^\d{4}-\d{2}$/.test(input.value)) { say("Escolha um mês.", "error-text"); input.focus(); return; }
  const url = new URL(location.href);
  url.searchParams.set("mes", input.value);
  history.replaceState(null, "", url);
  load(input.value);
});

// The month of yesterday by default: the first day counted of a month is its first, once it is over.
const asked = new URLSearchParams(location.search).get("mes");
input.value = asked && /^\d{4}-\d{2}$/.test(asked) ? asked : localDate(-1).slice(0, 7);
load(input.value);
