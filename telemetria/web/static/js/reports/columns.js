// What each report shows: its table's columns and labels, what its map draws, and its sentence on the page.
// Every figure comes from the reports API as is.
import { config, el, fmt } from "../api.js";
import { COLOURS } from "../mapbase.js";
import { TIER, badge, cell, col, head, int, km, num, rule, tcol, text, time, until, wcol, word, yes } from "./format.js";

export const KIND = config.report;

const PLATE = tcol("Placa", "plate", text);
// The speeding tier's scale named, so it is never read as the occurrence's severity (Lei 3.588/2023, Arts. 37-39).
export const SPEED_SCALE = "Gravidade CTB, Art. 218";
const SPAN = [tcol("Início", "start"), tcol("Fim", until("end"), text), num("Duração", "duration_s", fmt.duration)];
// An episode's or stop's start and end are estimates, midway to the fixes around it (issue 34); between which
// instants each lies, as the CSV's "Início entre" and "Fim entre" (a side no fix bounds: "até" or "desde").
const between = (lo, hi) => (r) => {
  if (!r[lo] && !r[hi]) return null;
  if (!r[lo]) return `até ${fmt.time(r[hi])}`;
  if (!r[hi]) return `desde ${fmt.time(r[lo])}`;
  return `${fmt.time(r[lo])} a ${r[lo].slice(0, 10) === r[hi].slice(0, 10) ? fmt.clock(r[hi]) : fmt.time(r[hi])}`;
};
const BOUNDS = [tcol("Início entre", between("start_min", "start_max"), text),
  tcol("Fim entre", between("end_min", "end_max"), text)].map((c) => ({ ...c, more: true }));
// A column shown only when chosen under "Mais colunas" (reports/chooser.js): each table starts with what its
// readers look for, in the order they read it (vehicle, date, the figure, then who and where).
const more = (c) => ({ ...c, more: true });

const flags = (r) => {
  const out = [];
  if (r.in_progress) out.push(badge("em andamento", "warn"), " ");
  if (r.over_2h) out.push(badge("mais de 2 h a bordo", "bad"), " ");
  if (r.deviation) out.push(badge("desvio de rota", "warn"), " ");
  if (r.speeding) out.push(badge("excesso de velocidade", "bad"));
  return out.length ? out : "—";
};

