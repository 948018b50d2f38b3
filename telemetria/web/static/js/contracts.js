// The contracts page (/contratos): the list, creating and editing a contract (a new price or rule is a version
// from a date), and one contract's page with its price history and its routes. A contractor's users see only
// their own contracts (the API scopes them); only who may write the registry sees the buttons that write.
import { api, config, el, fmt, toast } from "./api.js";
import { brl, moneyField, parseMoney, PARTIAL_PAY, ruleLines, ruleShort } from "./contracts/money.js";
import { day, lookups, when } from "./registry/common.js";
import { refusal, sentence } from "./registry/errors.js";
import { openForm } from "./registry/form.js";
import { listView } from "./registry/table.js";

const K = "/api/v1/contracts";
const canWrite = ((config.user || {}).permissions || []).includes("write_registry");
const RULE = ["made_min_coverage_pct", "partial_min_coverage_pct", "partial_pay", "off_route_km_paid", "justified_paid"];
const PRICES = ["price_per_km", "price_per_km_unpaved"];
const MONEY_HELP = "Em reais, com vírgula e até 2 casas: 4,35.";

function fields({ edit }) {
  return [
    ...(edit ? [] : [{ name: "contractor_id", label: "Empresa contratada", type: "select", required: true, numeric: true,
      options: lookups.contractors, empty: "Escolha…" }]),
    { name: "number", label: "Número do contrato", required: true, placeholder: "012/2026" },
    { name: "lot", label: "Lote" },
    { name: "valid_from", label: "Vigência: início", type: "date", required: true },
    { name: "valid_to", label: "Vigência: fim (inclusive)", type: "date", required: true },
    { name: "price_per_km", label: "Preço por km (R$)", required: true, inputmode: "decimal", help: MONEY_HELP },
    { name: "price_per_km_unpaved", label: "Preço por km não pavimentado (R$)", inputmode: "decimal",
      help: "Só quando o contrato paga diferente o km em estrada de terra. Vazio: o mesmo preço." },
    { name: "made_min_coverage_pct", label: "Realizada a partir de (% da rota)", type: "number", min: 0, max: 100,
      step: "any", default: 95 },
    { name: "partial_min_coverage_pct", label: "Parcial a partir de (% da rota)", type: "number", min: 0, max: 100,
      step: "any", default: 50, help: "Abaixo disso a corrida é não realizada e não é paga." },
    { name: "partial_pay", label: "Corrida parcial é paga", type: "select", required: true, options: PARTIAL_PAY,
      default: "proportional" },
    { name: "off_route_km_paid", label: "Pagar km rodados fora da rota", type: "checkbox" },
    { name: "justified_paid", label: "Pagar corrida justificada pelo km declarado", type: "checkbox" },
    ...(edit ? [{ name: "effective_from", label: "Novo preço ou regra vale a partir de", type: "date",
      help: "Só para mudança de preço ou de regra: os dias antes desta data continuam com o preço antigo. Vazio: hoje." }]
      : []),
  ];
}

// The form's flat values → the API's body: prices as exact decimal text, the rule as one object.
function body(vals, names) {
  const out = {};
  const rule = {};
  for (const name of names) {
    const v = vals[name];
    if (PRICES.includes(name)) {
      if (v === null && name === "price_per_km_unpaved") { out[name] = null; continue; }
      const price = parseMoney(v);
      if (price === null) throw refusal(name, "Use um valor em reais com até 2 casas decimais, por exemplo 4,35.");
      out[name] = price;
    } else if (RULE.includes(name)) {
      if (v !== null) rule[name] = v;
    } else if (v !== null || name === "lot") {
      out[name] = v;
    }
  }
  if (Object.keys(rule).length) out.payment_rule = rule;
  return out;
}

