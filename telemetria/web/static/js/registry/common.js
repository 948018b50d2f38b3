// What the registry pages share: choices read from other endpoints, Portuguese names, local times,
// and the generic create (POST) and edit (PATCH only what changed) of a record.
import { api, el, localDate, toast } from "../api.js";
import { openForm } from "./form.js";

const cache = new Map();

// [[id, label]] of a collection (its first 500 rows), read once per page load.
async function choices(path, label) {
  if (!cache.has(path)) {
    cache.set(path, api(`${path}?limit=500`).then((d) => d.items.map((r) => [r.id, label(r)]))
      .catch((err) => { cache.delete(path); throw err; }));
  }
  return cache.get(path);
}

export const lookups = {
  contractors: () => choices("/api/v1/contractors", (c) => c.name),
  vehicles: () => choices("/api/v1/vehicles", (v) => (v.prefix ? `${v.plate} · ${v.prefix}` : v.plate)),
  drivers: () => choices("/api/v1/drivers", (d) => d.name),
  routes: () => choices("/api/v1/routes", (r) => `${r.code} – ${r.name}`),
  contracts: () => choices("/api/v1/contracts", (k) => `${k.number} · ${k.contractor}`),
  forget: (path) => cache.delete(path),
};

export const VEHICLE_KINDS = [["onibus", "Ônibus"], ["micro-onibus", "Micro-ônibus"], ["van", "Van"],
  ["automovel", "Automóvel"], ["outro", "Outro"]];
export const SHIFTS = [["matutino", "Matutino"], ["vespertino", "Vespertino"], ["noturno", "Noturno"],
  ["integral", "Integral"]];
export const STOP_KINDS = [["boarding", "Embarque"], ["school", "Escola"], ["garage", "Garagem"]];
export const ROLES = [["admin", "Administrador"], ["monitor", "Servidor"], ["auditor", "Controle externo"],
  ["contractor", "Empresa contratada"]];
export const name = (pairs, key) => (pairs.find(([k]) => k === key) || [null, key])[1];

const LOCAL = new Intl.DateTimeFormat("pt-BR", { timeZone: "America/Porto_Velho", day: "2-digit", month: "2-digit",
  year: "numeric", hour: "2-digit", minute: "2-digit" });

// An instant (RFC 3339) as local date and time in the municipality, "02/03/2026 07:15".
export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : LOCAL.format(d).replace(",", "");
}

// A calendar date "2026-03-02" as "02/03/2026" (no time zone involved).
export function day(iso) {
  if (!iso) return "—";
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(iso);
  return m ? `${m[3]}/${m[2]}/${m[1]}` : String(iso);
}

export function cpf(d) {
  return d && /^\d{11}$/.test(d) ? `${d.slice(0, 3)}.${d.slice(3, 6)}.${d.slice(6, 9)}-${d.slice(9)}` : d;
}

export function cnpj(d) {
  return d && d.length === 14 ? `${d.slice(0, 2)}.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-${d.slice(12)}` : d;
}

function filled(values) {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null && v !== undefined));
}

// "Novo …": a form whose filled-in fields are POSTed; resolves to the created record, or null.
// `dated`: the name of the form's field whose date the new record is a version from (sent as effective_from).
export function createWith({ title, endpoint, fields, values, done, submitLabel = "Cadastrar", dated = null }) {
  return openForm({
    title, fields, values, submitLabel,
    onSubmit: async (vals) => {
      const body = filled(vals);
      if (dated && body[dated]) body.effective_from = body[dated];
      const row = await api(endpoint, { method: "POST", body });
      toast(done || "Cadastrado.");
      return row;
    },
  });
}

// The "a partir de" field of a dated edit: the registry keeps versions, so a change applies from a day on and
// the days before keep what they were (a closed month of the boletim must be reopened first).
export function effectiveField() {
  return { name: "effective_from", label: "Vale a partir de", type: "date", required: true, default: localDate(),
    help: "Dia a partir do qual a alteração vale; os dias anteriores ficam como estavam. Um mês já fechado no "
      + "boletim de medição não pode ser alcançado: reabra o mês antes." };
}

// "Editar": the same form filled with the record; only changed fields are PATCHed. `dated`: the record is versioned
// from a day on (routes, zones; for a vehicle its speed limit only: `dated` lists the versioned fields), so the
// form asks "a partir de" and sends it as effective_from with a change of those fields.
export function editWith({ title, endpoint, fields, row, dated = null }) {
  const versioned = dated === true ? null : dated;
  return openForm({
    title, values: row,
    fields: dated ? [...fields, effectiveField()] : fields,
    onSubmit: async (vals, changed) => {
      const { effective_from: from, ...body } = changed;
      if (!Object.keys(body).length) {
        toast("Nada foi alterado.");
        return row;
      }
      if (dated && (!versioned || Object.keys(body).some((k) => versioned.includes(k)))) {
        body.effective_from = vals.effective_from || from;
      }
      const saved = await api(endpoint, { method: "PATCH", body });
      toast(body.effective_from ? `Alterações salvas, valendo a partir de ${day(body.effective_from)}.` : "Alterações salvas.");
      return saved;
    },
  });
}

const CHANGED = { code: "código", name: "nome", shift: "turno", declared_km: "km declarado", contract_id: "contrato",
  speed_limit_kmh: "limite de velocidade", deviation_tolerance_m: "tolerância de desvio", active: "situação",
  geometry: "traçado", length_m: "extensão", stops: "paradas", school_year: "ano letivo", limit_kmh: "limite",
  vehicle_id: "veículo", route_id: "rota", valid_from: "início", valid_to: "fim", weekdays: "dias da semana" };

// An item's versions (GET …/history): from when, to when, what changed, who wrote it and when; newest first.
export function historyTable(h, caption) {
  const rows = [...h.versions].reverse();
  const created = h.versions[0]; // the registration: its "changed" lists every field it set, read "cadastro"
  return el("div", { class: "table-wrap" }, el("table", { class: "data history" },
    el("caption", {}, caption),
    el("thead", {}, el("tr", {}, ["Vale de", "Até", "O que mudou", "Por", "Registrado em", "Situação"]
      .map((t) => el("th", { scope: "col" }, t)))),
    el("tbody", {}, rows.map((v) => el("tr", { "data-version": String(v.version) },
      el("td", {}, day(v.valid_from)), el("td", {}, v.valid_to ? day(v.valid_to) : "—"),
      el("td", {}, v.deleted ? "excluída" : v === created ? "cadastro"
        : (v.changed || []).map((k) => CHANGED[k] || k).join(", ") || "cadastro"),
      el("td", {}, v.created_by || "—"), el("td", {}, when(v.created_at)),
      el("td", {}, v.in_force ? "em vigor" : `substituída em ${when(v.superseded_at)}`))))));
}

export function badge(text, kind = "") {
  return el("span", { class: `badge ${kind}` }, text);
}
