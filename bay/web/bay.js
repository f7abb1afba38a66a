// The bay's glue: loads bay.wasm (plain exports, no wasm-bindgen), builds a
// panel per scenario from the table the wasm gives (its knobs, what each
// column holds, its plots), runs a scenario when a knob moves and draws its
// series with uPlot. It decides nothing itself: every number plotted is
// what weir's code returned.
//
// uPlot (npm's uplot, served by `bay serve` from bay/node_modules): a small
// library made for many live time series, drawn on canvas; its axes, its
// readout under the cursor (the legend) and its drag-to-zoom are what the
// page uses.
'use strict';

const bay = { panels: {}, ready: false };
window.bay = bay;

let wasm;
const decoder = new TextDecoder();

function text(len) {
  return decoder.decode(new Uint8Array(wasm.memory.buffer, wasm.bay_text_ptr(), len));
}

function withKnobs(values, call) {
  const ptr = wasm.bay_buffer(values.length);
  new Float64Array(wasm.memory.buffer, ptr, values.length).set(values);
  return call();
}

bay.run = (index, values, seed) =>
  JSON.parse(withKnobs(values, () => text(wasm.bay_run(index, seed))));
bay.cLiteral = (index, values) => withKnobs(values, () => text(wasm.bay_c_literal(index)));

// The address: #seed=42&breaker.k=2 — only what differs from the presets.
function readHash() {
  const out = {};
  for (const part of location.hash.replace(/^#/, '').split('&')) {
    const [k, v] = part.split('=');
    if (k && v !== undefined && !Number.isNaN(Number(v))) out[decodeURIComponent(k)] = Number(v);
  }
  return out;
}

function writeHash() {
  const parts = [];
  const seed = Number(document.getElementById('seed').value);
  if (seed !== 42) parts.push('seed=' + seed);
  for (const p of Object.values(bay.panels)) {
    p.meta.knobs.forEach((k, i) => {
      if (p.values[i] !== k.default) parts.push(p.meta.id + '.' + k.name + '=' + p.values[i]);
    });
  }
  history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname);
}

// One palette: every column of a kind (bay/src/lib.rs, KINDS) is drawn the
// same way on every panel. Admitted, refused, probe and limit have colours
// no other kind uses; the variants a panel compares (limiters, words,
// jitters) have colours of their own and dashes, and the wider lines of a
// plot come first so that the thinner ones stay visible over them.
const PALETTE = {
  admitted: { stroke: '#2ca02c', width: 2 },
  refused: { stroke: '#d62728', width: 2 },
  probe: { stroke: '#ff7f0e', width: 2, points: true },
  limit: { stroke: '#000000', width: 1.5, dash: [6, 4] },
  held: { stroke: '#1f77b4', width: 3.5 },
  idle: { stroke: '#17becf', width: 1.5, dash: [5, 3] },
  offered: { stroke: '#7f7f7f', width: 1.5, dash: [2, 3] },
  retried: { stroke: '#e377c2', width: 2 },
  level: { stroke: '#9467bd', width: 2 },
  made: { stroke: '#bcbd22', width: 3 },
  evicted: { stroke: '#8c564b', width: 1.5, dash: [6, 3] },
  expected: { stroke: '#555555', width: 1.5, dash: [3, 3] },
  overflowed: { stroke: '#6a3d9a', width: 4 },
  axis: { stroke: '#000000', width: 1 },
  bucket: { stroke: '#3949ab', width: 4 },
  sliding: { stroke: '#00897b', width: 2, dash: [8, 4] },
  period: { stroke: '#c2185b', width: 1.5, dash: [2, 3] },
  'rate word': { stroke: '#3949ab', width: 3 },
  'GCRA word': { stroke: '#c2185b', width: 1.5, dash: [6, 3] },
  rigid: { stroke: '#90a4ae', width: 6 },
  full: { stroke: '#3949ab', width: 2 },
  equal: { stroke: '#00897b', width: 2, dash: [8, 4] },
  decorrelated: { stroke: '#c2185b', width: 2, dash: [2, 3] },
  spread: { stroke: '#f9a825', width: 2, dash: [10, 3, 2, 3] },
  SHEDDABLE: { stroke: '#90a4ae', width: 1.5, dash: [2, 3] },
  SHEDDABLE_PLUS: { stroke: '#00897b', width: 2, dash: [8, 4] },
  CRITICAL: { stroke: '#3949ab', width: 2.5 },
  CRITICAL_PLUS: { stroke: '#c2185b', width: 3.5 },
  'partition A': { stroke: '#3949ab', width: 2.5 },
  'partition B': { stroke: '#f9a825', width: 2.5, dash: [8, 4] },
  'keyed table': { stroke: '#00897b', width: 2.5 },
  'bloom array': { stroke: '#f9a825', width: 2, dash: [8, 4] },
};
bay.palette = PALETTE;

