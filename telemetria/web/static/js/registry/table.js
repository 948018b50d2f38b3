// A paged list of one API collection: optional search box, a table, "Anterior"/"Próxima", and a
// button per row action. What to list and how is data (see the specs in the other modules).
import { api, el } from "../api.js";
import { problems, sentence } from "./errors.js";

const PAGE = 25;
let serial = 0;

// spec: { title, endpoint, columns: [{label, value(row) → text|Node, cls}], search: {param, label, help},
//         newLabel, onNew() → truthy when something was created, actions(row, view) → [{label, name, run, cls}],
//         empty, onRows(rows) }
export function listView(root, spec) {
  const n = ++serial;
  const state = { offset: 0, search: "", total: 0, ticket: 0 };
  const status = el("p", { class: "reg-status muted", role: "status", "aria-live": "polite" });
  const tbody = el("tbody");
  const cols = [...spec.columns, ...(spec.actions ? [{ label: "Ações", cls: "row-actions" }] : [])];
  const table = el("table", { class: "data reg-table" },
    el("caption", { class: "sr-only" }, spec.title || document.title),
    el("thead", {}, el("tr", {}, cols.map((c) => el("th", { scope: "col", class: c.cls }, c.label)))), tbody);
  const prev = el("button", { type: "button" }, "Anterior");
  const next = el("button", { type: "button" }, "Próxima");
  const where = el("span", { class: "pager-where" });
  const pager = el("nav", { class: "pager", "aria-label": `Páginas${spec.title ? " de " + spec.title : ""}` },
    prev, where, next);
  const toolbar = el("div", { class: "reg-toolbar" });
  let searchInput = null;
  let searchError = null;

  if (spec.search) {
    const id = `s${n}`;
    searchInput = el("input", { id, type: "search", autocomplete: "off", spellcheck: "false",
      "aria-describedby": `${id}-help ${id}-err` });
    searchError = el("p", { class: "field-error", id: `${id}-err`, hidden: true });
    const form = el("form", { class: "reg-search", role: "search" },
      el("label", { for: id }, spec.search.label),
      el("div", { class: "search-row" }, searchInput,
        el("button", { type: "submit" }, "Buscar"),
        el("button", { type: "button", onclick: () => { searchInput.value = ""; go(0, ""); } }, "Limpar")),
      el("p", { class: "help", id: `${id}-help` }, spec.search.help || ""),
      searchError);
    form.addEventListener("submit", (e) => { e.preventDefault(); go(0, searchInput.value.trim()); });
    toolbar.append(form);
  }
  if (spec.newLabel) {
    toolbar.append(el("button", { type: "button", class: "primary new", onclick: async () => {
      if (await spec.onNew()) go(0, state.search);
    } }, spec.newLabel));
  }
  const heading = spec.title ? el("h2", { id: `l${n}-h` }, spec.title) : null;
  const section = el("section", { class: "reg-list", "aria-labelledby": heading ? `l${n}-h` : null },
    heading, toolbar, status, el("div", { class: "table-wrap" }, table), pager);
  root.append(section);

  const size = spec.pageSize || PAGE;
  prev.addEventListener("click", () => go(Math.max(0, state.offset - size), state.search));
  next.addEventListener("click", () => go(state.offset + size, state.search));

  const view = { reload: () => go(state.offset, state.search), first: () => go(0, state.search), section };

  async function go(offset, search) {
    state.offset = offset;
    state.search = search;
    status.textContent = "Carregando…";
    status.className = "reg-status muted";
    if (searchError) {
      searchError.hidden = true;
      searchInput.removeAttribute("aria-invalid");
      searchInput.removeAttribute("aria-errormessage");
    }
    const extra = typeof spec.query === "function" ? spec.query() : spec.query || {};
    const params = new URLSearchParams({ limit: String(spec.pageSize || PAGE), offset: String(offset) });
    for (const [k, v] of Object.entries(extra)) if (v !== null && v !== undefined && v !== "") params.set(k, v);
    if (search && spec.search) params.set(spec.search.param, search);
    const ticket = ++state.ticket; // only the newest request may draw: answers can arrive out of order
    let data;
    try {
      data = await api(`${spec.endpoint}?${params}`);
      if (ticket !== state.ticket) return;
    } catch (err) {
      if (ticket !== state.ticket) return;
      const bad = search && problems(err).some((p) => p.path.name === spec.search.param);
      if (bad) {
        searchError.textContent = problems(err)[0].message;
        searchError.hidden = false;
        searchInput.setAttribute("aria-invalid", "true");
        searchInput.setAttribute("aria-errormessage", searchError.id);
        status.textContent = "";
      } else if (spec.onError && spec.onError(err)) {
        status.textContent = "Corrija o filtro indicado.";
        status.className = "reg-status error-text";
      } else {
        status.textContent = "Não foi possível carregar a lista. " + sentence(err);
        status.className = "reg-status error-text";
      }
      tbody.replaceChildren();
      prev.disabled = next.disabled = true;
      where.textContent = "";
      return;
    }
    state.total = data.total;
    render(data.items);
    if (spec.onRows) spec.onRows(data.items);
  }

  function render(rows) {
    tbody.replaceChildren(...rows.map((row) => el("tr", { "data-id": row.id },
      spec.columns.map((c) => el("td", { class: c.cls, "data-label": c.label }, cell(c.value(row)))),
      spec.actions ? el("td", { class: "row-actions", "data-label": "Ações" }, el("div", {}, spec.actions(row, view).map((a) =>
        el("button", { type: "button", class: a.cls, "aria-label": a.name ? `${a.label}: ${a.name}` : null,
          onclick: async () => { if (await a.run()) view.reload(); } }, a.label)))) : null)));
    table.hidden = !rows.length;
    const from = rows.length ? state.offset + 1 : 0;
    const to = state.offset + rows.length;
    if (!state.total) {
      status.textContent = state.search ? "Nada encontrado com essa busca." : spec.empty || "Nenhum registro.";
    } else {
      status.textContent = `${state.total} ${state.total === 1 ? "registro" : "registros"}; mostrando ${from} a ${to}.`;
    }
    const size = spec.pageSize || PAGE;
    const pages = Math.max(1, Math.ceil(state.total / size));
    where.textContent = `Página ${Math.floor(state.offset / size) + 1} de ${pages}`;
    prev.disabled = state.offset === 0;
    next.disabled = to >= state.total;
    pager.hidden = pages === 1;
  }

  go(0, "");
  return view;
}

function cell(v) {
  return v === null || v === undefined || v === "" ? "—" : v;
}

// A status badge: "Ativo" / "Inativo".
export function activeBadge(active) {
  return el("span", { class: `badge ${active ? "ok" : "bad"}` }, active ? "Ativo" : "Inativo");
}
