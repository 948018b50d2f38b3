// The words of fiscalização on the pages: kinds, states of the process, severities, penalties, states of a run,
// and each kind's measured facts as labelled lines. The kinds' names are model.py's KIND_NAMES (a test compares).
import { fmt } from "../api.js";
import { localWall, number } from "../formats.js";

// An instant as the service's local wall clock (America/Porto_Velho), whatever offset the API wrote it with.
export const when = (iso) => (iso ? fmt.time(localWall(iso)) : "—");
export const clock = (iso) => (iso ? fmt.clock(localWall(iso)) : "—");

export const KIND_NAMES = {
  speeding: "Excesso de velocidade",
  route_deviation: "Desvio de rota",
  unauthorized_stop: "Parada não autorizada",
  schedule_delay: "Atraso no horário",
  run_not_made: "Corrida não realizada",
  unauthorized_vehicle: "Veículo não autorizado",
  over_2h_on_board: "Mais de 2 h a bordo",
  tracker_silent: "Rastreador sem transmitir",
};

export const STATUS_NAMES = {
  detected: "Detectada (a revisar)",
  withdrawn: "Retirada",
  confirmed: "Confirmada",
  dismissed: "Descartada",
  notified: "Notificada",
  defense: "Em defesa",
  decided: "Decidida",
  under_appeal: "Em recurso (penalidade suspensa)",
  closed: "Encerrada",
};

// The badge colour of each state: what still needs someone's action stands out.
export const STATUS_TONE = {
  detected: "warn", confirmed: "warn", notified: "warn", defense: "warn",
  withdrawn: "", dismissed: "", decided: "bad", under_appeal: "warn", closed: "",
};

export const SEVERITY_NAMES = { leve: "Leve", media: "Média", grave: "Grave", gravissima: "Gravíssima" };
export const PENALTY_NAMES = { none: "Sem penalidade", warning: "Advertência", fine: "Multa",
  warning_and_fine: "Advertência e multa" };
export const OUTCOME_NAMES = { upheld: "Mantida", reformed: "Reformada", annulled: "Anulada" };

export const ACTION_NAMES = {
  detected: "Detectada", updated: "Atualizada pelo detector", withdrawn: "Retirada", restored: "Restabelecida",
  confirmed: "Confirmada", dismissed: "Descartada", notified: "Notificada (Termo emitido)", defense: "Defesa",
  decided: "Decisão", closed: "Encerrada", note: "Nota", appeal: "Recurso", appeal_decided: "Julgamento do recurso",
  fine_recomputed: "Multa recalculada (reincidência)",
};

export const RUN_STATES = {
  made: "Realizada", partial: "Parcial", in_progress: "Em andamento", not_started: "Não iniciada no horário",
  upcoming: "Prevista", not_made: "Não realizada", justified: "Justificada",
};
export const RUN_TONE = { made: "ok", partial: "warn", in_progress: "", not_started: "bad", upcoming: "",
  not_made: "bad", justified: "" };

export const kindName = (k) => KIND_NAMES[k] || String(k);
export const statusName = (s) => STATUS_NAMES[s] || String(s);
export const severityName = (s) => SEVERITY_NAMES[s] || String(s || "—");

const min = (x) => (x === null || x === undefined ? "—" : `${number(x, 1)} min`);
const m = (x) => (x === null || x === undefined ? "—" : `${number(x, 0)} m`);
const pct = (x) => (x === null || x === undefined ? "—" : `${number(x, 1)} %`);

// Each fact's label and how it reads; facts not listed are shown as they come.
const FACTS = {
  max_kmh: ["Velocidade máxima", fmt.kmh], limit_kmh: ["Limite", fmt.kmh], over_kmh: ["Acima do limite", fmt.kmh],
  duration_s: ["Duração", fmt.duration], km: ["Distância", fmt.km], max_off_m: ["Maior afastamento da rota", m],
  tolerance_m: ["Tolerância", m], nearest_stop: ["Ponto autorizado mais próximo", String], nearest_m: ["Distância dele", m],
  stop: ["Primeiro ponto atrasado", String], scheduled: ["Horário previsto", String], arrived: ["Chegada", when],
  late_min: ["Atraso nesse ponto", min], max_late_min: ["Maior atraso", min], coverage_pct: ["Cobertura da rota", pct],
  made_pct: ["Mínimo para realizada", pct], declared_km: ["Km declarados", fmt.km], minutes: ["Tempo a bordo", min],
  from: ["De", String], to: ["Até", String], gap_s: ["Tempo sem transmitir", fmt.duration],
  moved_m: ["Deslocamento durante a falha", m], since: ["Sem transmitir desde", when],
  early_stop: ["Ponto deixado antes do horário", String], early_scheduled: ["Horário previsto nesse ponto", when],
  departed: ["Saída", when], early_min: ["Antecipação na saída", min], early_stops: ["Pontos deixados antes", String],
  skipped_stops: ["Pontos de embarque não atendidos", (x) => (Array.isArray(x) ? x.join(", ") : String(x))],
};

// [label, text] pairs of an occurrence's facts, in a stable order.
export function factLines(facts) {
  const out = [];
  for (const [k, v] of Object.entries(facts || {})) {
    if (v === null || v === undefined || typeof v === "object") continue;
    const [label, show] = FACTS[k] || [k, String];
    out.push([label, show(v)]);
  }
  return out;
}

// One line saying what happened, for lists and the alerts panel: "Excesso de velocidade · 72,0 km/h (limite 40,0 km/h)".
export function headline(o) {
  const f = o.facts || {};
  let extra = "";
  if (o.kind === "speeding" && f.max_kmh !== undefined) extra = `${fmt.kmh(f.max_kmh)} (limite ${fmt.kmh(f.limit_kmh)})`;
  else if (o.kind === "route_deviation" && f.max_off_m !== undefined) extra = `até ${m(f.max_off_m)} fora da rota`;
  else if (o.kind === "schedule_delay" && f.max_late_min !== undefined) extra = `${min(f.max_late_min)} de atraso`;
  else if (f.duration_s !== undefined) extra = fmt.duration(f.duration_s);
  else if (f.gap_s !== undefined) extra = `${fmt.duration(f.gap_s)} sem transmitir`;
  return extra ? `${kindName(o.kind)} · ${extra}` : kindName(o.kind);
}

// Where it happened, as text: the place's name, else the coordinates.
export function where(o) {
  if (o.place) return o.place;
  if (o.lat !== null && o.lat !== undefined) return `${fmt.coord(o.lat)}, ${fmt.coord(o.lon)}`;
  return "—";
}
