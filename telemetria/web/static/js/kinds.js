// The classification of each kind of occurrence (/fiscalizacao/classificacao, admin): per kind, the duty its
// finding breaches (Art. 9 §1, 15, 26...) and, apart, the infraction a servidor may open from it: an inciso of
// Art. 36 to 39, whose severity follows from the article, or none (a finding for the Secretaria only, never
// fined). Each row saved on its own (PUT /api/v1/occurrence-kinds/{kind}); the API's refusal shown in its words.
import { api, el, explain } from "./api.js";
import { kindName, severityName, when } from "./fisc/names.js";

const status = document.getElementById("k-status");
const result = document.getElementById("k-result");

function say(text, kind = "") {
  status.textContent = text;
  status.className = `reg-status status ${kind}`.trim();
}

function row(k) {
  const duty = el("input", { type: "text", value: k.duty || "", "aria-label": `Dever: ${kindName(k.kind)}`, maxlength: "200" });
  const article = el("input", { type: "text", value: k.article || "", placeholder: "nenhuma (só constatação)",
    "aria-label": `Infração: ${kindName(k.kind)}`, maxlength: "100" });
  const severity = el("td", { "data-field": "severity" }, k.severity ? severityName(k.severity) : "—");
  const fine = el("td", { "data-field": "fine_allowed" }, k.fine_allowed ? "sim" : "não");
  const changed = el("td", {}, k.updated_by ? `${k.updated_by}, ${when(k.updated_at)}` : "padrão da lei");
  const save = el("button", { type: "button" }, "Salvar");
  save.addEventListener("click", async () => {
    if (!duty.value.trim()) { say(`Informe o dever de «${kindName(k.kind)}».`, "error"); duty.focus(); return; }
    save.disabled = true;
    try {
      const saved = await api(`/api/v1/occurrence-kinds/${k.kind}`, { method: "PUT",
        body: { duty: duty.value.trim(), article: article.value.trim() || null } });
      severity.textContent = saved.severity ? severityName(saved.severity) : "—";
      fine.textContent = saved.fine_allowed ? "sim" : "não";
      if (saved && saved.updated_by) changed.textContent = `${saved.updated_by}, ${when(saved.updated_at)}`;
      say(`Classificação de «${kindName(k.kind)}» salva.`, "done");
    } catch (err) {
      say(explain(err, { article: "Infração", duty: "Dever", severity: "Gravidade" }), "error");
    } finally {
      save.disabled = false;
    }
  });
  return el("tr", { "data-kind": k.kind }, el("th", { scope: "row" }, kindName(k.kind)), el("td", {}, duty),
    el("td", {}, article), severity, fine, changed, el("td", {}, save));
}

async function load() {
  try {
    const data = await api("/api/v1/occurrence-kinds");
    const items = Array.isArray(data) ? data : data.items;
    const heads = ["Tipo", "Dever descumprido", "Infração (Art. 36 a 39)", "Gravidade", "Multa possível", "Alterado por", ""];
    result.replaceChildren(el("table", { class: "data kinds-table" },
      el("thead", {}, el("tr", {}, heads.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, items.map(row))));
    say(`${items.length} tipos de ocorrência. Só um inciso dos Art. 36 a 39 pode levar a advertência ou multa.`);
  } catch (err) {
    say(explain(err), "error");
  }
}
load();
