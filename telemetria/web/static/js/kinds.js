// The classification of each kind of occurrence (/fiscalizacao/classificacao, admin): article and severity per
// kind, each row saved on its own (PUT /api/v1/occurrence-kinds/{kind}); the API's refusal shown in its words.
import { api, el, explain } from "./api.js";
import { SEVERITY_NAMES, kindName, when } from "./fisc/names.js";

const status = document.getElementById("k-status");
const result = document.getElementById("k-result");

function say(text, kind = "") {
  status.textContent = text;
  status.className = `reg-status status ${kind}`.trim();
}

function row(k) {
  const article = el("input", { type: "text", value: k.article, "aria-label": `Artigo: ${kindName(k.kind)}`, maxlength: "100" });
  const severity = el("select", { "aria-label": `Gravidade: ${kindName(k.kind)}` },
    Object.entries(SEVERITY_NAMES).map(([v, t]) => el("option", { value: v, selected: v === k.severity }, t)));
  const changed = el("td", {}, k.updated_by ? `${k.updated_by}, ${when(k.updated_at)}` : "padrão da lei");
  const save = el("button", { type: "button" }, "Salvar");
  save.addEventListener("click", async () => {
    if (!article.value.trim()) { say(`Informe o artigo de «${kindName(k.kind)}».`, "error"); article.focus(); return; }
    save.disabled = true;
    try {
      const saved = await api(`/api/v1/occurrence-kinds/${k.kind}`, { method: "PUT",
        body: { article: article.value.trim(), severity: severity.value } });
      if (saved && saved.updated_by) changed.textContent = `${saved.updated_by}, ${when(saved.updated_at)}`;
      say(`Classificação de «${kindName(k.kind)}» salva.`, "done");
    } catch (err) {
      say(explain(err, { article: "Artigo", severity: "Gravidade" }), "error");
    } finally {
      save.disabled = false;
    }
  });
  return el("tr", { "data-kind": k.kind }, el("th", { scope: "row" }, kindName(k.kind)), el("td", {}, article),
    el("td", {}, severity), changed, el("td", {}, save));
}

async function load() {
  try {
    const data = await api("/api/v1/occurrence-kinds");
    const items = Array.isArray(data) ? data : data.items;
    result.replaceChildren(el("table", { class: "data kinds-table" },
      el("thead", {}, el("tr", {}, ["Tipo", "Artigo", "Gravidade", "Alterado por", ""].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, items.map(row))));
    say(`${items.length} tipos de ocorrência.`);
  } catch (err) {
    say(explain(err), "error");
  }
}
load();
