// A Leaflet map with the configured base layers (street, satellite, hybrid, none). The pages work
// without tiles: vehicles, tracks and routes are vector layers, drawn whether tiles load or not.
import { config, el } from "./api.js";

const L = window.L;
const CHOICE = "telemetria.baselayer";
// Jaru/RO, the reference municipality, until there is something to fit the view to.
const START = [-10.4389, -62.4664];
// Leaflet writes the layer menu's labels as HTML; the names come from settings and are text, so their
// markup characters go in as character references.
const asHtmlText = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// `roads`: offer the imported road network (read from the logged-in API); the public pages pass false, as they
// have no session and must not call an API that needs one.
export function makeMap(element, { roads = true } = {}) {
  const map = L.map(element, { zoomControl: true, preferCanvas: false }).setView(START, 12);
  const bases = {};
  // What the base map is doing: the tile layers, the roads layer once known, whether tiles failed, and whether
  // the roads layer was put in by the fallback (that choice is not remembered: tomorrow the tiles may load).
  const state = { element, tiles: new Set(), roads: null, failed: false, auto: false, chosen: false };
  for (const layer of config.map.layers) {
    const tiles = layer.tiles.map((url) =>
      L.tileLayer(url, { maxZoom: layer.max_zoom, attribution: layer.attribution, crossOrigin: false }));
    const base = tiles.length === 1 ? tiles[0] : L.layerGroup(tiles);
    bases[asHtmlText(layer.name)] = base;
    state.tiles.add(base);
    for (const t of tiles) t.on("tileerror", () => { if (map.hasLayer(t)) tileTrouble(map, state); });
  }
  bases["Sem mapa de fundo"] = L.layerGroup();
  const saved = localStorage.getItem(CHOICE);
  const first = bases[saved] ? saved : Object.keys(bases)[0];
  bases[first].addTo(map);
  const control = L.control.layers(bases, {}, { position: "topright" }).addTo(map);
  L.control.scale({ imperial: false }).addTo(map);
  map.on("baselayerchange", (e) => {
    if (state.auto) return;
    localStorage.setItem(CHOICE, e.name);
    // Chosen by hand: the notice about tiles no longer applies (a base of vectors needs no tile server); a tile
    // layer chosen again may fail again and say so, but is not switched away from a second time.
    dropNote(state);
    state.failed = false;
    state.chosen = true;
  });
  if (roads) offerRoads(map, control, bases[first], saved, state);
  return map;
}

// The imported road network (telemetria roads import) as a base layer of vectors: roads drawn from the
// service itself, named when close enough, so the map is useful where no tile server is reachable.
export const ROADS_LAYER = "Estradas importadas (sem internet)";
const NAMES_FROM_ZOOM = 14;

// A plain fetch, not api(): a page without a session (the public area) simply gets no roads layer, where api()
// would take a 401 as a lapsed session and send the visitor to the login page.
async function quietly(path, signal) {
  const resp = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" }, signal });
  if (!resp.ok) throw new Error(`${path}: ${resp.status}`);
  return resp.json();
}

async function offerRoads(map, control, shown, saved, state) {
  let status;
  try { status = await quietly("/api/v1/roads/status"); } catch { return; }
  if (!status || !status.network) return;
  const layer = L.layerGroup();
  let pending = null;
  const draw = async () => {
    if (!map.hasLayer(layer)) return;
    pending?.abort();
    pending = new AbortController();
    const b = map.getBounds();
    const box = [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()].map((x) => x.toFixed(5)).join(",");
    let data;
    try {
      data = await quietly(`/api/v1/roads?bbox=${box}&zoom=${map.getZoom()}`, pending.signal);
    } catch { return; }
    layer.clearLayers();
    const named = map.getZoom() >= NAMES_FROM_ZOOM;
    for (const f of data.features) {
      const p = f.properties;
      const line = L.polyline(f.geometry.coordinates.map(([x, y]) => [y, x]), {
        color: p.paved ? "#7a7a7a" : "#a0522d", weight: p.paved ? 4 : 2.5, dashArray: p.paved ? null : "6 4",
        interactive: Boolean(p.road), className: "road-line",
      });
      if (p.road) line.bindTooltip(tip(p.road), { permanent: named, direction: "center", className: "road-name" });
      layer.addLayer(line);
    }
  };
  layer.on("add", draw);
  map.on("moveend", draw);
  control.addBaseLayer(layer, ROADS_LAYER);
  state.roads = layer;
  if (saved === ROADS_LAYER) {
    map.removeLayer(shown);
    layer.addTo(map);
  } else if (state.failed && !state.chosen) {
    fallBack(map, state); // the tiles failed before the roads were known
  }
}