const REPORTS = {
  km: {
    about: "Quilômetros rodados por veículo (ou por veículo e dia) no período, com o total do grupo e como " +
      "foram medidos: ao longo da rota, pelas estradas (com a malha viária importada) ou em linha reta entre posições.",
    week: true, key: "vehicles",
    noun: (d) => (d.by === "day" ? ["dia de veículo", "dias de veículo"] : ["veículo", "veículos"]),
    columns: (d) => [
      PLATE, ...(d.by === "day" ? [tcol("Data", "date", time)] : []),
      num("Km", "km", km), num("Km planejado (rotas)", "planned_km", rule("km")), col("Método", "method", word), num("Tempo em movimento", "driving_s", fmt.duration),
      num("Vel. máxima (km/h)", "max_kmh"), col("Contratada", "contractor"),
      more(col("Prefixo", "prefix")), more(num("Km pela rota", "route_km", km)),
      more(num("Km em linha reta", "chord_km", km)), more(num("Km pelas estradas", "road_km", km)),
      more(num("Km em lacunas de sinal", "gap_km", km)), more(num("Km pavimentados", "paved_km", km)),
      more(num("Km não pavimentados", "unpaved_km", km)), more(num("Km do odômetro", "odometer_km", km)), more(num("Posições recebidas", "fixes", int)),
      more(num("Posições usadas", "fixes_used", int)), more(tcol("Primeira posição", "first_fix", time)),
      more(tcol("Última posição", "last_fix", time)),
    ],
    totals: (d) => ({
      km: d.total_km, planned_km: d.total_planned_km, route_km: d.total_route_km, chord_km: d.total_chord_km,
      road_km: d.total_road_km, gap_km: d.total_gap_km, paved_km: d.total_paved_km, unpaved_km: d.total_unpaved_km,
    }),
  },
  summary: {
    about: "Por veículo: km, tempo em movimento, trechos, velocidades, paradas, alertas e condutores do período.",
    week: true, key: "vehicles", noun: ["veículo", "veículos"],
    columns: () => [
      PLATE, num("Km", "km", km), col("Condutores", (r) => r.drivers.join(", ") || "—"),
      num("Tempo em movimento", "driving_s", fmt.duration), num("Trechos", "trips", int),
      num("Paradas fora de ponto autorizado", "unauthorized_stops", int), num("Excessos de velocidade", "speeding", int),
      num("Desvios de rota", "deviations", int),
      more(col("Prefixo", "prefix")), more(col("Contratada", "contractor")), more(col("Método", "method", word)),
      more(num("Km em lacunas de sinal", "gap_km", km)), more(num("Km pavimentados", "paved_km", km)),
      more(num("Km não pavimentados", "unpaved_km", km)), more(num("Vel. máxima (km/h)", "max_kmh")),
      more(num("Vel. média (km/h)", "avg_kmh")), more(num("Paradas", "stops", int)),
      more(col("Com posições", "active", yes)),
    ],
  },
  trips: {
    about: "Cada trecho percorrido entre duas paradas: início e fim, locais, km, velocidades, condutor e rota. " +
      "No mapa, o início (azul) e o fim (roxo) de cada trecho.",
    key: "trips", noun: ["trecho", "trechos"],
    columns: () => [
      PLATE, SPAN[0], SPAN[1], num("Km", "km", km), col("Condutor", "driver"), tcol("Rota", "route", text),
      col("Ocorrências", (r) => r, flags),
      more(SPAN[2]), more(wcol("Local inicial", "start_place")), more(wcol("Local final", "end_place")),
      more(num("Vel. média (km/h)", "avg_kmh")), more(num("Vel. máxima (km/h)", "max_kmh")),
    ],
    marks: (r) => [
      { lat: r.start_lat, lon: r.start_lon, colour: COLOURS.track, title: `${r.plate}: início ${fmt.time(r.start)}` },
      { lat: r.end_lat, lon: r.end_lon, colour: COLOURS.point, title: `${r.plate}: fim ${fmt.time(r.end)}`, small: true },
    ],
  },
  speeding: {
    about: "Episódios acima do limite que vale em cada lugar (zona de velocidade, rota, veículo ou o limite geral), " +
      "com a gravidade pela escala do CTB (Art. 218: média até 20 % acima, grave até 50 %, gravíssima acima). Não é a "
      + "gravidade da ocorrência, que segue outra escala, a da Lei 3.588/2023 (Arts. 37 a 39). O mapa marca o ponto de "
      + "velocidade máxima de cada episódio.",
    key: "episodes", noun: ["episódio", "episódios"],
    columns: () => [
      PLATE, SPAN[0], num("Vel. máxima (km/h)", "max_kmh"), num("Limite (km/h)", "limit_kmh"),
      col(SPEED_SCALE, "tier", (t) => badge(word(t), TIER[t])), SPAN[2], wcol("Local", "place"),
      more(SPAN[1]), more(num("Excesso (%)", "excess_pct")), more(num("Posições acima do limite", "fixes", int)),
      ...BOUNDS,
    ],
    marks: (r) => [{ lat: r.lat, lon: r.lon, colour: COLOURS.speeding,
      title: `${r.plate}: ${fmt.time(r.start)} · ${fmt.kmh(r.max_kmh)} (limite ${fmt.kmh(r.limit_kmh)})` }],
  },
  stops: {
    about: "Paradas do período e se foram num ponto autorizado da rota (verde no mapa) ou fora dele (vermelho).",
    key: "stops", noun: ["parada", "paradas"],
    columns: () => [
      PLATE, SPAN[0], SPAN[2],
      col("Ponto autorizado", "authorized", (a) => badge(a ? "Sim" : "Não", a ? "ok" : "bad")),
      col("Ponto", (r) => r.point || (r.nearest_point ? `fora; mais próximo: ${r.nearest_point}` : null)),
      num("Distância ao ponto (m)", "nearest_point_m", rule("m")),
      more(SPAN[1]), more(col("Tipo do ponto", "point_kind", word)), more(col("Ponto mais próximo", "nearest_point")),
      more(col("Ignição desligada", "ignition_off", yes)),
      ...BOUNDS,
    ],
    marks: (r) => [{ lat: r.lat, lon: r.lon, colour: r.authorized ? COLOURS.stopOk : COLOURS.stopBad,
      title: `${r.plate}: ${fmt.time(r.start)} · ${fmt.duration(r.duration_s)}` +
        (r.authorized ? ` em ${r.point}` : " fora de ponto autorizado") }],
  },
  "route-deviation": {
    about: "Saídas da rota atribuída além da sua tolerância. No mapa, o ponto mais distante de cada desvio e, " +
      "menores, onde o veículo saiu e onde voltou à rota.",
    key: "episodes", noun: ["desvio", "desvios"],
    columns: () => [
      PLATE, SPAN[0], tcol("Rota", "route", text), num("Distância máxima da rota (m)", "max_distance_m", rule("m")),
      num("Km fora da rota", "km_off_route", km), SPAN[2], col("Voltou à rota", "rejoined", yes),
      more(SPAN[1]), more(num("Posições fora da rota", "fixes", int)),
      ...BOUNDS,
    ],
    marks: (r) => [
      { lat: r.far_lat, lon: r.far_lon, colour: COLOURS.deviation,
        title: `${r.plate}: ${fmt.time(r.start)} · ${int(r.max_distance_m)} m da rota ${r.route}` },
      { lat: r.left_lat, lon: r.left_lon, colour: COLOURS.deviation, title: `${r.plate}: saída da rota`, small: true },
      ...(r.rejoined ? [{ lat: r.rejoined_lat, lon: r.rejoined_lon, colour: COLOURS.deviation,
        title: `${r.plate}: volta à rota`, small: true }] : []),
    ],
  },
  track: {
    about: "Todas as posições do período com velocidade e distância, as paradas e os pontos de rota passados, " +
      "e os totais. Também em GeoJSON, GPX e KML para programas de mapas.",
    key: "positions", noun: ["posição", "posições"], gis: true, track: true,
    columns: () => [
      PLATE, tcol("Data e hora", "time", time), num("Velocidade (km/h)", "speed_kmh"), num("Km acumulado", "km", km),
      col("Ignição", "ignition"), num("Latitude", "lat", rule("coord")), num("Longitude", "lon", rule("coord")),
      more(num("Direção (graus)", "heading_deg", rule("deg"))), more(num("Km desde a anterior", "step_km", rule("km_step"))),
      more(col("Método", "method", word)), more(col("Usada", "used", yes)),
      more(num("Atraso de envio", "delay_s", fmt.duration)),
    ],
    marks: (r) => [{ lat: r.lat, lon: r.lon, colour: COLOURS.speeding, title: `${r.plate}: ${fmt.time(r.time)}` }],
    lazyMarks: true,
  },
  schedule: {
    about: "Cada corrida devida das rotas atribuídas: saída e chegada à escola comparadas ao horário, pontos " +
      "atendidos, passados sem parar e pulados, e as corridas não realizadas. Numa corrida de hoje ainda em curso, " +
      "os pontos que faltam estão pendentes, não pulados.",
    key: "runs", noun: ["corrida devida", "corridas devidas"],
    columns: () => [
      PLATE, tcol("Data", "date", time), tcol("Rota", (r) => `${r.route_code}${r.route_name !== r.route_code ? " · " +
        r.route_name : ""}`),
      col("Realizada", "made", (m) => m === null ? badge("pendente", "warn") : badge(m ? "Sim" : "Não", m ? "ok" : "bad")),
      num("Pontos atendidos", (r) => `${r.points_served} de ${r.points_total}`, text),
      num("Pulados", "points_skipped", int), col("Pontos", (r) => r, pointsButton),
      tcol("Saída", "departure", fmt.clock), num("Atraso na saída (min)", "delay_departure_min", rule("min")),
      tcol("Chegada à escola", "school_arrival", fmt.clock), num("Atraso na escola (min)", "delay_school_min", rule("min")),
      more(num("Passados sem parar", "points_passed", int)), more(num("Pendentes", "points_pending", int)),
      more(tcol("Saída prevista", "scheduled_departure", fmt.clock)),
      more(tcol("Chegada prevista à escola", "scheduled_school", fmt.clock)),
      more(tcol("Chegada ao fim", "end_arrival", fmt.clock)),
    ],
    figures: (d) => [["Corridas devidas", d.scheduled], ["Realizadas", d.made], ["Não realizadas", d.not_made],
      ["Pendentes (hoje)", d.pending]],
  },
  reporting: {
    about: "Por veículo e dia: posições recebidas, cobertura a cada 30 s em serviço, lacunas em movimento e " +
      "posições enviadas com atraso (mais de 1 minuto).",
    key: "days", noun: ["dia de veículo", "dias de veículo"],
    columns: () => [
      PLATE, tcol("Data", "date", time), num("Cobertura a cada 30 s (%)", "coverage", rule("share")),
      num("Lacunas acima de 30 s em movimento", "gaps_over_30s", int),
      num("Maior lacuna em movimento", "max_gap_s", fmt.duration),
      num("Posições enviadas com atraso", "late_fixes", int), num("Tempo em serviço", "in_service_s", fmt.duration),
      more(num("Posições recebidas", "fixes", int)), more(num("Posições usadas", "fixes_used", int)),
      more(num("Maior atraso de envio", "max_delay_s", fmt.duration)),
    ],
  },
};

