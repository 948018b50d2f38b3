// Routes (itinerários): the list, importing a GeoJSON/GPX/KML file with upload progress, and one
// route's page with its figures, its line on the map and the stop editor.
import { ApiError, api, el, fmt, toast } from "../api.js";
import { format } from "../formats.js";
import { SHIFTS, editWith, effectiveField, historyTable, lookups, name } from "./common.js";
import { sentence } from "./errors.js";
import { openForm } from "./form.js";
import { seteImport } from "./sete.js";
import { stopEditor } from "./stops.js";
import { activeBadge, listView } from "./table.js";

const R = "/api/v1/routes";
const ACCEPT = ".geojson,.json,.gpx,.kml,application/geo+json,application/gpx+xml,application/vnd.google-earth.kml+xml";

function cookie(key) {
  const found = document.cookie.split("; ").find((c) => c.startsWith(key + "="));
  return found ? decodeURIComponent(found.slice(key.length + 1)) : "";
}

// POST a multipart form with upload progress (fetch cannot report it); the same errors as api().
export function upload(path, form, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.setRequestHeader("X-CSRF-Token", cookie("telemetria_csrf"));
    xhr.upload.addEventListener("progress", (e) => onProgress(e.lengthComputable ? e.loaded / e.total : null, false));
    xhr.upload.addEventListener("load", () => onProgress(1, true));
    xhr.addEventListener("load", () => {
      let data = null;
      try { data = xhr.responseText ? JSON.parse(xhr.responseText) : null; } catch { data = { detail: xhr.responseText.slice(0, 200) }; }
      if (xhr.status >= 200 && xhr.status < 300) { resolve(data); return; }
      if (xhr.status === 401) location.assign("/entrar?next=" + encodeURIComponent(location.pathname));
      reject(new ApiError(xhr.status, data));
    });
    xhr.addEventListener("error", () => reject(new TypeError("network error")));
    xhr.addEventListener("abort", () => reject(new TypeError("aborted")));
    xhr.send(form);
  });
}

function routeFields() {
  return [
    { name: "code", label: "Código da rota", required: true, help: "O código da linha no contrato, por exemplo 623." },
    { name: "name", label: "Nome", required: true, wide: true },
    { name: "shift", label: "Turno", type: "select", options: SHIFTS },
    { name: "declared_km", label: "Km declarado no contrato", type: "number", step: "any", min: 0 },
    { name: "contract_id", label: "Contrato", type: "select", numeric: true, options: lookups.contracts,
      empty: "— sem contrato —", help: "O contrato pelo qual a rota é paga (página Contratos)." },
    { name: "speed_limit_kmh", label: "Limite de velocidade (km/h)", type: "number", step: "any", min: 1, max: 150 },
    { name: "deviation_tolerance_m", label: "Tolerância de desvio (m)", type: "number", step: 1, min: 10, max: 5000,
      help: "A que distância da linha o veículo ainda está na rota." },
    { name: "active", label: "Ativa", type: "checkbox" },
  ];
}

const FILE_FIELDS = new Set(["file", "geometry", "coordinates", "stops", "lat", "lon", "kind", "scheduled_time"]);

function importRoute() {
  const fields = [
    { name: "file", label: "Arquivo da rota (GeoJSON, GPX ou KML)", type: "file", required: true, accept: ACCEPT, wide: true,
      help: "A linha traçada da rota; os pontos do arquivo viram os pontos da rota. Até 10 MB." },
    { name: "code", label: "Código da rota", required: true, help: "O código da linha no contrato, por exemplo 623." },
    { name: "name", label: "Nome", help: "Vazio: o nome que está no arquivo." },
    { name: "school_year", label: "Ano letivo", type: "number", step: 1, min: 2000, max: 2100, default: new Date().getFullYear() },
    { name: "shift", label: "Turno", type: "select", options: SHIFTS },
    { name: "declared_km", label: "Km declarado no contrato", type: "number", step: "any", min: 0 },
    { name: "speed_limit_kmh", label: "Limite de velocidade (km/h)", type: "number", step: "any", default: 60 },
    { name: "deviation_tolerance_m", label: "Tolerância de desvio (m)", type: "number", step: 1, default: 100 },
    effectiveField(), // the route exists from that day: a boletim of the days since then sees it
  ];
  return openForm({
    title: "Nova rota: importar arquivo",
    fields,
    submitLabel: "Enviar e cadastrar",
    errorAlias: (path) => (FILE_FIELDS.has(path.root) || FILE_FIELDS.has(path.name) ? "file" : null),
    onSubmit: async (vals, _changed, ui) => {
      const form = new FormData();
      form.append("file", vals.file, vals.file.name);
      for (const [k, v] of Object.entries(vals)) if (k !== "file" && v !== null) form.append(k, String(v));
      ui.progress(0, "Enviando o arquivo… 0%");
      const row = await upload(R, form, (fraction, sent) => {
        if (sent) ui.progress(null, "Arquivo enviado. Conferindo a rota no servidor…");
        else ui.progress(fraction, fraction === null ? "Enviando o arquivo…" : `Enviando o arquivo… ${Math.round(fraction * 100)}%`);
      });
      toast(`Rota ${row.code} cadastrada: ${fmt.km(row.length_km)} traçados, ${row.stops.length} paradas.`);
      return row;
    },
  });
}

