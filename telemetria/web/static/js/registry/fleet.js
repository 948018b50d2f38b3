// Vehicles, contracted companies, drivers and trackers: the simple "list + form" pages.
import { api, config, el, toast } from "../api.js";
import { VEHICLE_KINDS, badge, cnpj, cpf, createWith, editWith, lookups, name, when } from "./common.js";
import { sentence } from "./errors.js";
import { confirmBox, openForm } from "./form.js";
import { activeBadge, listView } from "./table.js";

const V = "/api/v1/vehicles";

function vehicleFields() {
  return [
    { name: "plate", label: "Placa", required: true, help: "ABC1234 ou ABC1D23, com ou sem hífen.", placeholder: "ABC1D23" },
    { name: "prefix", label: "Prefixo (número de frota)" },
    { name: "kind", label: "Tipo", type: "select", options: VEHICLE_KINDS },
    { name: "contractor_id", label: "Empresa contratada", type: "select", numeric: true, options: lookups.contractors,
      empty: "— da prefeitura (frota própria) —" },
    { name: "capacity", label: "Lotação (passageiros sentados)", type: "number", min: 1, max: 200, step: 1 },
    { name: "manufacture_year", label: "Ano de fabricação", type: "number", min: 1950, max: 2100, step: 1 },
    { name: "speed_limit_kmh", label: "Limite de velocidade do veículo (km/h)", type: "number", min: 1, max: 150,
      step: "any", help: "Vale fora das rotas e zonas de velocidade. Vazio: o limite padrão." },
    { name: "description", label: "Descrição", wide: true },
    { name: "active", label: "Ativo", type: "checkbox", default: true },
  ];
}

export function vehicles(root) {
  listView(root, {
    endpoint: V,
    search: { param: "plate", label: "Buscar por placa", help: "A placa inteira, por exemplo ABC1D23." },
    columns: [
      { label: "Placa", value: (v) => el("strong", {}, v.plate) },
      { label: "Prefixo", value: (v) => v.prefix },
      { label: "Tipo", value: (v) => v.kind && name(VEHICLE_KINDS, v.kind) },
      { label: "Empresa", value: (v) => v.contractor },
      { label: "Lotação", value: (v) => v.capacity, cls: "n" },
      { label: "Rastreador", value: (v) => v.tracker },
      { label: "Condutor", value: (v) => v.driver },
      { label: "Última posição", value: (v) => (v.last_fix_at ? when(v.last_fix_at) : "nunca") },
      { label: "Situação", value: (v) => activeBadge(v.active) },
    ],
    empty: "Nenhum veículo cadastrado.",
    newLabel: "Novo veículo",
    onNew: async () => {
      const row = await createWith({ title: "Novo veículo", endpoint: V, fields: vehicleFields(), done: "Veículo cadastrado." });
      if (row) lookups.forget(V);
      return row;
    },
    actions: (v) => [{ label: "Editar", name: v.plate, run: () =>
      editWith({ title: `Editar veículo ${v.plate}`, endpoint: `${V}/${v.id}`, fields: vehicleFields(), row: v,
        dated: ["speed_limit_kmh"] }) }],
  });
}

const C = "/api/v1/contractors";

function contractorFields() {
  return [
    { name: "name", label: "Razão social", required: true, wide: true },
    { name: "cnpj", label: "CNPJ", required: true, help: "14 caracteres, com ou sem pontuação.", inputmode: "text" },
    { name: "contract_number", label: "Número do contrato" },
    { name: "active", label: "Ativa", type: "checkbox", default: true },
  ];
}

