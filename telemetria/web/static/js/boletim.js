// The boletim de medição page (/boletim): a contract and a month → the API's boletim as it is (totals, one line
// per route, the runs grid per route, the payment rule), its CSV, XLSX and PDF, justifying a run not made,
// correcting a justification's reason, and closing or reopening the month. Every figure is the API's; the page
// adds nothing up.
import { ApiError, api, config, download, el, fmt, localDate, toast } from "./api.js";
import { format } from "./formats.js";
import { lastDay } from "./contracts/days.js";
import { STATUS, historyLink, legend, runGrid, shownStatus } from "./contracts/grid.js";
import { brl, ruleLines } from "./contracts/money.js";
import { day, when } from "./registry/common.js";
import { refusal, sentence } from "./registry/errors.js";
import { confirmBox, openForm } from "./registry/form.js";

const API = "/api/v1/reports/measurement";
// The boletim's files: the API's own, for the contract and month on screen.
const FILES = [
  ["csv", "Baixar CSV", "Planilha pt-BR em texto (Excel, LibreOffice)"],
  ["xlsx", "Baixar XLSX", "Planilha do Excel: números como números, datas como datas, uma aba com a consulta"],
  ["pdf", "Baixar PDF", "Documento para imprimir ou juntar ao processo, com páginas numeradas"],
];
const user = config.user || {};
const perms = user.permissions || [];
const can = {
  export: perms.includes("export"),
  justify: perms.includes("write_registry"), // the servidor who keeps the registry justifies runs
  close: perms.includes("write_registry"),
  reopen: perms.includes("reopen_measurement"), // an admin's (issue 17)
};
const form = document.getElementById("b-form");
const contractSelect = document.getElementById("b-contract");
const monthInput = document.getElementById("b-month");
const status = document.getElementById("b-status");
const result = document.getElementById("b-result");

function say(text, kind = "") {
  status.textContent = text;
  status.className = `reg-status status ${kind}`.trim();
}

function fieldError(input, message) {
  for (const old of form.querySelectorAll(".field-error")) old.remove();
  for (const i of form.querySelectorAll("[aria-invalid]")) i.removeAttribute("aria-invalid");
  if (!input) return;
  const id = `${input.id}-err`;
  input.setAttribute("aria-invalid", "true");
  input.setAttribute("aria-describedby", id);
  input.setAttribute("aria-errormessage", id);
  input.after(el("p", { class: "field-error", id }, message));
  input.focus();
}

async function loadContracts() {
  try {
    const data = await api("/api/v1/contracts?limit=500");
    for (const k of data.items) contracts.set(String(k.id), k);
    contractSelect.replaceChildren(el("option", { value: "" }, data.items.length ? "Escolha o contrato" : "Nenhum contrato"),
      ...data.items.map((k) => el("option", { value: String(k.id) }, `${k.number} · ${k.contractor}`)));
  } catch (err) {
    contractSelect.replaceChildren(el("option", { value: "" }, "—"));
    say(`Não foi possível carregar os contratos. ${sentence(err)}`, "error");
  }
}

const contracts = new Map(); // id → the contract as listed (its validity clips the month)

// The month chosen, clipped to the contract's validity (a contract may start or end inside a month) and, for the
// month under way, to today (the month so far: today's runs still open show as "Prevista" / "Em andamento");
// null when the contract is not in force on any day of it.
function period(k) {
  const [y, m] = monthInput.value.split("-").map(Number);
  let from = `${monthInput.value}-01`, to = lastDay(y, m);
  const today = localDate();
  if (from <= today && today < to) to = today;
  if (k && k.valid_from > from) from = k.valid_from;
  if (k && k.valid_to < to) to = k.valid_to;
  return from <= to ? { y, m, from, to } : null;
}

// --- drawing ------------------------------------------------------------------------------------------
const km = (x) => fmt.km(x === null || x === undefined ? null : x);
const cov = (x) => (x === null || x === undefined ? "—" : `${format("share", x)} %`);

