// /publico: the itineraries of the school year in force, a table per route and a map of the routes' lines and
// boarding places (on the grid the Secretaria chose). Works without map tiles: lines and places are vectors.
import { el } from "../api.js";
import { COLOURS, dot, makeMap, tip } from "../mapbase.js";
import { date, km, problem, publicJson, table } from "./common.js";

const L = window.L;
const status = document.getElementById("p-status");
const routesBox = document.getElementById("p-routes");
const SHIFTS = { matutino: "Matutino", vespertino: "Vespertino", noturno: "Noturno", integral: "Integral" };
const PALETTE = ["#1f5fbf", "#2e7d32", "#ad1457", "#ef6c00", "#6a1b9a", "#00838f", "#5d4037", "#c62828"];

function kmText(r) {
  const parts = [];
  if (r.declared_km !== null) parts.push(`${km(r.declared_km)} declarados no contrato`);
  parts.push(`${km(r.length_km)} pelo traçado da rota`);
  return parts.join("; ");
}

function place(s) {
  if (s.kind === "school") return s.name || "Escola";
  return s.name || "Ponto de embarque (local aproximado)";
}

function routeSection(r, colour) {
  const rows = r.stops.map((s) => [[String(s.order), "n"], s.kind === "school" ? "Escola" : "Embarque", place(s),
    s.scheduled_time || "—", [`${s.lat.toFixed(6)}, ${s.lon.toFixed(6)}`, "n"]]);
  return el("section", { class: "panel public-route", "data-testid": "route", "data-code": r.code },
    el("h2", {}, el("span", { class: "swatch", style: `background:${colour}` }), `Rota ${r.code}: ${r.name}`),
    el("dl", { class: "public-facts" },
      el("dt", {}, "Turno"), el("dd", {}, SHIFTS[r.shift] || r.shift || "—"),
      el("dt", {}, "Extensão"), el("dd", {}, kmText(r)),
      el("dt", {}, "Escolas"), el("dd", {}, r.schools.length ? r.schools.join(", ") : "—")),
    rows.length ? table(`Pontos da rota ${r.code}`, [["Ordem", "n"], "Tipo", "Local", "Horário", "Coordenadas"], rows)
      : el("p", { class: "muted" }, "Nenhum ponto publicado."));
}

function drawMap(routes) {
  // No roads layer: its API needs a session, and the public area has none (vectors still draw without tiles).
  const map = makeMap(document.getElementById("p-map"), { roads: false });
  const layers = L.featureGroup().addTo(map);
  routes.forEach((r, i) => {
    const colour = PALETTE[i % PALETTE.length];
    if (r.line.length > 1) {
      L.polyline(r.line, { color: colour, weight: 4, opacity: 0.85 })
        .bindTooltip(tip(`Rota ${r.code}: ${r.name}`)).addTo(layers);
    }
    for (const s of r.stops) {
      const when = s.scheduled_time ? ` · ${s.scheduled_time}` : "";
      const title = `${s.kind === "school" ? "Escola" : "Embarque"}: ${place(s)}${when} (rota ${r.code})`;
      dot([s.lat, s.lon], s.kind === "school" ? COLOURS.point : colour, title, s.kind === "school" ? 8 : 6)
        .addTo(layers);
    }
  });
  if (layers.getLayers().length) map.fitBounds(layers.getBounds(), { padding: [20, 20] });
  return map;
}

async function load() {
  let data;
  try {
    data = await publicJson("/public/itineraries");
  } catch (err) {
    status.textContent = problem(err);
    status.className = "status error-text";
    return;
  }
  const span = data.start ? ` (${date(data.start)} a ${date(data.end)})` : "";
  document.getElementById("p-year").textContent = `Ano letivo ${data.school_year}${span}: ${data.routes.length} `
    + (data.routes.length === 1 ? "rota." : "rotas.");
  document.getElementById("p-precision").textContent = data.boarding_precision_m > 0
    ? `Os pontos de embarque aparecem no centro de uma quadrícula de ${data.boarding_precision_m} m, não no local exato `
      + "(um ponto de embarque perto de casa identifica uma criança: LGPD, Art. 14)."
    : "Os pontos de embarque aparecem no local cadastrado.";
  status.textContent = data.routes.length ? "" : "Nenhuma rota cadastrada para o ano letivo em vigor.";
  drawMap(data.routes);
  routesBox.replaceChildren(...data.routes.map((r, i) => routeSection(r, PALETTE[i % PALETTE.length])));
}

load();
