// Vehicle history: the trajectory of a period on the map beside the assigned route, with stops,
// speeding and deviations marked, a timeline to play it back, and the figures of Art. 15 §4.
import { api, el, explain, fmt, localDate } from "./api.js";
import { COLOURS, dot, makeMap, tip } from "./mapbase.js";
import { speedChart } from "./speedchart.js";

const L = window.L;
const form = document.getElementById("history-form");
const status = document.getElementById("h-status");
const result = document.getElementById("h-result");
const slider = document.getElementById("h-slider");
const nowOut = document.getElementById("h-now");
const play = document.getElementById("h-play");
const PAGE = 25;
let map = null;
let layers = null;
let cursor = null;
let positions = [];
let shownPositions = PAGE;
let timer = null;
let chart = null; // the speed chart, whose cursor follows the playback

// --- the form --------------------------------------------------------------------------------------
async function loadVehicles() {
  const select = form.elements.vehicle_id;
  try {
    const data = await api("/api/v1/vehicles?limit=500");
    select.replaceChildren(el("option", { value: "" }, "Escolha um veículo"),
      ...data.items.map((v) => el("option", { value: v.id }, v.prefix ? `${v.prefix} · ${v.plate}` : v.plate)));
  } catch (err) {
    select.replaceChildren(el("option", { value: "" }, "—"));
    status.textContent = explain(err);
  }
}

function fillFromUrl() {
  const q = new URLSearchParams(location.search);
  const today = localDate();
  form.elements.vehicle_id.value = q.get("vehicle_id") || form.elements.vehicle_id.value;
  form.elements.from.value = toInput(q.get("from")) || `${today}T00:00`;
  form.elements.to.value = toInput(q.get("to")) || `${today}T23:59`;
}

function toInput(value) {
  if (!value) return "";
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00` : value.slice(0, 16);
}

function fieldError(name, message) {
  for (const old of form.querySelectorAll(".field-error")) old.remove();
  for (const input of form.elements) input.removeAttribute?.("aria-invalid");
  if (!name) return;
  const input = form.elements[name];
  input.setAttribute("aria-invalid", "true");
  input.insertAdjacentElement("afterend", el("p", { class: "field-error", id: `${input.id}-error` }, message));
  input.setAttribute("aria-describedby", `${input.id}-error`);
  input.focus();
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const vehicle = form.elements.vehicle_id.value;
  const from = form.elements.from.value;
  const to = form.elements.to.value;
  if (!vehicle) return fieldError("vehicle_id", "Escolha o veículo.");
  if (!from) return fieldError("from", "Informe o início do período.");
  if (!to) return fieldError("to", "Informe o fim do período.");
  if (to < from) return fieldError("to", "O fim do período deve ser depois do início.");
  fieldError(null);
  history.replaceState(null, "", `?vehicle_id=${vehicle}&from=${from}&to=${to}`);
  await show(vehicle, from, to);
});

// --- fetching and drawing --------------------------------------------------------------------------
async function show(vehicle, from, to) {
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  status.textContent = "Carregando…";
  stop();
  const q = `vehicle_id=${vehicle}&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
  try {
    const [track, trips, speeding, stops, deviations, assigned] = await Promise.all([
      api(`/api/v1/reports/track?${q}`),
      api(`/api/v1/reports/trips?${q}`),
      api(`/api/v1/reports/speeding?${q}`),
      api(`/api/v1/reports/stops?${q}`),
      api(`/api/v1/reports/route-deviation?${q}`),
      api(`/api/v1/route-assignments?vehicle_id=${vehicle}&limit=100`),
    ]);
    const routes = await Promise.all(
      [...new Set(assigned.items.filter((a) => overlaps(a, from, to)).map((a) => a.route_id))]
        .map((id) => api(`/api/v1/routes/${id}`)));
    positions = track.positions.filter((p) => p.used);
    document.getElementById("h-seals").href = `/verificar?${new URLSearchParams({ vehicle_id: vehicle,
      from: from.slice(0, 10), to: to.slice(0, 10) })}#s-title`;
    result.hidden = false;
    draw(routes, stops.stops, speeding.episodes, deviations.episodes);
    figures(track.totals[0], trips.trips, speeding.episodes, stops.stops, deviations.episodes);
    tripTable(trips.trips);
    eventTable(speeding.episodes, stops.stops, deviations.episodes);
    shownPositions = PAGE;
    positionTable();
    chart = speedChart(document.getElementById("h-chart"), positions, speeding.episodes, pick);
    timeline();
    status.textContent = positions.length
      ? `${positions.length} posições no período.`
      : "Nenhuma posição deste veículo no período.";
  } catch (err) {
    status.textContent = explain(err, { from: "De", to: "Até", vehicle_id: "Veículo" });
    const name = err.field && String(err.field).split(".").pop();
    if (name && form.elements[name]) fieldError(name, status.textContent);
  } finally {
    button.disabled = false;
  }
}