// The month's closing as the answer gives it (contracts[].months[]), or null while it is open.
function closure(k, month) {
  return (k.months || []).find((m) => m.month === month && m.closed) || null;
}

// The month's earlier closings, reopened since (issue 36: a reopened month showed no trace of its close): each
// with its SHA-256, who closed and when, who reopened, when and why.
function earlier(k, month) {
  const m = (k.months || []).find((x) => x.month === month);
  const list = (m && m.reopened) || [];
  if (!list.length) return null;
  return el("ul", { class: "b-reopened", "data-testid": "reopened" }, list.map((r) => el("li", {},
    `Fechado em ${when(r.closed_at)} por ${r.closed_by} (SHA-256 ${r.sha256}); reaberto em ${when(r.reopened_at)} `
      + `por ${r.reopened_by}. Motivo: ${r.reason}`)));
}

function banner(k, contractId, month) {
  const c = closure(k, month);
  if (c) {
    return el("div", { class: "b-banner", role: "status", "data-testid": "closed-banner" },
      `Mês fechado em ${when(c.closed_at)} por ${c.closed_by} (SHA-256 ${c.sha256}). `,
      "Este boletim está congelado: é servido exatamente como foi fechado.", earlier(k, month),
      can.reopen ? el("div", { class: "actions" }, el("button", { type: "button",
        onclick: () => reopen(contractId, month) }, "Reabrir mês")) : null);
  }
  return el("div", { class: "b-banner open", "data-testid": "open-banner" },
    "Mês aberto: os números podem mudar até o mês ser fechado.", earlier(k, month),
    can.close ? el("div", { class: "actions" }, el("button", { type: "button", class: "primary",
      onclick: () => close(contractId, month) }, "Fechar mês")) : null);
}

function totalsTable(k) {
  const heads = [["Rota"], ["Km declarado", "n"], ["Devidas", "n"], ["Realizadas", "n"], ["Parciais", "n"],
    ["Não realizadas", "n"], ["Justificadas", "n"], ["Km contratado", "n"], ["Km realizado", "n"], ["Km pagável", "n"],
    ["Valor", "n"], ["Previstas (fora dos totais)", "n"]];
  const row = (r, first) => [first, km(r.declared_km), r.runs_due, r.runs_made, r.runs_partial, r.runs_not_made,
    r.runs_justified, km(r.contracted_km), km(r.realized_km), km(r.payable_km), brl(r.amount), r.runs_pending ?? 0];
  const sum = (f) => k.routes.reduce((a, r) => a + (r[f] || 0), 0); // run counts only: integers
  const totals = { declared_km: null, runs_due: k.runs_due ?? sum("runs_due"), runs_made: k.runs_made ?? sum("runs_made"),
    runs_partial: k.runs_partial ?? sum("runs_partial"), runs_not_made: k.runs_not_made ?? sum("runs_not_made"),
    runs_justified: k.runs_justified ?? sum("runs_justified"), contracted_km: k.contracted_km, realized_km: k.realized_km,
    payable_km: k.payable_km, amount: k.amount, runs_pending: k.runs_pending ?? sum("runs_pending") };
  const td = (v, i) => el("td", { class: i ? "n" : null }, v === null || v === undefined ? "—" : String(v));
  return el("div", { class: "table-wrap" }, el("table", { class: "data b-totals" },
    el("caption", { class: "sr-only" }, `Boletim do contrato ${k.number}, por rota`),
    el("thead", {}, el("tr", {}, heads.map(([h, c]) => el("th", { scope: "col", class: c }, h)))),
    el("tbody", {}, k.routes.map((r) => el("tr", { "data-route": r.code }, row(r, el("strong", {}, r.code)).map((v, i) =>
      i === 0 ? el("td", {}, v) : td(v, i))))),
    el("tfoot", {}, el("tr", {}, row(totals, "Total do contrato").map(td)))));
}

