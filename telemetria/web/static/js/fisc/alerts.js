// The alerts panel of the live map: the day's occurrences as the detector finds them, newest on top. It polls the
// occurrences list every ~10 s; ones not seen before are marked new and (when the sound is on) chime. Filter by
// kind; a click centres the map on the occurrence and opens its popup, which links to the occurrence's page.
import { api, el, explain } from "../api.js";
import { tip } from "../mapbase.js";
import { KIND_NAMES, clock, headline, kindName, statusName, when, where } from "./names.js";
import { chime, setSound, soundOn, unlockOnGesture } from "./sound.js";

const L = window.L;
const POLL_MS = 10_000;
const SHOWN = ["detected", "confirmed", "notified", "defense"]; // open ones: withdrawn or dismissed leave the panel
const KIND_KEY = "telemetria.alerts.kind";

// The panel spans 24 h, so two days: each alert says its day as well as its time ("05/12 às 23:50:12").
const dayAndClock = (iso) => (iso ? `${when(iso).slice(0, 5)} às ${clock(iso)}` : "—");

// Newest first by when it happened (the time each line shows), not by when the detector found it: a late batch's
// alert goes where its time puts it, so the times read in order down the list.
export const newestFirst = (a, b) => Date.parse(b.start) - Date.parse(a.start) || b.id - a.id;

export function alertsPanel(map, root) {
  const seen = new Set();
  const markers = new Map(); // id → circle marker
  let items = [];
  let first = true;
  let failures = 0;
  let chimes = 0;

  const sound = el("input", { type: "checkbox", id: "alerts-sound" });
  sound.checked = soundOn();
  sound.addEventListener("change", () => setSound(sound.checked));
  const kind = el("select", { id: "alerts-kind" }, el("option", { value: "" }, "Todos os tipos"),
    Object.entries(KIND_NAMES).map(([k, name]) => el("option", { value: k }, name)));
  kind.value = localStorage.getItem(KIND_KEY) || "";
  kind.addEventListener("change", () => { localStorage.setItem(KIND_KEY, kind.value); render(); });
  const status = el("p", { class: "muted alerts-status", role: "status", "aria-live": "polite" }, "Carregando alertas…");
  const list = el("ul", { class: "alerts-list", id: "alerts-list" });
  const count = el("span", { class: "badge", id: "alerts-count" }, "0");
  root.replaceChildren(
    el("details", { class: "alerts", open: true },
      el("summary", {}, "Alertas (últimas 24 h) ", count),
      el("div", { class: "alerts-controls" },
        el("label", { class: "inline", for: "alerts-sound" }, sound, " Som para novos alertas"),
        el("label", { for: "alerts-kind", class: "sr-only" }, "Tipo de alerta"), kind),
      status, list));
  unlockOnGesture();

  function marker(o) {
    if (o.lat === null || o.lat === undefined) return null;
    let m = markers.get(o.id);
    if (!m) {
      m = L.circleMarker([o.lat, o.lon], { radius: 9, color: "#7a0000", weight: 2, fillColor: "#e53935", fillOpacity: 0.85 })
        .addTo(map);
      markers.set(o.id, m);
    }
    // Rebinding an open popup would close it under the user's pointer at every poll: only a closed one is renewed.
    if (!m.isPopupOpen()) {
      m.setLatLng([o.lat, o.lon]);
      m.bindPopup(tip(el("strong", {}, headline(o)), el("br"), `${o.plate || "—"} · ${when(o.start)}`, el("br"),
        where(o), el("br"), el("a", { href: `/ocorrencias/${o.id}` }, "Abrir a ocorrência")));
    }
    return m;
  }

  function focus(o) {
    const m = marker(o);
    if (m) {
      map.setView([o.lat, o.lon], Math.max(map.getZoom(), 15));
      m.openPopup();
    }
    for (const b of list.querySelectorAll("button[aria-pressed]")) b.setAttribute("aria-pressed", String(b.dataset.id === String(o.id)));
  }

  function render() {
    const wanted = kind.value;
    const visible = items.filter((o) => !wanted || o.kind === wanted);
    list.replaceChildren(...visible.map((o) => el("li", { class: o.fresh ? "new" : "" },
      el("button", { type: "button", "data-id": String(o.id), "data-kind": o.kind, "aria-pressed": "false",
        onclick: () => focus(o) },
        el("span", { class: "alert-kind" }, kindName(o.kind)),
        o.fresh ? el("span", { class: "badge bad" }, "novo") : null,
        el("span", { class: "meta" }, `${o.plate || "—"} · ${dayAndClock(o.start)}${o.late ? " · chegou atrasado" : ""}`),
        el("span", { class: "meta" }, `${where(o)} · ${statusName(o.status)}`)),
      el("a", { class: "alert-open", href: `/ocorrencias/${o.id}` }, `Abrir nº ${o.id}`))));
    count.textContent = String(visible.length);
    for (const [id, m] of markers) {
      if (!visible.some((o) => o.id === id)) { m.remove(); markers.delete(id); }
    }
    for (const o of visible) marker(o);
  }

  async function poll() {
    try {
      // The last 24 h, not "today": at 00:05 the alerts of 23:50 are still the servidor's to see.
      const since = new Date(Date.now() - 24 * 3600e3).toISOString();
      const until = new Date(Date.now() + 3600e3).toISOString();
      const period = `from=${encodeURIComponent(since)}&to=${encodeURIComponent(until)}`;
      const data = await api(`/api/v1/occurrences?status=${SHOWN.join(",")}&${period}`);
      const fresh = [];
      for (const o of data.items) {
        if (!seen.has(o.id)) {
          seen.add(o.id);
          if (!first) fresh.push(o.id);
        }
      }
      const old = new Map(items.map((o) => [o.id, o.fresh]));
      items = data.items
        .map((o) => ({ ...o, fresh: fresh.includes(o.id) || Boolean(old.get(o.id)) }))
        .sort(newestFirst);
      render();
      if (fresh.length && chime()) {
        chimes += 1;
        root.dataset.chimes = String(chimes);
      }
      status.textContent = items.length
        ? `${fresh.length ? `${fresh.length} novo(s) · ` : ""}atualizado às ${new Date().toLocaleTimeString("pt-BR")}`
        : "Nenhum alerta aberto hoje.";
      root.dataset.updated = String(Date.now());
      first = false;
      failures = 0;
    } catch (err) {
      failures += 1;
      status.textContent = "Alertas sem atualização: " + explain(err);
    } finally {
      setTimeout(poll, POLL_MS * Math.min(1 + failures, 6));
    }
  }
  poll();
}
