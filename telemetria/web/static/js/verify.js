// "Verificar arquivo" (/verificar): an exported track file (CSV or XLSX) sent to POST /api/v1/seals/verify, the
// answer shown as it came (overall, then per vehicle-day: the seal's version, the rows compared, the first row
// that differs); and the seals of a vehicle and period (GET /api/v1/seals) so an auditor can copy a digest.
// Every figure and text is the API's; the page only says it in Portuguese.
import { ApiError, api, config, el, fieldName, localDate, toast } from "./api.js";
import { day, when } from "./registry/common.js";
import { sentence } from "./registry/errors.js";

const form = document.getElementById("v-form");
const fileInput = document.getElementById("v-file");
const status = document.getElementById("v-status");
const result = document.getElementById("v-result");
const sealsForm = document.getElementById("s-form");
const sealsStatus = document.getElementById("s-status");
const sealsResult = document.getElementById("s-result");
const LABELS = { file: "Arquivo", vehicle_id: "Veículo", from: "De", to: "Até" };

document.getElementById("v-public").hidden = !config.public_enabled;

// The verifier writes its reasons in Portuguese ("a linha 12 difere da versão 1 do selo"): shown as they come.
const sentenceCase = (text) => (text ? text[0].toUpperCase() + text.slice(1) : text);

function say(box, text, kind = "") {
  box.textContent = text;
  box.className = `reg-status status ${kind}`.trim();
}

function vehicleName(d) {
  const id = d.vehicle_id === null || d.vehicle_id === undefined ? null : `id ${d.vehicle_id}`;
  if (d.plate && id) return `${d.plate} (${id})`;
  return d.plate || id || "—";
}

// The answer in three words (issue 36): the API's `verdict`, per day and for the file.
const WORDS = {
  autentico: { word: "Autêntico", badge: "ok", day: "autêntico" },
  ainda_nao_selado: { word: "Ainda não selado", badge: "warn", day: "ainda não selado" },
  alterado: { word: "Alterado", badge: "bad", day: "alterado" },
  nao_verificavel: { word: "Não verificável", badge: "warn", day: "não verificável" },
};
const wordOf = (v, valid) => WORDS[v] || (valid ? WORDS.autentico : WORDS.alterado);

// The first row that differs: its number in the file, what the seal has there and what the file has, both as the
// file shows them (local time, decimal comma: the API's `expected_shown`, `found_shown`).
function difference(diff) {
  if (!diff) return "—";
  const side = (shown, raw) => (shown === null || shown === undefined ? raw : shown);
  const expected = side(diff.expected_shown, diff.expected);
  const found = side(diff.found_shown, diff.found);
  return el("div", { class: "v-diff" },
    el("div", {}, `Linha ${diff.row} do arquivo`),
    el("div", {}, el("span", { class: "muted" }, "Esperado (selo): "),
      expected === null || expected === undefined ? "nada (a linha não devia existir)"
        : el("code", { class: "v-expected" }, String(expected))),
    el("div", {}, el("span", { class: "muted" }, "Encontrado (arquivo): "),
      found === null || found === undefined ? "nada (a linha falta no arquivo)"
        : el("code", { class: "v-found" }, String(found))));
}

function verdict(answer) {
  const days = answer.days || [];
  const w = wordOf(answer.verdict, answer.valid);
  const changed = days.filter((d) => wordOf(d.verdict, d.valid) === WORDS.alterado).length;
  const n = `${days.length} ${days.length === 1 ? "dia verificado" : "dias verificados"}`;
  const text = days.length === 0 ? "não há no arquivo nenhum dia de trajetória para verificar."
    : w === WORDS.autentico ? `o arquivo confere com os selos: ${n}, nenhuma diferença.`
      : w === WORDS.ainda_nao_selado ? `o dia ainda não foi selado (o selo é gerado depois que o dia termina): tente `
        + `novamente amanhã. As linhas conferem com os dados guardados hoje (${n}).`
        : w === WORDS.alterado ? `${changed} de ${days.length} ${days.length === 1 ? "dia difere" : "dias diferem"} `
          + "dos selos ou dos dados guardados: a primeira linha diferente está abaixo."
          : "as posições de algum dia já não são guardadas: não há com o que comparar.";
  return el("p", { class: `verdict ${w.badge}`, id: "v-verdict", "data-valid": String(Boolean(answer.valid)),
    "data-verdict": answer.verdict || "" },
  el("strong", {}, `${w.word}. `), sentenceCase(text),
  answer.reason ? ` ${sentenceCase(answer.reason)}.` : null);
}

