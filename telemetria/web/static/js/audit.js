// The audit log (admins and control bodies): who did what, when, from where; filtered by period,
// action and user, newest first, a page at a time.
import { el } from "./api.js";
import { problems } from "./registry/errors.js";
import { listView } from "./registry/table.js";

// Every entry comes with its words from the server (telemetria/audit/words.py: `words`): what was done, to what,
// the details with old → new values, local times. The page and the CSV say the same; no code reaches the reader.
const FILTERS = [
  ["", "Todas"], ["export", "Exportações de relatórios"],
  ["auth", "Entradas e saídas"], ["auth.login_failed", "Tentativas de entrada recusadas"],
  ["user", "Usuários"], ["token", "Tokens pessoais"], ["registry", "Cadastro (tudo)"],
  ["registry.vehicle", "Cadastro: veículos"], ["registry.tracker", "Cadastro: rastreadores"],
  ["registry.driver", "Cadastro: condutores"], ["registry.contractor", "Cadastro: empresas"],
  ["registry.route", "Cadastro: rotas"], ["registry.route_assignment", "Cadastro: rotas dos veículos"],
  ["registry.driver_assignment", "Cadastro: condutores dos veículos"], ["registry.speed_zone", "Cadastro: zonas"],
  ["registry.contract", "Contratos"], ["registry.school_year", "Calendário escolar"],
  ["registry.run_justification", "Corridas justificadas"], ["measurement", "Boletim: fechamento e reabertura"],
  ["occurrence", "Ocorrências"],
];

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
    el("button", { type: "button", onclick: () => { form.reset(); clear(); view.first(); } }, "Limpar"),
    el("a", { id: "a-csv", class: "button-link", href: "/api/v1/audit?format=csv", download: "" }, "Exportar CSV")));
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
    { label: "Quando", value: (e) => e.words.when, cls: "nowrap" },
    { label: "Usuário", value: (e) => e.username || el("span", { class: "muted" }, "—") },
    { label: "Perfil", value: (e) => e.words.role_name || null },
    { label: "Ação", value: (e) => e.words.what },
    { label: "Alvo", value: (e) => (e.words.on === "—" ? null : e.words.on) },
    { label: "Detalhes", value: (e) => e.words.details || null },
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
  csvLink();
  view.first();
});

// The CSV of what the filters show (all of it, not only this page), in the same words.
function csvLink() {
  const q = new URLSearchParams({ format: "csv" });
  if (from.value) q.set("from", from.value);
  if (to.value) q.set("to", to.value);
  if (act.value) q.set("action", act.value);
  if (who.value.trim()) q.set("username", who.value.trim().toLowerCase());
  document.getElementById("a-csv").href = `/api/v1/audit?${q}`;
}
