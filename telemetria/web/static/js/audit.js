// The audit log (admins and control bodies): who did what, when, from where; filtered by period,
// action and user, newest first, a page at a time.
import { el } from "./api.js";
import { localWall, period } from "./formats.js";
import { ROLES, lookups, name, when } from "./registry/common.js";
import { problems } from "./registry/errors.js";
import { listView } from "./registry/table.js";

const ACTIONS = {
  "seals.verify": "Arquivo verificado contra os selos",
  "auth.login": "Entrada no sistema",
  "auth.login_failed": "Tentativa de entrada recusada",
  "auth.logout": "Saída do sistema",
  "token.create": "Token pessoal criado",
  "token.revoke": "Token pessoal revogado",
  "user.create": "Usuário criado",
  "user.update": "Usuário alterado",
};
const KINDS = {
  vehicle: "Veículo", tracker: "Rastreador", contractor: "Empresa", driver: "Condutor", route: "Rota",
  driver_assignment: "Condutor no veículo", route_assignment: "Rota do veículo", speed_zone: "Zona de velocidade",
};
const VERBS = {
  create: "cadastro", update: "alteração", delete: "exclusão", rotate_token: "novo token", move: "mudança de veículo",
  stops: "paradas alteradas",
};
// Report exports (`export.<kind>`): the report's title as its page shows it.
const REPORTS = {
  km: "Km rodados", summary: "Resumo por veículo", trips: "Trajetos (trechos)", speeding: "Excesso de velocidade",
  stops: "Paradas", "route-deviation": "Desvios de rota", track: "Trajetória", schedule: "Cumprimento de horários",
  reporting: "Regularidade de transmissão", measurement: "Boletim de medição", occurrences: "Ocorrências",
};
const FILTERS = [
  ["", "Todas"], ["export", "Exportações de relatórios"],
  ["auth", "Entradas e saídas"], ["auth.login_failed", "Tentativas de entrada recusadas"],
  ["user", "Usuários"], ["token", "Tokens pessoais"], ["registry", "Cadastro (tudo)"],
  ["registry.vehicle", "Cadastro: veículos"], ["registry.tracker", "Cadastro: rastreadores"],
  ["registry.driver", "Cadastro: condutores"], ["registry.contractor", "Cadastro: empresas"],
  ["registry.route", "Cadastro: rotas"], ["registry.route_assignment", "Cadastro: rotas dos veículos"],
  ["registry.driver_assignment", "Cadastro: condutores dos veículos"], ["registry.speed_zone", "Cadastro: zonas"],
];
const REASONS = { bad_password: "senha errada", unknown: "usuário inexistente", inactive: "usuário inativo",
  locked: "conta bloqueada" };
const TARGETS = { ...Object.fromEntries(Object.entries(KINDS).map(([k, v]) => [k, v.toLowerCase()])),
  user: "usuário", token: "token" };

function action(code) {
  if (ACTIONS[code]) return ACTIONS[code];
  const x = /^export\.([\w-]+)$/.exec(code);
  if (x) return `Exportação: ${REPORTS[x[1]] || x[1]}`;
  const m = /^registry\.(\w+)\.(\w+)$/.exec(code);
  return m && KINDS[m[1]] ? `${KINDS[m[1]]}: ${VERBS[m[2]] || m[2]}` : code;
}

function target(t) {
  if (!t) return null;
  const [kind, id] = String(t).split(":");
  return TARGETS[kind] && id ? `${TARGETS[kind]} nº ${id}` : t;
}

// The names of the fields a change touched (never their values: the log does not keep them).
const FIELDS = {
  plate: "placa", prefix: "prefixo", description: "descrição", contractor_id: "empresa", capacity: "lotação",
  manufacture_year: "ano de fabricação", kind: "tipo", speed_limit_kmh: "limite de velocidade", active: "situação",
  name: "nome", cnpj: "CNPJ", contract_number: "contrato", cpf: "CPF", cnh_category: "categoria da CNH",
  card_id: "cartão", code: "código", shift: "turno", declared_km: "km declarado", deviation_tolerance_m: "tolerância de desvio",
  limit_kmh: "limite", full_name: "nome completo", role: "perfil", password: "senha",
};
const KEYS = { stops: "paradas", points: "pontos", source: "origem", vehicle_id: "veículo nº", route_id: "rota nº",
  driver_id: "condutor nº", at: "a partir de" };

// Vehicles by plate (the log keeps ids); those not in the first page of the list keep their number.
const plates = new Map(await lookups.vehicles().catch(() => []));
const PLATES_SHOWN = 10;

