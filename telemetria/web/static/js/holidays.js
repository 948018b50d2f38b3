// The holidays that are no business days for the process's terms (beside the school calendar): the national and
// Rondônia ones as computed, and the municipal ones, edited here (PUT /api/v1/holidays/{year}/municipal; the API
// decides who may, and its refusal is shown in its words). Every text is set as text.
import { api, el, explain } from "./api.js";

const status = document.getElementById("hol-status");
const body = document.getElementById("hol-body");
const yearInput = document.getElementById("cal-year-input");

function say(text, kind = "") {
  status.textContent = text;
  status.className = `reg-status status ${kind}`.trim();
}

const day = (iso) => iso.split("-").reverse().join("/");

function municipalRow(h = { date: "", name: "" }) {
  const remove = el("button", { type: "button", class: "link" }, "Remover");
  const row = el("li", { class: "hol-row" },
    el("input", { type: "date", value: h.date, "aria-label": "Data do feriado municipal", name: "date" }),
    el("input", { type: "text", value: h.name, "aria-label": "Nome do feriado municipal", name: "name", maxlength: "200" }),
    remove);
  remove.addEventListener("click", () => row.remove());
  return row;
}

async function load(year) {
  say("Carregando feriados…");
  try {
    const data = await api(`/api/v1/holidays/${year}`);
    const fixed = [...data.national, ...data.state].sort((a, b) => a.date.localeCompare(b.date));
    const list = el("ul", { id: "hol-municipal" }, data.municipal.map(municipalRow));
    const add = el("button", { type: "button" }, "Incluir feriado municipal");
    add.addEventListener("click", () => list.append(municipalRow()));
    const save = el("button", { type: "button", class: "primary" }, "Salvar feriados municipais");
    save.addEventListener("click", async () => {
      const holidays = [...list.querySelectorAll("li")].map((li) => ({
        date: li.querySelector('[name="date"]').value, name: li.querySelector('[name="name"]').value.trim() }));
      if (holidays.some((h) => !h.date || !h.name)) { say("Cada feriado municipal precisa de data e nome.", "error"); return; }
      save.disabled = true;
      try {
        await api(`/api/v1/holidays/${year}/municipal`, { method: "PUT", body: { holidays } });
        say(`Feriados municipais de ${year} salvos.`, "done");
      } catch (err) {
        say(explain(err), "error");
      } finally {
        save.disabled = false;
      }
    });
    body.replaceChildren(
      el("h3", {}, `Nacionais e estaduais (${year})`),
      el("ul", { class: "hol-fixed" }, fixed.map((h) => el("li", {}, `${day(h.date)} — ${h.name}`))),
      el("h3", {}, `Municipais (${year})`), list, el("div", { class: "actions" }, add, save));
    say(`${data.municipal.length} feriado(s) municipal(is) em ${year}.`);
  } catch (err) {
    say(explain(err), "error");
  }
}

function current() {
  const y = Number(yearInput && yearInput.value);
  return Number.isInteger(y) && y >= 2000 && y <= 2100 ? y : new Date().getFullYear();
}

load(current());
document.getElementById("cal-year")?.addEventListener("submit", () => setTimeout(() => load(current()), 0));
