// Who runs what: which vehicle runs which route on which weekdays, and who drives which vehicle when.
import { api, el, localDate, toast } from "../api.js";
import { createWith, day, lookups, when } from "./common.js";
import { sentence } from "./errors.js";
import { confirmBox } from "./form.js";
import { listView } from "./table.js";

const DAYS = ["", "seg", "ter", "qua", "qui", "sex", "sáb", "dom"];

function weekdays(list) {
  const set = [...list].map(Number).sort();
  if (set.join() === "1,2,3,4,5") return "seg a sex";
  if (set.length === 7) return "todos os dias";
  return set.map((d) => DAYS[d]).join(", ");
}

async function remove(path, question, done) {
  if (!(await confirmBox(question, "Excluir"))) return false;
  try {
    await api(path, { method: "DELETE" });
    toast(done);
    return true;
  } catch (err) {
    toast(sentence(err), "error");
    return false;
  }
}

export function assignments(root) {
  const RA = "/api/v1/route-assignments";
  listView(root, {
    title: "Rotas por veículo",
    endpoint: RA,
    columns: [
      { label: "Rota", value: (a) => el("span", {}, el("strong", {}, a.route_code), ` – ${a.route}`) },
      { label: "Veículo", value: (a) => a.plate },
      { label: "Início", value: (a) => day(a.valid_from) },
      { label: "Fim", value: (a) => (a.valid_to ? day(a.valid_to) : "sem data de fim") },
      { label: "Dias", value: (a) => weekdays(a.weekdays) },
    ],
    empty: "Nenhuma rota atribuída a veículo.",
    newLabel: "Atribuir rota a veículo",
    // The assignment is registered as a version from its first day ("Vale a partir de" is sent as effective_from
    // too), so a boletim of the days since then sees it; a day in a closed month is refused (reabra o mês).
    onNew: () => createWith({
      title: "Atribuir rota a veículo", endpoint: RA, done: "Rota atribuída.", submitLabel: "Atribuir",
      dated: "valid_from",
      fields: [
        { name: "route_id", label: "Rota", type: "select", required: true, numeric: true, options: lookups.routes, empty: "Escolha…" },
        { name: "vehicle_id", label: "Veículo", type: "select", required: true, numeric: true, options: lookups.vehicles,
          empty: "Escolha…" },
        { name: "valid_from", label: "Vale a partir de", type: "date", required: true, default: localDate() },
        { name: "valid_to", label: "Vale até", type: "date", help: "Inclusive. Vazio: sem data de fim." },
        { name: "weekdays", label: "Dias da semana", type: "weekdays", required: true, default: [1, 2, 3, 4, 5] },
      ],
    }),
    actions: (a) => [{ label: "Excluir", name: `rota ${a.route_code} no veículo ${a.plate}`, cls: "danger",
      run: () => remove(`${RA}/${a.id}`, `Excluir a atribuição da rota ${a.route_code} ao veículo ${a.plate}?`,
        "Atribuição excluída.") }],
  });

  const DA = "/api/v1/driver-assignments";
  listView(root, {
    title: "Condutores por veículo",
    endpoint: DA,
    columns: [
      { label: "Condutor", value: (a) => el("strong", {}, a.driver) },
      { label: "Veículo", value: (a) => a.plate },
      { label: "Início", value: (a) => (a.valid_from ? when(a.valid_from) : "sem data de início") },
      { label: "Fim", value: (a) => (a.valid_to ? when(a.valid_to) : "sem data de fim") },
    ],
    empty: "Nenhum condutor atribuído a veículo.",
    newLabel: "Atribuir condutor a veículo",
    onNew: () => createWith({
      title: "Atribuir condutor a veículo", endpoint: DA, done: "Condutor atribuído.", submitLabel: "Atribuir",
      fields: [
        { name: "driver_id", label: "Condutor", type: "select", required: true, numeric: true, options: lookups.drivers,
          empty: "Escolha…" },
        { name: "vehicle_id", label: "Veículo", type: "select", required: true, numeric: true, options: lookups.vehicles,
          empty: "Escolha…" },
        { name: "valid_from", label: "Desde", type: "datetime-local", help: "Hora local. Vazio: sem data de início." },
        { name: "valid_to", label: "Até", type: "datetime-local", help: "Hora local, exclusive. Vazio: sem data de fim." },
      ],
    }),
    actions: (a) => [{ label: "Excluir", name: `${a.driver} no veículo ${a.plate}`, cls: "danger",
      run: () => remove(`${DA}/${a.id}`, `Excluir a atribuição de ${a.driver} ao veículo ${a.plate}?`,
        "Atribuição excluída.") }],
  });
}