// The tiles are unreachable and the imported roads are there: show the roads instead, and say so.
function fallBack(map, state) {
  const current = [...state.tiles].find((t) => map.hasLayer(t));
  if (!state.roads || !current) return false;
  state.auto = true;
  try {
    map.removeLayer(current);
    state.roads.addTo(map);
  } finally {
    state.auto = false;
  }
  note(state, "Mapa de fundo indisponível: estradas importadas",
    "Sem acesso ao servidor do mapa de fundo, o mapa mostra a malha viária importada. Escolha outra camada no "
    + "canto superior direito quando a internet voltar.");
  return true;
}

// A tile of the shown base map failed: fall back to the imported roads when there are any, else say once that
// the base map is unreachable and that everything else still works.
function tileTrouble(map, state) {
  if (state.failed) return;
  state.failed = true;
  state.element.dataset.tilesFailed = "1";
  if (!state.chosen && fallBack(map, state)) return;
  note(state, "Mapa de fundo indisponível", "Veículos e trajetos continuam sendo mostrados. Escolha outra camada no "
    + `canto superior direito (com a malha viária importada: "${ROADS_LAYER}").`);
}

// Small and dismissable: on a phone a long notice would hide the map and the vehicles' labels.
function note(state, text, title) {
  dropNote(state);
  const box = document.createElement("p");
  box.className = "map-note";
  box.setAttribute("role", "status");
  box.title = title;
  const close = document.createElement("button");
  close.type = "button";
  close.className = "map-note-close";
  close.setAttribute("aria-label", "Fechar aviso");
  close.textContent = "×";
  close.addEventListener("click", () => box.remove());
  box.append(text, close);
  state.element.appendChild(box);
}

// The notice goes when a base of vectors is chosen; a tile layer chosen again may fail again and say so.
function dropNote(state) {
  state.element.querySelector(":scope > .map-note")?.remove();
}

// What a tooltip or popup shows, as DOM nodes. Leaflet writes a string into the page as HTML, so a
// name someone typed (a stop, a route, a place, a vehicle's prefix) never goes to it as one: parts are
// strings (written as text) or nodes built with el(). Every tooltip and popup of every page uses this.
export function tip(...parts) {
  return el("div", {}, ...parts);
}

// An arrow marker for a vehicle: its colour says how fresh its position is, it points where it heads.
export function vehicleIcon(status, heading, label) {
  const turned = heading !== null && heading !== undefined;
  const arrow = el("span", { class: "vh-arrow" }, turned ? "▲" : "●");
  if (turned) arrow.style.transform = `rotate(${Math.round(heading)}deg)`;
  return L.divIcon({ className: `vh vh-${status}`, iconSize: [22, 22], iconAnchor: [11, 11],
    html: el("span", { class: "vh-body" }, arrow, el("span", { class: "vh-label" }, label)) });
}

// A coloured circle marker with a title (stops, alerts, points).
export function dot(latlng, colour, title, radius = 7) {
  return L.circleMarker(latlng, { radius, color: "#222", weight: 1, fillColor: colour, fillOpacity: 0.9 })
    .bindTooltip(tip(title));
}

export const COLOURS = {
  track: "#1f5fbf", route: "#2e7d32", speeding: "#c62828", deviation: "#ef6c00",
  stopOk: "#2e7d32", stopBad: "#c62828", point: "#6a1b9a",
};