function overlaps(a, from, to) {
  return a.valid_from <= to.slice(0, 10) && (!a.valid_to || a.valid_to >= from.slice(0, 10));
}

function draw(routes, stops, speeding, deviations) {
  if (!map) map = makeMap(document.getElementById("h-map"));
  if (layers) layers.remove();
  layers = L.featureGroup().addTo(map);
  for (const r of routes) {
    if (!r.geometry) continue;
    L.geoJSON(r.geometry, { style: { color: COLOURS.route, weight: 6, opacity: 0.45, dashArray: "8 6" } })
      .bindTooltip(tip(`Rota ${r.code}: ${r.name}`)).addTo(layers);
    for (const s of r.stops) {
      dot([s.lat, s.lon], COLOURS.point, `${r.code} · ${s.name}${s.scheduled_time ? " · " + s.scheduled_time.slice(0, 5) : ""}`, 4)
        .addTo(layers);
    }
  }
  const line = positions.map((p) => [p.lat, p.lon]);
  if (line.length) {
    L.polyline(line, { color: COLOURS.track, weight: 4, opacity: 0.9, className: "track-line" }).addTo(layers);
    const first = positions[0], last = positions[positions.length - 1];
    dot([first.lat, first.lon], "#fff", `Início: ${fmt.time(first.time)}`, 6).addTo(layers);
    dot([last.lat, last.lon], COLOURS.track, `Posição atual do período: ${fmt.time(last.time)}`, 8).addTo(layers);
  }
  for (const s of stops) {
    const title = `${s.authorized ? "Parada autorizada" : "Parada não autorizada"}: ${fmt.time(s.start)}, ${fmt.duration(s.duration_s)}` +
      (s.point ? ` · ${s.point}` : "");
    marker(dot([s.lat, s.lon], s.authorized ? COLOURS.stopOk : COLOURS.stopBad, title, 6), s.authorized ? "stop-ok" : "stop-bad");
  }
  for (const e of speeding) {
    const title = `Excesso: ${fmt.kmh(e.max_kmh)} (limite ${fmt.kmh(e.limit_kmh)}) às ${fmt.clock(e.start)}`;
    marker(dot([e.lat, e.lon], COLOURS.speeding, title, 8), "speeding");
  }
  for (const d of deviations) {
    L.polyline([[d.left_lat, d.left_lon], [d.far_lat, d.far_lon], [d.rejoined_lat, d.rejoined_lon]],
      { color: COLOURS.deviation, weight: 3, dashArray: "4 4" }).addTo(layers);
    marker(dot([d.far_lat, d.far_lon], COLOURS.deviation,
      `Desvio da rota ${d.route}: até ${d.max_distance_m} m, ${fmt.km(d.km_off_route)} fora, às ${fmt.clock(d.start)}`, 8), "deviation");
  }
  cursor = L.circleMarker([0, 0], { radius: 9, color: "#000", weight: 2, fillColor: "#ffbf47", fillOpacity: 1 });
  const bounds = layers.getBounds();
  if (bounds.isValid()) map.fitBounds(bounds.pad(0.05));
}

// A marker whose element carries its kind, so it can be found (and tested) on the map.
function marker(layer, kind) {
  layer.addTo(layers);
  layer.getElement()?.classList.add("mk", `mk-${kind}`);
  return layer;
}

