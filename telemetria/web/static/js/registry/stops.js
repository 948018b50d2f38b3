// A route's stops on its map and in a table: name, kind, scheduled time and position, edited here and
// saved at once with PUT. A stop's position is typed, or set by clicking the map, or by dragging its marker.
import { api, el, localDate, toast } from "../api.js";
import { makeMap, COLOURS, tip } from "../mapbase.js";
import { STOP_KINDS } from "./common.js";
import { problems, sentence } from "./errors.js";

const L = window.L;
let serial = 0;

const CLOCK = /^([01]?\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;
const round6 = (x) => Math.round(x * 1e6) / 1e6;
const parseCoord = (text) => {
  const t = String(text).trim().replace(",", ".");
  return t === "" ? null : Number(t);
};

function copy(stops) {
  return stops.map((s) => ({ name: s.name, kind: s.kind, lat: s.lat, lon: s.lon,
    time: s.scheduled_time ? String(s.scheduled_time).slice(0, s.scheduled_time.endsWith(":00") ? 5 : 8) : "" }));
}

export function stopEditor(mapBox, box, route) {
  const n = ++serial;
  let stops = copy(route.stops);
  let armed = null; // index of the stop the next map click positions
  const map = makeMap(mapBox);
  const line = (route.geometry && route.geometry.coordinates || []).map(([lon, lat]) => [lat, lon]);
  const lineLayer = L.polyline(line, { color: COLOURS.route, weight: 5, opacity: 0.85 }).addTo(map);
  const markers = L.layerGroup().addTo(map);
  const bounds = L.latLngBounds(line);
  for (const s of stops) if (s.lat !== null) bounds.extend([s.lat, s.lon]);
  if (bounds.isValid()) map.fitBounds(bounds.pad(0.15));

  const tbody = el("tbody");
  const say = el("p", { class: "map-hint", role: "status", "aria-live": "polite" },
    "Para posicionar uma parada, use «Marcar no mapa» na linha dela e clique no mapa, ou arraste o marcador.");
  const alert = el("div", { class: "form-alert", role: "alert", hidden: true });
  const add = el("button", { type: "button" }, "Adicionar parada");
  const save = el("button", { type: "button", class: "primary" }, "Salvar paradas");
  const reset = el("button", { type: "button" }, "Desfazer alterações");
  // The registry keeps versions: the new stops and times apply from this day on, the days before keep theirs.
  const fromInput = el("input", { type: "date", id: `stops-from-${route.id}`, value: localDate(), required: true,
    "aria-describedby": `stops-from-help-${route.id}` });
  const from = el("div", { class: "field" },
    el("label", { for: fromInput.id }, "Vale a partir de"), fromInput,
    el("p", { class: "help", id: `stops-from-help-${route.id}` }, "Os dias anteriores ficam com as paradas e horários "
      + "de antes. Um mês já fechado no boletim de medição não pode ser alcançado: reabra o mês antes."));
  box.replaceChildren(
    el("h3", { id: "stops-h" }, "Paradas e horários"),
    say, alert,
    el("div", { class: "table-wrap" }, el("table", { class: "data stops-table" },
      el("caption", { class: "sr-only" }, `Pontos da rota ${route.code}, na ordem em que são atendidos`),
      el("thead", {}, el("tr", {}, ["Nº", "Nome", "Tipo", "Horário previsto", "Latitude", "Longitude", "Ações"]
        .map((h) => el("th", { scope: "col" }, h)))), tbody)),
    from, el("div", { class: "actions" }, add, save, reset));

  function icon(i, s) {
    return L.divIcon({ className: `stop-marker stop-${s.kind}${armed === i ? " armed" : ""}`,
      html: el("span", {}, String(i + 1)), iconSize: [24, 24], iconAnchor: [12, 12] });
  }

  function drawMarkers() {
    markers.clearLayers();
    stops.forEach((s, i) => {
      if (s.lat === null || s.lon === null || !Number.isFinite(s.lat) || !Number.isFinite(s.lon)) return;
      const m = L.marker([s.lat, s.lon], { icon: icon(i, s), draggable: true, keyboard: true,
        title: `${i + 1}. ${s.name || "(sem nome)"}`, alt: `Parada ${i + 1}` });
      m.bindTooltip(tip(`${i + 1}. ${s.name || "(sem nome)"}${s.time ? " – " + s.time : ""}`));
      m.on("dragend", () => place(i, m.getLatLng()));
      m.addTo(markers);
    });
  }

  function place(i, latlng) {
    stops[i].lat = round6(latlng.lat);
    stops[i].lon = round6(latlng.lng);
    armed = null;
    drawRows();
    drawMarkers();
    say.textContent = `Parada ${i + 1} posicionada em ${stops[i].lat}, ${stops[i].lon}. Salve para gravar.`;
  }

  map.on("click", (e) => { if (armed !== null) place(armed, e.latlng); });

  function cellInput(i, key, label, attrs = {}) {
    const id = `st${n}-${i}-${key}`;
    const input = el("input", { id, name: key, autocomplete: "off", spellcheck: "false",
      "aria-describedby": `${id}-err`, ...attrs });
    input.value = stops[i][key] === null || stops[i][key] === undefined ? "" : String(stops[i][key]);
    input.addEventListener("input", () => {
      clearError(input);
      stops[i][key] = key === "lat" || key === "lon" ? parseCoord(input.value) : input.value;
    });
    input.addEventListener("change", drawMarkers);
    return el("td", { "data-key": key }, el("label", { class: "sr-only", for: id }, `${label} da parada ${i + 1}`), input,
      el("p", { class: "field-error", id: `${id}-err`, hidden: true }));
  }

  function drawRows() {
    tbody.replaceChildren(...stops.map((s, i) => {
      const kindId = `st${n}-${i}-kind`;
      const kind = el("select", { id: kindId, name: "kind", "aria-describedby": `${kindId}-err` },
        STOP_KINDS.map(([v, label]) => el("option", { value: v }, label)));
      kind.value = s.kind;
      kind.addEventListener("change", () => { s.kind = kind.value; drawMarkers(); });
      const mark = el("button", { type: "button", "aria-pressed": String(armed === i), class: "small",
        "aria-label": `Marcar no mapa a parada ${i + 1}` }, armed === i ? "Clique no mapa…" : "Marcar no mapa");
      mark.addEventListener("click", () => {
        armed = armed === i ? null : i;
        say.textContent = armed === null ? "Marcação cancelada."
          : `Clique no mapa onde fica a parada ${i + 1} (${s.name || "sem nome"}).`;
        drawRows();
        drawMarkers();
        if (armed !== null) tbody.querySelectorAll("button[aria-pressed]")[i].focus();
      });
      const up = el("button", { type: "button", class: "small", disabled: i === 0, "aria-label": `Subir a parada ${i + 1}`,
        onclick: () => moveStop(i, -1) }, "↑");
      const down = el("button", { type: "button", class: "small", disabled: i === stops.length - 1,
        "aria-label": `Descer a parada ${i + 1}`, onclick: () => moveStop(i, 1) }, "↓");
      const remove = el("button", { type: "button", class: "small danger", "aria-label": `Remover a parada ${i + 1}`,
        onclick: () => { stops.splice(i, 1); armed = null; drawRows(); drawMarkers(); } }, "Remover");
      return el("tr", { class: armed === i ? "selected" : null, "data-stop": String(i) },
        el("td", { class: "n" }, String(i + 1)),
        cellInput(i, "name", "Nome"),
        el("td", { "data-key": "kind" }, el("label", { class: "sr-only", for: kindId }, `Tipo da parada ${i + 1}`), kind,
          el("p", { class: "field-error", id: `${kindId}-err`, hidden: true })),
        cellInput(i, "time", "Horário previsto", { inputmode: "numeric", placeholder: "HH:MM", class: "clock", maxlength: "8" }),
        cellInput(i, "lat", "Latitude", { inputmode: "decimal", class: "coord" }),
        cellInput(i, "lon", "Longitude", { inputmode: "decimal", class: "coord" }),
        el("td", { class: "row-actions" }, mark, up, down, remove));
    }));
    if (!stops.length) {
      tbody.append(el("tr", {}, el("td", { colspan: "7", class: "muted" }, "Nenhuma parada. Use «Adicionar parada».")));
    }
  }

  function moveStop(i, by) {
    const [s] = stops.splice(i, 1);
    stops.splice(i + by, 0, s);
    armed = null;
    drawRows();
    drawMarkers();
    tbody.querySelector(`tr[data-stop="${i + by}"] td[data-key="name"] input`)?.focus();
  }

  function clearError(input) {
    input.removeAttribute("aria-invalid");
    input.removeAttribute("aria-errormessage");
    const err = document.getElementById(input.id + "-err");
    if (err) { err.hidden = true; err.textContent = ""; }
  }

  function markError(i, key, message) {
    const input = tbody.querySelector(`tr[data-stop="${i}"] td[data-key="${key}"] input, `
      + `tr[data-stop="${i}"] td[data-key="${key}"] select`);
    if (!input) return false;
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-errormessage", input.id + "-err");
    const err = document.getElementById(input.id + "-err");
    if (err) { err.textContent = message; err.hidden = false; }
    return true;
  }

  add.addEventListener("click", () => {
    stops.push({ name: "", kind: "boarding", lat: null, lon: null, time: "" });
    armed = stops.length - 1;
    drawRows();
    drawMarkers();
    say.textContent = `Parada ${stops.length} adicionada: dê um nome e clique no mapa onde ela fica.`;
    tbody.querySelector(`tr[data-stop="${armed}"] td[data-key="name"] input`).focus();
  });

  reset.addEventListener("click", () => {
    stops = copy(route.stops);
    armed = null;
    alert.hidden = true;
    drawRows();
    drawMarkers();
    say.textContent = "Alterações desfeitas.";
  });

  save.addEventListener("click", async () => {
    alert.hidden = true;
    let bad = null;
    stops.forEach((s, i) => {
      if (!s.name.trim() && markError(i, "name", "Dê um nome à parada.")) bad ??= i;
      if (s.time.trim() && !CLOCK.test(s.time.trim()) && markError(i, "time", "Use HH:MM, por exemplo 06:45.")) bad ??= i;
      for (const k of ["lat", "lon"]) {
        if (s[k] === null || !Number.isFinite(s[k])) {
          markError(i, k, s[k] === null ? "Marque no mapa ou digite." : "Use um número, por exemplo -10,4389.");
          bad ??= i;
        }
      }
    });
    if (bad !== null) {
      tbody.querySelector(`tr[data-stop="${bad}"] [aria-invalid="true"]`)?.focus();
      return;
    }
    const body = { stops: stops.map((s) => ({ name: s.name.trim(), kind: s.kind, lat: s.lat, lon: s.lon,
      scheduled_time: s.time.trim() || null })), effective_from: fromInput.value || localDate() };
    save.disabled = true;
    save.textContent = "Salvando…";
    try {
      route = await api(`/api/v1/routes/${route.id}/stops`, { method: "PUT", body });
      stops = copy(route.stops);
      armed = null;
      drawRows();
      drawMarkers();
      toast("Paradas salvas.");
      say.textContent = `Paradas salvas: ${stops.length}.`;
    } catch (err) {
      let placed = 0;
      for (const p of problems(err)) {
        const key = p.path.name === "scheduled_time" ? "time" : p.path.name;
        if (p.path.root === "stops" && p.path.index !== null && markError(p.path.index, key, p.message)) placed++;
      }
      if (!placed) {
        alert.textContent = sentence(err);
        alert.hidden = false;
      }
    } finally {
      save.disabled = false;
      save.textContent = "Salvar paradas";
    }
  });

  drawRows();
  drawMarkers();
  return { destroy: () => map.remove(), line: lineLayer };
}
