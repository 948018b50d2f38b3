// "Importar do SETE" on the Rotas page: simulate first, show what would change, then apply (docs/sete.md).
import { api, el, toast } from "../api.js";
import { sentence } from "./errors.js";
import { openForm } from "./form.js";

const S = "/api/v1/sete/import";
const KINDS = { route: "Rota", vehicle: "Veículo", driver: "Condutor" };
const STATUS = {
  new: "nova", changed: "alterada no SETE", unchanged: "sem mudança", conflict: "conflito (mantida a daqui)",
  linked: "já cadastrada aqui (vinculada)", skipped: "não importada",
};

// Resolves to true when something was applied (the list should reload).
export async function seteImport() {
  let sent = null;
  const report = await openForm({
    title: "Importar do SETE",
    intro: "Traz rotas (com o traçado), veículos, condutores e escolas do SETE do município. Primeiro se faz uma "
      + "simulação: nada muda até você confirmar. Dados de alunos nunca são importados.",
    submitLabel: "Simular importação",
    fields: [
      { name: "ibge", label: "Código IBGE do município", required: true, help: "7 dígitos; Jaru/RO: 1100114." },
      { name: "user", label: "E-mail do usuário no SETE", required: true, autocomplete: "off" },
      { name: "password", label: "Senha do SETE", type: "password", required: true, autocomplete: "off",
        help: "Usada só para este acesso; não é guardada." },
    ],
    onSubmit: async (vals) => {
      sent = { ibge: vals.ibge, user: vals.user, password: vals.password };
      return api(S, { method: "POST", body: { ...sent, dry_run: true } });
    },
  });
  if (!report) return false;
  const apply = await showReport(report, true);
  if (!apply) return false;
  try {
    const done = await api(S, { method: "POST", body: { ...sent, dry_run: false } });
    toast("Importação do SETE aplicada.");
    await showReport(done, false);
    return true;
  } catch (err) {
    toast(sentence(err), "error");
    return false;
  }
}

function showReport(report, dryRun) {
  return new Promise((resolve) => {
    const s = report.summary;
    const line = `${s.new} novos, ${s.changed} alterados, ${s.unchanged} sem mudança, ${s.conflict} conflitos, `
      + `${s.linked} vinculados, ${s.skipped} não importados.`;
    const rows = report.items.map((i) => el("tr", {},
      el("td", {}, KINDS[i.kind] || i.kind), el("td", {}, i.label), el("td", {}, STATUS[i.status] || i.status),
      el("td", {}, details(i))));
    const table = el("table", { class: "data reg-table" },
      el("caption", { class: "sr-only" }, "Itens do SETE"),
      el("thead", {}, el("tr", {}, ["Tipo", "Item", "Resultado", "Detalhes"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows));
    const go = el("button", { type: "button", class: "primary" }, "Aplicar estas mudanças");
    const close = el("button", { type: "button" }, dryRun ? "Cancelar" : "Fechar");
    const dialog = el("dialog", { class: "reg-dialog sete-report", "aria-labelledby": "sete-title" },
      el("h2", { id: "sete-title" }, dryRun ? "Simulação da importação do SETE" : "Importação do SETE aplicada"),
      el("p", { role: "status", "data-testid": "sete-summary" }, line),
      el("div", { class: "table-wrap" }, table),
      el("div", { class: "actions" }, dryRun ? go : null, close));
    let answer = false;
    go.addEventListener("click", () => { answer = true; dialog.close(); });
    close.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => { dialog.remove(); resolve(answer); });
    document.body.append(dialog);
    dialog.showModal();
    (dryRun ? go : close).focus();
  });
}

function details(i) {
  const parts = [];
  if (i.reason) parts.push(i.reason);
  if (i.changed) parts.push(`alterado: ${i.changed.join(", ")}`);
  if (i.conflicts) parts.push(`conflito em: ${i.conflicts.join(", ")}`);
  if (i.local_edits) parts.push(`editado aqui (mantido): ${i.local_edits.join(", ")}`);
  return parts.join("; ");
}