function daysTable(days) {
  const head = ["Dia", "Veículo", "Versão do selo", "Linhas", "Resultado", "Motivo", "Primeira diferença"];
  // On a phone each day is a card with labelled cells (app.css, table.stack): the result is never off-screen.
  const td = (i, attrs, ...kids) => el("td", { ...attrs, "data-label": head[i] }, ...kids);
  return el("div", { class: "table-wrap" }, el("table", { class: "data stack", id: "v-days" },
    el("caption", { class: "sr-only" }, "Resultado por dia"),
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, days.map((d) => {
      return el("tr", { "data-date": d.date, "data-valid": String(Boolean(d.valid)), "data-verdict": d.verdict || "" },
        td(0, { class: "nw" }, day(d.date)),
        td(1, {}, vehicleName(d)),
        td(2, { class: "n" }, d.version === null || d.version === undefined ? "—" : String(d.version)),
        td(3, { class: "n" }, d.rows === null || d.rows === undefined ? "—" : String(d.rows)),
        td(4, {}, el("span", { class: `badge ${wordOf(d.verdict, d.valid).badge}` }, wordOf(d.verdict, d.valid).day)),
        td(5, {}, d.reason ? `${sentenceCase(d.reason)}.` : "—"),
        td(6, {}, difference(d.first_difference)));
    }))));
}

async function verify() {
  const file = fileInput.files && fileInput.files[0];
  fileInput.removeAttribute("aria-invalid");
  if (!file) {
    fileInput.setAttribute("aria-invalid", "true");
    say(status, "Escolha o arquivo a verificar.", "error");
    fileInput.focus();
    return;
  }
  const body = new FormData();
  body.append("file", file, file.name);
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  result.hidden = true;
  say(status, `Verificando ${file.name}…`, "busy");
  try {
    const answer = await api("/api/v1/seals/verify", { method: "POST", form: body });
    result.replaceChildren(verdict(answer), (answer.days || []).length ? daysTable(answer.days) : null);
    result.hidden = false;
    say(status, `Arquivo ${file.name} verificado.`, "done");
  } catch (err) {
    result.replaceChildren();
    if (err instanceof ApiError && (err.status === 400 || err.status === 413 || err.status === 415 || err.status === 422)) {
      fileInput.setAttribute("aria-invalid", "true");
    }
    say(status, `Não foi possível verificar o arquivo. ${fileProblem(err)}`, "error");
  } finally {
    button.disabled = false;
  }
}

// The API refuses a file that is no track export with 400 naming `file` (its reason in English, for scripts).
function fileProblem(err) {
  if (err instanceof ApiError && err.status === 400 && fieldName(err.field) === "file") {
    if (/not a track export/i.test(err.message)) {
      return "Não é um arquivo de trajetória exportado por este sistema: envie o CSV ou o XLSX do relatório "
        + "Trajetória, sem alterar o cabeçalho.";
    }
    return `O arquivo não pôde ser lido como uma trajetória exportada (${err.message.replace(/^file:\s*/, "")}).`;
  }
  if (err instanceof ApiError && err.status === 413) return "O arquivo é grande demais para verificar aqui.";
  return sentence(err, LABELS);
}

// --- the seals of a vehicle and period -----------------------------------------------------------------
async function copy(text, code) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard (an insecure address, or refused): select the code so Ctrl+C copies it.
    const range = document.createRange();
    range.selectNodeContents(code);
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    toast("Código selecionado: tecle Ctrl+C para copiar.");
    return;
  }
  toast("Código copiado.");
}

