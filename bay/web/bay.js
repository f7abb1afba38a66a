// The bay's glue: loads bay.wasm (plain exports, no wasm-bindgen), builds a
// panel per scenario from the table the wasm gives, runs a scenario when a
// knob moves and draws its series as SVG. It decides nothing itself: every
// number plotted is what weir's code returned.
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

const SVG = 'http://www.w3.org/2000/svg';
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

function el(tag, attrs, parent) {
  const e = tag.startsWith('svg:') ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  if (parent) parent.appendChild(e);
  return e;
}

function tick(v) {
  if (Math.abs(v) >= 100 || v === Math.trunc(v)) return v.toFixed(0);
  return Math.abs(v) >= 1 ? v.toFixed(1) : v.toFixed(2);
}

// One plot: the first column is x; each further column a line. Each line
// carries its values (data-values) so that a test reads back exactly what
// was drawn.
function plot(parent, series, columns) {
  const w = 640, h = 220, left = 52, right = 150, top = 12, bottom = 30;
  const svg = el('svg:svg', { width: w, height: h, viewBox: `0 0 ${w} ${h}`, 'data-x': columns[0] }, parent);
  const x = series.columns[columns[0]] || [];
  svg.setAttribute('data-x-values', JSON.stringify(x));
  const ys = columns.slice(1).map((c) => series.columns[c] || []);
  const fin = (v) => v !== null && Number.isFinite(v);
  const xs = x.filter(fin);
  const xmin = Math.min(...xs), xmax = Math.max(...xs);
  let ymax = Math.max(0, ...ys.flat().filter(fin));
  ymax = ymax <= 0 ? 1 : ymax * 1.05;
  const xspan = xmax > xmin ? xmax - xmin : 1;
  const px = (v) => left + ((v - xmin) / xspan) * (w - left - right);
  const py = (v) => h - bottom - (v / ymax) * (h - top - bottom);
  el('svg:path', { d: `M${left} ${top}V${h - bottom}H${w - right}`, stroke: '#444', fill: 'none' }, svg);
  for (let i = 0; i <= 4; i++) {
    const yv = (ymax * i) / 4, xv = xmin + (xspan * i) / 4;
    el('svg:text', { x: left - 4, y: py(yv) + 4, 'text-anchor': 'end', 'font-size': 10, text: tick(yv) }, svg);
    el('svg:text', { x: px(xv), y: h - bottom + 13, 'text-anchor': 'middle', 'font-size': 10, text: tick(xv) }, svg);
  }
  el('svg:text', { x: (left + w - right) / 2, y: h - 4, 'text-anchor': 'middle', 'font-size': 11, text: columns[0] }, svg);
  columns.slice(1).forEach((name, i) => {
    const colour = COLOURS[i % COLOURS.length];
    let d = '', pen = 'M';
    ys[i].forEach((yv, j) => {
      if (!fin(x[j]) || !fin(yv)) { pen = 'M'; return; }
      d += `${pen}${px(x[j]).toFixed(1)} ${py(yv).toFixed(1)}`;
      pen = 'L';
    });
    el('svg:path', { d, stroke: colour, 'stroke-width': 1.5, fill: 'none', 'data-column': name,
      'data-values': JSON.stringify(ys[i]) }, svg);
    el('svg:text', { x: w - right + 8, y: top + 10 + 14 * i, fill: colour, 'font-size': 11, text: name }, svg);
  });
}

function redraw(p) {
  const seed = Number(document.getElementById('seed').value) || 0;
  const series = bay.run(p.index, p.values, seed);
  p.series = series;
  p.plots.textContent = '';
  const notes = Object.entries(series.notes);
  if (Object.keys(series.columns).length === 0) {
    el('p', { class: 'invalid', text: 'These knobs make no valid policy: ' + notes.map(([k]) => k).join(', ') }, p.plots);
  } else {
    for (const columns of p.meta.plots) plot(p.plots, series, columns);
    if (notes.length) {
      el('p', { class: 'notes', text: notes.map(([k, v]) => `${k}: ${v === null ? '—' : +v.toFixed(3)}`).join(' · ') }, p.plots);
    }
  }
  if (p.c && p.c.style.display === 'block') p.c.value = bay.cLiteral(p.index, p.values);
  p.section.dataset.runs = String(Number(p.section.dataset.runs || 0) + 1);
}

function panel(meta, index, hash) {
  const section = el('section', { class: 'panel', id: 'panel-' + meta.id, 'data-id': meta.id }, document.getElementById('panels'));
  el('h2', { text: meta.title }, section);
  el('p', { class: 'about', text: meta.about }, section);
  const body = el('div', { class: 'body' }, section);
  const knobs = el('div', { class: 'knobs' }, body);
  const plots = el('div', { class: 'plots' }, body);
  const p = { meta, index, section, plots, values: meta.knobs.map((k) => hash[meta.id + '.' + k.name] ?? k.default), inputs: [] };
  meta.knobs.forEach((k, i) => {
    const row = el('div', { class: 'knob' + (k.policy ? '' : ' traffic') }, knobs);
    el('label', { for: `${meta.id}-${k.name}`, text: k.label }, row);
    const range = el('input', { type: 'range', min: k.min, max: k.max, step: k.step, value: p.values[i] }, row);
    const num = el('input', { type: 'number', id: `${meta.id}-${k.name}`, 'data-knob': k.name, step: 'any', value: p.values[i] }, row);
    const set = (v) => {
      if (!Number.isFinite(v)) return;
      p.values[i] = v; range.value = v; num.value = v;
      redraw(p); writeHash();
    };
    range.addEventListener('input', () => set(Number(range.value)));
    num.addEventListener('change', () => set(Number(num.value)));
    p.inputs.push({ range, num });
  });
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
  document.getElementById('status').textContent = `${meta.length} panels, from bay.wasm`;
  bay.ready = true;
  document.body.dataset.ready = 'true';
}

start().catch((e) => {
  document.getElementById('status').textContent = 'could not start: ' + e;
});