function vehicles(ids, count) {
  const names = ids.slice(0, PLATES_SHOWN).map((id) => plates.get(id) || `nº ${id}`);
  const more = Math.max(count ?? ids.length, ids.length) - names.length;
  const n = names.length + more;
  return `${n} ${n === 1 ? "veículo" : "veículos"}: ${names.join(", ")}${more > 0 ? ` e mais ${more}` : ""}`;
}

// An export's detail: format, the period in local dates (its last day included), the vehicles by plate.
function exported(d) {
  const parts = [];
  if (d.format) parts.push(`arquivo ${String(d.format).toUpperCase()}`);
  if (d.from && d.to) parts.push(`período ${period(localWall(d.from), localWall(d.to))}`);
  if (Array.isArray(d.vehicles)) parts.push(vehicles(d.vehicles, d.vehicle_count));
  return parts.join("; ");
}

function detail(d, code) {
  if (!d || typeof d !== "object") return null;
  if (String(code).startsWith("export.")) return exported(d);
  return Object.entries(d).map(([k, v]) => {
    if (k === "fields" && Array.isArray(v)) return `campos: ${v.map((f) => FIELDS[f] || f).join(", ")}`;
    if (k === "reason") return `motivo: ${REASONS[v] || v}`;
    if (k === "role") return `perfil: ${name(ROLES, v)}`;
    if (k === "via") return v === "cli" ? "pela linha de comando" : `via: ${v}`;
    if (k === "source") return `origem: ${String(v).startsWith("multipart") ? "arquivo enviado" : "JSON"}`;
    if (k === "at") return `a partir de ${when(v)}`;
    return `${KEYS[k] || k}: ${typeof v === "object" ? JSON.stringify(v) : v}`;
  }).join("; ");
}

const root = document.getElementById("audit");
const field = (id, label, input, help) => el("div", { class: "field" },
  el("label", { for: id }, label), input,
  help ? el("p", { class: "help", id: `${id}-help` }, help) : null,
  el("p", { class: "field-error", id: `${id}-err`, hidden: true }));
const from = el("input", { id: "a-from", type: "date", "aria-describedby": "a-from-err" });
const to = el("input", { id: "a-to", type: "date", "aria-describedby": "a-to-err" });
const act = el("select", { id: "a-action" }, FILTERS.map(([v, label]) => el("option", { value: v }, label)));
const who = el("input", { id: "a-user", type: "text", autocomplete: "off", spellcheck: "false", "aria-describedby": "a-user-err" });
const inputs = { from, to, action: act, username: who };
const form = el("form", { class: "filters audit-filters", role: "search", "aria-label": "Filtros do registro" },
  field("a-from", "De", from), field("a-to", "Até (inclusive)", to), field("a-action", "Ação", act),
  field("a-user", "Usuário", who),
  el("div", { class: "actions" }, el("button", { type: "submit", class: "primary" }, "Filtrar"),
    el("button", { type: "button", onclick: () => { form.reset(); clear(); view.first(); } }, "Limpar")));
root.append(form);

function clear() {
  for (const input of Object.values(inputs)) {
    input.removeAttribute("aria-invalid");
    input.removeAttribute("aria-errormessage");
    const err = document.getElementById(input.id + "-err");
    err.hidden = true;
    err.textContent = "";
  }
}

function mark(key, message) {
  const input = inputs[key];
  if (!input) return false;
  input.setAttribute("aria-invalid", "true");
  input.setAttribute("aria-errormessage", input.id + "-err");
  const err = document.getElementById(input.id + "-err");
  err.textContent = message;
  err.hidden = false;
  return true;
}

const view = listView(root, {
  endpoint: "/api/v1/audit",
  pageSize: 50,
  query: () => ({
    from: from.value || null, // local dates: the API includes the whole last day
    to: to.value || null,
    action: act.value,
    username: who.value.trim().toLowerCase(),
  }),
  columns: [
    { label: "Quando", value: (e) => when(e.at), cls: "nowrap" },
    { label: "Usuário", value: (e) => e.username || el("span", { class: "muted" }, "—") },
    { label: "Perfil", value: (e) => (e.role ? name(ROLES, e.role) : null) },
    { label: "Ação", value: (e) => el("span", { title: e.action }, action(e.action)) },
    { label: "Alvo", value: (e) => target(e.target) },
    { label: "Detalhes", value: (e) => detail(e.detail, e.action) },
    { label: "Endereço IP", value: (e) => e.ip },
  ],
  empty: "Nenhum registro nesse filtro.",
  onError: (err) => problems(err).filter((p) => mark(p.path.name, p.message)).length > 0,
});

form.addEventListener("submit", (e) => {
  e.preventDefault();
  clear();
  if (from.value && to.value && to.value < from.value) {
    mark("to", "A data final precisa ser igual ou depois da inicial.");
    to.focus();
    return;
  }
  view.first();
});