function runsTable(runs, ctx) {
  const heads = ["Data", "Corrida", "Rota", "Veículo", "Situação", "Cobertura", "Km na rota", "Km fora da rota",
    "Km pagável", "Valor", "Início", "Fim", "Justificativa", "Ações"];
  const num = new Set([5, 6, 7, 8, 9]);
  return el("div", { class: "table-wrap" }, el("table", { class: "data b-runs" },
    el("caption", { class: "sr-only" }, "Corridas do período"),
    el("thead", {}, el("tr", {}, heads.map((h, i) => el("th", { scope: "col", class: num.has(i) ? "n" : null }, h)))),
    el("tbody", {}, runs.map((r) => {
      const [letter, name] = STATUS[shownStatus(r)] || ["?", r.status];
      const vehicle = r.plate ? [r.vehicle_id ? el("a", { href: historyLink(r.vehicle_id, r.date) }, r.plate) : r.plate,
        r.substitution ? el("span", { class: "badge warn" }, " substituição") : null,
        r.unauthorized ? el("span", { class: "badge bad" }, " não autorizado") : null] : "—";
      const justify = can.justify && (r.status === "not_made" || r.status === "partial") && !ctx.closed
        ? el("button", { type: "button", class: "small", onclick: () => justifyRun(r, ctx) }, "Justificar")
        : can.justify && r.justification_id && !ctx.closed
          ? el("button", { type: "button", class: "small", onclick: () => correctJustification(r) },
            "Corrigir justificativa") : null;
      const cells = [day(r.date), String(r.run_no || 1), r.code, vehicle,
        el("span", { class: `badge st-${shownStatus(r)}` }, `${letter} · ${name}`), cov(r.coverage), km(r.realized_km),
        km(r.off_route_km), km(r.payable_km), brl(r.amount), r.start ? fmt.clock(r.start) : "—",
        r.end ? fmt.clock(r.end) : "—",
        r.justification ? `${r.justification_kind === "feito_fora_do_horario" ? "Realizada fora do horário: " : ""}`
          + `${r.justification}${r.justified_by ? ` (${r.justified_by})` : ""}` : "—", justify];
      return el("tr", { "data-date": r.date, "data-route": r.code },
        cells.map((c, i) => el("td", { class: num.has(i) ? "n" : i < 3 ? "nw" : null }, c)));
    }))));
}

async function schoolDays(y) {
  try {
    const sy = await api(`/api/v1/school-years/${y}`);
    return new Set(sy.school_days);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null; // no calendar: days without runs read "not due"
    throw err;
  }
}