export function contractors(root) {
  listView(root, {
    endpoint: C,
    search: { param: "search", label: "Buscar por nome ou CNPJ", help: "Parte do nome, ou o CNPJ só com os dígitos." },
    columns: [
      { label: "Razão social", value: (c) => el("strong", {}, c.name) },
      { label: "CNPJ", value: (c) => cnpj(c.cnpj) },
      { label: "Contrato", value: (c) => c.contract_number },
      { label: "Veículos", value: (c) => c.vehicles, cls: "n" },
      { label: "Situação", value: (c) => badge(c.active ? "Ativa" : "Inativa", c.active ? "ok" : "bad") },
    ],
    empty: "Nenhuma empresa cadastrada.",
    newLabel: "Nova empresa",
    onNew: async () => {
      const row = await createWith({ title: "Nova empresa contratada", endpoint: C, fields: contractorFields(),
        done: "Empresa cadastrada." });
      if (row) lookups.forget(C);
      return row;
    },
    actions: (c) => [{ label: "Editar", name: c.name, run: () =>
      editWith({ title: `Editar empresa ${c.name}`, endpoint: `${C}/${c.id}`, fields: contractorFields(), row: c }) }],
  });
}

const D = "/api/v1/drivers";
const CNH = [["D", "D"], ["E", "E"], ["AD", "AD"], ["AE", "AE"]];

function driverFields() {
  return [
    { name: "name", label: "Nome completo", required: true, wide: true },
    { name: "cpf", label: "CPF", required: true, help: "11 dígitos, com ou sem pontuação.", inputmode: "numeric" },
    { name: "cnh_category", label: "Categoria da CNH", type: "select", required: true, options: CNH, empty: "Escolha…",
      help: "Transporte escolar exige D ou E (CTB Art. 138 II)." },
    { name: "card_id", label: "Código do cartão (RFID/iButton)", help: "O código que o rastreador envia ao identificar o condutor." },
    { name: "contractor_id", label: "Empresa contratada", type: "select", numeric: true, options: lookups.contractors,
      empty: "— da prefeitura —" },
    { name: "active", label: "Ativo", type: "checkbox", default: true },
  ];
}

export function drivers(root) {
  const personal = config.user.permissions.includes("read_personal");
  listView(root, {
    endpoint: D,
    columns: [
      { label: "Nome", value: (d) => el("strong", {}, d.name) },
      { label: "CPF", value: (d) => (personal && d.cpf ? cpf(d.cpf) : d.cpf_masked) },
      { label: "CNH", value: (d) => d.cnh_category },
      { label: "Cartão", value: (d) => d.card_id },
      { label: "Empresa", value: (d) => d.contractor },
      { label: "Veículo agora", value: (d) => d.vehicle },
      { label: "Situação", value: (d) => activeBadge(d.active) },
    ],
    empty: "Nenhum condutor cadastrado.",
    newLabel: "Novo condutor",
    onNew: async () => {
      const row = await createWith({ title: "Novo condutor", endpoint: D, fields: driverFields(), done: "Condutor cadastrado." });
      if (row) lookups.forget(D);
      return row;
    },
    actions: (d) => [{ label: "Editar", name: d.name, run: () =>
      editWith({ title: `Editar condutor ${d.name}`, endpoint: `${D}/${d.id}`, row: { ...d, cpf: cpf(d.cpf) },
        fields: driverFields().filter((f) => personal || f.name !== "cpf") }) }],
  });
}

const T = "/api/v1/trackers";

export function trackers(root) {
  listView(root, {
    endpoint: T,
    columns: [
      { label: "Identificador", value: (t) => el("strong", {}, t.unique_id) },
      { label: "Veículo", value: (t) => t.plate || el("span", { class: "muted" }, "não instalado") },
      { label: "Instalado desde", value: (t) => (t.plate ? (t.installed_since ? when(t.installed_since) : "sempre") : null) },
      { label: "Cadastrado em", value: (t) => when(t.created_at) },
      { label: "Situação", value: (t) => activeBadge(t.active) },
    ],
    empty: "Nenhum rastreador cadastrado.",
    newLabel: "Novo rastreador",
    onNew: async () => {
      const row = await createWith({
        title: "Novo rastreador", endpoint: T, done: "Rastreador cadastrado.",
        fields: [
          { name: "unique_id", label: "Identificador do aparelho", required: true,
            help: "O IMEI ou o ID configurado no rastreador (no Traccar Client, «Identificador do dispositivo»)." },
          { name: "vehicle_id", label: "Veículo", type: "select", required: true, numeric: true, options: lookups.vehicles,
            empty: "Escolha…" },
          { name: "since", label: "Instalado desde", type: "datetime-local",
            help: "Hora local. Vazio: vale para qualquer posição já enviada." },
        ],
      });
      if (row) await showToken(row, "Rastreador cadastrado");
      return row;
    },
    actions: (t) => [
      { label: "Gerar novo token", name: t.unique_id, run: () => rotate(t) },
      { label: "Mover", name: t.unique_id, run: () => move(t) },
      { label: t.active ? "Desativar" : "Ativar", name: t.unique_id, cls: t.active ? "danger" : "", run: async () => {
        const ok = !t.active || await confirmBox(
          `Desativar o rastreador ${t.unique_id}? Ele deixa de ser aceito até ser ativado de novo.`, "Desativar");
        if (!ok) return false;
        await act(() => api(`${T}/${t.id}`, { method: "PATCH", body: { active: !t.active } }),
          t.active ? "Rastreador desativado." : "Rastreador ativado.");
        return true;
      } },
    ],
  });
}

