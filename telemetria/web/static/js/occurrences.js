// The occurrences list (/ocorrencias): the filters in the address (so a link or the day panel can open a filtered
// list), the API's list as a table, each row linking to its page, and the same filters as CSV, XLSX and PDF files
// (offered to the roles that may export, as the API allows). The list pages on the server (`limit`/`offset`,
// kept in the address with the filters, so a link, a reload or "voltar" opens the same page), with "Anterior" and
// "Próxima" and the rows shown of the total: every occurrence is reachable, not the first 50 (issue 36).
import { api, config, el, explain, localDate } from "./api.js";
import { KIND_NAMES, STATUS_NAMES, STATUS_TONE, headline, severityName, statusName, when, where } from "./fisc/names.js";

const form = document.getElementById("o-form");
const line = document.getElementById("o-status-line");
const result = document.getElementById("o-result");
const files = document.getElementById("o-files");
const links = [...files.querySelectorAll("a[data-format]")];
const FIELDS = ["from", "to", "vehicle_id", "contractor_id", "kind", "status"];
const LABELS = { from: "De", to: "Até", vehicle_id: "Veículo", contractor_id: "Empresa", kind: "Tipo", status: "Situação" };
const PAGE = 50; // rows per page (the API's default limit)
const contractor = (config.user || {}).role === "contractor";
let offset = 0;
let limit = PAGE;
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

const count = (n) => n.toLocaleString("pt-BR");

function pager(data) {
  if (data.total <= data.limit && data.offset === 0) return null;
  const go = (to) => { offset = Math.max(0, to); show(); };
  const last = Math.max(0, Math.floor((data.total - 1) / data.limit) * data.limit);
  const button = (text, to, disabled, name) => {
    const b = el("button", { type: "button", "data-page": name }, text);
    b.disabled = disabled;
    b.addEventListener("click", () => go(to));
    return b;
  };
  return el("nav", { class: "pager actions", "aria-label": "Páginas da lista", id: "o-pager" },
    button("« Primeira", 0, data.offset === 0, "first"),
    button("‹ Anterior", data.offset - data.limit, data.offset === 0, "previous"),
    el("span", { class: "meta" }, ` página ${count(Math.floor(data.offset / data.limit) + 1)} de ${count(Math.floor(last / data.limit) + 1)} `),
    button("Próxima ›", data.offset + data.limit, data.offset + data.limit >= data.total, "next"),
    button("Última »", last, data.offset >= last, "last"));
}

async function show() {
  const q = query();
  const address = new URLSearchParams(q);
  if (offset) address.set("offset", String(offset));
  if (limit !== PAGE) address.set("limit", String(limit));
  history.replaceState(null, "", address.toString() ? `?${address}` : location.pathname);
  for (const a of links) { // the files carry every row of the filters, not one page
    const c = new URLSearchParams(q);
    c.set("format", a.dataset.format);
    a.href = `/api/v1/occurrences?${c}`;
  }
  line.textContent = "Carregando…";
  try {
    const ask = new URLSearchParams(q);
    ask.set("limit", String(limit));
    ask.set("offset", String(offset));
    const data = await api(`/api/v1/occurrences?${ask}`);
    if (!data.items.length && data.total && offset) { offset = 0; return show(); } // past the end: the first page
    result.replaceChildren(
      data.items.length ? table(data.items) : el("p", { class: "muted" }, "Nenhuma ocorrência com estes filtros."),
      pager(data) || "");
    const shown = data.total > data.items.length
      ? `, ${count(data.offset + 1)}–${count(data.offset + data.items.length)} mostradas` : "";
    line.textContent = `${count(data.total)} ocorrência(s)${q.get("from") ? "" : " de hoje"}${shown}.`;
  } catch (err) {
    result.replaceChildren();
    line.textContent = explain(err, LABELS);
  }
}

form.addEventListener("submit", (e) => { e.preventDefault(); offset = 0; show(); }); // new filters: first page

await lists();
const given = new URLSearchParams(location.search);
for (const f of FIELDS) if (given.get(f)) form.elements[f].value = given.get(f);
offset = Math.max(0, Number.parseInt(given.get("offset") || "0", 10) || 0);
limit = Math.min(500, Math.max(1, Number.parseInt(given.get("limit") || String(PAGE), 10) || PAGE));
if (!given.get("from") && !given.get("to")) {
  form.elements.from.placeholder = localDate();
}
show();