function draw(answer, p, contractId, school) {
  const month = `${p.y}-${String(p.m).padStart(2, "0")}`;
  const k = (answer.contracts || []).find((c) => String(c.contract_id) === String(contractId)) || (answer.contracts || [])[0];
  if (!k) {
    result.replaceChildren(el("p", {}, "Este contrato não tem rotas com corridas devidas no mês."));
    result.hidden = false;
    return;
  }
  const runs = (answer.runs || []).filter((r) => r.contract_id === undefined || String(r.contract_id) === String(k.contract_id));
  const ctx = { closed: Boolean(closure(k, month)), contractId, month, school,
    runsPerDay: Math.max(1, ...runs.map((r) => r.run_no || 1)) };
  const actions = el("div", { class: "actions" },
    ...(can.export ? FILES.map(([f, label, title]) => el("button", { type: "button", "data-format": f, title,
      onclick: () => file(contractId, p, f) }, label)) : []),
    el("button", { type: "button", onclick: () => window.print() }, "Imprimir"));
  const figures = [["Contrato", k.number], ["Empresa", k.contractor], ["Período", `${day(p.from)} a ${day(p.to)}`],
    ["Preço por km", brl(k.price_per_km)],
    ...(k.price_per_km_unpaved === null || k.price_per_km_unpaved === undefined ? []
      : [["Preço por km não pavimentado", brl(k.price_per_km_unpaved)], ["Km pagável não pavimentado", km(k.unpaved_km)]]),
    ["Km pagável", km(k.payable_km)], ["Valor a pagar", brl(k.amount)]];
  result.replaceChildren(el("div", {},
    banner(k, contractId, month),
    el("dl", { class: "figures", "aria-label": "Totais do boletim" },
      figures.map(([a, b]) => el("div", {}, el("dt", {}, a), el("dd", {}, b === null || b === undefined ? "—" : String(b))))),
    actions,
    el("h2", {}, "Por rota"),
    totalsTable(k),
    el("h2", {}, "Regra de pagamento"),
    terms(k),
    el("p", { class: "hint" }, "Cada valor é km pagável × preço por km, arredondado ao centavo uma vez por corrida; "
      + "os totais são somas das corridas. Corridas previstas ou em andamento (a janela ainda não fechou) não são "
      + "julgadas nem entram nos totais."),
    el("h2", {}, "Calendário de corridas por rota"),
    legend(),
    el("p", { class: "hint" }, "Clique numa corrida para ver o trajeto do veículo nesse dia no mapa."),
    k.routes.map((r) => el("section", { class: "b-route", "data-route": r.code, "aria-label": `Rota ${r.code}` },
      el("h3", {}, `Rota ${r.code}`, el("span", { class: "muted" },
        ` · ${r.runs_made} de ${r.runs_due} corridas realizadas · ${brl(r.amount)}`)),
      runGrid({ code: r.code, year: p.y, month: p.m, runs: runs.filter((x) => x.route_id === r.route_id),
        school: ctx.school }))),
    el("details", { open: runs.some((r) => r.status === "not_made" || r.status === "partial") },
      el("summary", {}, `Corridas do período (${runs.length})`), runsTable(runs, ctx))));
  result.hidden = false;
}

// The price and rule in force in the period: one version, or each with the days it applies to.
function terms(k) {
  const versions = k.terms && k.terms.length ? k.terms
    : [{ valid_from: k.from, valid_to: k.to, price_per_km: k.price_per_km, rule: k.rule }];
  return versions.map((t) => el("div", { class: "b-terms" },
    versions.length > 1 ? el("h3", {}, `De ${day(t.valid_from)} a ${day(t.valid_to)}: ${brl(t.price_per_km)} por km`) : null,
    t.rule ? el("ul", { class: "rule" }, ruleLines(t.rule).map((line) => el("li", {}, line)))
      : el("p", { class: "muted" }, "Sem preço e regra em vigor neste período.")));
}

// --- actions ------------------------------------------------------------------------------------------
async function show(contractId, p) {
  say("Carregando…", "busy");
  result.hidden = true;
  const q = new URLSearchParams({ contract_id: contractId, from: p.from, to: p.to, format: "json" });
  let answer, school;
  try {
    [answer, school] = await Promise.all([api(`${API}?${q}`), schoolDays(p.y)]);
  } catch (err) {
    result.replaceChildren();
    const name = err instanceof ApiError ? err.field : null;
    const message = sentence(err, { contract_id: "Contrato", from: "Mês", to: "Mês" });
    if (name && /contract/.test(name)) fieldError(contractSelect, message);
    else if (name && /from|to|month/.test(name)) fieldError(monthInput, message);
    say(`Não foi possível gerar o boletim. ${message}`, "error");
    return;
  }
  draw(answer, p, contractId, school);
  const k = (answer.contracts || [])[0];
  say(k ? `Boletim de ${day(p.from)} a ${day(p.to)}: ${k.routes.length} ${k.routes.length === 1 ? "rota" : "rotas"}, `
    + `${(answer.runs || []).length} corridas devidas.` : "Boletim gerado.", "done");
}

