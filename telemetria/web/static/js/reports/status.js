// The status line under the form, and the API's refusals turned into sentences for people.
import { ApiError, explain, fieldName } from "../api.js";

const status = document.getElementById("report-status");

export function say(message, kind = "") {
  status.textContent = message;
  status.className = `status ${kind}`.trim();
}

// The form's fields by the API's parameter names, as errors name them.
export const LABELS = { from: "De", to: "Até", vehicle_id: "Veículos", contractor_id: "Empresa contratada",
  route_id: "Rota", by: "Agrupar", unauthorized: "Somente fora de pontos autorizados", format: "Formato" };

export const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);

// What the API says (in English, for scripts), as a sentence for people.
const DETAILS = [
  [/must be after from/, () => "a data final deve ser igual ou posterior à inicial."],
  [/GeoJSON, GPX and KML cover at most (\d+) days/, (n) => `arquivos GeoJSON, GPX e KML cobrem no máximo ${n} dias. ` +
    "Escolha um período menor ou exporte em CSV."],
  [/a track PDF covers at most (\d+) days/, (n) => `o PDF da trajetória cobre no máximo ${n} dias. ` +
    "Escolha um período menor ou exporte em CSV ou XLSX."],
  [/a track (PDF|XLSX) holds at most (\d+) positions/, (f, n) => `o ${f} da trajetória cabe no máximo ${n} ` +
    "posições e este teria mais. Escolha menos veículos ou dias, ou exporte em CSV."],
  [/covers at most (\d+) days/, (n) => `um relatório cobre no máximo ${n} dias. Escolha um período menor.`],
  [/may not export files/, () => "seu perfil não tem permissão para exportar arquivos."],
  [/no route \d+ with vehicles/, () => "nenhum veículo que você pode ver está atribuído a esta rota no período."],
  [/no vehicle \d+/, () => "veículo não encontrado (ou fora do que seu perfil pode ver)."],
  [/no contractor \d+/, () => "empresa não encontrada (ou fora do que seu perfil pode ver)."],
  [/is not a date/, () => "data inválida."],
  [/give at most one of/, () => "escolha só uma forma: veículos, empresa ou rota."],
  [/at most 1000 vehicles/, () => "escolha no máximo 1000 veículos."],
];

export const TOO_BIG = "relatório grande demais para mostrar na tela. Escolha menos veículos ou um período menor, " +
  "ou use os botões de exportar.";

export function refused(err) {
  if (err instanceof RangeError) return [["to", TOO_BIG]];
  if (!(err instanceof ApiError)) {
    return [[null, err instanceof SyntaxError ? "o relatório chegou incompleto. Tente de novo."
      : explain(err)]];
  }
  const name = fieldName(err.field);
  const key = name && name.replace(/_time$/, "");
  const detail = String(err.body.detail || "");
  for (const [pattern, sentence] of DETAILS) {
    const m = pattern.exec(detail);
    if (m) return [[key, sentence(...m.slice(1))]];
  }
  if (err.status === 422 && key) return [[key, "valor inválido."]];
  // Anything else: the generic sentence, its field named by the label the error is shown with.
  return [[key, explain(key ? new ApiError(err.status, { detail: err.body.detail }) : err, LABELS)]];
}
