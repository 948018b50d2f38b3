// Which columns a report's table shows: first the ones its readers look for (the report's columns without
// `more`), the others on demand from "Mais colunas", remembered per report in this browser. The CSV and the
// API keep every column whatever is chosen here.
import { el } from "../api.js";

const key = (kind) => `telemetria.colunas.${kind}`;

function extra(kind) {
  try {
    const saved = JSON.parse(localStorage.getItem(key(kind)) || "[]");
    return new Set(Array.isArray(saved) ? saved : []);
  } catch {
    return new Set();
  }
}

// The columns to draw: every first column, and the others chosen.
export function visible(kind, columns) {
  const chosen = extra(kind);
  return columns.filter((c) => !c.more || chosen.has(c.h));
}

// The "Mais colunas" box for `columns`, or null when the report has no others; onChange() redraws.
export function chooser(kind, columns, onChange) {
  const more = columns.filter((c) => c.more);
  if (!more.length) return null;
  const chosen = extra(kind);
  const summary = el("summary", {});
  const count = () => {
    summary.textContent = `Mais colunas (${more.filter((c) => chosen.has(c.h)).length} de ${more.length} mostradas)`;
  };
  count();
  const boxes = more.map((c) => el("label", { class: "choice" },
    el("input", { type: "checkbox", value: c.h, checked: chosen.has(c.h) }), " ", c.h));
  const box = el("details", { class: "columns" }, summary,
    el("div", { class: "choices", role: "group", "aria-label": "Colunas a mostrar na tabela" }, boxes),
    el("p", { class: "hint" }, "A tabela começa pelas colunas principais; o arquivo CSV traz todas."));
  box.addEventListener("change", (e) => {
    const input = e.target;
    if (input.checked) chosen.add(input.value); else chosen.delete(input.value);
    localStorage.setItem(key(kind), JSON.stringify([...chosen]));
    count();
    onChange();
  });
  return box;
}