async function file(contractId, p, format) {
  const q = new URLSearchParams({ contract_id: contractId, from: p.from, to: p.to, format });
  const name = format.toUpperCase();
  say(`Preparando o arquivo ${name}…`, "busy");
  try {
    const got = await download(`${API}?${q}`);
    say(`Arquivo ${got.name} baixado.`, "done");
  } catch (err) {
    say(`Não foi possível baixar o ${name}. ${sentence(err)}`, "error");
  }
}

async function justifyRun(r, ctx) {
  const [, name] = STATUS[r.status];
  const done = await openForm({
    title: `Justificar a corrida de ${day(r.date)} da rota ${r.code}`,
    intro: `Situação pelo GPS: ${name.toLowerCase()} (cobertura ${cov(r.coverage)}). A justificativa fica registrada com `
      + "seu nome e a hora. Não realizada: a corrida deixa de ser infração, mas só é paga se a regra do contrato "
      + "disser. Realizada fora do horário: diga a hora em que saiu; se o GPS mostrar a corrida realizada nesse dia a partir "
      + "dessa hora, ela é paga como realizada; senão o sistema recusa e diz por quê.",
    fields: [
      { name: "kind", label: "O que aconteceu", type: "select", required: true,
        options: [["nao_realizada", "Não realizada"], ["feito_fora_do_horario", "Realizada fora do horário, no mesmo dia"]] },
      { name: "made_at", label: "Hora em que a corrida saiu", type: "time", required: true,
        showIf: (v) => v.kind === "feito_fora_do_horario" },
      { name: "reason", label: "Motivo", required: true, wide: true, type: "textarea", rows: 3 },
    ],
    values: { kind: "nao_realizada" },
    submitLabel: "Justificar",
    onSubmit: async (vals) => {
      const body = { route_id: r.route_id, date: r.date, reason: vals.reason };
      if (r.run_no && ctx.runsPerDay > 1) body.run_no = r.run_no;
      if (vals.kind === "feito_fora_do_horario") Object.assign(body, { kind: vals.kind, made_at: vals.made_at, run_no: r.run_no });
      const saved = await api("/api/v1/run-justifications", { method: "POST", body });
      toast("Justificativa registrada.");
      return saved;
    },
  });
  if (done) run();
}

// A justification's reason corrected while its month is open (PATCH /api/v1/run-justifications/{id}, issue 36):
// what it justifies stays; the old reason stays in the audit log. Like the API, a reason a fiscal can check later.
const MIN_REASON = 10;

async function correctJustification(r) {
  const whole = r.run_no ? "" : " (vale para todas as corridas do dia)";
  const done = await openForm({
    title: `Corrigir a justificativa de ${day(r.date)} da rota ${r.code}`,
    intro: `Motivo registrado${r.justified_by ? ` por ${r.justified_by}` : ""}: «${r.justification}»${whole}. `
      + "Só o motivo muda: a rota, o dia, a corrida e o tipo da justificativa ficam como estão, e a situação da "
      + "corrida no boletim também. O motivo anterior fica no registro de auditoria, com seu nome e a hora.",
    fields: [{ name: "reason", label: "Novo motivo", required: true, wide: true, type: "textarea", rows: 3,
      help: `Pelo menos ${MIN_REASON} caracteres: um motivo que a fiscalização possa verificar depois.` }],
    values: { reason: r.justification },
    submitLabel: "Corrigir justificativa",
    onSubmit: async (vals) => {
      if (vals.reason.length < MIN_REASON) {
        throw refusal("reason", `Use pelo menos ${MIN_REASON} caracteres: um motivo que a fiscalização possa `
          + "verificar depois.");
      }
      if (vals.reason === r.justification) {
        throw refusal("reason", "É o mesmo motivo já registrado: escreva o motivo corrigido.");
      }
      const sure = await confirmBox(`Trocar o motivo da justificativa de ${day(r.date)} da rota ${r.code}? `
        + `De «${r.justification}» para «${vals.reason}».`, "Confirmar correção");
      if (!sure) throw refusal("reason", "Correção não confirmada: o motivo continua o mesmo.");
      const saved = await api(`/api/v1/run-justifications/${encodeURIComponent(r.justification_id)}`,
        { method: "PATCH", body: { reason: vals.reason } });
      toast("Justificativa corrigida.");
      return saved;
    },
  });
  if (done) run();
}

