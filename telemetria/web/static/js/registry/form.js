// Forms in a modal <dialog>: one <label> per input, the server's refusal written under the field at
// fault, and (for edits) only the fields that really changed handed to the caller.
import { el } from "../api.js";
import { problems, sentence } from "./errors.js";

let serial = 0;

// A field's value as the API wants it: numbers as numbers, empty as null, booleans for checkboxes.
function coerce(field, raw) {
  if (field.type === "checkbox") return Boolean(raw);
  if (field.type === "weekdays") return [...(raw || [])].map(Number).sort();
  if (field.type === "file") return raw || null;
  if (raw === null || raw === undefined) return null;
  const text = String(raw).trim();
  if (text === "") return null;
  if (field.type === "number" || field.numeric) {
    const n = Number(text.replace(",", "."));
    return Number.isFinite(n) ? n : text; // the server names what is wrong with a non-number
  }
  return field.type === "password" ? String(raw) : text;
}

const WEEKDAYS = [[1, "Seg", "segunda-feira"], [2, "Ter", "terça-feira"], [3, "Qua", "quarta-feira"],
  [4, "Qui", "quinta-feira"], [5, "Sex", "sexta-feira"], [6, "Sáb", "sábado"], [7, "Dom", "domingo"]];

function control(field, id, value) {
  const common = { id, name: field.name, "aria-describedby": `${id}-help ${id}-err` };
  switch (field.type) {
    case "select": {
      const select = el("select", common);
      if (!field.required || value === null || value === undefined) {
        select.append(el("option", { value: "" }, field.empty || "—"));
      }
      for (const [v, label] of field.options) select.append(el("option", { value: String(v) }, label));
      select.value = value === null || value === undefined ? "" : String(value);
      return select;
    }
    case "checkbox":
      return el("input", { ...common, type: "checkbox", checked: Boolean(value) });
    case "textarea":
      return el("textarea", { ...common, rows: field.rows || 6, spellcheck: "false" }, value ?? "");
    case "weekdays": {
      const set = new Set((value || []).map(Number));
      return el("div", { class: "weekdays", id, role: "group", "aria-describedby": common["aria-describedby"] },
        WEEKDAYS.map(([n, short, long]) => el("label", { class: "inline" },
          el("input", { type: "checkbox", name: field.name, value: String(n), checked: set.has(n), "aria-label": long }),
          short)));
    }
    case "file":
      return el("input", { ...common, type: "file", accept: field.accept });
    default: {
      const input = el("input", {
        ...common, type: field.type || "text", min: field.min, max: field.max, step: field.step,
        placeholder: field.placeholder, autocomplete: field.autocomplete || "off", inputmode: field.inputmode,
        spellcheck: "false",
      });
      input.value = value === null || value === undefined ? "" : String(value);
      return input;
    }
  }
}

function readControl(field, node) {
  if (field.type === "checkbox") return node.checked;
  if (field.type === "weekdays") return [...node.querySelectorAll("input:checked")].map((i) => Number(i.value));
  if (field.type === "file") return node.files && node.files[0] ? node.files[0] : null;
  return node.value;
}

