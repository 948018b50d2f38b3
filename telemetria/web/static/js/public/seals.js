// /publico/selos: the daily fleet roots (/public/seals), newest day first; a day opened shows its roots'
// versions and the leaves (one per vehicle, by id) the latest root was computed from.
import { el, fmt } from "../api.js";
import { date, problem, publicJson, table } from "./common.js";
import { localWall } from "../formats.js";

const status = document.getElementById("z-status");
const list = document.getElementById("z-list");
const dayBox = document.getElementById("z-day");

// A root's instant (UTC in the API) as the municipality's wall clock, dd/mm/aaaa HH:MM:SS (issue 36: "(UTC)").
const local = (iso) => (iso ? fmt.time(localWall(iso)) : "—");
const mono = (text) => el("code", { class: "hash" }, text || "—");
const itemsOf = (data) => (Array.isArray(data) ? data : data.items || data.days || []);
const dayOf = (s) => s.date || s.day;

async function openDay(day) {
  dayBox.hidden = false;
  dayBox.replaceChildren(el("p", { class: "muted" }, "Carregando…"));
  try {
    const data = await publicJson(`/public/seals/${encodeURIComponent(day)}`);
    const roots = (data.roots || []).map((r) => [[String(r.version), "n"], mono(r.root_sha256), mono(r.previous_sha256),
      [String(r.vehicles), "n"], local(r.computed_at)]);
    const leaves = (data.leaves || []).map((l) => [[String(l.vehicle_id), "n"], [String(l.version), "n"],
      [String(l.fixes), "n"], mono(l.sha256), mono(l.leaf_sha256)]);
    dayBox.replaceChildren(
      el("h2", {}, `Dia ${date(data.date || day)}`),
      table("Versões da raiz do dia", [["Versão", "n"], "Raiz (SHA-256)", "Raiz anterior", ["Veículos", "n"],
        "Calculada em"], roots),
      el("h2", {}, "Folhas da raiz mais recente"),
      table("Folhas", [["Veículo (id)", "n"], ["Versão", "n"], ["Posições", "n"], "SHA-256 do dia", "Folha"], leaves));
    dayBox.scrollIntoView({ block: "start" });
  } catch (err) {
    dayBox.replaceChildren(el("p", { class: "error-text" }, problem(err)));
  }
}

async function load() {
  let items;
  try {
    items = itemsOf(await publicJson("/public/seals"));
  } catch (err) {
    status.textContent = problem(err);
    status.className = "status error-text";
    return;
  }
  status.textContent = items.length ? "" : "Nenhum dia selado ainda.";
  const rows = items.map((s) => [
    el("button", { type: "button", class: "link", onclick: () => openDay(dayOf(s)) }, date(dayOf(s))),
    [String(s.version), "n"], mono(s.root_sha256), [String(s.vehicles), "n"], local(s.computed_at)]);
  if (rows.length) {
    list.replaceChildren(table("Raízes diárias", ["Dia", ["Versão", "n"], "Raiz (SHA-256)", ["Veículos", "n"],
      "Calculada em"], rows));
  }
}

load();