async function close(contractId, month, early = false) {
  const label = `${month.slice(5)}/${month.slice(0, 4)}`;
  let tooEarly = false;
  const done = await openForm({
    title: early ? `Fechar o mês ${label} antes do prazo` : `Fechar o mês ${label}`,
    intro: early
      ? "O mês terminou há poucos dias. Rastreadores que ficaram sem sinal guardam as posições e as enviam depois "
        + "(Lei 3.588/2023, art. 15 §2): as corridas dos últimos dias do mês ainda podem mudar. Fechar agora congela "
        + "o boletim como está; se chegarem dados depois, será preciso reabrir o mês."
      : "Fechar congela este boletim: ele passa a ser servido exatamente como está agora, com um resumo SHA-256 "
        + "do conteúdo, quem fechou e quando. Reabrir depois exige um administrador e um motivo.",
    fields: [], submitLabel: early ? "Fechar mesmo assim" : "Fechar mês",
    onSubmit: async () => {
      try {
        const saved = await api(`/api/v1/measurements/${contractId}/${month}/close`, { method: "POST",
          body: early ? { confirm_early: true } : {} });
        toast("Mês fechado.");
        return saved || true;
      } catch (err) {
        if (err instanceof ApiError && err.status === 409 && err.field === "confirm_early") {
          tooEarly = true;
          return true; // this form closes; the next one says why and asks to confirm
        }
        throw err;
      }
    },
  });
  if (tooEarly) return close(contractId, month, true);
  if (done) run();
}

async function reopen(contractId, month) {
  const done = await openForm({
    title: `Reabrir o mês ${month.slice(5)}/${month.slice(0, 4)}`,
    intro: "O boletim volta a ser calculado a partir dos dados; o fechamento anterior e o motivo ficam registrados.",
    fields: [{ name: "reason", label: "Motivo da reabertura", required: true, wide: true, type: "textarea", rows: 3 }],
    submitLabel: "Reabrir mês",
    onSubmit: async (vals) => {
      const saved = await api(`/api/v1/measurements/${contractId}/${month}/reopen`, { method: "POST",
        body: { reason: vals.reason } });
      toast("Mês reaberto.");
      return saved || true;
    },
  });
  if (done) run();
}

function run() {
  const contractId = contractSelect.value;
  if (!contractId) { fieldError(contractSelect, "Escolha o contrato."); return; }
  if (!/^\d{4}-\d{2}$/.test(monthInput.value)) { fieldError(monthInput, "Escolha o mês."); return; }
  fieldError(null);
  history.replaceState(null, "", `${location.pathname}?contract_id=${contractId}&mes=${monthInput.value}`);
  const k = contracts.get(contractId);
  const p = period(k);
  if (!p) {
    fieldError(monthInput, `O contrato vale de ${day(k.valid_from)} a ${day(k.valid_to)}: escolha um mês dentro da vigência.`);
    return;
  }
  show(contractId, p);
}

form.addEventListener("submit", (e) => { e.preventDefault(); run(); });

await loadContracts();
const q = new URLSearchParams(location.search);
monthInput.value = /^\d{4}-\d{2}$/.test(q.get("mes") || "") ? q.get("mes") : localDate().slice(0, 7);
if (q.get("contract_id")) {
  contractSelect.value = q.get("contract_id");
  if (contractSelect.value) run();
  else say("Contrato não encontrado (ou fora do que seu perfil pode ver).", "error");
}