function figures(totals, trips, speeding, stops, deviations) {
  const first = positions[0], last = positions[positions.length - 1];
  const select = form.elements.vehicle_id;
  const drivers = [...new Set(trips.map((t) => t.driver).filter(Boolean))];
  const items = [
    ["Veículo", select.options[select.selectedIndex]?.text || "—"],
    ["Condutor(es)", drivers.length ? drivers.join(", ") : "não identificado"],
    ["Distância", positions.length ? fmt.km(totals ? totals.km : 0) : "sem posições no período"],
    ["Velocidade máxima", fmt.kmh(totals ? totals.max_kmh : null)],
    ["Velocidade média em movimento", fmt.kmh(totals ? totals.avg_kmh : null)],
    ["Tempo em movimento", fmt.duration(totals ? totals.moving_s : null)],
    ["Primeira posição", first ? fmt.time(first.time) : "—"],
    ["Posição atual (última)", last ? fmt.time(last.time) : "—"],
    ["Trechos", String(trips.length)],
    ["Excessos de velocidade", String(speeding.length)],
    ["Paradas não autorizadas", String(stops.filter((s) => !s.authorized).length)],
    ["Desvios de rota", String(deviations.length)],
  ];
  document.getElementById("h-figures").replaceChildren(
    ...items.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v))));
}

function table(id, headers, rows) {
  const t = document.getElementById(id);
  const head = el("thead", {}, el("tr", {}, headers.map(([h, n]) => el("th", { scope: "col", class: n ? "n" : null }, h))));
  t.replaceChildren(head, el("tbody", {}, rows));
}

function tripTable(trips) {
  table("h-trips", [["Início"], ["Fim"], ["Duração", 1], ["De"], ["Para"], ["Distância", 1], ["Vel. média", 1], ["Vel. máxima", 1], ["Rota"], ["Alertas"]],
    trips.length ? trips.map((t) => el("tr", { tabindex: "0", onclick: () => zoomTo([[t.start_lat, t.start_lon], [t.end_lat, t.end_lon]]),
      onkeydown: (e) => { if (e.key === "Enter") zoomTo([[t.start_lat, t.start_lon], [t.end_lat, t.end_lon]]); } },
      el("td", {}, fmt.time(t.start)), el("td", {}, fmt.time(t.end)), el("td", { class: "n" }, fmt.duration(t.duration_s)),
      el("td", {}, t.start_place || "—"), el("td", {}, t.end_place || "—"),
      el("td", { class: "n" }, fmt.km(t.km)), el("td", { class: "n" }, fmt.kmh(t.avg_kmh)), el("td", { class: "n" }, fmt.kmh(t.max_kmh)),
      el("td", {}, t.route || "—"),
      el("td", {}, [t.in_progress && badge("Em andamento", "warn"), t.speeding && badge("Excesso", "bad"),
        t.deviation && badge("Desvio", "warn"), t.over_2h && badge("> 2 h a bordo", "bad")]),
    )) : [el("tr", {}, el("td", { colspan: "10" }, "Nenhum trecho no período."))]);
}

function badge(text, kind) {
  return el("span", { class: `badge ${kind}` }, text);
}

function eventTable(speeding, stops, deviations) {
  const rows = [
    ...speeding.map((e) => [e.start, "Excesso de velocidade", `${fmt.kmh(e.max_kmh)} (limite ${fmt.kmh(e.limit_kmh)}, +${fmt.num(e.excess_pct)} %)`, e.place, [e.lat, e.lon], "bad"]),
    ...stops.filter((s) => !s.authorized).map((s) => [s.start, "Parada não autorizada", fmt.duration(s.duration_s),
      s.nearest_point ? `${s.nearest_point_m} m de ${s.nearest_point}` : "—", [s.lat, s.lon], "bad"]),
    ...deviations.map((d) => [d.start, "Desvio de rota", `até ${d.max_distance_m} m da rota ${d.route}, ${fmt.km(d.km_off_route)}`, "—", [d.far_lat, d.far_lon], "warn"]),
  ].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  table("h-events", [["Quando"], ["O quê"], ["Detalhe"], ["Local"]],
    rows.length ? rows.map(([t, what, detail, place, at, kind]) => el("tr", { tabindex: "0", onclick: () => zoomTo([at]),
      onkeydown: (e) => { if (e.key === "Enter") zoomTo([at]); } },
      el("td", {}, fmt.time(t)), el("td", {}, badge(what, kind)), el("td", {}, detail), el("td", {}, place || "—")))
      : [el("tr", {}, el("td", { colspan: "4" }, "Nenhuma ocorrência no período."))]);
}

