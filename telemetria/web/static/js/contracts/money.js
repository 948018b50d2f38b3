// Money and the payment rule as people read them (pt-BR): "R$ 1.234,56", and the rule as sentences.
// Amounts arrive as JSON numbers with two decimals (the API never sends a float's noise), so toFixed(2)
// writes them back exactly; the page never adds money up itself.
import { number } from "../formats.js";

// 1234.5 → "R$ 1.234,50"; "—" when there is no amount.
export function brl(x) {
  if (x === null || x === undefined || x === "" || !Number.isFinite(Number(x))) return "—";
  const [int, cents] = Math.abs(Number(x)).toFixed(2).split(".");
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ".");
  return `${Number(x) < 0 ? "−" : ""}R$ ${grouped},${cents}`;
}

// A price as typed ("4,35", "R$ 1.234,50", "4.35") → the decimal text the API takes ("4.35"), or null when
// it is not a number of reais with at most two decimals. Text, not a float: the value never loses a cent.
export function parseMoney(text) {
  if (text === null || text === undefined) return null;
  let s = String(text).trim().replace(/^R\$\s*/i, "").replace(/\s/g, "");
  if (s === "") return null;
  if (s.includes(",")) s = s.replace(/\./g, "").replace(",", ".");
  return /^\d{1,10}(\.\d{1,2})?$/.test(s) ? s : null;
}

// 4.35 → "4,35" (for a form field holding a price).
export function moneyField(x) {
  return x === null || x === undefined ? "" : Number(x).toFixed(2).replace(".", ",");
}

export const pct = (x) => `${number(x, Number.isInteger(Number(x)) ? 0 : 1)} %`;

export const PARTIAL_PAY = [["proportional", "em proporção à cobertura"], ["declared_km", "pelo km declarado inteiro"],
  ["none", "não é paga"]];

// The rule as the sentences shown on a contract and on every boletim.
export function ruleLines(rule) {
  if (!rule) return [];
  const partial = (PARTIAL_PAY.find(([k]) => k === rule.partial_pay) || [null, rule.partial_pay])[1];
  return [
    `Realizada: cobertura da rota de ${pct(rule.made_min_coverage_pct)} ou mais — paga pelo km declarado da rota.`,
    `Parcial: cobertura de ${pct(rule.partial_min_coverage_pct)} a menos de ${pct(rule.made_min_coverage_pct)} — `
      + (rule.partial_pay === "none" ? "não é paga." : `paga ${partial}.`),
    `Não realizada: cobertura abaixo de ${pct(rule.partial_min_coverage_pct)} — não é paga.`,
    rule.off_route_km_paid ? "Km rodados fora da rota: pagos." : "Km rodados fora da rota: não são pagos.",
    rule.justified_paid ? "Corrida justificada: paga pelo km declarado."
      : "Corrida justificada: não é infração, mas só é paga pelo que a cobertura pagar.",
    "Corrida realizada fora do horário (justificativa com a hora): julgada pelo GPS a partir dessa hora, no mesmo dia — "
      + "paga como realizada se a cobertura chegar à de realizada, num trajeto que não seja outra corrida da rota.",
  ];
}

// A short form of the rule for a table cell.
export function ruleShort(rule) {
  if (!rule) return "—";
  const partial = { proportional: "proporcional", declared_km: "integral", none: "sem pagamento" }[rule.partial_pay];
  return `≥ ${pct(rule.made_min_coverage_pct)} realizada; ≥ ${pct(rule.partial_min_coverage_pct)} parcial (${partial})`;
}
