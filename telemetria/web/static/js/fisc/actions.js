// The process's actions on an occurrence page, as forms: which ones show depends on the occurrence's state and
// the user's role (the API decides in the end: a refusal is shown in the API's words). After each action the
// page reloads the occurrence (`reload`), so what is shown is always what the server now holds.
import { api, el, explain, toast } from "../api.js";
import { number } from "../formats.js";
import { KIND_NAMES, SEVERITY_NAMES } from "./names.js";

// UPFM as the law writes them: whole units unless a fraction is there.
export const upfm = (x) => number(x, Number.isInteger(Number(x)) ? 0 : 2);

const SERVIDOR = ["admin", "monitor"];
const OPEN = ["notified", "defense"];

// What this user may try at this state: the detail's own `actions` when the API lists them, else by the user's
// permissions (review_occurrences: review, notify, close; decide_occurrences: the decision, also for a designated
// servidor; defend_occurrences: the contractor's defence), falling back to the roles of occ-spec.
export function allowed(o, user) {
  if (Array.isArray(o.actions)) return new Set(o.actions);
  const perms = new Set(user.permissions || []);
  const role = user.role;
  const servidor = perms.has("review_occurrences") || SERVIDOR.includes(role);
  const decides = perms.has("decide_occurrences") || user.designated || role === "admin";
  const defends = perms.has("defend_occurrences") || role === "contractor";
  const out = new Set();
  if (o.status === "detected" && servidor) out.add("review");
  if (o.status === "confirmed" && servidor) out.add("notify");
  if (["notified", "defense", "decided", "under_appeal", "closed"].includes(o.status)) {
    out.add("notificacao");
    if (role !== "contractor") out.add("termo"); // the Termo goes to the Secretaria (Art. 34): internal
  }
  if (["confirmed", "detected"].includes(o.status) && servidor) out.add("termo");
  if (OPEN.includes(o.status) && defends && !o.defense_final) out.add("defense");
  if (OPEN.includes(o.status) && decides) out.add("decision");
  const sanctioned = o.penalty && o.penalty !== "none";
  if (o.status === "decided" && sanctioned && !o.appealed_at && !o.final && defends) out.add("appeal");
  if (o.status === "under_appeal" && (decides || user.superior_authority)) out.add("appealDecision"); // Art. 166
  if (o.status === "decided" && servidor && o.final !== false) out.add("close");
  return out;
}

function say(box, text, kind = "") {
  box.textContent = text;
  box.className = `reg-status status ${kind}`.trim();
}