// Build a dialog and show it; resolves to what `onSubmit` answered, or null when cancelled.
// fields: [{ name, label, type, required, options, help, showIf(values), numeric, ... }]
// onSubmit(values, changed, ui): may throw an ApiError; ui.progress(fraction, text) shows progress.
export async function openForm({ title, fields, values = {}, submitLabel = "Salvar", onSubmit, intro, errorAlias }) {
  const n = ++serial;
  for (const f of fields) if (typeof f.options === "function") f.options = await f.options();
  const boxes = new Map();
  const grid = el("div", { class: "form-grid" });
  for (const f of fields) {
    const id = `f${n}-${f.name}`;
    const node = control(f, id, values[f.name] ?? f.default);
    const help = el("p", { class: "help", id: `${id}-help` }, f.help || "");
    const error = el("p", { class: "field-error", id: `${id}-err`, hidden: true });
    const mark = f.required ? el("span", { class: "req", "aria-hidden": "true" }, " *") : null;
    const box = f.type === "checkbox"
      ? el("div", { class: "field check", "data-field": f.name }, node, el("label", { for: id }, f.label), help, error)
      : f.type === "weekdays"
        ? el("fieldset", { class: "field wide", "data-field": f.name }, el("legend", {}, f.label, mark), node, help, error)
        : el("div", { class: `field${f.wide ? " wide" : ""}`, "data-field": f.name },
          el("label", { for: id }, f.label), mark, node, help, error);
    if (f.required && node.setAttribute && f.type !== "weekdays") node.setAttribute("aria-required", "true");
    if (!f.help) help.hidden = true;
    boxes.set(f.name, { f, box, node, error });
    grid.append(box);
  }
  const alert = el("div", { class: "form-alert", role: "alert", hidden: true });
  const bar = el("progress", { max: "100", "aria-label": "Progresso do envio" });
  const barText = el("span", {});
  const progressBox = el("div", { class: "upload-progress", role: "status", hidden: true }, bar, barText);
  const submit = el("button", { type: "submit", class: "primary" }, submitLabel);
  const cancel = el("button", { type: "button" }, "Cancelar");
  const form = el("form", { novalidate: true },
    el("h2", { id: `f${n}-title` }, title),
    intro ? el("p", { class: "muted" }, intro) : null,
    alert, grid, progressBox,
    el("div", { class: "actions" }, submit, cancel));
  const dialog = el("dialog", { class: "reg-dialog", "aria-labelledby": `f${n}-title` }, form);
  document.body.append(dialog);

  const current = () => Object.fromEntries([...boxes].map(([name, b]) => [name, coerce(b.f, readControl(b.f, b.node))]));
  const original = Object.fromEntries(fields.map((f) => [f.name, coerce(f, values[f.name] ?? null)]));
  const refresh = () => {
    const now = current();
    for (const { f, box } of boxes.values()) if (f.showIf) box.hidden = !f.showIf(now);
  };
  const clear = (b) => {
    b.error.hidden = true;
    b.error.textContent = "";
    b.node.removeAttribute("aria-invalid");
    b.node.removeAttribute("aria-errormessage");
  };
  const mark = (name, message) => {
    const b = boxes.get(name);
    if (!b || b.box.hidden) return false;
    b.error.textContent = message;
    b.error.hidden = false;
    b.node.setAttribute("aria-invalid", "true");
    b.node.setAttribute("aria-errormessage", b.error.id);
    return true;
  };
  form.addEventListener("input", (e) => {
    const name = e.target.name;
    if (boxes.has(name)) clear(boxes.get(name));
    refresh();
  });
  form.addEventListener("change", refresh);
  refresh();

  const ui = {
    progress(fraction, text) {
      progressBox.hidden = false;
      if (fraction === null || fraction === undefined) bar.removeAttribute("value");
      else bar.value = Math.round(fraction * 100);
      barText.textContent = text;
    },
  };

  return new Promise((resolve) => {
    let done = false;
    const finish = (result) => {
      if (done) return;
      done = true;
      dialog.close();
      dialog.remove();
      resolve(result);
    };
    cancel.addEventListener("click", () => finish(null));
    dialog.addEventListener("close", () => finish(null));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      for (const b of boxes.values()) clear(b);
      alert.hidden = true;
      const vals = current();
      const missing = fields.filter((f) => f.required && !boxes.get(f.name).box.hidden &&
        (vals[f.name] === null || (Array.isArray(vals[f.name]) && !vals[f.name].length)));
      for (const f of missing) mark(f.name, f.type === "weekdays" ? "Escolha pelo menos um dia." : "Campo obrigatório.");
      if (missing.length) { boxes.get(missing[0].name).node.focus(); return; }
      const changed = Object.fromEntries(Object.entries(vals).filter(([k, v]) =>
        !boxes.get(k).box.hidden && JSON.stringify(v) !== JSON.stringify(original[k])));
      submit.disabled = true;
      cancel.disabled = true;
      const label = submit.textContent;
      submit.textContent = "Salvando…";
      try {
        finish(await onSubmit(vals, changed, ui));
      } catch (err) {
        progressBox.hidden = true;
        let placed = 0;
        const labels = Object.fromEntries(fields.map((f) => [f.name, f.label]));
        for (const p of problems(err)) {
          const name = boxes.has(p.path.name) ? p.path.name : errorAlias ? errorAlias(p.path) : null;
          if (name && mark(name, p.message)) placed++;
        }
        if (placed) {
          boxes.get([...boxes.keys()].find((k) => boxes.get(k).node.getAttribute("aria-invalid")))?.node.focus();
        } else {
          alert.textContent = sentence(err, labels);
          alert.hidden = false;
        }
      } finally {
        submit.disabled = false;
        cancel.disabled = false;
        submit.textContent = label;
      }
    });
    dialog.showModal();
  });
}

// A yes/no question in a dialog (window.confirm cannot be styled nor read by tests).
export function confirmBox(question, yes = "Confirmar") {
  return new Promise((resolve) => {
    const ok = el("button", { type: "button", class: "primary" }, yes);
    const no = el("button", { type: "button" }, "Cancelar");
    const id = `q${++serial}`;
    const dialog = el("dialog", { class: "reg-dialog narrow", role: "alertdialog", "aria-label": "Confirmação",
      "aria-describedby": id }, el("p", { id }, question), el("div", { class: "actions" }, ok, no));
    document.body.append(dialog);
    const end = (answer) => { dialog.remove(); resolve(answer); };
    ok.addEventListener("click", () => { dialog.close(); end(true); });
    no.addEventListener("click", () => { dialog.close(); });
    dialog.addEventListener("close", () => { if (dialog.isConnected) end(false); });
    dialog.showModal();
    no.focus();
  });
}
