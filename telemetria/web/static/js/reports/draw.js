// A report on screen: its table (with totals and figures), and a map of its rows' places or of the track.
// A row chosen in the table shows its place on the map, and a marker clicked on the map marks its row.
import { el, fmt } from "../api.js";
import { period as periodText } from "../formats.js";
import { COLOURS, dot, makeMap, tip } from "../mapbase.js";
import { chooser, visible } from "./chooser.js";
import { KIND, R, TRACK_PLACES, TRACK_TOTALS } from "./columns.js";
import { cell, head, int, word } from "./format.js";
import { say } from "./status.js";

const L = window.L;
const TABLE_MAX = 1000; // rows drawn in the table; the CSV has them all
const table = document.getElementById("report-table");
const totalsBox = document.getElementById("report-totals");
const columnsBox = document.getElementById("report-columns");
const mapBox = document.getElementById("report-map");

let shown = null; // { rows, marks } of the report on screen
let map = null;
let layer = null;
let highlight = null;
let cursor = null;

function ensureMap() {
  mapBox.hidden = false;
  if (!map) {
    map = makeMap(mapBox);
    map.options.zoomSnap = 0.25; // fit a long, thin route closely
    layer = L.featureGroup().addTo(map);
  }
  map.invalidateSize();
  layer.clearLayers();
  highlight = null;
  cursor = null;
}

export function clear() {
  table.replaceChildren();
  totalsBox.replaceChildren();
  columnsBox.replaceChildren();
  mapBox.hidden = true;
  if (layer) layer.clearLayers();
  shown = null;
}

export function render(data) {
  clear();
  const rows = data[R.key] || [];
  const nouns = typeof R.noun === "function" ? R.noun(data) : R.noun;
  const noun = nouns[rows.length === 1 ? 0 : 1];
  const period = periodText(data.from, data.to); // the last day or minute included
  if (!rows.length) {
    say(`Nenhum registro no período (${period}).`, "empty");
    return;
  }
  const drawn = rows.slice(0, TABLE_MAX);
  const marks = drawn.map((r) => (R.marks && !R.lazyMarks ? R.marks(r).filter((m) => m.lat !== null && m.lat !== undefined)
    : []));
  const all = R.columns(data);
  const fill = () => fillTable(data, rows, drawn, visible(KIND, all), `${int(rows.length)} ${noun} · ${period}`);
  fill();
  const choose = chooser(KIND, all, fill);
  if (choose) columnsBox.append(choose);
  if (R.figures) totalsBox.append(figures(R.figures(data)));
  if (R.track) trackExtras(data);
  shown = { rows: drawn, marks: [] };
  if (R.marks) drawMarks(drawn, marks);
  if (R.track) drawTrack(rows, data.places || []);
  say(`Relatório gerado: ${int(rows.length)} ${noun}.`, "done");
  document.body.dataset.reportLoaded = String(Date.now());
}

// The table: caption, the chosen columns' header, the rows drawn (a row with a place shows it on the map), totals.
function fillTable(data, rows, drawn, columns, caption) {
  const locatable = (r) => R.marks && R.marks(r).some((m) => m.lat !== null && m.lat !== undefined);
  const body = el("tbody", {}, drawn.map((r, i) => {
    const tr = el("tr", { "data-row": i }, columns.map((c) => cell(c, r)));
    if (locatable(r)) {
      tr.tabIndex = 0;
      tr.classList.add("locatable");
      tr.title = "Mostrar no mapa";
      tr.addEventListener("click", (e) => { if (!e.target.closest("button")) select(i); });
      tr.addEventListener("keydown", (e) => {
        if ((e.key === "Enter" || e.key === " ") && e.target === tr) { e.preventDefault(); select(i); }
      });
    }
    return tr;
  }));
  const more = rows.length > drawn.length
    ? ` · a tabela mostra as primeiras ${int(drawn.length)}; o arquivo CSV traz todas` : "";
  table.replaceChildren(el("caption", {}, caption + more), head(columns), body);
  if (R.totals) {
    const t = R.totals(data);
    table.append(el("tfoot", {}, el("tr", { class: "total" }, columns.map((c, i) => i === 0
      ? el("th", { scope: "row" }, "Total") : el("td", { class: c.n ? "n" : null }, c.key in t ? c.f(t[c.key]) : "")))));
  }
}

function figures(pairs) {
  return el("dl", { class: "figures" }, pairs.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, int(v)))));
}