async function act(call, done) {
  try {
    const r = await call();
    toast(done);
    return r;
  } catch (err) {
    toast(sentence(err), "error");
    return null;
  }
}

async function rotate(t) {
  const ok = await confirmBox(`Gerar um novo token para o rastreador ${t.unique_id}? O token atual deixa de `
    + "funcionar: será preciso configurar o novo no aparelho.", "Gerar novo token");
  if (!ok) return false;
  const row = await act(() => api(`${T}/${t.id}/token`, { method: "POST" }), "Novo token gerado.");
  if (row) await showToken(row, "Novo token gerado");
  return false;
}

function move(t) {
  return openForm({
    title: `Mover o rastreador ${t.unique_id}`,
    intro: t.plate ? `Hoje ele está no veículo ${t.plate}.` : "Hoje ele não está instalado em nenhum veículo.",
    submitLabel: "Mover",
    fields: [
      { name: "vehicle_id", label: "Para o veículo", type: "select", required: true, numeric: true, options: lookups.vehicles,
        empty: "Escolha…" },
      { name: "at", label: "A partir de", type: "datetime-local",
        help: "Hora local. Vazio: agora. Posições já recebidas depois desse momento passam para o novo veículo." },
    ],
    onSubmit: async (vals) => {
      const body = { vehicle_id: vals.vehicle_id, ...(vals.at ? { at: vals.at } : {}) };
      const r = await api(`${T}/${t.id}/move`, { method: "POST", body });
      toast("Rastreador movido.");
      return r;
    },
  });
}

// The token, shown this once: only in this dialog (never in the address, never stored by the page).
function showToken(tracker, heading) {
  return new Promise((resolve) => {
    const code = el("code", { class: "token-value", "data-testid": "tracker-token" }, tracker.token);
    const said = el("span", { class: "copy-status", role: "status", "aria-live": "polite" });
    const copy = el("button", { type: "button", class: "primary" }, "Copiar token");
    const close = el("button", { type: "button" }, "Já copiei, fechar");
    const dialog = el("dialog", { class: "reg-dialog token-dialog", "aria-labelledby": "token-title" },
      el("h2", { id: "token-title" }, `${heading}: ${tracker.unique_id}`),
      el("div", { class: "warn-box", role: "alert" },
        el("strong", {}, "Atenção: este token aparece só esta vez."),
        " Copie agora e configure no rastreador. Ele não será mostrado de novo; se for perdido, gere outro."),
      el("p", {}, "Token do rastreador:"),
      el("div", { class: "token-box" }, code),
      el("p", { class: "actions" }, copy, said),
      el("p", { class: "muted" }, "O rastreador envia as posições para ", el("code", {}, "/api/v1/fixes"),
        " com o cabeçalho ", el("code", {}, "Authorization: Bearer <token>"), "."),
      el("div", { class: "actions" }, close));
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(tracker.token);
        said.textContent = "Copiado.";
      } catch {
        getSelection().selectAllChildren(code);
        said.textContent = "Texto selecionado: copie com Ctrl+C.";
      }
    });
    const end = () => {
      code.textContent = ""; // out of the page as soon as the dialog closes
      dialog.remove();
      resolve(true);
    };
    close.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", end);
    document.body.append(dialog);
    dialog.showModal();
    copy.focus();
  });
}
