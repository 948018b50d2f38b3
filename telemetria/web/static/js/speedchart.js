// The history's speed over the period: the speed of each position the map plays back, the limit that
// applies there (zone, route, vehicle or the general one, as the speeding report judges it), the speeding
// episodes marked, and a cursor at the moment the playback shows. Clicking the chart moves the playback there.
import { fmt } from "./api.js";
import { timeChart } from "./charts.js";
import { format } from "./formats.js";

const known = (x) => x !== null && x !== undefined;

// Draw into `box` from the positions on the map and the speeding report's episodes; onPick(i) gets the
// index of the position chosen on the chart. Returns { cursor(i) }.
export function speedChart(box, positions, episodes, onPick) {
  if (!positions.length) {
    box.replaceChildren();
    return { cursor() {} };
  }
  const speeds = positions.map((p) => p.speed_kmh);
  const limits = positions.map((p) => (known(p.limit_kmh) ? p.limit_kmh : null));
  const kinds = [...new Set(limits.filter(known))].sort((a, b) => a - b);
  const top = Math.max(...speeds.filter(known), 0);
  const first = positions[0].time, last = positions[positions.length - 1].time;
  const limitWords = !kinds.length ? "limite desconhecido"
    : kinds.length === 1 ? `limite ${fmt.kmh(kinds[0])}`
      : `limite de ${fmt.kmh(kinds[0])} a ${fmt.kmh(kinds[kinds.length - 1])} conforme o trecho`;
  const n = episodes.length;
  return timeChart(box, {
    class: "speed-chart", unit: "km/h", table: ["h-events", "h-positions"],
    tableText: "Os excessos estão na tabela de ocorrências; as velocidades, na de posições.",
    title: "Velocidade no período",
    summary: `Velocidade de ${fmt.time(first)} a ${fmt.clock(last)}: máxima ${format("kmh", top)} km/h, ${limitWords}; ` +
      (n ? `${n} ${n === 1 ? "excesso de velocidade marcado" : "excessos de velocidade marcados"} em vermelho.`
        : "nenhum excesso de velocidade.") + " Clique no gráfico para levar o mapa àquele momento.",
    x: positions.map((p) => p.time),
    series: [
      { name: "velocidade", cls: "speed", values: speeds },
      { name: "limite", cls: "limit", values: limits, step: true },
    ],
    ranges: episodes.map((e) => ({ from: e.start, to: e.end, cls: "speeding",
      title: `Excesso de velocidade: ${fmt.kmh(e.max_kmh)} (limite ${fmt.kmh(e.limit_kmh)}), ` +
        `${fmt.clock(e.start)} a ${fmt.clock(e.end)}` })),
    legend: [["speed", "Velocidade"], ["limit", "Limite de velocidade"], ["speeding", "Excesso de velocidade"],
      ["cursor", "Momento mostrado no mapa"]],
    onPick,
  });
}
