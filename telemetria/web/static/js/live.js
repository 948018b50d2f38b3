// The live map: every visible vehicle's newest position, refreshed every few seconds without reloading.
import { api, config, el, explain, fmt, toast } from "./api.js";
import { makeMap, tip, vehicleIcon } from "./mapbase.js";
import { alertsPanel } from "./fisc/alerts.js";

const L = window.L;
const STATUS_PT = { online: "Online", late: "Atrasado", offline: "Sem sinal", never: "Nunca transmitiu" };
const map = makeMap(document.getElementById("map"));
const list = document.getElementById("vehicle-list");
const filter = document.getElementById("filter");
const summary = document.getElementById("live-summary");
const markers = new Map(); // vehicle_id → { marker, trail }
let vehicles = [];
let selected = null;
let fitted = false;
let failures = 0;

// "1 veículo", "2 veículos", "0 veículos": Portuguese uses the singular for one only.
function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

function label(v) {
  return v.prefix ? `${v.prefix} · ${v.plate}` : v.plate;
}

// What a vehicle's popup shows: its facts as a table, and a link to its history.
function details(v) {
  const rows = [
    ["Veículo", label(v)],
    ["Empresa", v.contractor || "—"],
    ["Condutor", v.driver || "não identificado"],
    ["Rota do dia", v.routes || "—"],
    ["Velocidade", fmt.kmh(v.speed_kmh)],
    ["Direção", v.heading_deg === null ? "—" : `${v.heading_deg}°`],
    ["Ignição", v.ignition === null ? "—" : v.ignition ? "ligada" : "desligada"],
    ["Última posição", `${fmt.time(v.time)} (${fmt.age(v.age_s)})`],
    ["Situação", STATUS_PT[v.status]],
  ];
  return [el("table", { class: "popup" }, el("tbody", {}, rows.map(([k, val]) => el("tr", {}, el("th", {}, k),
    el("td", {}, val))))), el("a", { href: `/historico?vehicle_id=${v.vehicle_id}` }, "Ver histórico")];
}

function shown(v) {
  const wanted = new Set([...document.querySelectorAll("input[name=status]:checked")].map((i) => i.value));
  if (!wanted.has(v.status)) return false;
  const q = filter.value.trim().toLowerCase();
  if (!q) return true;
  return [v.plate, v.prefix, v.driver, v.routes, v.contractor].some((x) => x && String(x).toLowerCase().includes(q));
}

function draw() {
  const seen = new Set();
  for (const v of vehicles) {
    if (v.lat === null || !shown(v)) continue;
    seen.add(v.vehicle_id);
    const icon = vehicleIcon(v.status, v.heading_deg, label(v));
    let m = markers.get(v.vehicle_id);
    if (!m) {
      const marker = L.marker([v.lat, v.lon], { icon, title: v.plate, keyboard: true, alt: v.plate }).addTo(map);
      marker.bindPopup(tip(...details(v)));
      const trail = L.polyline([], { color: "#1f5fbf", weight: 3, opacity: 0.6 }).addTo(map);
      m = { marker, trail };
      markers.set(v.vehicle_id, m);
    }
    m.marker.setLatLng([v.lat, v.lon]);
    m.marker.setIcon(icon);
    m.marker.getElement()?.setAttribute("data-vehicle", v.plate);
    m.marker.setPopupContent(tip(...details(v)));
    m.trail.setLatLngs(v.trail);
  }
  for (const [id, m] of markers) {
    if (!seen.has(id)) {
      m.marker.remove();
      m.trail.remove();
      markers.delete(id);
    }
  }
  if (!fitted && seen.size) {
    const pts = vehicles.filter((v) => seen.has(v.vehicle_id)).map((v) => [v.lat, v.lon]);
    map.fitBounds(L.latLngBounds(pts).pad(0.3), { maxZoom: 15 });
    fitted = true;
  }
}

function renderList() {
  const items = vehicles.filter(shown).map((v) => {
    const button = el("button", { type: "button", "aria-pressed": String(selected === v.vehicle_id), "data-vehicle": v.plate,
      onclick: () => focus(v.vehicle_id) },
      el("span", { class: `dot ${v.status}`, title: STATUS_PT[v.status] }),
      el("span", { class: "plate" }, label(v)),
      " ", el("span", { class: "badge" }, STATUS_PT[v.status]),
      el("span", { class: "meta" }, `${v.driver || "condutor não identificado"} · ${fmt.kmh(v.speed_kmh)}`),
      el("span", { class: "meta" }, `${v.routes ? "Rota " + v.routes + " · " : ""}${fmt.age(v.age_s)}`));
    return el("li", {}, button);
  });
  list.replaceChildren(...items);
  const counts = { online: 0, late: 0, offline: 0, never: 0 };
  for (const v of vehicles) counts[v.status] += 1;
  summary.textContent = `${plural(vehicles.length, "veículo", "veículos")}: ${counts.online} online, ` +
    `${plural(counts.late, "atrasado", "atrasados")}, ${counts.offline} sem sinal, ` +
    `${counts.never} ${counts.never === 1 ? "nunca transmitiu" : "nunca transmitiram"} · atualizado às ${fmt.clock(lastTime)}`;
}

function focus(id) {
  selected = id;
  const v = vehicles.find((x) => x.vehicle_id === id);
  const m = markers.get(id);
  if (v && m) {
    map.setView([v.lat, v.lon], Math.max(map.getZoom(), 15));
    m.marker.openPopup();
  } else if (v) {
    toast(`${label(v)} não tem posição para mostrar.`);
  }
  renderList();
}

let lastTime = null;
async function refresh() {
  try {
    const data = await api("/api/v1/live");
    vehicles = data.vehicles;
    lastTime = data.time;
    failures = 0;
    draw();
    renderList();
    document.body.dataset.liveUpdated = data.time;
  } catch (err) {
    failures += 1;
    if (failures === 1 || failures % 10 === 0) {
      summary.textContent = "Sem atualização: " + explain(err);
    }
  } finally {
    setTimeout(refresh, (config.map.poll_s || 5) * 1000 * Math.min(1 + failures, 6));
  }
}

filter.addEventListener("input", () => { draw(); renderList(); });
for (const box of document.querySelectorAll("input[name=status]")) {
  box.addEventListener("change", () => { draw(); renderList(); });
}
refresh();

// The Secretaria's alerts (a contractor sees its occurrences only once notified: no live alerts for it).
const alertsBox = document.getElementById("alerts");
if (config.user && config.user.role !== "contractor") {
  alertsBox.hidden = false;
  alertsPanel(map, alertsBox);
}
