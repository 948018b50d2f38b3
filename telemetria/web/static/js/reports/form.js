// The report's form: which vehicles, which period (and a report's own options); filled from the registry
// lists and from the page's address; checked before it is sent, its errors shown next to the field at fault.
import { api, config, el, explain, localDate } from "../api.js";
import { PERIOD_RULE } from "../formats.js";
import { KIND, R } from "./columns.js";
import { LABELS, capital, say } from "./status.js";

const PAGE_LIMIT = 500; // the registry lists' largest page (telemetria/paging.py)

export const form = document.getElementById("report-form");
const user = config.user || {};

function field(id, label, input, hint) {
  input.id = id;
  const parts = [el("label", { for: id }, label), input];
  if (hint) {
    parts.push(el("p", { class: "hint", id: `${id}-hint` }, hint));
    input.setAttribute("aria-describedby", `${id}-hint`);
  }
  return el("div", { class: "field", "data-for": id }, parts);
}

const scopes = [["fleet", "Frota inteira"], ["vehicles", "Veículos"], ["contractor", "Empresa contratada"],
  ["route", "Rota"]].filter(([v]) => !(v === "contractor" && user.role === "contractor"));
const vehicles = el("select", { multiple: true, size: 6, name: "vehicle_id" });
const contractors = el("select", { name: "contractor_id" }, el("option", { value: "" }, "Escolha a empresa"));
const routes = el("select", { name: "route_id" }, el("option", { value: "" }, "Escolha a rota"));
const fromDate = el("input", { type: "date", name: "from", required: true });
const fromTime = el("input", { type: "time", name: "from_time" });
const toDate = el("input", { type: "date", name: "to", required: true });
const toTime = el("input", { type: "time", name: "to_time" });
const pickers = {
  vehicles: field("f-vehicles", "Veículos", vehicles, "Ctrl (ou ⌘) + clique, ou Shift + setas, para escolher vários."),
  contractor: field("f-contractor", "Empresa contratada", contractors),
  route: field("f-route", "Rota", routes),
};
const extra = [];
const by = el("select", { name: "by" }, el("option", { value: "vehicle" }, "Por veículo"),
  el("option", { value: "day" }, "Por veículo e dia"));
const unauthorized = el("input", { type: "checkbox", name: "unauthorized", value: "true" });
if (KIND === "km") extra.push(field("f-by", "Agrupar", by));
if (KIND === "stops") {
  unauthorized.id = "f-unauthorized";
  extra.push(el("div", { class: "field check", "data-for": "f-unauthorized" }, el("label", { for: "f-unauthorized" },
    unauthorized, " Somente paradas fora de pontos autorizados")));
}
form.append(
  el("fieldset", { class: "group" }, el("legend", {}, "Veículos do relatório"),
    el("div", { class: "choices" }, scopes.map(([v, label]) =>
      el("label", { class: "choice" }, el("input", { type: "radio", name: "scope", value: v, checked: v === "fleet" }),
        " ", label))),
    ...Object.values(pickers)),
  el("fieldset", { class: "group" }, el("legend", {}, "Período"),
    el("div", { class: "period" }, field("f-from", "De", fromDate), field("f-from-time", "Hora inicial (opcional)", fromTime),
      field("f-to", "Até (inclusive)", toDate), field("f-to-time", "Hora final (opcional)", toTime)),
    el("p", { class: "hint" }, PERIOD_RULE),
    ...extra));

const INPUT = { from: fromDate, to: toDate, from_time: fromTime, to_time: toTime, vehicle_id: vehicles,
  contractor_id: contractors, route_id: routes, by, unauthorized };

function scope() {
  return form.querySelector("input[name=scope]:checked").value;
}

function showPicker() {
  for (const [name, box] of Object.entries(pickers)) box.hidden = scope() !== name;
}
for (const radio of form.querySelectorAll("input[name=scope]")) radio.addEventListener("change", showPicker);

// The lists come from the registry API, which already keeps a contractor to its own fleet.
async function all(path) {
  const items = [];
  for (let offset = 0; offset < 20 * PAGE_LIMIT; offset += PAGE_LIMIT) {
    const page = await api(`${path}?limit=${PAGE_LIMIT}&offset=${offset}`);
    items.push(...page.items);
    if (items.length >= page.total || page.items.length < PAGE_LIMIT) break;
  }
  return items;
}

let fleet = [];
export async function fillLists() {
  const [v, c, r] = await Promise.allSettled([all("/api/v1/vehicles"),
    user.role === "contractor" ? Promise.resolve([]) : all("/api/v1/contractors"), all("/api/v1/routes")]);
  const failed = [v, c, r].find((x) => x.status === "rejected");
  if (failed) say(`Não foi possível carregar as listas do formulário: ${explain(failed.reason)}`, "error");
  fleet = v.value || [];
  vehicles.replaceChildren(...fleet.map((x) => el("option", { value: x.id },
    (x.prefix ? `${x.prefix} · ${x.plate}` : x.plate) + (x.active ? "" : " (inativo)"))));
  contractors.append(...(c.value || []).map((x) => el("option", { value: x.id }, x.name)));
  routes.append(...(r.value || []).map((x) => el("option", { value: x.id },
    `${x.code}${x.name && x.name !== x.code ? " · " + x.name : ""} (${x.school_year})`)));
}

// Choose option `id` of `select`, adding it when the list does not have it (the API will say why).
function choose(select, id, label) {
  let opt = [...select.options].find((o) => o.value === String(id));
  if (!opt) select.append(opt = el("option", { value: id }, `${label} nº ${id}`));
  opt.selected = true;
}