// The report on this page.
export const R = REPORTS[KIND];

// The track report's extra tables: the totals per vehicle, and the stops and route points passed.
export const TRACK_TOTALS = [PLATE, num("Km", "km", km), num("Posições", "fixes", int),
  num("Vel. máxima (km/h)", "max_kmh"), num("Tempo em movimento", "moving_s", fmt.duration),
  num("Vel. média (km/h)", "avg_kmh")];
export const TRACK_PLACES = [PLATE, tcol("Data e hora", "time", time),
  col("O quê", "kind", (k) => (k === "road" ? "via" : word(k))), col("Nome", "name"), col("Via", "road"),
  col("Localidade", "locality"), num("Km na via", "km", km), col("Autorizado", "authorized", yes),
  num("Duração", "duration_s", fmt.duration)];

// Schedule: the points of one run, opened under its row.
function pointsButton(r) {
  return el("button", { type: "button", class: "link", "aria-expanded": "false",
    onclick: (e) => togglePoints(e.currentTarget, r) }, `Ver ${r.points.length} pontos`);
}

function togglePoints(button, r) {
  const tr = button.closest("tr");
  const open = button.getAttribute("aria-expanded") === "true";
  button.setAttribute("aria-expanded", String(!open));
  if (open) { tr.nextElementSibling?.remove(); return; }
  const cols = [num("Ordem", "seq", int), col("Ponto", "name"), col("Tipo", "kind", word),
    col("Situação", "status", (s) => badge(word(s), s === "served" ? "ok" : s === "skipped" ? "bad" : "warn")),
    tcol("Previsto", "scheduled", fmt.clock), tcol("Chegada", "arrival", fmt.clock), tcol("Saída", "departure", fmt.clock),
    num("Atraso (min)", "delay_min", rule("min")), num("Distância (m)", "distance_m", rule("m"))];
  const inner = el("table", { class: "data compact" },
    el("caption", { class: "sr-only" }, `Pontos da rota ${r.route_code} em ${fmt.time(r.date)}`),
    head(cols), el("tbody", {}, r.points.map((p) => el("tr", {}, cols.map((c) => cell(c, p))))));
  tr.after(el("tr", { class: "points" }, el("td", { colspan: tr.children.length }, inner)));
}