// Ticks on 1, 2 and 5 times a power of ten; on a count axis whole ones only.
const ROUND = [], WHOLE = [];
for (let e = -12; e <= 15; e++) {
  for (const m of [1, 2, 5]) {
    const v = Number((m * 10 ** e).toPrecision(1));
    ROUND.push(v);
    if (e >= 0) WHOLE.push(v);
  }
}

// A value as the readout shows it: a whole number as it is, else to four
// significant digits; then its unit.
function shown(v, unit) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const n = Number.isInteger(v) ? v : Number(v.toPrecision(4));
  return unit ? `${n} ${unit}` : String(n);
}

function axisTitle(title, unit) {
  return unit ? `${title} (${unit})` : title;
}

// The y range: from 0 (or the least value, if below), to a round number
// above the largest.
function yRange(u, min, max) {
  const lo = Math.min(0, min ?? 0);
  const hi = max === null || max === undefined || max <= lo ? lo + 1 : max;
  return uPlot.rangeNum(lo, hi, 0.1, true);
}

function el(tag, attrs, parent) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  if (parent) parent.appendChild(e);
  return e;
}

// The words a panel's choices are set to: a series whose kind is one of
// them is the one the copied C chooses (backoff's jitter), drawn thicker.
function chosenWords(p) {
  const words = new Set();
  p.meta.knobs.forEach((k, i) => {
    if (k.choices.length) words.add(k.choices[Math.round((p.values[i] - k.min) / k.step)]);
  });
  return words;
}

// The uPlot options of one plot of panel `p`: every axis titled with its
// unit, the readout (legend) giving each series' value and unit at the
// cursor, drag to zoom on x (double-click to zoom back out), the cursor
// shared by the panel's plots over the same x.
function plotOptions(p, plot, width) {
  const cols = p.meta.columns;
  const xcol = cols[plot.x];
  const ycols = plot.series.map((n) => cols[n]);
  const unit = ycols[0].unit;
  const whole = ycols.every((c) => c.whole);
  const chosen = chosenWords(p);
  return {
    width,
    height: 250,
    scales: { x: { time: false }, y: { range: yRange } },
    axes: [
      { label: axisTitle(plot.xTitle, xcol.unit), incrs: xcol.whole ? WHOLE : ROUND, stroke: '#333' },
      { label: axisTitle(plot.yTitle, unit), incrs: whole ? WHOLE : ROUND, size: 62, stroke: '#333' },
    ],
    series: [
      { label: plot.xTitle, value: (u, v) => shown(v, xcol.unit) },
      ...plot.series.map((name, i) => {
        const look = PALETTE[ycols[i].kind] || PALETTE.axis;
        const mine = chosen.has(ycols[i].kind);
        return {
          label: mine ? `${name} ★` : name,
          stroke: look.stroke,
          width: mine ? Math.max(look.width, 2) * 2 : look.width,
          dash: look.dash,
          // Marked points (the probe's) only where the series is not 0.
          points: look.points ? {
            show: true, size: 7, fill: look.stroke,
            filter: (u, si) => u.data[si].flatMap((v, j) => (v ? [j] : [])),
          } : {},
          value: (u, v) => shown(v, unit),
        };
      }),
    ],
    cursor: { sync: { key: `${p.meta.id}/${plot.x}` }, drag: { x: true, y: false } },
    legend: { live: true },
  };
}

function plotWidth(p) {
  return Math.max(280, p.charts.clientWidth);
}

function redraw(p) {
  const seed = Number(document.getElementById('seed').value) || 0;
  const series = bay.run(p.index, p.values, seed);
  p.series = series;
  for (const u of p.uplots) u.destroy();
  p.uplots = [];
  p.charts.textContent = '';
  p.notes.textContent = '';
  const notes = Object.entries(series.notes);
  if (Object.keys(series.columns).length === 0) {
    el('p', { class: 'invalid', text: 'These knobs make no valid policy: ' + notes.map(([k]) => k).join(', ') }, p.charts);
  } else {
    const width = plotWidth(p);
    p.meta.plots.forEach((plot, i) => {
      const box = el('div', { class: 'plot', 'data-plot': String(i) }, p.charts);
      const data = [plot.x, ...plot.series].map((c) => series.columns[c] || []);
      p.uplots.push(new uPlot(plotOptions(p, plot, width), data, box));
    });
    if (notes.length) {
      p.notes.textContent = notes.map(([k, v]) => `${k}: ${v === null ? '—' : +v.toFixed(3)}`).join(' · ');
    }
  }
  if (p.c && p.c.style.display === 'block') p.c.value = bay.cLiteral(p.index, p.values);
  p.section.dataset.runs = String(Number(p.section.dataset.runs || 0) + 1);
}