// The page's query string holds ids and dates only: a report can be bookmarked, nothing personal is in it.
const query = new URLSearchParams(location.search);

export function periodFromQuery() {
  const q = query;
  const [f, ft] = (q.get("from") || "").split("T");
  const [t, tt] = (q.get("to") || "").split("T");
  fromDate.value = f || localDate(R.week ? -6 : 0);
  toDate.value = t || localDate(0);
  fromTime.value = (ft || "").slice(0, 5);
  toTime.value = (tt || "").slice(0, 5);
  if (q.get("by") === "day") by.value = "day";
  unauthorized.checked = q.get("unauthorized") === "true";
}

// After the lists arrived: which vehicles; whether the address asked for a report.
export function selectionFromQuery() {
  const q = query;
  const ids = q.getAll("vehicle_id").filter((x) => /^\d+$/.test(x));
  const given = (name) => /^\d+$/.test(q.get(name) || "");
  let pick = null; // nothing asked for: the choice made while the lists were loading stands
  if (ids.length) pick = "vehicles";
  else if (given("contractor_id") && scopes.some(([v]) => v === "contractor")) pick = "contractor";
  else if (given("route_id")) pick = "route";
  if (pick) form.querySelector(`input[name=scope][value="${pick}"]`).checked = true;
  for (const id of ids) choose(vehicles, id, "Veículo");
  if (pick === "contractor") choose(contractors, q.get("contractor_id"), "Empresa");
  if (pick === "route") choose(routes, q.get("route_id"), "Rota");
  showPicker();
  return q.has("from") || q.has("to");
}

// --- errors: next to the field at fault, and in the status line --------------------------------
export function clearErrors() {
  for (const input of form.querySelectorAll("[aria-invalid]")) {
    input.removeAttribute("aria-invalid");
    const hint = input.getAttribute("aria-describedby") || "";
    const kept = hint.split(" ").filter((x) => x && !x.endsWith("-error")).join(" ");
    if (kept) input.setAttribute("aria-describedby", kept); else input.removeAttribute("aria-describedby");
  }
  for (const p of form.querySelectorAll(".field-error")) p.remove();
}

function fieldError(name, message) {
  const input = INPUT[name];
  const box = input && input.closest(".field");
  if (!box || box.hidden) return false;
  const id = `${input.id}-error`;
  input.setAttribute("aria-invalid", "true");
  input.setAttribute("aria-describedby", [input.getAttribute("aria-describedby"), id].filter(Boolean).join(" "));
  box.append(el("p", { class: "field-error", id }, capital(message)));
  return true;
}

export function fail(problems) {
  clearErrors();
  let first = null;
  for (const [name, message] of problems) {
    if (fieldError(name, message) && !first) first = INPUT[name];
  }
  const [name, message] = problems[0];
  say(LABELS[name] ? `${LABELS[name]}: ${message}` : capital(message), "error");
  if (first) first.focus();
}

for (const input of Object.values(INPUT)) {
  input.addEventListener("change", () => {
    if (input.getAttribute("aria-invalid")) clearErrors();
  });
}

// --- parameters ---------------------------------------------------------------------------------
// The form as the API's parameters, or the problems that keep it from being sent.
export function params() {
  const problems = [];
  const p = new URLSearchParams();
  const which = scope();
  if (which === "vehicles") {
    const ids = [...vehicles.selectedOptions].map((o) => o.value);
    if (!ids.length) problems.push(["vehicle_id", "escolha pelo menos um veículo."]);
    for (const id of ids) p.append("vehicle_id", id);
  } else if (which === "contractor") {
    if (!contractors.value) problems.push(["contractor_id", "escolha a empresa."]);
    else p.set("contractor_id", contractors.value);
  } else if (which === "route") {
    if (!routes.value) problems.push(["route_id", "escolha a rota."]);
    else p.set("route_id", routes.value);
  }
  const okDate = (s) => /^\d{4}-\d{2}-\d{2}$/.test(s);
  if (!okDate(fromDate.value)) problems.push(["from", "informe a data inicial."]);
  if (!okDate(toDate.value)) problems.push(["to", "informe a data final."]);
  if (!problems.some(([n]) => n === "from" || n === "to")) {
    const start = fromDate.value + "T" + (fromTime.value || "00:00");
    const end = toTime.value ? toDate.value + "T" + toTime.value : null;
    if (end ? end < start : toDate.value < fromDate.value) {
      problems.push(["to", end && toDate.value === fromDate.value ? "a hora final não pode ser antes da inicial."
        : "a data final deve ser igual ou posterior à inicial."]);
    }
  }
  p.set("from", fromTime.value ? `${fromDate.value}T${fromTime.value}` : fromDate.value);
  p.set("to", toTime.value ? `${toDate.value}T${toTime.value}` : toDate.value);
  if (KIND === "km" && by.value === "day") p.set("by", "day");
  if (KIND === "stops" && unauthorized.checked) p.set("unauthorized", "true");
  return { p, problems };
}

export function days() {
  return (Date.parse(toDate.value) - Date.parse(fromDate.value)) / 86400000 + 1;
}

// How many vehicles the selection holds (a route's are not known here: the size cap in load.js guards those).
export function vehicleCount() {
  const which = scope();
  if (which === "vehicles") return vehicles.selectedOptions.length;
  if (which === "contractor") return fleet.filter((v) => String(v.contractor_id) === contractors.value).length;
  return which === "fleet" ? fleet.length : 0;
}

