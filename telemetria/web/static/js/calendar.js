// The school calendar page (/calendario-escolar): one school year as a calendar, month by month — school days,
// national holidays (computed by the server), days marked without school (with the reason) and extra school
// days. Who may write the registry clicks a day to mark or unmark it, then saves the whole year (PUT).
import { ApiError, api, config, el, localDate, toast } from "./api.js";
import { MONTHS, WEEK_HEAD, dmy, isoWeekday, longDate, monthDays, monthsBetween } from "./contracts/days.js";
import { when } from "./registry/common.js";
import { problems, sentence } from "./registry/errors.js";
import { confirmBox } from "./registry/form.js";

const canWrite = ((config.user || {}).permissions || []).includes("write_registry");
const yearForm = document.getElementById("cal-year");
const yearInput = document.getElementById("cal-year-input");
const status = document.getElementById("cal-status");
const body = document.getElementById("cal-body");

// What a day is, by the same rule as telemetria/contracts/calendar.py (the server's answer decides once saved).
export const KINDS = {
  letivo: ["L", "Dia letivo"],
  extra: ["E", "Dia letivo extra"],
  sem_aula: ["S", "Sem aula (marcado)"],
  feriado: ["F", "Feriado nacional"],
  ponto_facultativo: ["P", "Ponto facultativo"],
  fim_de_semana: ["", "Sábado ou domingo"],
  fora: ["", "Fora do ano letivo"],
};

let year = null; // { year, start, end, updated_at, updated_by, holidays: Map, saved: {...} }
let marks = null; // { off: Map(date → reason), extra: Map(date → reason) }: what the page will PUT
let invalid = new Set(); // dates the server refused

function kindOf(d) {
  if (d < year.start || d > year.end) return "fora";
  if (marks.extra.has(d)) return "extra";
  if (marks.off.has(d)) return "sem_aula";
  const h = year.holidays.get(d);
  if (isoWeekday(d) > 5) return "fim_de_semana";
  if (h) return h.kind === "feriado" ? "feriado" : "ponto_facultativo";
  return "letivo";
}

function reasonOf(d, kind) {
  if (kind === "sem_aula") return marks.off.get(d);
  if (kind === "extra") return marks.extra.get(d) || "";
  const h = year.holidays.get(d);
  return h ? h.name : "";
}

function pending() {
  const now = JSON.stringify(payload());
  return now !== year.saved;
}

function payload() {
  const list = (m) => [...m].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, reason]) => ({ date, reason: reason || null }));
  // a day without school in some shifts only keeps its shifts (the page marks whole days; shifts come by the API)
  const off = list(marks.off).map((m) => (marks.shifts.has(m.date) ? { ...m, shifts: marks.shifts.get(m.date) } : m));
  const changes = [...marks.changes.values()].sort((a, b) => (`${a.date}${a.shift}` < `${b.date}${b.shift}` ? -1 : 1));
  return { start: year.start, end: year.end, no_school_days: off, extra_school_days: list(marks.extra),
    schedule_changes: changes };
}

const SHIFTS = [["manha", "Manhã"], ["tarde", "Tarde"], ["noite", "Noite"]];
const CHANGE_KINDS = [["saida_antecipada", "Saída antecipada"], ["entrada_atrasada", "Entrada atrasada"]];
const nameOf = (pairs, k) => (pairs.find(([v]) => v === k) || [k, k])[1];

function changeText(c) {
  const how = c.kind === "entrada_atrasada" ? "corridas de antes passam a" : "corridas de depois passam a";
  return `${nameOf(CHANGE_KINDS, c.kind)} (${nameOf(SHIFTS, c.shift).toLowerCase()}): ${how} ${c.runs_due_from} — ${c.reason}`;
}

function load(answer) {
  year = { year: answer.year, start: answer.start, end: answer.end, updated_at: answer.updated_at,
    updated_by: answer.updated_by, count: answer.school_days_count,
    holidays: new Map(answer.holidays.map((h) => [h.date, h])) };
  marks = { off: new Map(answer.no_school_days.map((m) => [m.date, m.reason])),
    shifts: new Map(answer.no_school_days.filter((m) => m.shifts).map((m) => [m.date, m.shifts])),
    extra: new Map(answer.extra_school_days.map((m) => [m.date, m.reason])),
    changes: new Map((answer.schedule_changes || []).map((c) => [`${c.date}|${c.shift}`,
      { date: c.date, shift: c.shift, runs_due_from: c.runs_due_from, reason: c.reason, kind: c.kind || "saida_antecipada" }])) };
  year.saved = JSON.stringify(payload());
  invalid = new Set();
}