function drawMarks(rows, marks) {
  if (!marks.some((m) => m.length)) return;
  ensureMap();
  shown.marks = marks.map((list, i) => list.map((m) => {
    const marker = dot([m.lat, m.lon], m.colour, m.title, m.small ? 4 : 7).addTo(layer);
    marker.on("click", () => select(i, true));
    return marker;
  }));
  for (const [i, list] of shown.marks.entries()) list[0]?.getElement()?.setAttribute("data-row", i);
  map.fitBounds(layer.getBounds().pad(0.15), { maxZoom: 16, animate: false });
}

// A row chosen in the table (or its marker on the map): the row is marked, the map goes to the place.
function select(i, fromMap = false) {
  for (const tr of table.querySelectorAll("tr.selected")) tr.classList.remove("selected");
  const tr = table.querySelector(`tbody tr[data-row="${i}"]`);
  tr?.classList.add("selected");
  if (fromMap) tr?.scrollIntoView({ block: "nearest" });
  if (!map) return;
  if (highlight) { highlight.setStyle({ weight: 1, color: "#222" }); highlight = null; }
  let marker = shown.marks[i]?.[0];
  if (!marker && R.lazyMarks) { // the track: one cursor, moved to the position chosen
    const m = R.marks(shown.rows[i])[0];
    if (!cursor) cursor = dot([m.lat, m.lon], "#ffeb3b", m.title, 8);
    cursor.setLatLng([m.lat, m.lon]).setTooltipContent(tip(m.title)).addTo(layer);
    marker = cursor;
  }
  if (!marker) return;
  marker.setStyle({ weight: 4, color: "#000" });
  marker.bringToFront();
  highlight = marker;
  map.setView(marker.getLatLng(), Math.max(map.getZoom(), 15), { animate: false });
  marker.openTooltip();
}

// --- the track report: the drawn trajectory, the places passed, the totals per vehicle -----------
const PALETTE = [COLOURS.track, "#00838f", "#6a1b9a", "#ad1457", "#5d4037", "#283593"];

function drawTrack(positions, places) {
  ensureMap();
  const lines = new Map(); // "vehicle day" → latlngs, used positions only
  const colourOf = new Map();
  for (const r of positions) {
    if (!r.used) continue;
    const k = `${r.vehicle_id} ${r.time.slice(0, 10)}`;
    if (!lines.has(k)) lines.set(k, { plate: r.plate, vehicle: r.vehicle_id, day: r.time, pts: [] });
    lines.get(k).pts.push([r.lat, r.lon]);
    if (!colourOf.has(r.vehicle_id)) colourOf.set(r.vehicle_id, PALETTE[colourOf.size % PALETTE.length]);
  }
  for (const line of lines.values()) {
    L.polyline(line.pts, { color: colourOf.get(line.vehicle), weight: 4, opacity: 0.8, className: "track-line" })
      .bindTooltip(tip(`${line.plate} · ${fmt.time(line.day).slice(0, 10)}`)).addTo(layer);
  }
  for (const p of places) {
    if (p.kind === "road") continue; // the roads passed are the line itself, listed in the table below
    const colour = p.kind !== "stop" ? COLOURS.point : p.authorized ? COLOURS.stopOk : COLOURS.stopBad;
    const what = p.kind === "stop" ? (p.authorized ? `parada em ${p.name}` : "parada fora de ponto autorizado")
      : `${word(p.kind)}: ${p.name}`;
    dot([p.lat, p.lon], colour, `${p.plate}: ${fmt.time(p.time)} · ${what}` +
      (p.duration_s ? ` (${fmt.duration(p.duration_s)})` : ""), p.kind === "stop" ? 7 : 5).addTo(layer);
  }
  if (layer.getLayers().length) map.fitBounds(layer.getBounds().pad(0.1), { maxZoom: 16, animate: false });
}

function trackExtras(data) {
  const totals = data.totals || [];
  const places = data.places || [];
  const tbl = (cols, rows, caption) => el("div", { class: "table-wrap" }, el("table", { class: "data compact" },
    el("caption", {}, caption), head(cols), el("tbody", {}, rows.map((r) => el("tr", {}, cols.map((c) => cell(c, r)))))));
  totalsBox.append(tbl(TRACK_TOTALS, totals, "Totais por veículo"),
    el("details", { class: "places" }, el("summary", {}, `Locais passados: vias, paradas e pontos de rota (${int(places.length)})`),
      tbl(TRACK_PLACES, places, "Vias percorridas, paradas e pontos de rota passados, em ordem de tempo")));
}