function create() {
  const f = fields({ edit: false });
  return openForm({
    title: "Novo contrato", fields: f, submitLabel: "Cadastrar",
    onSubmit: async (vals) => {
      const row = await api(K, { method: "POST", body: body(vals, f.map((x) => x.name)) });
      toast(`Contrato ${row.number} cadastrado.`);
      return row;
    },
  });
}

function flat(k) {
  return { ...k, ...k.payment_rule, price_per_km: moneyField(k.price_per_km),
    price_per_km_unpaved: moneyField(k.price_per_km_unpaved) };
}

function edit(k) {
  return openForm({
    title: `Editar contrato ${k.number}`, fields: fields({ edit: true }), values: flat(k),
    intro: "Número, lote e vigência mudam no próprio contrato. Preço e regra viram uma nova versão, "
      + "válida a partir da data indicada; o histórico guarda as anteriores.",
    onSubmit: async (vals, changed) => {
      const names = Object.keys(changed);
      if (!names.length) {
        toast("Nada foi alterado.");
        return k;
      }
      const saved = await api(`${K}/${k.id}`, { method: "PATCH", body: body(vals, names) });
      toast("Alterações salvas.");
      return saved;
    },
  });
}

const validity = (k) => `${day(k.valid_from)} a ${day(k.valid_to)}`;

function price(k) {
  return k.price_per_km_unpaved === null || k.price_per_km_unpaved === undefined ? brl(k.price_per_km)
    : `${brl(k.price_per_km)} (não pavimentado: ${brl(k.price_per_km_unpaved)})`;
}

// Every route of the registry with this contract (the routes list has no contract filter: read it all).
async function routesOf(contractId) {
  const out = [];
  for (let offset = 0; offset < 20000; offset += 500) {
    const page = await api(`/api/v1/routes?limit=500&offset=${offset}`);
    out.push(...page.items.filter((r) => r.contract_id === contractId));
    if (offset + page.items.length >= page.total || page.items.length < 500) break;
  }
  return out;
}

function table(caption, heads, rows) {
  return el("div", { class: "table-wrap" }, el("table", { class: "data" },
    el("caption", { class: "sr-only" }, caption),
    el("thead", {}, el("tr", {}, heads.map(([h, cls]) => el("th", { scope: "col", class: cls }, h)))),
    el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map(([v, cls]) =>
      el("td", { class: cls }, v === null || v === undefined || v === "" ? "—" : v)))))));
}

const CHANGED = { price_per_km: "preço por km", price_per_km_unpaved: "preço não pavimentado",
  made_min_coverage_pct: "% para realizada", partial_min_coverage_pct: "% para parcial", partial_pay: "pagamento da parcial",
  off_route_km_paid: "km fora da rota", justified_paid: "corrida justificada" };

function historyTable(h) {
  return table(`Histórico de preços do contrato ${h.number}`,
    [["Vale de"], ["Até"], ["Preço por km", "n"], ["Não pavimentado", "n"], ["Regra"], ["O que mudou"], ["Por"],
      ["Registrado em"], ["Situação"]],
    h.versions.map((v, i) => [[day(v.valid_from)], [v.in_force ? (v.valid_to ? day(v.valid_to) : "em aberto") : "—"],
      [brl(v.price_per_km), "n"], [v.price_per_km_unpaved === null ? "—" : brl(v.price_per_km_unpaved), "n"],
      [ruleShort(v.payment_rule)], [i === 0 ? "versão inicial" : (v.changed || []).map((c) => CHANGED[c] || c).join(", ")], [v.created_by],
      [when(v.created_at)],
      [v.in_force ? el("span", { class: "badge ok" }, "em vigor") : el("span", { class: "badge" },
        `substituída em ${when(v.superseded_at)}`)]]));
}

function routesTable(k, routes) {
  if (!routes.length) return el("p", { class: "muted" }, "Nenhuma rota deste contrato. Escolha o contrato no cadastro da rota.");
  return table(`Rotas do contrato ${k.number}`,
    [["Código"], ["Nome"], ["Ano letivo", "n"], ["Km declarado", "n"], ["Situação"]],
    routes.map((r) => [[el("strong", {}, r.code)], [r.name], [r.school_year, "n"],
      [r.declared_km ? fmt.km(r.declared_km) : null, "n"], [r.active ? "Ativa" : "Inativa"]]));
}