// --- a day's dialog: mark, change the reason, or unmark ---------------------------------------------------
function dayDialog(d, kind) {
  const id = `day-${d}`;
  const reasonInput = el("input", { id: `${id}-reason`, type: "text", maxlength: "500", autocomplete: "off",
    "aria-describedby": `${id}-err` });
  const error = el("p", { class: "field-error", id: `${id}-err`, hidden: true });
  const buttons = [];
  const dialog = el("dialog", { class: "reg-dialog narrow", "aria-labelledby": `${id}-t` });
  const close = () => { dialog.close(); dialog.remove(); draw(); };
  const need = (fn) => () => {
    const reason = reasonInput.value.trim();
    if (!reason) {
      error.textContent = "Diga por que não há aula nesse dia.";
      error.hidden = false;
      reasonInput.setAttribute("aria-invalid", "true");
      reasonInput.setAttribute("aria-errormessage", error.id);
      reasonInput.focus();
      return;
    }
    fn(reason);
    close();
  };
  let intro;
  let changeBox = null;
  if (kind === "letivo" || kind === "extra") {
    // a schedule change: the day's runs of a shift due from another time (saída antecipada or entrada atrasada)
    const shift = el("select", { id: `${id}-shift` }, SHIFTS.map(([v, l]) => el("option", { value: v }, l)));
    const ck = el("select", { id: `${id}-ckind` }, CHANGE_KINDS.map(([v, l]) => el("option", { value: v }, l)));
    const at = el("input", { id: `${id}-at`, type: "time" });
    const listed = [...marks.changes.values()].filter((c) => c.date === d);
    changeBox = el("fieldset", { class: "cal-change" }, el("legend", {}, "Horário alterado neste dia"),
      listed.length ? el("ul", {}, listed.map((c) => el("li", { "data-shift": c.shift }, changeText(c), " ",
        el("button", { type: "button", class: "small",
          onclick: () => { marks.changes.delete(`${d}|${c.shift}`); close(); } }, "Remover")))) : null,
      el("p", { class: "hint" }, "Saída antecipada: as corridas do turno previstas depois da hora passam a ela. "
        + "Entrada atrasada: as previstas antes da hora passam a ela; a volta mantém o horário."),
      el("div", { class: "field" }, el("label", { for: shift.id }, "Turno"), shift),
      el("div", { class: "field" }, el("label", { for: ck.id }, "O que houve"), ck),
      el("div", { class: "field" }, el("label", { for: at.id }, "Corridas a partir de"), at),
      el("button", { type: "button", onclick: () => {
        if (!at.value) { at.setAttribute("aria-invalid", "true"); at.focus(); return; }
        need((r) => marks.changes.set(`${d}|${shift.value}`,
          { date: d, shift: shift.value, runs_due_from: at.value, reason: r, kind: ck.value }))();
      } }, "Registrar horário alterado (com o motivo acima)"));
  }
  if (kind === "letivo") {
    intro = `${d === localDate() ? "Hoje é" : "Este é"} um dia letivo. Marque-o sem aula dizendo o motivo (feriado municipal, recesso, chuva que fechou as estradas…).`;
    buttons.push(el("button", { type: "button", class: "primary", onclick: need((r) => marks.off.set(d, r)) }, "Marcar sem aula"));
  } else if (kind === "sem_aula") {
    intro = "Dia marcado sem aula.";
    reasonInput.value = marks.off.get(d) || "";
    buttons.push(el("button", { type: "button", class: "primary", onclick: need((r) => marks.off.set(d, r)) }, "Salvar motivo"),
      el("button", { type: "button", onclick: () => { marks.off.delete(d); close(); } }, "Desmarcar (volta a ser letivo)"));
  } else if (kind === "extra") {
    intro = "Dia letivo extra (reposição).";
    reasonInput.value = marks.extra.get(d) || "";
    buttons.push(el("button", { type: "button", class: "primary",
      onclick: () => { marks.extra.set(d, reasonInput.value.trim()); close(); } }, "Salvar motivo"),
    el("button", { type: "button", onclick: () => { marks.extra.delete(d); close(); } }, "Desmarcar dia letivo extra"));
  } else {
    const h = year.holidays.get(d);
    intro = `${h ? `${h.name}: ` : ""}não há aula neste dia. Marque-o como dia letivo extra se houver aula (uma reposição).`;
    buttons.push(el("button", { type: "button", class: "primary",
      onclick: () => { marks.extra.set(d, reasonInput.value.trim()); close(); } }, "Marcar como dia letivo extra"));
  }
  buttons.push(el("button", { type: "button", onclick: () => { dialog.close(); dialog.remove(); } }, "Cancelar"));
  const label = kind === "letivo" || kind === "sem_aula" ? "Motivo (obrigatório)" : "Motivo (opcional)";
  dialog.append(el("h2", { id: `${id}-t` }, longDate(d)), el("p", {}, intro),
    el("div", { class: "field" }, el("label", { for: reasonInput.id }, label), reasonInput, error),
    el("div", { class: "actions" }, buttons), changeBox);
  reasonInput.addEventListener("input", () => { error.hidden = true; reasonInput.removeAttribute("aria-invalid"); });
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  reasonInput.focus();
}