// What a knob does, in a line: its own words, else the first sentence of
// the header's comment on its C field (the whole comment is its tooltip).
function docLine(k) {
  if (k.about) return k.about;
  const first = k.doc.replace(/`/g, '').split(/(?<=[.;])\s/)[0].replace(/[;]$/, '.');
  return first.length > 140 ? first.slice(0, 137) + '…' : first;
}

function knobRow(p, k, i, parent) {
  const id = `${p.meta.id}-${k.name}`;
  const row = el('div', { class: 'knob' + (k.policy ? '' : ' traffic') }, parent);
  const tip = [k.field ? `${k.field}: ${k.doc}` : '', k.about].filter(Boolean).join('\n\n');
  if (tip) row.title = tip;
  const label = el('label', { for: id, text: k.label }, row);
  if (k.unit) el('span', { class: 'unit', text: ` (${k.unit})` }, label);
  const line = docLine(k);
  if (line) el('span', { class: 'doc', text: line }, row);
  const set = (v) => {
    if (!Number.isFinite(v)) return;
    p.values[i] = v;
    for (const input of Object.values(p.inputs[i])) input.value = v;
    redraw(p); writeHash();
  };
  if (k.choices.length) {
    // A choice: its words; each option's value is the integer the copied C
    // writes (the C enum's value).
    const select = el('select', { id, 'data-knob': k.name }, row);
    k.choices.forEach((word, c) => el('option', { value: String(k.min + c * k.step), text: word }, select));
    select.value = String(p.values[i]);
    select.addEventListener('change', () => set(Number(select.value)));
    p.inputs.push({ select });
  } else {
    const range = el('input', { type: 'range', min: k.min, max: k.max, step: k.step, value: p.values[i], 'aria-label': k.label }, row);
    const num = el('input', { type: 'number', id, 'data-knob': k.name, step: 'any', value: p.values[i] }, row);
    range.addEventListener('input', () => set(Number(range.value)));
    num.addEventListener('change', () => set(Number(num.value)));
    p.inputs.push({ range, num });
  }
}

function panel(meta, index, hash) {
  const section = el('section', { class: 'panel', id: 'panel-' + meta.id, 'data-id': meta.id }, document.getElementById('panels'));
  el('h2', { text: meta.title }, section);
  el('p', { class: 'about', text: meta.about }, section);
  const body = el('div', { class: 'body' }, section);
  const knobs = el('div', { class: 'knobs' }, body);
  const plots = el('div', { class: 'plots' }, body);
  const charts = el('div', { class: 'charts' }, plots);
  const notes = el('p', { class: 'notes' }, plots);
  const p = {
    meta, index, section, charts, notes, uplots: [], inputs: [],
    values: meta.knobs.map((k) => hash[meta.id + '.' + k.name] ?? k.default),
  };
  meta.knobs.forEach((k, i) => knobRow(p, k, i, knobs));
  if (meta.c) {
    const button = el('button', { class: 'copy-c', text: 'copy as C' }, knobs);
    p.c = el('textarea', { class: 'c', readonly: '' }, knobs);
    button.addEventListener('click', () => {
      p.c.value = bay.cLiteral(index, p.values);
      p.c.style.display = 'block';
      p.c.select();
      if (navigator.clipboard) navigator.clipboard.writeText(p.c.value).catch(() => {});
    });
  }
  bay.panels[meta.id] = p;
  redraw(p);
}

async function start() {
  const bytes = await (await fetch('bay.wasm')).arrayBuffer();
  const { instance } = await WebAssembly.instantiate(bytes, {});
  wasm = instance.exports;
  const meta = JSON.parse(text(wasm.bay_meta()));
  bay.meta = meta;
  const hash = readHash();
  const seed = document.getElementById('seed');
  if (hash.seed !== undefined) seed.value = hash.seed;
  meta.forEach((m, i) => panel(m, i, hash));
  seed.addEventListener('change', () => { Object.values(bay.panels).forEach(redraw); writeHash(); });
  document.getElementById('reset').addEventListener('click', () => {
    location.hash = ''; location.reload();
  });
  let resizing;
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      for (const p of Object.values(bay.panels)) {
        for (const u of p.uplots) u.setSize({ width: plotWidth(p), height: u.height });
      }
    }, 100);
  });
  document.getElementById('status').textContent = `${meta.length} panels, from bay.wasm`;
  bay.ready = true;
  document.body.dataset.ready = 'true';
}

start().catch((e) => {
  document.getElementById('status').textContent = 'could not start: ' + e;
});
