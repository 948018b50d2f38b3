// Speed zones: polygons with their own limit (a school zone, a paved stretch), listed and drawn on a map.
import { api, el, fmt, toast } from "../api.js";
import { makeMap, tip } from "../mapbase.js";
import { editWith } from "./common.js";
import { refusal } from "./errors.js";
import { openForm } from "./form.js";
import { activeBadge, listView } from "./table.js";

const L = window.L;
const Z = "/api/v1/speed-zones";
const GEO_FIELDS = new Set(["geometry", "coordinates", "lat", "lon"]);

// The polygon to send: a Polygon/MultiPolygon, a Feature of one, or the first one in a FeatureCollection.
function polygonOf(text) {
  let obj;
  try {
    obj = JSON.parse(text);
  } catch {
    throw refusal("geometry", "O texto não é um GeoJSON válido (JSON malformado).");
  }
  if (obj && obj.type === "FeatureCollection" && Array.isArray(obj.features)) {
    const f = obj.features.find((x) => x && x.geometry && /Polygon$/.test(x.geometry.type));
    if (!f) throw refusal("geometry", "Nenhum polígono encontrado no arquivo.");
    return f.geometry;
  }
  return obj;
}

function newZone() {
  return openForm({
    title: "Nova zona de velocidade",
    submitLabel: "Cadastrar",
    errorAlias: (path) => (GEO_FIELDS.has(path.root) || GEO_FIELDS.has(path.name) ? "geometry" : null),
    fields: [
      { name: "name", label: "Nome", required: true, wide: true, help: "Por exemplo: Zona escolar EMEF Rio Branco." },
      { name: "limit_kmh", label: "Limite de velocidade (km/h)", type: "number", required: true, step: "any", min: 1, max: 150 },
      { name: "file", label: "Arquivo GeoJSON do polígono", type: "file", accept: ".geojson,.json,application/geo+json",
        wide: true, help: "Ou cole o GeoJSON no campo abaixo." },
      { name: "geometry", label: "GeoJSON do polígono", type: "textarea", wide: true,
        placeholder: '{"type": "Polygon", "coordinates": [[[-62.47, -10.43], …]]}',
        help: "Polygon ou MultiPolygon em longitude, latitude (WGS84)." },
    ],
    onSubmit: async (vals) => {
      const text = vals.geometry || (vals.file ? await vals.file.text() : null);
      if (!text) throw refusal("geometry", "Envie um arquivo ou cole o GeoJSON do polígono.");
      const body = { name: vals.name, limit_kmh: vals.limit_kmh, geometry: polygonOf(text) };
      const row = await api(Z, { method: "POST", body });
      toast("Zona cadastrada.");
      return row;
    },
  });
}

export function zones(root) {
  const mapBox = el("div", { class: "map small", role: "region", "aria-label": "Mapa das zonas desta página" });
  let map = null;
  let layer = null;
  const draw = (rows) => {
    if (!map) {
      map = makeMap(mapBox);
      layer = L.layerGroup().addTo(map);
    }
    layer.clearLayers();
    const shapes = rows.filter((z) => z.geometry).map((z) =>
      L.geoJSON(z.geometry, { style: { color: z.active ? "#c62828" : "#6b7280", weight: 2, fillOpacity: 0.15 } })
        .bindTooltip(tip(`${z.name}: ${fmt.kmh(z.limit_kmh)}`)).addTo(layer));
    if (shapes.length) map.fitBounds(L.featureGroup(shapes).getBounds().pad(0.2));
  };
  listView(root, {
    endpoint: Z,
    columns: [
      { label: "Nome", value: (z) => el("strong", {}, z.name) },
      { label: "Limite", value: (z) => fmt.kmh(z.limit_kmh), cls: "n" },
      { label: "Situação", value: (z) => activeBadge(z.active) },
    ],
    empty: "Nenhuma zona de velocidade cadastrada.",
    newLabel: "Nova zona",
    onNew: newZone,
    onRows: draw,
    actions: (z) => [{ label: "Editar", name: z.name, run: () => editWith({
      title: `Editar zona ${z.name}`, endpoint: `${Z}/${z.id}`, row: z, dated: true,
      fields: [
        { name: "name", label: "Nome", required: true, wide: true },
        { name: "limit_kmh", label: "Limite de velocidade (km/h)", type: "number", required: true, step: "any" },
        { name: "active", label: "Ativa", type: "checkbox" },
      ],
    }) }],
  });
  root.append(mapBox);
}
