// One occurrence (/ocorrencias/{id}): its facts, a small map of the evidence (the vehicle's positions from 10 min
// before to 10 min after, the occurrence's point marked), the SHA-256 of the frozen evidence, the append-only
// history, and the process's actions the user's role allows at its state (fisc/actions.js).
import { ApiError, api, config, el, explain } from "./api.js";
import { COLOURS, makeMap, tip } from "./mapbase.js";
import { number } from "./formats.js";
import { actions, upfm } from "./fisc/actions.js";
import { ACTION_NAMES, OUTCOME_NAMES, PENALTY_NAMES, factLines, kindName, severityName, statusName, when, where }
  from "./fisc/names.js";
import { ROLES } from "./registry/common.js";

const L = window.L;
const id = config.occurrence_id;
const status = document.getElementById("oc-status");
const result = document.getElementById("oc-result");
const MARGIN_MS = 10 * 60 * 1000;
let map = null;
let layers = null;

// Who acted, with the role's name as the users page says it ("empresa.demo (Empresa contratada)"), never its code.
const ROLE_NAMES = Object.fromEntries(ROLES);
const roleName = (role) => ROLE_NAMES[role] || role;
const row = (label, value) => [el("dt", {}, label), el("dd", {}, value)];
const brl = (x) => (x === null || x === undefined ? "—" : `R$ ${number(x, 2)}`);

function facts(o) {
  const rows = [
    row("Tipo", kindName(o.kind)),
    row("Situação", statusName(o.status)),
    row("Dever descumprido", o.duty || "—"),
    row("Infração (Art. 36 a 39)", o.article ? `${o.article} · ${severityName(o.severity)}` : "nenhuma: constatação para a Secretaria (sem multa)"),
    row("Veículo", o.plate || "—"),
    row("Empresa", o.contractor || (o.contractor_id ? `nº ${o.contractor_id}` : "—")),
    row("Condutor", o.driver || "não identificado"),
    row("Rota", o.route ? `${o.route.code} · ${o.route.name}` : o.route_id ? `nº ${o.route_id}` : "—"),
    row("Início", when(o.start)),
    row("Fim", o.end ? when(o.end) : "em andamento"),
    row("Local", where(o)),
    ...factLines(o.facts).map(([k, v]) => row(k, v)),
    row("Detectada em", `${when(o.detected_at)}${o.late ? " (a partir de dados que chegaram atrasados)" : ""}`),
  ];
  const dl = o.deadlines || {};
  const date = (d) => (d ? d.split("-").reverse().join("/") : "—");
  if (o.defense_due) {
    rows.push(row("Prazo da defesa", `até ${date(dl.defense_until)} (dias úteis, Lei 14.133/2021 Art. 157)${o.defense_final ? " · defesa declarada final" : ""}`));
  }
  if (o.penalty) rows.push(row("Decisão", PENALTY_NAMES[o.penalty] || o.penalty));
  if (dl.appeal_until) rows.push(row("Prazo de recurso", `até ${date(dl.appeal_until)} (15 dias úteis, Art. 166)`));
  if (o.appeal_outcome) rows.push(row("Recurso", OUTCOME_NAMES[o.appeal_outcome] || o.appeal_outcome));
  if (o.penalty && o.penalty !== "none") {
    rows.push(row("Definitiva", o.penalty_suspended ? "não: suspensa pelo recurso (Art. 168)" : o.final ? "sim" : "ainda não: corre o prazo de recurso"));
  }
  if (o.fine_upfm !== null && o.fine_upfm !== undefined) {
    rows.push(row("Multa", `${upfm(o.fine_upfm)} UPFM = ${brl(o.fine_brl)}${o.recurrence_of ? ` (em dobro: reincidência da nº ${o.recurrence_of})` : ""}`));
  }
  document.getElementById("oc-facts").replaceChildren(...rows.flat());
}

function timeline(o) {
  const files = new Map(); // history id → its attachments
  for (const a of o.attachments || []) {
    if (!files.has(a.history_id)) files.set(a.history_id, []);
    files.get(a.history_id).push(a);
  }
  const items = (o.history || []).map((h) => el("li", { "data-action": h.action },
    el("strong", {}, ACTION_NAMES[h.action] || h.action),
    h.to_status && h.from_status ? ` (${statusName(h.from_status)} → ${statusName(h.to_status)})` : "",
    el("span", { class: "meta" }, `${when(h.at)} · ${h.actor}${h.role ? ` (${roleName(h.role)})` : ""}${h.ip ? ` · ${h.ip}` : ""}`),
    h.text ? el("p", { class: "said" }, h.text) : null,
    files.has(h.id) ? el("ul", { class: "files" }, files.get(h.id).map((a) => el("li", {}, attachment(o, a)))) : null));
  document.getElementById("oc-history").replaceChildren(...items);
}

// An attachment as a download link, with its size and SHA-256 (what the contractor sent, byte for byte).
function attachment(o, a) {
  return [el("a", { href: `/api/v1/occurrences/${o.id}/attachments/${a.id}` }, a.filename),
    ` (${Math.max(1, Math.ceil((a.size || 0) / 1024))} KB · SHA-256 `, el("span", { class: "occ-sha" }, a.sha256), ")"];
}

async function evidenceMap(o) {
  const note = document.getElementById("oc-map-note");
  if (!map) map = makeMap(document.getElementById("oc-map"));
  if (layers) layers.remove();
  layers = L.featureGroup().addTo(map);
  if (o.lat !== null && o.lat !== undefined) {
    L.circleMarker([o.lat, o.lon], { radius: 9, color: "#7a0000", weight: 2, fillColor: "#e53935", fillOpacity: 0.85 })
      .bindTooltip(tip(`${kindName(o.kind)} · ${where(o)}`)).addTo(layers);
  }
  const start = Date.parse(o.start);
  const end = o.end ? Date.parse(o.end) : Date.now();
  const q = new URLSearchParams({ vehicle_id: String(o.vehicle_id), from: new Date(start - MARGIN_MS).toISOString(),
    to: new Date(end + MARGIN_MS).toISOString() });
  try {
    const track = await api(`/api/v1/reports/track?${q}`);
    const pts = track.positions.filter((p) => p.used).map((p) => [p.lat, p.lon]);
    if (pts.length) L.polyline(pts, { color: COLOURS.track, weight: 3 }).addTo(layers);
    note.textContent = `${pts.length} posições do veículo de 10 min antes a 10 min depois.`;
  } catch (err) {
    note.textContent = "Trajeto indisponível: " + explain(err);
  }
  const bounds = layers.getBounds();
  if (bounds.isValid()) map.fitBounds(bounds.pad(0.2), { maxZoom: 16 });
}

export async function load() {
  try {
    const o = await api(`/api/v1/occurrences/${id}`);
    facts(o);
    timeline(o);
    document.getElementById("oc-sha").textContent = o.evidence_sha256 || "ainda não congelada (congela na confirmação)";
    document.getElementById("oc-actions").replaceChildren(actions(o, config.user || {}, load));
    result.hidden = false;
    status.textContent = `${kindName(o.kind)} · ${statusName(o.status)}`;
    document.body.dataset.occurrenceStatus = o.status;
    evidenceMap(o);
  } catch (err) {
    // An unknown number (or another contractor's) in Portuguese, never the API's English "no occurrence N".
    status.textContent = err instanceof ApiError && err.status === 404
      ? `Ocorrência nº ${id} não encontrada (ou fora do que seu perfil pode ver).` : explain(err);
  }
}
load();
