// Users (admins only): list, create with a role, change role or name, activate/deactivate, reset password, and
// grant or revoke the designation of a servidor (Lei 3.588/2023 Art. 42: the designated servidor decides the
// occurrences; administrators decide as well) and the superior authority (Lei 14.133/2021 Art. 166: judges appeals). Every change is in the audit log with its old and new value.
import { api, config, el, toast } from "../api.js";
import { ROLES, badge, editWith, lookups, name, when } from "./common.js";
import { refusal, sentence } from "./errors.js";
import { confirmBox, openForm } from "./form.js";
import { listView } from "./table.js";

const U = "/api/v1/users";
const PASSWORD_HELP = "Pelo menos 10 caracteres, sem conter o nome de usuário.";

function passwordFields() {
  return [
    { name: "password", label: "Senha", type: "password", required: true, autocomplete: "new-password", help: PASSWORD_HELP },
    { name: "password2", label: "Repita a senha", type: "password", required: true, autocomplete: "new-password" },
  ];
}

function samePasswords(vals) {
  if (vals.password !== vals.password2) throw refusal("password2", "As duas senhas não são iguais.");
}

function roleFields() {
  return [
    { name: "role", label: "Perfil", type: "select", required: true, options: ROLES, empty: "Escolha…",
      help: "Administrador: tudo, inclusive decidir ocorrências. Servidor: lê tudo, edita o cadastro e acompanha as "
        + "ocorrências; decide só se for designado. Controle externo: lê tudo e a auditoria. Empresa contratada: só a "
        + "própria frota." },
    { name: "contractor_id", label: "Empresa", type: "select", required: true, numeric: true, options: lookups.contractors,
      empty: "Escolha…", showIf: (v) => v.role === "contractor" },
    { name: "designated", label: "Servidor designado: decide as ocorrências (Art. 42)", type: "checkbox",
      showIf: (v) => v.role === "monitor" },
    { name: "superior_authority", label: "Autoridade superior: julga os recursos (Lei 14.133/2021, Art. 166)",
      type: "checkbox", showIf: (v) => v.role === "monitor" },
  ];
}

// Grant or revoke the designation, after a question that says what it means.
async function setDesignated(u) {
  const grant = !u.designated;
  const question = grant
    ? `Designar ${u.username} como servidor designado? Ele passa a decidir as ocorrências (aplicar ou afastar `
      + "penalidades, Lei 3.588/2023 Art. 42). A designação fica registrada na auditoria."
    : `Revogar a designação de ${u.username}? Ele deixa de decidir as ocorrências; o que já decidiu continua valendo.`;
  if (!(await confirmBox(question, grant ? "Designar" : "Revogar designação"))) return false;
  try {
    await api(`${U}/${u.id}`, { method: "PATCH", body: { designated: grant } });
    toast(grant ? `${u.username} agora é servidor designado.` : `Designação de ${u.username} revogada.`);
    return true;
  } catch (err) {
    toast(sentence(err, { designated: "Designação" }), "error");
    return false;
  }
}

// Grant or revoke the superior authority (Lei 14.133/2021 Art. 166, sole paragraph): who judges an appeal the
// decider did not reconsider. Administrators are by default; a servidor may be flagged here (audited, old → new).
async function setSuperior(u) {
  const grant = !u.superior_authority;
  const question = grant
    ? `Tornar ${u.username} autoridade superior? Ele passa a julgar os recursos das contratadas (manter, reformar `
      + "ou anular a decisão, Lei 14.133/2021 Art. 166), exceto das decisões que ele mesmo tomou. Fica registrado na "
      + "auditoria."
    : `Revogar a autoridade superior de ${u.username}? Ele deixa de julgar recursos; o que já julgou continua valendo.`;
  if (!(await confirmBox(question, grant ? "Tornar autoridade superior" : "Revogar autoridade superior"))) return false;
  try {
    await api(`${U}/${u.id}`, { method: "PATCH", body: { superior_authority: grant } });
    toast(grant ? `${u.username} agora é autoridade superior.` : `Autoridade superior de ${u.username} revogada.`);
    return true;
  } catch (err) {
    toast(sentence(err, { superior_authority: "Autoridade superior" }), "error");
    return false;
  }
}

function superior(u) {
  if (u.role === "admin") return "julga como administrador";
  if (u.role !== "monitor") return "—";
  return u.superior_authority ? badge("Autoridade superior: julga recursos", "ok") : "não";
}

