// The occurrences list (/ocorrencias): the filters in the address (so a link or the day panel can open a filtered
// list), the API's list as a table, each row linking to its page, and the same filters as CSV, XLSX and PDF files
// (offered to the roles that may export, as the API allows).
import { api, config, el, explain, localDate } from "./api.js";
import { KIND_NAMES, STATUS_NAMES, STATUS_TONE, headline, severityName, statusName, when, where } from "./fisc/names.js";

const form = document.getElementById("o-form");
const line = document.getElementById("o-status-line");
const result = document.getElementById("o-result");
const files = document.getElementById("o-files");
const links = [...files.querySelectorAll("a[data-format]")];
const FIELDS = ["from", "to", "vehicle_id", "contractor_id", "kind", "status"];
const LABELS = { from: "De", to: "Até", vehicle_id: "Veículo", contractor_id: "Empresa", kind: "Tipo", status: "Situação" };
const contractor = (config.user || {}).role === "contractor";
files.hidden = !((config.user || {}).permissions || []).includes("export");

function options(select, entries) {
  select.append(...entries.map(([value, text]) => el("option", { value: String(value) }, text)));
}

async function lists() {
  options(form.elements.kind, Object.entries(KIND_NAMES));
  options(form.elements.status, Object.entries(STATUS_NAMES));
  if (contractor) document.getElementById("o-contractor-box").hidden = true;
  try {
    const [vehicles, contractors] = await Promise.all([
      api("/api/v1/vehicles?limit=500"), contractor ? { items: [] } : api("/api/v1/contractors?limit=500")]);
    options(form.elements.vehicle_id, vehicles.items.map((v) => [v.id, v.prefix ? `${v.prefix} · ${v.plate}` : v.plate]));
    options(form.elements.contractor_id, contractors.items.map((c) => [c.id, c.name]));
  } catch { /* the filters still work by the other fields; the list says what fails */ }
}

function query() {
  const q = new URLSearchParams();
  for (const f of FIELDS) {
    const v = form.elements[f].value;
    if (v) q.set(f, v);
  }
  return q;
}

function table(items) {
  const head = ["Nº", "Início", "Tipo", "Veículo", "Local", "Gravidade", "Situação"];
  return el("table", { class: "data", id: "o-table" },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, items.map((o) => el("tr", { "data-id": String(o.id), "data-kind": o.kind, "data-status": o.status },
      el("td", {}, el("a", { href: `/ocorrencias/${o.id}` }, String(o.id))),
      el("td", {}, when(o.start)),
      el("td", {}, headline(o), o.late ? el("span", { class: "badge" }, " dados atrasados") : null),
      el("td", {}, o.plate || "—", o.driver ? el("span", { class: "meta" }, ` · ${o.driver}`) : null),
      el("td", {}, where(o)),
      el("td", {}, o.article ? `${severityName(o.severity)} (${o.article})` : "constatação (sem infração)"),
      el("td", {}, el("span", { class: `badge ${STATUS_TONE[o.status] || ""}`.trim() }, statusName(o.status)))))));
}

async function show() {
  const q = query();
  history.replaceState(null, "", q.toString() ? `?${q}` : location.pathname);
  for (const a of links) {
    const c = new URLSearchParams(q);
    c.set("format", a.dataset.format);
    a.href = `/api/v1/occurrences?${c}`;
  }
  line.textContent = "Carregando…";
  try {
    const data = await api(`/api/v1/occurrences?${q}`);
    result.replaceChildren(data.items.length ? table(data.items) : el("p", { class: "muted" }, "Nenhuma ocorrência com estes filtros."));
    line.textContent = `${data.total} ocorrência(s)${q.get("from") ? "" : " de hoje"}${data.total > data.items.length ? `, ${data.items.length} mostradas` : ""}.`;
  } catch (err) {
    result.replaceChildren();
    line.textContent = explain(err, LABELS);
  }
}

form.addEventListener("submit", (e) => { e.preventDefault(); show(); });

await lists();
const given = new URLSearchParams(location.search);
for (const f of FIELDS) if (given.get(f)) form.elements[f].value = given.get(f);
if (!given.get("from") && !given.get("to")) {
  form.elements.from.placeholder = localDate();
}
show();