// --- drawing --------------------------------------------------------------------------------------------
function cell(d) {
  const kind = kindOf(d);
  const [letter, name] = KINDS[kind];
  const reason = reasonOf(d, kind);
  const label = `${longDate(d)}: ${name}${reason ? ` — ${reason}` : ""}`;
  const content = [el("span", { class: "cal-n" }, String(Number(d.slice(8, 10)))),
    el("span", { class: "cal-k", "aria-hidden": "true" }, letter)];
  const cls = `cal-day k-${kind}${invalid.has(d) ? " invalid" : ""}`;
  const clickable = canWrite && kind !== "fora" && kind !== "feriado";
  return el("td", { class: cls, "data-date": d, "data-kind": kind },
    clickable ? el("button", { type: "button", title: label, "aria-label": label, onclick: () => dayDialog(d, kind) }, content)
      : el("span", { class: "cal-static", title: label, "aria-label": label, role: "img" }, content));
}

const NOTED = ["sem_aula", "extra", "feriado", "ponto_facultativo"];

function month(y, m) {
  const days = monthDays(y, m);
  const rows = [];
  let week = Array.from({ length: isoWeekday(days[0]) - 1 }, () => el("td", { class: "cal-pad" }));
  for (const d of days) {
    week.push(cell(d));
    if (week.length === 7) { rows.push(el("tr", {}, week)); week = []; }
  }
  if (week.length) rows.push(el("tr", {}, week, Array.from({ length: 7 - week.length }, () => el("td", { class: "cal-pad" }))));
  const notes = days.map((d) => [d, kindOf(d)]).filter(([, k]) => NOTED.includes(k))
    .map(([d, k]) => el("li", { "data-date": d }, el("strong", {}, `${d.slice(8, 10)}/${d.slice(5, 7)}`), ` ${KINDS[k][1]}`,
      reasonOf(d, k) ? `: ${reasonOf(d, k)}` : ""));
  for (const c of [...marks.changes.values()].filter((x) => x.date.startsWith(`${y}-${String(m).padStart(2, "0")}`))) {
    notes.push(el("li", { "data-date": c.date, "data-change": c.kind },
      el("strong", {}, `${c.date.slice(8, 10)}/${c.date.slice(5, 7)}`), ` ${changeText(c)}`));
  }
  const schoolDays = days.filter((d) => ["letivo", "extra"].includes(kindOf(d))).length;
  const title = `${MONTHS[m - 1]} de ${y}`;
  return el("section", { class: "cal-month", "aria-label": title, "data-month": `${y}-${String(m).padStart(2, "0")}` },
    el("h3", {}, title.charAt(0).toUpperCase() + title.slice(1), el("span", { class: "muted" }, ` · ${schoolDays} dias letivos`)),
    el("table", { class: "cal-grid" },
      el("thead", {}, el("tr", {}, WEEK_HEAD.map(([s, l]) => el("th", { scope: "col", abbr: l }, s)))),
      el("tbody", {}, rows)),
    notes.length ? el("ul", { class: "cal-notes" }, notes) : null);
}