function digest(value, label) {
  if (!value) return el("span", { class: "muted" }, "—");
  const code = el("code", { class: "digest" }, value);
  return el("span", { class: "digest-box" }, code,
    el("button", { type: "button", class: "link", "aria-label": `Copiar ${label}`, onclick: () => copy(value, code) }, "Copiar"));
}

function sealsTable(items) {
  const head = ["Dia", "Veículo", "Versão", "Posições", "Código do selo (SHA-256)", "Versão anterior (SHA-256)", "Selado em"];
  return el("table", { class: "data", id: "s-table" },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, items.map((s) => el("tr", { "data-date": s.date, "data-version": String(s.version) },
      el("td", { class: "nw" }, day(s.date)),
      el("td", {}, vehicleName(s)),
      el("td", { class: "n" }, String(s.version)),
      el("td", { class: "n" }, String(s.fixes)),
      el("td", {}, digest(s.sha256, `o selo de ${day(s.date)}, versão ${s.version}`)),
      el("td", {}, digest(s.previous_sha256, `o selo anterior ao de ${day(s.date)}, versão ${s.version}`)),
      el("td", { class: "nw" }, when(s.sealed_at))))));
}

function sealsQuery() {
  const q = new URLSearchParams();
  for (const f of ["vehicle_id", "from", "to"]) {
    const input = sealsForm.elements[f];
    input.removeAttribute("aria-invalid");
    if (input.value) q.set(f, input.value);
  }
  return q;
}

async function listSeals() {
  const q = sealsQuery();
  const missing = ["vehicle_id", "from", "to"].filter((f) => !q.get(f));
  if (missing.length) {
    for (const f of missing) sealsForm.elements[f].setAttribute("aria-invalid", "true");
    say(sealsStatus, `Preencha: ${missing.map((f) => LABELS[f]).join(", ")}.`, "error");
    return;
  }
  history.replaceState(null, "", `?${q}`);
  say(sealsStatus, "Carregando…", "busy");
  try {
    const data = await api(`/api/v1/seals?${q}`);
    const items = data.items || [];
    sealsResult.replaceChildren(items.length ? sealsTable(items)
      : el("p", { class: "muted" }, "Nenhum selo neste período: os dias ainda não foram fechados, ou o veículo não tinha posições."));
    const days = new Set(items.map((s) => s.date)).size;
    say(sealsStatus, items.length ? `${items.length} ${items.length === 1 ? "selo" : "selos"} de ${days} `
      + `${days === 1 ? "dia" : "dias"}, de ${day(q.get("from"))} a ${day(q.get("to"))}.` : "Nenhum selo encontrado.", "done");
  } catch (err) {
    sealsResult.replaceChildren();
    const name = err instanceof ApiError ? fieldName(err.field) : null;
    if (name && sealsForm.elements[name]) sealsForm.elements[name].setAttribute("aria-invalid", "true");
    say(sealsStatus, `Não foi possível listar os selos. ${sentence(err, LABELS)}`, "error");
  }
}

async function vehicles() {
  try {
    const data = await api("/api/v1/vehicles?limit=500");
    sealsForm.elements.vehicle_id.append(...data.items.map((v) =>
      el("option", { value: String(v.id) }, v.prefix ? `${v.prefix} · ${v.plate}` : v.plate)));
  } catch (err) {
    say(sealsStatus, `Não foi possível carregar os veículos. ${sentence(err)}`, "error");
  }
}

form.addEventListener("submit", (e) => { e.preventDefault(); verify(); });
sealsForm.addEventListener("submit", (e) => { e.preventDefault(); listSeals(); });

// --- start: a link may name the vehicle and period (the history page links here) ---------------------
await vehicles();
const given = new URLSearchParams(location.search);
for (const f of ["vehicle_id", "from", "to"]) if (given.get(f)) sealsForm.elements[f].value = given.get(f).slice(0, 10);
if (!sealsForm.elements.from.value) sealsForm.elements.from.value = localDate(-7);
if (!sealsForm.elements.to.value) sealsForm.elements.to.value = localDate(-1);
if (given.get("vehicle_id")) listSeals();
