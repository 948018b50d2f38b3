// Traccar servers (admins only): each forwards its trackers' positions with a token of its own (docs/trackers.md).
import { api, el, toast } from "../api.js";
import { createWith, lookups, when } from "./common.js";
import { sentence } from "./errors.js";
import { confirmBox } from "./form.js";
import { activeBadge, listView } from "./table.js";

const G = "/api/v1/traccar/gateways";

export function gateways(root) {
  listView(root, {
    endpoint: G,
    columns: [
      { label: "Servidor Traccar", value: (g) => el("strong", {}, g.name) },
      { label: "Fala por", value: (g) => g.contractor || "todos os rastreadores cadastrados" },
      { label: "Cadastrado em", value: (g) => when(g.created_at) },
      { label: "Situação", value: (g) => activeBadge(g.active) },
    ],
    empty: "Nenhum servidor Traccar cadastrado.",
    newLabel: "Novo servidor Traccar",
    onNew: async () => {
      const row = await createWith({
        title: "Novo servidor Traccar", endpoint: G, done: "Servidor Traccar cadastrado.", submitLabel: "Gerar token",
        fields: [
          { name: "name", label: "Nome", required: true, wide: true,
            help: "Qual servidor Traccar, por exemplo «Traccar da Secretaria» ou «Traccar da Empresa X»." },
          { name: "contractor_id", label: "Só os rastreadores da empresa", type: "select", numeric: true,
            options: lookups.contractors, empty: "Todos os rastreadores cadastrados",
            help: "Para o Traccar de uma empresa: ele só poderá enviar posições dos veículos dela." },
        ],
      });
      if (row) await showToken(row, "Servidor Traccar cadastrado");
      return row;
    },
    actions: (g) => [
      { label: "Gerar novo token", name: g.name, run: () => rotate(g) },
      { label: g.active ? "Desativar" : "Ativar", name: g.name, cls: g.active ? "danger" : "", run: async () => {
        const ok = !g.active || await confirmBox(
          `Desativar o servidor Traccar ${g.name}? As posições que ele enviar deixam de ser aceitas.`, "Desativar");
        if (!ok) return false;
        await act(() => api(`${G}/${g.id}`, { method: "PATCH", body: { active: !g.active } }),
          g.active ? "Servidor Traccar desativado." : "Servidor Traccar ativado.");
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

async function rotate(g) {
  const ok = await confirmBox(`Gerar um novo token para ${g.name}? O token atual deixa de funcionar: será preciso `
    + "trocá-lo no traccar.xml (forward.header).", "Gerar novo token");
  if (!ok) return false;
  const row = await act(() => api(`${G}/${g.id}/token`, { method: "POST" }), "Novo token gerado.");
  if (row) await showToken(row, "Novo token gerado");
  return false;
}

// The token, shown this once, with the lines to paste into traccar.xml: only in this dialog, never stored.
function showToken(gateway, heading) {
  return new Promise((resolve) => {
    const url = `${location.origin}/api/v1/traccar/positions`;
    const xml = [
      "<entry key='forward.type'>json</entry>",
      `<entry key='forward.url'>${url}</entry>`,
      `<entry key='forward.header'>Authorization: Bearer ${gateway.token}</entry>`,
      "<entry key='forward.retry.enable'>true</entry>",
    ].join("\n");
    const code = el("pre", { class: "token-value", "data-testid": "gateway-config" }, xml);
    const said = el("span", { class: "copy-status", role: "status", "aria-live": "polite" });
    const copy = el("button", { type: "button", class: "primary" }, "Copiar configuração");
    const close = el("button", { type: "button" }, "Já copiei, fechar");
    const dialog = el("dialog", { class: "reg-dialog token-dialog", "aria-labelledby": "gw-token-title" },
      el("h2", { id: "gw-token-title" }, `${heading}: ${gateway.name}`),
      el("div", { class: "warn-box", role: "alert" },
        el("strong", {}, "Atenção: este token aparece só esta vez."),
        " Copie agora para o traccar.xml do servidor Traccar. Se for perdido, gere outro."),
      el("p", {}, "Linhas para o traccar.xml (Traccar 5.5 ou mais novo; veja docs/trackers.md para versões antigas):"),
      el("div", { class: "token-box" }, code),
      el("p", { class: "actions" }, copy, said),
      el("div", { class: "actions" }, close));
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(xml);
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