function positionTable() {
  const newest = positions.slice().reverse().slice(0, shownPositions);
  table("h-positions", [["Horário (GPS)"], ["Latitude", 1], ["Longitude", 1], ["Velocidade", 1], ["Direção", 1], ["Ignição"], ["Km no período", 1], ["Recebida"]],
    newest.map((p, i) => el("tr", { class: i === 0 ? "selected" : null },
      el("td", {}, fmt.time(p.time), i === 0 ? " " : "", i === 0 ? badge("atual", "ok") : ""),
      el("td", { class: "n" }, fmt.coord(p.lat)), el("td", { class: "n" }, fmt.coord(p.lon)),
      el("td", { class: "n" }, fmt.kmh(p.speed_kmh)), el("td", { class: "n" }, p.heading_deg === null ? "—" : `${p.heading_deg}°`),
      el("td", {}, p.ignition || "—"),
      el("td", { class: "n" }, fmt.km(p.km)), el("td", {}, fmt.time(p.received)))));
  document.getElementById("h-more").hidden = shownPositions >= positions.length;
}

document.getElementById("h-more").addEventListener("click", () => { shownPositions += PAGE; positionTable(); });

function zoomTo(points) {
  const ok = points.filter((p) => p[0] !== null && p[0] !== undefined);
  if (!ok.length) return;
  map.fitBounds(L.latLngBounds(ok).pad(0.5), { maxZoom: 17 });
  document.getElementById("h-map").scrollIntoView({ behavior: "smooth", block: "center" });
}

// --- timeline and playback -------------------------------------------------------------------------
function timeline() {
  slider.max = String(Math.max(0, positions.length - 1));
  slider.value = "0";
  slider.disabled = play.disabled = positions.length < 2;
  moveTo(0);
}

function moveTo(i) {
  const p = positions[i];
  if (!p) { nowOut.textContent = ""; cursor.remove(); return; }
  cursor.setLatLng([p.lat, p.lon]).addTo(map);
  chart?.cursor(i);
  nowOut.textContent = `${fmt.time(p.time)} · ${fmt.kmh(p.speed_kmh)} · ${fmt.km(p.km)} percorridos`;
}

slider.addEventListener("input", () => moveTo(Number(slider.value)));

// A moment chosen on the speed chart: the map goes there; a playback under way goes on from there.
function pick(i) {
  const playing = timer !== null;
  stop();
  slider.value = String(i);
  moveTo(i);
  if (playing) play.click();
}

function stop() {
  clearInterval(timer);
  timer = null;
  play.textContent = "▶ Reproduzir";
  play.setAttribute("aria-pressed", "false");
}

play.addEventListener("click", () => {
  if (timer) return stop();
  play.textContent = "❚❚ Pausar";
  play.setAttribute("aria-pressed", "true");
  if (Number(slider.value) >= positions.length - 1) slider.value = "0";
  // Each tick advances simulated time by `speed` × 0.2 s: playback follows the fixes' own clock.
  const speed = Number(document.getElementById("h-speed").value);
  let clock = Date.parse(positions[Number(slider.value)].time);
  timer = setInterval(() => {
    clock += speed * 200;
    let i = Number(slider.value);
    while (i < positions.length - 1 && Date.parse(positions[i + 1].time) <= clock) i += 1;
    slider.value = String(i);
    moveTo(i);
    if (i >= positions.length - 1) stop();
  }, 200);
});

await loadVehicles();
fillFromUrl();
if (new URLSearchParams(location.search).get("vehicle_id")) form.requestSubmit();
