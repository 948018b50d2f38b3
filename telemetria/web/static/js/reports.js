// The report pages: one form (which vehicles, which period), the table, a map where it helps, and the
// exports. What each report shows lives in reports/columns.js; every figure comes from the reports API as is,
// and every export is the API's own file for the same parameters.
import { config, download, el } from "./api.js";
import { clearChart, drawChart } from "./reports/chart.js";
import { KIND, R } from "./reports/columns.js";
import { clear, render } from "./reports/draw.js";
import { bytes } from "./reports/format.js";
import { clearErrors, days, fail, fillLists, form, params, periodFromQuery, selectionFromQuery, vehicleCount }
  from "./reports/form.js";
import { fetchReport } from "./reports/load.js";
import { TOO_BIG, refused, say } from "./reports/status.js";

const API = `/api/v1/reports/${KIND}`;
const SCREEN_MAX_POSITIONS = 300_000; // a track bigger than this goes to a file, not to the screen
const FIXES_PER_DAY = 2880; // one every 30 s
const canExport = ((config.user || {}).permissions || []).includes("export");

// --- the buttons: the report on screen, and its files -----------------------------------------
const actions = document.getElementById("report-actions");
const submit = el("button", { type: "submit", form: "report-form", class: "primary" }, "Gerar relatório");
// What each file is for, said on the button's tooltip (the servidor picks by what the process asks for).
const FILES = [
  ["csv", "Exportar CSV", "Planilha pt-BR em texto (Excel, LibreOffice)"],
  ["xlsx", "XLSX", "Planilha do Excel: números como números, datas como datas, uma aba com a consulta"],
  ["pdf", "PDF", "Documento para imprimir ou juntar ao processo: cabeçalho do município, consulta, tabelas e páginas numeradas"],
  ...(R.gis ? [["geojson", "GeoJSON", "Arquivo GeoJSON da trajetória"], ["gpx", "GPX", "Arquivo GPX da trajetória"],
    ["kml", "KML", "Arquivo KML da trajetória (Google Earth)"]] : []),
];
const FILE_NAMES = { csv: "CSV", geojson: "GeoJSON" };
const exports = canExport ? FILES.map(([f, label, title]) => el("button", { type: "button", "data-format": f,
  onclick: () => exportFile(f), title }, label)) : [];
actions.append(submit, ...(exports.length ? [el("span", { class: "export-group", role: "group",
  "aria-label": "Exportar arquivo" }, el("span", { class: "muted" }, "Exportar:"), ...exports)] : []));
actions.hidden = false;
document.getElementById("report-about").textContent = R.about;

let running = null;

async function run() {
  const { p, problems } = params();
  if (problems.length) { fail(problems); return; }
  clearErrors();
  history.replaceState(null, "", `${location.pathname}?${p}`);
  if (R.track && vehicleCount() * days() * FIXES_PER_DAY > SCREEN_MAX_POSITIONS) {
    fail([["to", TOO_BIG]]);
    return;
  }
  if (running) running.abort();
  const mine = running = new AbortController();
  submit.disabled = true;
  submit.setAttribute("aria-busy", "true");
  say("Carregando…", "busy");
  try {
    const data = await fetchReport(`${API}?${p}&format=json`, mine.signal,
      (n) => { if (n > 65536) say(`Carregando… ${bytes(n)} recebidos`, "busy"); });
    if (mine !== running) return;
    render(data);
    drawChart(data);
  } catch (err) {
    if (err.name === "AbortError") return;
    clear();
    clearChart();
    fail(refused(err));
  } finally {
    if (mine === running) {
      running = null;
      submit.disabled = false;
      submit.removeAttribute("aria-busy");
    }
  }
}

async function exportFile(format) {
  const { p, problems } = params();
  if (problems.length) { fail(problems); return; }
  clearErrors();
  history.replaceState(null, "", `${location.pathname}?${p}`);
  p.set("format", format);
  for (const b of exports) b.disabled = true;
  const name = FILE_NAMES[format] || format.toUpperCase();
  say(`Preparando o arquivo ${name}…`, "busy");
  try {
    const file = await download(`${API}?${p}`, (n) => say(`Baixando ${name}… ${bytes(n)} recebidos`, "busy"));
    say(`Arquivo ${file.name} baixado (${bytes(file.bytes)}).`, "done");
  } catch (err) {
    fail(refused(err));
  } finally {
    for (const b of exports) b.disabled = false;
  }
}

form.addEventListener("submit", (e) => { e.preventDefault(); run(); });

// --- start --------------------------------------------------------------------------------------
periodFromQuery();
await fillLists();
if (selectionFromQuery()) run();
