// Charts drawn as SVG built from DOM nodes: axes with pt-BR ticks (formats.js), bars, lines, horizontal
// reference lines, marked ranges and a cursor, each chart in a <figure> with its title, a description in
// words and a link to the table that holds its numbers (its text alternative).
//
// Why our own module and not a vendored library: the three charts need bars, a line, a reference line,
// ranges and a cursor: about 300 lines here. The small libraries that fit (uPlot, Frappe Charts, Chartist)
// draw on a canvas or take options that end up as HTML strings, and the big ones (Chart.js, ECharts, D3)
// are 70–900 kB for what we use a sliver of. Built from DOM nodes, every label is text (never HTML), the
// picture prints as vectors, scales with the page (viewBox), and a test can read what was drawn.
import { number, wallMs } from "./formats.js";

const NS = "http://www.w3.org/2000/svg";
const MIN = 60000, HOUR = 3600000, DAY = 86400000;
const TIME_STEPS = [MIN, 2 * MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR,
  12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY];
const CHAR_PX = 7; // an axis label's character, to keep labels from overlapping

// An SVG element: svg("rect", {x: 1}, child, "text", ...). Text is always a text node.
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function html(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// --- scales and ticks ------------------------------------------------------------------------------
// Round steps (1, 2, 2,5, 5 × 10^k) from 0 to at least `max`, about `count` of them.
export function niceTicks(max, count = 5) {
  const top = max > 0 ? max : 1;
  const raw = top / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = Number(([1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)).toFixed(10));
  const ticks = [0];
  while (ticks[ticks.length - 1] < top - 1e-9 && ticks.length < 50) ticks.push(Number((ticks.length * step).toFixed(10)));
  const decimals = String(step).split(".")[1];
  return { ticks, places: decimals ? decimals.length : 0 };
}

const linear = (d0, d1, r0, r1) => (v) => (d1 === d0 ? (r0 + r1) / 2 : r0 + ((v - d0) / (d1 - d0)) * (r1 - r0));
const px = (v) => String(Math.round(v * 10) / 10);

const pad2 = (n) => String(n).padStart(2, "0");
const dayMonth = (ms) => { const d = new Date(ms); return `${pad2(d.getUTCDate())}/${pad2(d.getUTCMonth() + 1)}`; };
const clock = (ms) => { const d = new Date(ms); return `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`; };

// Ticks of a wall-clock span [a, b] (ms): a round step that leaves room for each label.
function timeTicks(a, b, width) {
  const room = Math.max(2, Math.floor(width / (CHAR_PX * 7)));
  const step = TIME_STEPS.find((s) => (b - a) / s <= room) || TIME_STEPS[TIME_STEPS.length - 1];
  const out = [];
  for (let t = Math.ceil(a / step) * step; t <= b; t += step) {
    out.push({ t, label: step >= DAY || (t % DAY === 0 && b - a > DAY) ? dayMonth(t) : clock(t) });
  }
  return out;
}

// --- the figure: caption, picture, legend, words ----------------------------------------------------
let serial = 0;

// A <figure> in `box` holding a chart that is redrawn whenever the box changes width (labels keep their size).
// spec: { title, unit, summary, table (id, or ids, of the tables with the numbers: the first is linked),
// legend: [[cls, text]], controls (an element above the picture) }.
function figure(box, spec, draw) {
  const id = `chart-${++serial}`;
  const tables = [spec.table || []].flat();
  const caption = html("figcaption", { id: `${id}-title` }, spec.title);
  const desc = `${id}-desc`;
  const picture = svg("svg", { role: "img", "aria-labelledby": `${id}-title`,
    "aria-describedby": [desc, ...tables].join(" "), class: "chart-svg", focusable: "false" });
  const legend = html("ul", { class: "chart-legend", "aria-hidden": "true" },
    (spec.legend || []).map(([cls, text]) => html("li", {}, html("span", { class: `swatch ${cls}` }), text)));
  const note = html("p", { class: "chart-note", id: desc }, spec.summary || "",
    tables.length ? [" ", html("a", { href: `#${tables[0]}` }, spec.tableText || "Os valores estão na tabela.")] : []);
  const fig = html("figure", { class: `chart ${spec.class || ""}`.trim(), id }, caption, spec.controls || null,
    picture, legend, note);
  box.replaceChildren(fig);
  let width = 0;
  const redraw = () => {
    const w = Math.round(picture.getBoundingClientRect().width || box.clientWidth || 600);
    if (!w || w === width) return;
    width = w;
    const h = Math.round(Math.max(180, Math.min(280, w * 0.42)));
    picture.setAttribute("viewBox", `0 0 ${w} ${h}`);
    picture.setAttribute("height", String(h));
    picture.replaceChildren(svg("title", {}, spec.title), svg("desc", {}, spec.summary || ""), ...draw(w, h));
  };
  redraw();
  const watch = new ResizeObserver(() => { if (fig.isConnected) redraw(); else watch.disconnect(); });
  watch.observe(picture);
  return { fig, picture, redraw: () => { width = 0; redraw(); } };
}

// The plot area of a chart w × h with room for the y labels, and its y axis from 0 to the ticks' top.
function frame(w, h, max, unit, exact = false) {
  const { ticks, places } = niceTicks(exact ? max : max * 1.05); // room above the highest bar or peak
  const labels = ticks.map((v) => number(v, places));
  const left = Math.max(...labels.map((l) => l.length), unit.length) * CHAR_PX + 12;
  const box = { left, right: w - 12, top: 18, bottom: h - 26 };
  const y = linear(0, ticks[ticks.length - 1], box.bottom, box.top);
  const axis = svg("g", { class: "axis y" },
    svg("text", { x: 4, y: 11, class: "unit" }, unit),
    ticks.map((v, i) => svg("g", { class: "tick", "data-value": String(v) },
      svg("line", { x1: box.left, x2: box.right, y1: px(y(v)), y2: px(y(v)), class: i ? "grid" : "base" }),
      svg("text", { x: box.left - 6, y: px(y(v) + 4), "text-anchor": "end" }, labels[i]))));
  return { box, y, axis };
}

// A dashed line across the plot at `value`, labelled at its right end.
function refLine(box, y, { value, label, cls }) {
  const at = px(y(value));
  return svg("g", { class: `ref ${cls || ""}`.trim(), "data-value": String(value) },
    svg("line", { x1: box.left, x2: box.right, y1: at, y2: at }),
    svg("text", { x: box.right - 2, y: px(y(value) - 4), "text-anchor": "end" }, label));
}

// --- bars -------------------------------------------------------------------------------------------
// Grouped bars: one group per category ({label, title}), one bar per series ({name, cls, values}) in it.
// spec also: unit, places (of the values in the bars' titles), refs: [{value, label, cls}], max.
export function barChart(box, spec) {
  return figure(box, spec, (w, h) => {
    const values = spec.series.flatMap((s) => s.values).filter((v) => v !== null && v !== undefined);
    const max = Math.max(spec.max || 0, ...values, ...(spec.refs || []).map((r) => r.value));
    const { box: b, y, axis } = frame(w, h, max, spec.unit, spec.max !== undefined && max <= spec.max);
    const n = spec.categories.length;
    const band = (b.right - b.left) / Math.max(1, n);
    const bar = Math.max(1, (band * 0.8) / spec.series.length);
    const every = Math.max(1, Math.ceil((Math.max(...spec.categories.map((c) => c.label.length)) * CHAR_PX + 6) / band));
    const bars = spec.series.map((s, k) => svg("g", { class: `series ${s.cls}`, "data-series": s.name },
      s.values.map((v, i) => {
        if (v === null || v === undefined) return null;
        const x = b.left + band * i + band * 0.1 + bar * k;
        const top = v > 0 ? y(v) : b.bottom - 2; // a 0 is a sliver on the axis: not the same as no value (nothing)
        const text = number(v, spec.places);
        const rect = svg("rect", { class: `bar ${s.cls}`, x: px(x), y: px(top), width: px(bar),
          height: px(b.bottom - top), "data-value": String(v), "data-category": String(i) },
        svg("title", {}, `${spec.categories[i].title || spec.categories[i].label}: ${s.name} ${text} ${spec.unit}`));
        if (text.length * CHAR_PX + 4 > bar) return rect; // no room for the figure over the bar
        const inside = b.bottom - top > 18;
        return [rect, svg("text", { class: `value ${inside ? "in" : "out"}`, x: px(x + bar / 2),
          y: px(inside ? top + 13 : top - 4), "text-anchor": "middle" }, text)];
      })));
    const labels = svg("g", { class: "axis x" }, spec.categories.map((c, i) => (i % every ? null
      : svg("text", { x: px(b.left + band * (i + 0.5)), y: h - 8, "text-anchor": "middle" }, c.label))));
    return [axis, ...bars, labels, ...(spec.refs || []).map((r) => refLine(b, y, r))];
  });
}

// --- lines over time --------------------------------------------------------------------------------
// Series over time: x is a list of ISO times (the API's, in the report's zone, drawn as written);
// series: [{name, cls, values, step}] (step: held until the next point, like a limit); ranges: [{from, to,
// title, cls}] marked across the plot; onPick(i): the index of the point nearest where the chart was clicked.
// Returns { cursor(i) }: a vertical line at point i.
export function timeChart(box, spec) {
  const t = spec.x.map(wallMs);
  let at = null; // the cursor's point
  let place = null; // draws the cursor in the current drawing
  let drawn = null; // the current drawing's width, plot edges and time span, to read a click
  const { picture } = figure(box, spec, (w, h) => {
    const values = spec.series.flatMap((s) => s.values).filter((v) => v !== null && v !== undefined);
    const { box: b, y, axis } = frame(w, h, Math.max(...values, 0), spec.unit);
    const a = t[0], z = t[t.length - 1] > a ? t[t.length - 1] : a + MIN;
    const x = linear(a, z, b.left, b.right);
    const ticks = timeTicks(a, z, b.right - b.left);
    const xAxis = svg("g", { class: "axis x" }, ticks.map((k) => svg("g", { class: "tick" },
      svg("line", { x1: px(x(k.t)), x2: px(x(k.t)), y1: b.bottom, y2: b.bottom + 4 }),
      svg("text", { x: px(x(k.t)), y: h - 8, "text-anchor": "middle" }, k.label))));
    const ranges = svg("g", { class: "ranges" }, (spec.ranges || []).map((r) => {
      const x0 = x(wallMs(r.from)), x1 = Math.max(x(wallMs(r.to)), x0 + 2);
      return svg("rect", { class: `range ${r.cls || ""}`.trim(), x: px(x0), y: b.top, width: px(x1 - x0),
        height: px(b.bottom - b.top), "data-from": r.from, "data-to": r.to }, svg("title", {}, r.title));
    }));
    const lines = spec.series.map((s) => svg("path", { class: `line ${s.cls}`, d: path(t, s.values, x, y, s.step),
      "data-series": s.name, fill: "none" }));
    const cursor = svg("line", { class: "cursor", y1: b.top - 4, y2: b.bottom, visibility: "hidden" });
    place = () => {
      if (at === null || !t.length) return;
      const cx = px(x(t[at]));
      cursor.setAttribute("x1", cx);
      cursor.setAttribute("x2", cx);
      cursor.setAttribute("data-index", String(at));
      cursor.setAttribute("visibility", "visible");
    };
    place();
    // Under everything else, so an episode still shows its title on hover; clicks reach the picture anyway.
    const hit = svg("rect", { class: "hit", x: b.left, y: b.top, width: px(b.right - b.left), height: px(b.bottom - b.top),
      fill: "transparent" });
    drawn = { w, left: b.left, right: b.right, a, z };
    return [hit, axis, ranges, xAxis, ...lines, ...(spec.refs || []).map((r) => refLine(b, y, r)), cursor];
  });
  if (spec.onPick) {
    picture.classList.add("pickable");
    picture.addEventListener("click", (e) => {
      if (!drawn || !t.length) return;
      const r = picture.getBoundingClientRect();
      const sx = ((e.clientX - r.left) / r.width) * drawn.w; // screen → drawing units (print or zoom may scale it)
      const want = drawn.a + ((sx - drawn.left) / (drawn.right - drawn.left)) * (drawn.z - drawn.a);
      spec.onPick(nearest(t, want));
    });
  }
  return { cursor: (i) => { at = i; if (place) place(); } };
}

// An SVG path through the points with a value; a gap (null) lifts the pen. A step series holds each value
// until the next point's time.
function path(t, values, x, y, step) {
  let d = "";
  let pen = false;
  for (let i = 0; i < t.length; i += 1) {
    const v = values[i];
    if (v === null || v === undefined) { pen = false; continue; }
    const X = px(x(t[i])), Y = px(y(v));
    if (!pen) d += `M${X} ${Y}`;
    else d += step ? `V${Y}` : `L${X} ${Y}`;
    if (step && i + 1 < t.length) d += `H${px(x(t[i + 1]))}`;
    pen = true;
  }
  return d;
}

// The index of the time in sorted `t` nearest `want`.
export function nearest(t, want) {
  let lo = 0, hi = t.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (t[mid] <= want) lo = mid; else hi = mid;
  }
  return Math.abs(t[hi] - want) < Math.abs(t[lo] - want) ? hi : lo;
}
