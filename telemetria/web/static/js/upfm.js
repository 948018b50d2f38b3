// The UPFM's value per year (/administracao/upfm, admin): the registry's values (GET /api/v1/upfm-values), and a
// form that sets one year's (PUT /api/v1/upfm-values/{year}, audited old → new). A fine is counted in UPFM
// (Art. 36 to 39) and paid in R$ by its infraction's year; the setting TELEMETRIA_UPFM_BRL only seeds years.
import { api, el, explain } from "./api.js";
import { when } from "./fisc/names.js";

const status = document.getElementById("u-status");
const result = document.getElementById("u-result");
const form = document.getElementById("u-form");
const yearInput = document.getElementById("u-year");
const brlInput = document.getElementById("u-brl");

function say(text, kind = "") {
  status.textContent = text;
  status.className = `reg-status status ${kind}`.trim();
}

const reais = (brl) => `R$ ${String(brl).replace(".", ",")}`;

function table(items) {
  const heads = ["Ano", "Valor de 1 UPFM", "Alterado por"];
  return el("table", { class: "data upfm-table" },
    el("thead", {}, el("tr", {}, heads.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, items.map((i) => el("tr", { "data-year": String(i.year) },
      el("th", { scope: "row" }, String(i.year)), el("td", { "data-field": "brl" }, reais(i.brl)),
      el("td", {}, i.updated_by ? `${i.updated_by}, ${when(i.updated_at)}` : "configuração inicial")))));
}

async function load(message) {
  try {
    const { items } = await api("/api/v1/upfm-values");
    result.replaceChildren(items.length ? table(items) : el("p", { class: "muted" }, "Nenhum ano cadastrado."));
    const years = items.map((i) => i.year);
    const now = new Date().getFullYear();
    if (!yearInput.value) yearInput.value = String(now);
    say(message || (years.includes(now) ? `${items.length} ano(s) com valor.`
      : `Não há valor da UPFM para ${now}: sem ele, nenhuma multa deste ano pode ser aplicada.`),
    message || years.includes(now) ? "" : "error");
  } catch (err) {
    say(explain(err), "error");
  }
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const year = Number(yearInput.value);
  const text = brlInput.value.trim().replace(/\s/g, "");
  if (!Number.isInteger(year) || year < 2000 || year > 2100) {
    say("Informe o ano (entre 2000 e 2100).", "error"); yearInput.focus(); return;
  }
  if (!/^\d{1,5}([.,]\d{1,4})?$/.test(text) || Number(text.replace(",", ".")) <= 0) {
    say("Informe o valor de 1 UPFM em reais, maior que zero (ex.: 4,71).", "error"); brlInput.focus(); return;
  }
  const button = form.querySelector("button");
  button.disabled = true;
  try {
    const saved = await api(`/api/v1/upfm-values/${year}`, { method: "PUT", body: { brl: text.replace(",", ".") } });
    brlInput.value = "";
    await load(saved.old === null ? `Valor da UPFM de ${year} salvo: ${reais(saved.brl)}.`
      : `Valor da UPFM de ${year} alterado de ${reais(saved.old)} para ${reais(saved.brl)}.`);
    status.className = "reg-status status done";
  } catch (err) {
    say(explain(err, { brl: "Valor de 1 UPFM (R$)", year: "Ano" }), "error");
  } finally {
    button.disabled = false;
  }
});
load();