function designation(u) {
  if (u.role === "admin") return "decide como administrador";
  if (u.role !== "monitor") return "—";
  return u.designated ? badge("Designado: decide ocorrências", "ok") : "não designado";
}

function newUser() {
  return openForm({
    title: "Novo usuário",
    submitLabel: "Criar usuário",
    fields: [
      { name: "username", label: "Nome de usuário", required: true, autocomplete: "off",
        help: "Para entrar no sistema: letras minúsculas, dígitos e . _ @ -, por exemplo maria.souza." },
      { name: "full_name", label: "Nome completo", wide: true },
      ...roleFields(),
      ...passwordFields(),
    ],
    onSubmit: async (vals) => {
      samePasswords(vals);
      const body = { username: vals.username, password: vals.password, role: vals.role,
        full_name: vals.full_name, ...(vals.role === "contractor" ? { contractor_id: vals.contractor_id } : {}),
        ...(vals.role === "monitor" ? { designated: Boolean(vals.designated),
          superior_authority: Boolean(vals.superior_authority) } : {}) };
      const row = await api(U, { method: "POST", body });
      toast(`Usuário ${row.username} criado.`);
      return row;
    },
  });
}

function resetPassword(u) {
  return openForm({
    title: `Redefinir a senha de ${u.username}`,
    intro: "As sessões abertas desse usuário serão encerradas; um bloqueio por tentativas erradas é desfeito.",
    submitLabel: "Redefinir senha",
    fields: passwordFields(),
    onSubmit: async (vals) => {
      samePasswords(vals);
      const row = await api(`${U}/${u.id}`, { method: "PATCH", body: { password: vals.password } });
      toast(`Senha de ${u.username} redefinida.`);
      return row;
    },
  });
}

async function setActive(u) {
  if (u.active && !(await confirmBox(`Desativar o usuário ${u.username}? Ele sai do sistema na hora e não `
    + "consegue mais entrar até ser ativado de novo.", "Desativar"))) return false;
  try {
    await api(`${U}/${u.id}`, { method: "PATCH", body: { active: !u.active } });
    toast(u.active ? `Usuário ${u.username} desativado.` : `Usuário ${u.username} ativado.`);
    return true;
  } catch (err) {
    toast(sentence(err, { role: "Perfil", active: "Situação" }), "error");
    return false;
  }
}

function situation(u) {
  if (!u.active) return badge("Inativo", "bad");
  if (u.locked_until && new Date(u.locked_until) > new Date()) return badge(`Bloqueado até ${when(u.locked_until)}`, "warn");
  return badge("Ativo", "ok");
}

export async function users(root) {
  let companies = new Map();
  try {
    companies = new Map(await lookups.contractors());
  } catch { /* the list still works; the company column shows its id */ }
  listView(root, {
    endpoint: U,
    columns: [
      { label: "Usuário", value: (u) => el("strong", {}, u.username) },
      { label: "Nome completo", value: (u) => u.full_name },
      { label: "Perfil", value: (u) => name(ROLES, u.role) },
      { label: "Empresa", value: (u) => (u.contractor_id ? companies.get(u.contractor_id) || `nº ${u.contractor_id}` : null) },
      { label: "Situação", value: situation },
      { label: "Designação (Art. 42)", value: designation },
      { label: "Recursos (Art. 166)", value: superior },
      { label: "Último acesso", value: (u) => (u.last_login_at ? when(u.last_login_at) : "nunca") },
    ],
    empty: "Nenhum usuário.",
    newLabel: "Novo usuário",
    onNew: newUser,
    actions: (u) => [
      { label: "Editar", name: u.username, run: () => editWith({
        title: `Editar usuário ${u.username}`, endpoint: `${U}/${u.id}`, row: u,
        fields: [{ name: "full_name", label: "Nome completo", wide: true }, ...roleFields()],
      }) },
      { label: "Redefinir senha", name: u.username, run: () => resetPassword(u) },
      ...(u.role === "monitor" && u.active ? [
        { label: u.designated ? "Revogar designação" : "Designar", name: u.username, run: () => setDesignated(u) },
        { label: u.superior_authority ? "Revogar autoridade superior" : "Tornar autoridade superior", name: u.username,
          run: () => setSuperior(u) },
      ] : []),
      ...(u.username === config.user.username ? [] : [
        { label: u.active ? "Desativar" : "Ativar", name: u.username, cls: u.active ? "danger" : "", run: () => setActive(u) },
      ]),
    ],
  });
}