function legend() {
  return el("ul", { class: "cal-legend", "aria-label": "Legenda" }, Object.entries(KINDS).map(([k, [letter, name]]) =>
    el("li", {}, el("span", { class: `cal-swatch k-${k}`, "aria-hidden": "true" }, letter), name)));
}

const alertBox = el("div", { class: "form-alert", role: "alert", hidden: true });

function draw() {
  const dates = monthsBetween(year.start, year.end).flatMap(([y, m]) => monthDays(y, m)).filter((d) => d >= year.start && d <= year.end);
  const count = dates.filter((d) => ["letivo", "extra"].includes(kindOf(d))).length;
  const changed = pending();
  const start = el("input", { id: "cal-start", type: "date", value: year.start, disabled: !canWrite,
    "aria-describedby": "cal-start-err" });
  const end = el("input", { id: "cal-end", type: "date", value: year.end, disabled: !canWrite,
    "aria-describedby": "cal-end-err" });
  start.addEventListener("change", () => { if (start.value) { year.start = start.value; draw(); } });
  end.addEventListener("change", () => { if (end.value) { year.end = end.value; draw(); } });
  const save = el("button", { type: "button", class: "primary", disabled: !changed, onclick: () => saveYear(save) },
    "Salvar calendário");
  const undo = el("button", { type: "button", disabled: !changed, onclick: () => { reopen(); } }, "Descartar alterações");
  body.replaceChildren(el("div", {},
    el("div", { class: "filters cal-bounds" },
      el("div", { "data-field": "start" }, el("label", { for: "cal-start" }, "Início do ano letivo"), start,
        el("p", { class: "field-error", id: "cal-start-err", hidden: true })),
      el("div", { "data-field": "end" }, el("label", { for: "cal-end" }, "Fim do ano letivo"), end,
        el("p", { class: "field-error", id: "cal-end-err", hidden: true }))),
    el("dl", { class: "figures" },
      el("div", {}, el("dt", {}, "Dias letivos"), el("dd", { id: "cal-count" }, String(count))),
      el("div", {}, el("dt", {}, "Dias sem aula marcados"), el("dd", {}, String(marks.off.size))),
      el("div", {}, el("dt", {}, "Dias letivos extras"), el("dd", {}, String(marks.extra.size))),
      el("div", {}, el("dt", {}, "Salvo em"), el("dd", {}, year.updated_at ? `${when(year.updated_at)} por ${year.updated_by}` : "—"))),
    canWrite ? el("div", { class: "actions cal-actions" }, save, undo,
      el("span", { class: changed ? "warn-text" : "muted", id: "cal-pending" },
        changed ? "Há alterações não salvas." : "Tudo salvo.")) : null,
    alertBox,
    canWrite ? el("p", { class: "hint" }, "Clique num dia para marcá-lo sem aula (com o motivo) ou como dia letivo extra; "
      + "depois clique em «Salvar calendário».") : null,
    legend(),
    el("div", { class: "cal-months" }, monthsBetween(year.start, year.end).map(([y, m]) => month(y, m)))));
}

function fieldError(name, message) {
  const box = body.querySelector(`[data-field="${name}"]`);
  if (!box) return false;
  const err = box.querySelector(".field-error");
  err.textContent = message;
  err.hidden = false;
  const input = box.querySelector("input");
  input.setAttribute("aria-invalid", "true");
  input.setAttribute("aria-errormessage", err.id);
  return true;
}

// The server names a mark by its place in the list sent ("no_school_days[2].date"): find its date.
function markDate(sent, p) {
  const list = sent[p.root];
  return Array.isArray(list) && p.index !== null && list[p.index] ? list[p.index].date : null;
}

async function saveYear(button) {
  const sent = payload();
  button.disabled = true;
  alertBox.hidden = true;
  try {
    const answer = await api(`/api/v1/school-years/${year.year}`, { method: "PUT", body: sent });
    load(answer);
    draw();
    toast("Calendário salvo.");
    status.textContent = `Calendário de ${year.year} salvo: ${answer.school_days_count} dias letivos.`;
  } catch (err) {
    button.disabled = false;
    if (!(err instanceof ApiError)) { alertBox.textContent = sentence(err); alertBox.hidden = false; return; }
    const found = problems(err);
    invalid = new Set(found.map((p) => markDate(sent, p.path)).filter(Boolean));
    draw();
    const lines = [];
    for (const p of found) {
      if (p.path.name === "start" || p.path.name === "end") { fieldError(p.path.name, p.message); continue; }
      const d = markDate(sent, p.path);
      lines.push(d ? `${dmy(d)}: ${p.message}` : p.message);
    }
    if (lines.length || !found.length) {
      alertBox.textContent = lines.length ? `Não foi salvo. ${lines.join(" ")}` : sentence(err);
      alertBox.hidden = false;
    }
  }
}