function page(root) {
  const detail = el("section", { class: "contract-detail", hidden: true, "aria-live": "polite" });
  const view = listView(root, {
    endpoint: K,
    columns: [
      { label: "Número", value: (k) => el("strong", {}, k.number) },
      { label: "Lote", value: (k) => k.lot },
      { label: "Empresa", value: (k) => k.contractor },
      { label: "Vigência", value: validity },
      { label: "Preço por km", value: price, cls: "n" },
      { label: "Regra de pagamento", value: (k) => ruleShort(k.payment_rule) },
      { label: "Rotas", value: (k) => k.routes, cls: "n" },
    ],
    empty: "Nenhum contrato cadastrado.",
    newLabel: canWrite ? "Novo contrato" : null,
    onNew: create,
    actions: (k) => [
      { label: "Abrir", name: `contrato ${k.number}`, run: () => { show(k.id); return false; } },
      ...(canWrite ? [{ label: "Editar", name: `contrato ${k.number}`, run: () => edit(k) }] : []),
    ],
  });
  root.append(detail);

  function back() {
    detail.hidden = true;
    detail.replaceChildren();
    view.section.hidden = false;
    history.replaceState(null, "", location.pathname);
    view.reload();
  }

  async function show(id) {
    view.section.hidden = true;
    detail.hidden = false;
    history.replaceState(null, "", `${location.pathname}?id=${id}`);
    const backButton = el("button", { type: "button", class: "back", onclick: back }, "← Voltar à lista de contratos");
    detail.replaceChildren(backButton, el("p", { class: "reg-status", role: "status" }, "Carregando o contrato…"));
    let k, h, routes;
    try {
      [k, h, routes] = await Promise.all([api(`${K}/${id}`), api(`${K}/${id}/history`), routesOf(id)]);
    } catch (err) {
      detail.replaceChildren(backButton, el("p", { class: "reg-status error-text", role: "alert" }, sentence(err)));
      return;
    }
    const figures = [["Empresa", k.contractor], ["Lote", k.lot || "—"], ["Vigência", validity(k)],
      ["Preço por km", brl(k.price_per_km)],
      ["Não pavimentado", k.price_per_km_unpaved === null ? "o mesmo" : brl(k.price_per_km_unpaved)],
      ["Preço e regra desde", day(k.terms_valid_from)], ["Rotas", String(k.routes)]];
    const title = el("h2", { class: "route-title", tabindex: "-1" }, `Contrato ${k.number}`);
    detail.replaceChildren(
      backButton, title,
      el("dl", { class: "figures" }, figures.map(([a, b]) => el("div", {}, el("dt", {}, a), el("dd", {}, b)))),
      el("div", { class: "actions" },
        canWrite ? el("button", { type: "button", onclick: async () => { if (await edit(k)) show(id); } }, "Editar contrato")
          : null,
        el("a", { href: `/boletim?contract_id=${k.id}` }, "Ver o boletim de medição deste contrato")),
      el("h3", {}, "Regra de pagamento em vigor"),
      el("ul", { class: "rule" }, ruleLines(k.payment_rule).map((t) => el("li", {}, t))),
      el("h3", { id: "k-history" }, "Histórico de preços e regra"),
      historyTable(h),
      el("h3", {}, "Rotas do contrato"),
      routesTable(k, routes),
      el("p", { class: "reg-status muted" }, `${routes.length} ${routes.length === 1 ? "rota" : "rotas"}.`));
    title.focus();
  }

  const asked = Number(new URLSearchParams(location.search).get("id"));
  if (asked) show(asked);
}

page(document.getElementById("contracts"));