// A form that posts what `body()` builds to `path`, shows the answer's refusal, then `done(answer)`.
function actionForm(title, fields, label, path, body, done, attrs = {}) {
  const msg = el("p", { class: "reg-status status", role: "status", "aria-live": "polite" });
  const button = el("button", { type: "submit", class: attrs.danger ? "danger" : "primary" }, label);
  const form = el("form", { novalidate: true, "aria-label": title, ...attrs.form },
    el("fieldset", {}, el("legend", {}, title), ...fields), el("div", { class: "actions" }, button), msg);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const payload = body(form);
    if (typeof payload === "string") { say(msg, payload, "error"); return; }
    button.disabled = true;
    say(msg, "Enviando…");
    try {
      const answer = await api(path, payload);
      say(msg, "Feito.", "done");
      await done(answer);
    } catch (err) {
      say(msg, explain(err, { reason: "Motivo", text: "Defesa", motivation: "Motivação", penalty: "Penalidade" }), "error");
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

const text = (id, label, name, rows = 3, required = false) => [el("label", { for: id }, label),
  el("textarea", { id, name, rows: String(rows), required })];

const radios = (name, entries, first) => el("div", { class: "radio-row", role: "radiogroup" },
  entries.map(([value, label], i) => el("label", {}, el("input", { type: "radio", name, value, checked: i === first }), label)));

const choice = (id, label, name, entries, none) => [el("label", { for: id }, label),
  el("select", { id, name }, el("option", { value: "" }, none), entries.map(([v, t]) => el("option", { value: v }, t)))];

function review(o, reload) {
  const path = `/api/v1/occurrences/${o.id}/review`;
  return actionForm("Revisar", [
    radios("decision", [["confirm", "Confirmar"], ["dismiss", "Descartar"]], 0),
    ...text("rv-reason", "Motivo (obrigatório para descartar)", "reason"),
    ...choice("rv-kind", "Reclassificar o tipo (opcional)", "kind", Object.entries(KIND_NAMES), "Manter o tipo"),
    ...choice("rv-severity", "Gravidade (opcional; segue o artigo)", "severity", Object.entries(SEVERITY_NAMES), "Manter a do tipo"),
  ], "Registrar revisão", path, (f) => {
    const decision = f.elements.decision.value;
    const reason = f.elements.reason.value.trim();
    if (decision === "dismiss" && !reason) return "Informe o motivo do descarte.";
    const body = { decision, reason };
    if (decision === "confirm" && f.elements.kind.value) body.kind = f.elements.kind.value;
    if (decision === "confirm" && f.elements.severity.value) body.severity = f.elements.severity.value;
    return { method: "POST", body };
  }, reload);
}

function notify(o, reload) {
  return actionForm("Notificar a empresa", [el("p", { class: "hint" },
    "Emite a notificação para defesa prévia e abre o prazo de defesa da empresa contratada (15 dias úteis).")],
  "Notificar", `/api/v1/occurrences/${o.id}/notify`, () => ({ method: "POST", body: {} }), reload);
}

const localDate = (d) => (d ? d.split("-").reverse().join("/") : "—");

function defense(o, reload) {
  const files = el("input", { id: "df-files", name: "files", type: "file", multiple: true });
  const until = (o.deadlines || {}).defense_until;
  const final = el("input", { id: "df-final", name: "final", type: "checkbox" });
  return actionForm("Apresentar defesa", [
    el("p", { class: "hint", id: "df-term" }, `Prazo: até ${localDate(until)} (dias úteis). Até lá, uma nova defesa `
      + "substitui ou completa a anterior; a decisão só sai depois do prazo, ou antes se a defesa for declarada final."),
    ...text("df-text", "Texto da defesa", "text", 6, true),
    el("label", { for: "df-files" }, "Anexos (opcional)"), files,
    el("label", { for: "df-final", class: "check" }, final, " Esta é a minha defesa final (a decisão pode sair antes do prazo)")],
  "Enviar defesa", `/api/v1/occurrences/${o.id}/defense`, (f) => {
    const said = f.elements.text.value.trim();
    if (!said) return "Escreva o texto da defesa.";
    if (!files.files.length) return { method: "POST", body: { text: said, final: final.checked } };
    const form = new FormData();
    form.append("text", said);
    if (final.checked) form.append("final", "true");
    for (const file of files.files) form.append("files", file, file.name);
    return { method: "POST", form };
  }, reload);
}

function appeal(o, reload) {
  const until = (o.deadlines || {}).appeal_until;
  return actionForm("Recorrer da decisão", [
    el("p", { class: "hint", id: "ap-term" }, `Prazo do recurso: até ${localDate(until)} (15 dias úteis, Lei 14.133/2021 `
      + "Art. 166). O recurso suspende a penalidade até o julgamento (Art. 168)."),
    ...text("ap-text", "Razões do recurso", "text", 6, true)],
  "Enviar recurso", `/api/v1/occurrences/${o.id}/appeal`, (f) => {
    const said = f.elements.text.value.trim();
    if (!said) return "Escreva as razões do recurso.";
    return { method: "POST", body: { text: said } };
  }, reload);
}

function appealDecision(o, reload) {
  return actionForm("Julgar o recurso", [
    el("p", { class: "hint" }, "Quem decidiu pode reconsiderar em 5 dias úteis (reformar ou anular); senão a autoridade "
      + "superior julga em 20 dias úteis (Art. 166, parágrafo único)."),
    radios("outcome", [["upheld", "Manter"], ["reformed", "Reformar"], ["annulled", "Anular"]], 0),
    ...choice("ad-penalty", "Nova penalidade (ao reformar)", "penalty",
      [["none", "Sem penalidade"], ["warning", "Advertência"], ["fine", "Multa"], ["warning_and_fine", "Advertência e multa"]],
      "—"),
    ...text("ad-motivation", "Motivação (Art. 42)", "motivation", 5, true)],
  "Registrar julgamento", `/api/v1/occurrences/${o.id}/appeal-decision`, (f) => {
    const motivation = f.elements.motivation.value.trim();
    if (!motivation) return "Escreva a motivação do julgamento.";
    const body = { outcome: f.elements.outcome.value, motivation };
    if (body.outcome === "reformed") {
      if (!f.elements.penalty.value) return "Escolha a nova penalidade.";
      body.penalty = f.elements.penalty.value;
    }
    return { method: "POST", body };
  }, reload);
}

function decision(o, reload) {
  const answer = el("p", { class: "fine-answer", id: "dc-answer", "aria-live": "polite" });
  const form = actionForm("Decidir", [
    el("p", { class: "hint", id: "dc-term" }, o.defense_final ? "A defesa foi declarada final."
      : `A decisão espera o fim do prazo de defesa: ${localDate((o.deadlines || {}).defense_until)}.`),
    el("p", { class: "hint" }, o.fine_allowed === false
      ? "Sem artigo de infração (Art. 36 a 39): só cabe decidir sem penalidade."
      : "Art. 36 e 37: advertência e/ou multa; Art. 38 e 39: advertência e multa."),
    radios("penalty", [["none", "Sem penalidade"], ["warning", "Advertência"], ["fine", "Multa"],
      ["warning_and_fine", "Advertência e multa"]], o.fine_allowed === false ? 0 : 2),
    ...text("dc-motivation", "Motivação (Art. 42)", "motivation", 5, true), answer,
  ], "Registrar decisão", `/api/v1/occurrences/${o.id}/decision`, (f) => {
    const motivation = f.elements.motivation.value.trim();
    if (!motivation) return "Escreva a motivação da decisão.";
    return { method: "POST", body: { penalty: f.elements.penalty.value, motivation } };
  }, async (a) => {
    if (a && a.fine_upfm !== null && a.fine_upfm !== undefined) {
      const line = `Multa: ${upfm(a.fine_upfm)} UPFM = R$ ${number(a.fine_brl, 2)}`;
      toast(line);
      sessionStorage.setItem(`telemetria.fine.${o.id}`, line);
    }
    await reload();
  });
  return form;
}

function close(o, reload) {
  return actionForm("Encerrar", [el("p", { class: "hint" }, "Encerra o processo desta ocorrência.")], "Encerrar",
    `/api/v1/occurrences/${o.id}/close`, () => ({ method: "POST", body: {} }), reload);
}

export function actions(o, user, reload) {
  const may = allowed(o, user);
  const box = el("div", {});
  const fine = sessionStorage.getItem(`telemetria.fine.${o.id}`);
  if (fine) box.append(el("p", { class: "fine-answer", "data-testid": "fine" }, fine));
  if (may.has("termo")) {
    box.append(el("p", {}, el("a", { class: "button-link", href: `/api/v1/occurrences/${o.id}/termo.pdf`, target: "_blank",
      rel: "noopener", id: "oc-termo" }, "Abrir o Termo de Comunicação à Secretaria (PDF)")));
  }
  if (may.has("notificacao")) {
    box.append(el("p", {}, el("a", { class: "button-link", href: `/api/v1/occurrences/${o.id}/notificacao.pdf`,
      target: "_blank", rel: "noopener", id: "oc-notificacao" }, "Abrir a notificação para defesa (PDF)")));
  }
  const makers = { review, notify, defense, decision, appeal, appealDecision, close };
  for (const [name, make] of Object.entries(makers)) if (may.has(name)) box.append(make(o, reload));
  // A servidor who is not designated reaches the decision's stage and finds no form: it is told why, and how.
  if (OPEN.includes(o.status) && !may.has("decision") && user.role === "monitor") {
    box.append(el("p", { class: "notice", "data-testid": "not-designated" }, "A decisão desta ocorrência cabe ao "
      + "servidor designado ou a um administrador (Lei 3.588/2023, Art. 42). Seu usuário não está designado: peça a "
      + "um administrador que o designe na página Usuários."));
  }
  if (!box.childNodes.length) box.append(el("p", { class: "muted" }, "Nenhuma ação sua nesta etapa."));
  return box;
}