// --- a year that was never saved ------------------------------------------------------------------------
function newYear(y) {
  if (!canWrite) {
    body.replaceChildren(el("p", {}, `O ano letivo de ${y} ainda não foi cadastrado pela Secretaria.`));
    return;
  }
  const start = el("input", { id: "cal-start", type: "date", min: `${y}-01-01`, max: `${y}-12-31`, "aria-describedby": "cal-start-err" });
  const end = el("input", { id: "cal-end", type: "date", min: `${y}-01-01`, max: `${y}-12-31`, "aria-describedby": "cal-end-err" });
  const form = el("form", { class: "filters", novalidate: true, "aria-label": `Cadastrar o ano letivo de ${y}` },
    el("div", { "data-field": "start" }, el("label", { for: "cal-start" }, "Início do ano letivo"), start,
      el("p", { class: "field-error", id: "cal-start-err", hidden: true })),
    el("div", { "data-field": "end" }, el("label", { for: "cal-end" }, "Fim do ano letivo"), end,
      el("p", { class: "field-error", id: "cal-end-err", hidden: true })),
    el("div", {}, el("button", { type: "submit", class: "primary" }, "Cadastrar ano letivo")));
  body.replaceChildren(el("p", {}, `O ano letivo de ${y} ainda não foi cadastrado. Diga o primeiro e o último dia de aula; `
    + "depois marque no calendário os dias sem aula."), alertBox, form);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    for (const b of form.querySelectorAll(".field-error")) b.hidden = true;
    for (const i of form.querySelectorAll("input")) i.removeAttribute("aria-invalid");
    if (!start.value) { fieldError("start", "Campo obrigatório."); return; }
    if (!end.value) { fieldError("end", "Campo obrigatório."); return; }
    try {
      load(await api(`/api/v1/school-years/${y}`, { method: "PUT",
        body: { start: start.value, end: end.value, no_school_days: [], extra_school_days: [] } }));
      toast(`Ano letivo de ${y} cadastrado.`);
      draw();
    } catch (err) {
      const placed = problems(err).filter((p) => fieldError(p.path.name, p.message)).length;
      if (!placed) { alertBox.textContent = sentence(err); alertBox.hidden = false; }
    }
  });
}

async function open(y) {
  if (year && marks && pending() && !(await confirmBox("Há alterações não salvas neste ano. Descartá-las?", "Descartar"))) {
    return;
  }
  status.textContent = "Carregando…";
  status.className = "reg-status muted";
  body.replaceChildren();
  history.replaceState(null, "", `${location.pathname}?ano=${y}`);
  year = marks = null;
  try {
    load(await api(`/api/v1/school-years/${y}`));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      status.textContent = `Ano letivo de ${y} não cadastrado.`;
      newYear(y);
      return;
    }
    status.textContent = `Não foi possível carregar o calendário. ${sentence(err)}`;
    status.className = "reg-status error-text";
    return;
  }
  status.textContent = `Ano letivo de ${y}: ${year.count} dias letivos.`;
  draw();
}

function reopen() {
  year.saved = JSON.stringify(payload()); // not pending: open() then reads the stored year again
  open(year.year);
}

yearForm.addEventListener("submit", (e) => {
  e.preventDefault();
  const y = Number(yearInput.value);
  if (Number.isInteger(y) && y >= 2000 && y <= 2100) open(y);
  else status.textContent = "Escolha um ano de 2000 a 2100.";
});
window.addEventListener("beforeunload", (e) => { if (year && marks && pending()) e.preventDefault(); });

const asked = Number(new URLSearchParams(location.search).get("ano"));
yearInput.value = String(asked >= 2000 && asked <= 2100 ? asked : Number(localDate().slice(0, 4)));
open(Number(yearInput.value));
