// What the registry pages share: choices read from other endpoints, Portuguese names, local times,
// and the generic create (POST) and edit (PATCH only what changed) of a record.
import { api, el, toast } from "../api.js";
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
export function createWith({ title, endpoint, fields, values, done, submitLabel = "Cadastrar" }) {
  return openForm({
    title, fields, values, submitLabel,
    onSubmit: async (vals) => {
      const row = await api(endpoint, { method: "POST", body: filled(vals) });
      toast(done || "Cadastrado.");
      return row;
    },
  });
}

// "Editar": the same form filled with the record; only changed fields are PATCHed.
export function editWith({ title, endpoint, fields, row }) {
  return openForm({
    title, fields, values: row,
    onSubmit: async (vals, changed) => {
      if (!Object.keys(changed).length) {
        toast("Nada foi alterado.");
        return row;
      }
      const saved = await api(endpoint, { method: "PATCH", body: changed });
      toast("Alterações salvas.");
      return saved;
    },
  });
}

export function badge(text, kind = "") {
  return el("span", { class: `badge ${kind}` }, text);
}