export function routes(root) {
  const detail = el("div", { class: "route-detail", hidden: true });
  const view = listView(root, {
    endpoint: R,
    search: { param: "code", label: "Buscar por código", help: "O código inteiro da rota." },
    columns: [
      { label: "Código", value: (r) => el("strong", {}, r.code) },
      { label: "Nome", value: (r) => r.name },
      { label: "Ano letivo", value: (r) => r.school_year, cls: "n" },
      { label: "Turno", value: (r) => r.shift && name(SHIFTS, r.shift) },
      { label: "Traçado", value: (r) => fmt.km(r.length_m / 1000), cls: "n" },
      { label: "Declarado", value: (r) => (r.declared_km ? fmt.km(r.declared_km) : null), cls: "n" },
      { label: "Paradas", value: (r) => r.stops_count, cls: "n" },
      { label: "Situação", value: (r) => activeBadge(r.active) },
    ],
    empty: "Nenhuma rota cadastrada.",
    newLabel: "Nova rota (importar arquivo)",
    onNew: async () => {
      const row = await importRoute();
      if (row) {
        lookups.forget(R);
        view.reload();
        show(row.id);
      }
      return false;
    },
    actions: (r) => [{ label: "Abrir", name: `rota ${r.code}`, run: () => { show(r.id); return false; } }],
  });
  root.append(detail);
  view.section.querySelector(".reg-toolbar").append(el("button", { type: "button", onclick: async () => {
    if (await seteImport()) {
      lookups.forget(R);
      view.reload();
    }
  } }, "Importar do SETE"));

  let editor = null;
  function back() {
    if (editor) editor.destroy();
    editor = null;
    detail.hidden = true;
    detail.replaceChildren();
    view.section.hidden = false;
    view.reload();
  }

  async function show(id) {
    if (editor) editor.destroy();
    editor = null;
    view.section.hidden = true;
    detail.hidden = false;
    const backButton = el("button", { type: "button", class: "back", onclick: back }, "← Voltar à lista de rotas");
    detail.replaceChildren(backButton, el("p", { role: "status" }, "Carregando a rota…"));
    let r;
    try {
      r = await api(`${R}/${id}`);
    } catch (err) {
      detail.replaceChildren(backButton, el("p", { class: "error-text", role: "alert" }, sentence(err)));
      return;
    }
    const diff = r.declared_vs_traced_pct;
    const figures = [
      ["Ano letivo", r.school_year], ["Turno", r.shift ? name(SHIFTS, r.shift) : "—"],
      ["Extensão traçada", fmt.km(r.length_km)], ["Km declarado", r.declared_km ? fmt.km(r.declared_km) : "—"],
      ["Declarado × traçado", diff === null ? "—" : `${diff > 0 ? "+" : ""}${format("pct", diff)} %`],
      ["Limite de velocidade", fmt.kmh(r.speed_limit_kmh)], ["Tolerância de desvio", `${format("m", r.deviation_tolerance_m)} m`],
    ];
    const edit = el("button", { type: "button", onclick: async () => {
      const saved = await editWith({ title: `Editar rota ${r.code}`, endpoint: `${R}/${r.id}`, fields: routeFields(), row: r,
        dated: true });
      if (saved) show(r.id);
    } }, "Editar dados da rota");
    const mapBox = el("div", { class: "map small route-map", role: "region", "aria-label": `Mapa da rota ${r.code}` });
    const stopsBox = el("section", { class: "stops-editor", "aria-labelledby": "stops-h" });
    const historyBox = el("section", { class: "route-history", "aria-label": `Histórico da rota ${r.code}` },
      el("p", { class: "muted" }, "Carregando o histórico…"));
    detail.replaceChildren(
      backButton,
      el("h2", { class: "route-title" }, `Rota ${r.code} – ${r.name} `, activeBadge(r.active)),
      el("dl", { class: "figures" }, figures.map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, String(v))))),
      el("div", { class: "actions" }, edit),
      mapBox, stopsBox, historyBox);
    api(`${R}/${r.id}/history`).then((h) => historyBox.replaceChildren(el("h3", {}, "Histórico da rota"),
      historyTable(h, `Versões da rota ${r.code}: o que mudou, a partir de quando e por quem`)))
      .catch((err) => historyBox.replaceChildren(el("p", { class: "error-text" }, sentence(err))));
    editor = stopEditor(mapBox, stopsBox, r);
    detail.querySelector("h2").setAttribute("tabindex", "-1");
    detail.querySelector("h2").focus();
  }
}
