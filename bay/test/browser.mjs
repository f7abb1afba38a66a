// The bay in a real browser: Debian's Chromium, driven by playwright-core.
// For every panel: a knob set to a random value through the page (a number
// typed, or a choice's word selected), the series uPlot was given read back
// from each plot and compared point by point with the native binary's run
// of the same scenario, knob and seed; the "copy as C" literal (a struct,
// or the weir.h calls that make the policy) compiled against
// include/weir.h into the panel's C replay, bay/c/<id>.c, whose printed
// series is compared row by row with the native run too; every plot's axes
// titled with their units and a count axis ticked on whole numbers only;
// the readout under the cursor against the native run at the point under
// the mouse; drag to zoom and double-click back; every series of a plot
// drawn its own way, and the palette's meanings kept; every choice's every
// word redrawing the plot and landing in the copied C as its integer; a
// screenshot of every panel. Then the README's pictures (docs/bay-*.png):
// each is a screenshot of the page's own plots at the presets, with the
// data and the look it plots in docs/bay-*.json; the JSON must be what the
// page draws now (PNG bytes vary with fonts and Chromium's version, so the
// check is on the JSON). BAY_PICTURES=write rewrites both.
//
// Environment: BAY_URL (the served page), BAY_NATIVE (the native bay
// binary), BAY_OUT (a scratch dir for screenshots and C programs),
// WEIR_LIB (libweir.a), WEIR_ROOT (the repository), BAY_PICTURES (write:
// rewrite docs/bay-*.png and .json).
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const { BAY_URL, BAY_NATIVE, BAY_OUT, WEIR_LIB, WEIR_ROOT, BAY_PICTURES } = process.env;
const seed = 1 + Math.floor(Math.random() * 1e6);
let passed = 0, failed = 0;
const check = (ok, what) => {
  if (ok) passed++; else { failed++; console.log('FAIL ' + what); }
};

// Close enough: equal, or (for values a libm function computed, such as
// the bloom's formula) within a relative 1e-12.
const same = (a, b) => a === b || (a !== null && b !== null && Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(a), Math.abs(b)));

function randomValue(k) {
  const steps = Math.floor((k.max - k.min) / k.step);
  const v = k.min + Math.floor(Math.random() * (steps + 1)) * k.step;
  return Number(v.toFixed(6));
}

// Each panel's C replay, bay/c/<id>.c: the traffic knobs it takes (then
// its PRNG starting value) and the columns it prints, in order, one row a point. Backoff's
// prints two tables and is compared below on its own.
const REPLAYS = {
  breaker: { traffic: ['rate', 'fail', 'down_fail', 'outage_at', 'outage_s', 'latency_ms', 'seconds'],
    columns: ['t', 'through', 'refused', 'probes', 'ratio', 'down'] },
  shedder: { traffic: ['capacity', 'service_ms', 'start_rate', 'peak_rate', 'seconds'],
    columns: ['t', 'offered', 'cpu', 'flying', 'limit', 'refused', 'passed'] },
  limiters: { traffic: ['calls', 'gap_ms', 'lead_ms', 'bursts', 'jitter_ms'], columns: ['t', 'bucket', 'sliding', 'period'] },
  words: { traffic: ['offered', 'seconds'], columns: ['t', 'offered', 'rate word', 'GCRA word'] },
  retry: { traffic: ['rate', 'fail', 'outage_at', 'outage_s', 'seconds'],
    columns: ['t', 'requests', 'retries', 'budget refused', 'attempts per request'] },
  concurrency: { traffic: ['rate', 'latency_ms', 'latency_end_ms', 'seconds'],
    columns: ['t', 'limit', 'flying', 'refused', 'latency ms'] },
  'latency-step': { traffic: ['rate', 'low_ms', 'high_ms', 'up_s', 'down_s', 'seconds'],
    columns: ['t', 'limit', 'flying', 'refused', 'latency ms', 'baseline ms'] },
  classes: { traffic: ['sheddable', 'sheddable_plus', 'critical_plus', 'capacity', 'service_ms', 'start_rate', 'peak_rate', 'seconds'],
    columns: ['t', 'cpu', 'flying', 'limit', 'SHEDDABLE through', 'SHEDDABLE_PLUS through', 'CRITICAL through',
      'CRITICAL_PLUS through', 'SHEDDABLE refused', 'SHEDDABLE_PLUS refused', 'CRITICAL refused', 'CRITICAL_PLUS refused'] },
  partitions: { traffic: ['a_rate', 'b_rate', 'b_from', 'b_for', 'latency_ms', 'seconds'],
    columns: ['t', 'limit', 'flying', 'A flying', 'B flying', 'A refused', 'B refused'] },
  pool: { traffic: ['rate', 'work_ms', 'burst_s', 'seconds'], columns: ['t', 'live', 'idle', 'made', 'evicted', 'waited'] },
  // The bloom's size and hashes are in its calls; the program takes them
  // again for the header's formula it prints beside the measured rate.
  bloom: { traffic: ['size_log2', 'hashes', 'keys', 'steps'], columns: ['keys', 'measured', 'formula'] },
  // The table and the bloom of its memory are in the keyed panel's calls;
  // the table's overflows and slots come from weir_keyed_read.
  keyed: { traffic: ['keys', 'calls', 'pause_s', 'seconds'],
    columns: ['t', 'overflows', 'table false refusals', 'bloom false refusals', 'table false admits', 'bloom false admits',
      'active keys', 'keys held', 'slots', 'watched key in the table', 'watched key on a lone word'] },
};

// The readout's rule, restated: a whole number as it is, else four
// significant digits.
const readout = (v) => (v === null || v === undefined ? null : Number.isInteger(v) ? v : Number(v.toPrecision(4)));

// Sets a knob through the page as a person does (a choice by its word, a
// number typed) and waits for the panel's redraw.
async function setKnob(section, knob, value, id, pg = page) {
  const runs = Number(await section.getAttribute('data-runs'));
  if (knob.choices.length) {
    const word = knob.choices[Math.round((value - knob.min) / knob.step)];
    await section.locator(`select[data-knob="${knob.name}"]`).selectOption({ label: word });
  } else {
    const input = section.locator(`input[data-knob="${knob.name}"]`);
    await input.fill(String(value));
    await input.dispatchEvent('change');
  }
  await pg.waitForFunction(([i, n]) => Number(document.getElementById('panel-' + i).dataset.runs) > n, [id, runs]);
}

// 1, 2 or 5 times a power of ten.
function roundStep(step) {
  if (!(step > 0)) return false;
  const m = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
  return [1, 2, 5, 10].some((r) => Math.abs(m - r) < 1e-6 * r);
}

// Every axis titled, ending in its unit; ticks a round step apart, on
// multiples of it; a count axis' ticks whole numbers, and so written.
async function checkAxes(m) {
  const plots = await page.evaluate((id) => window.bay.panels[id].uplots.map((u) =>
    u.axes.map((a) => ({ label: a.label, splits: a._splits, values: a._values }))), m.id);
  plots.forEach(([xa, ya], i) => {
    const spec = m.plots[i];
    const xcol = m.columns[spec.x];
    const ycols = spec.series.map((n) => m.columns[n]);
    for (const [what, a, unit, whole] of [['x', xa, xcol.unit, xcol.whole], ['y', ya, ycols[0].unit, ycols.every((c) => c.whole)]]) {
      const at = `${m.id} plot ${i} ${what} axis`;
      check(typeof a.label === 'string' && a.label.length > unit.length + 3 && a.label.endsWith(`(${unit})`),
        `${at}: titled ${JSON.stringify(a.label)}, not with its unit (${unit})`);
      const splits = (a.splits || []).filter((v) => v !== null);
      check(splits.length >= 2, `${at}: ${splits.length} ticks`);
      const step = splits[1] - splits[0];
      check(roundStep(step) && splits.every((v) => Math.abs(v / step - Math.round(v / step)) < 1e-6),
        `${at}: ticks ${a.values} are not on round numbers`);
      if (whole) {
        check(splits.every(Number.isInteger) && (a.values || []).every((t) => t === null || /^-?[\d,]+$/.test(String(t))),
          `${at}: a count axis ticks ${a.values}`);
      }
    }
  });
}

// Within a plot every series is drawn its own way (colour, width, dash);
// across panels a kind keeps its colour, and the colours of admitted,
// refused, probe and limit belong to no other kind.
async function checkStyles(m) {
  const plots = await page.evaluate((id) => window.bay.panels[id].uplots.map((u) =>
    u.series.slice(1).map((s) => [s._stroke, s.width, JSON.stringify(s.dash || [])])), m.id);
  const palette = await page.evaluate(() => window.bay.palette);
  plots.forEach((styles, i) => {
    const keys = styles.map((st) => st.join(' '));
    check(new Set(keys).size === keys.length, `${m.id} plot ${i}: two series drawn alike: ${keys.join(' | ')}`);
    m.plots[i].series.forEach((name, j) => {
      const look = palette[m.columns[name].kind];
      check(look && look.stroke === styles[j][0], `${m.id} plot ${i}: ${name} (${m.columns[name].kind}) is ${styles[j][0]}, not its kind's colour`);
    });
  });
  for (const kind of ['admitted', 'refused', 'probe', 'limit']) {
    const others = Object.entries(palette).filter(([k, v]) => k !== kind && v.stroke === palette[kind].stroke && k !== 'axis');
    check(others.length === 0, `${kind}'s colour is also ${others.map(([k]) => k).join(', ')}'s`);
  }
}

// The mouse over a plot at three places: the readout (uPlot's legend) gives
// the x and every series' value at the point nearest the mouse, as the
// native run has them, with their units.
async function checkReadout(m, native) {
  const n = m.plots.length;
  for (let i = 0; i < n; i++) {
    const over = page.locator(`#panel-${m.id} .plot[data-plot="${i}"] .u-over`);
    const box = await over.boundingBox();
    for (const f of [0.2, 0.5, 0.85]) {
      const x = box.width * f;
      await over.hover({ position: { x, y: box.height / 2 } });
      const got = await page.evaluate(([id, j, left]) => {
        const u = window.bay.panels[id].uplots[j];
        return {
          idx: u.cursor.idx, at: u.posToVal(u.cursor.left, 'x'), left: u.cursor.left,
          values: [...u.root.querySelectorAll('.u-legend .u-series .u-value')].map((e) => e.textContent),
        };
      }, [m.id, i, x]);
      const spec = m.plots[i];
      const xs = native.columns[spec.x];
      let near = -1;
      xs.forEach((v, k) => { if (v !== null && (near < 0 || Math.abs(v - got.at) < Math.abs(xs[near] - got.at))) near = k; });
      const at = `${m.id} plot ${i} at ${Math.round(f * 100)}%`;
      check(Math.abs(got.left - x) < 1.5, `${at}: the cursor is at ${got.left} px, the mouse at ${x}`);
      check(got.idx === near || (got.idx !== null && xs[got.idx] === xs[near]), `${at}: the readout is at point ${got.idx}, the cursor nearest point ${near}`);
      const idx = got.idx ?? near;
      const columns = [spec.x, ...spec.series];
      check(got.values.length === columns.length, `${at}: ${got.values.length} readouts for ${columns.length} columns`);
      columns.forEach((name, k) => {
        const unit = m.columns[name].unit;
        const text = got.values[k] || '';
        const want = readout(native.columns[name][idx]);
        const ok = want === null ? text === '—' : text === `${want} ${unit}`;
        check(ok, `${at}: ${name} reads ${JSON.stringify(text)}, the run has ${want} ${unit}`);
      });
    }
  }
  await page.mouse.move(0, 0);
}

// Drag across the first plot zooms its x in; a double-click zooms out.
async function checkZoom(m) {
  // A knob's box that fill() left focused, its text selected, keeps
  // Chromium from sending the drag's mousemoves (typing and Enter do not).
  await page.evaluate(() => document.activeElement?.blur());
  const over = page.locator(`#panel-${m.id} .plot[data-plot="0"] .u-over`);
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  const scale = () => page.evaluate((id) => { const s = window.bay.panels[id].uplots[0].scales.x; return [s.min, s.max]; }, m.id);
  const [min, max] = await scale();
  await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  const [zmin, zmax] = await scale();
  check(zmin > min && zmax < max && zmax - zmin < (max - min) * 0.5, `${m.id}: a drag over [30%, 60%] zoomed x from [${min}, ${max}] to [${zmin}, ${zmax}]`);
  await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
  const [bmin, bmax] = await scale();
  check(bmin === min && bmax === max, `${m.id}: a double-click left x at [${bmin}, ${bmax}], not [${min}, ${max}]`);
  await page.mouse.move(0, 0);
}

// What a panel's plots look like, as pixels.
const pixels = (pg, id) => pg.evaluate((i) => [...document.querySelectorAll(`#panel-${i} canvas`)].map((c) => c.toDataURL()).join(), id);

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
const offsite = [], failing = [];
page.on('request', (r) => { if (!r.url().startsWith(BAY_URL)) offsite.push(r.url()); });
page.on('response', (r) => { if (r.status() >= 400) failing.push(`${r.status()} ${r.url()}`); });
page.on('pageerror', (e) => failing.push('page error: ' + e.message));
await page.goto(`${BAY_URL}#seed=${seed}`);
await page.waitForSelector('body[data-ready=true]', { timeout: 30000 });
const meta = await page.evaluate(() => window.bay.meta);
console.log(`seed ${seed}, ${meta.length} panels`);
mkdirSync(BAY_OUT, { recursive: true });

for (const m of meta) {
  // A policy knob where the panel has one, so the policy itself moves.
  const choices = m.knobs.filter((k) => k.policy);
  const pool = choices.length ? choices : m.knobs;
  // Drawn again (up to 20 times) while the native run says the policy is
  // invalid, so that the comparison has points: an invalid draw plots
  // nothing on either side.
  let knob, value;
  for (let tries = 0; tries < 20; tries++) {
    knob = pool[Math.floor(Math.random() * pool.length)];
    value = randomValue(knob);
    const probe = JSON.parse(execFileSync(BAY_NATIVE, ['json', m.id, String(seed), `${knob.name}=${value}`]).toString());
    if (Object.keys(probe.columns).length > 0) break;
  }
  const section = page.locator(`#panel-${m.id}`);
  await setKnob(section, knob, value, m.id);
  // What each uPlot was given: its x and its series, by column name.
  const plotted = await page.evaluate((id) => {
    const p = window.bay.panels[id];
    return p.uplots.map((u, i) => {
      const plot = p.meta.plots[i];
      return [plot.x, ...plot.series].map((name, j) => [name, Array.from(u.data[j])]);
    });
  }, m.id);
  const native = JSON.parse(execFileSync(BAY_NATIVE, ['json', m.id, String(seed), `${knob.name}=${value}`]).toString());
  let points = 0, bad = 0;
  for (const columns of plotted) {
    for (const [name, values] of columns) {
      const want = native.columns[name] || [];
      if (want.length !== values.length) bad++;
      values.forEach((v, i) => { points++; if (!same(v, want[i])) bad++; });
    }
  }
  const invalid = Object.keys(native.columns).length === 0;
  check(bad === 0 && (points > 0 || invalid), `${m.id}: ${knob.name}=${value}: ${bad} of ${points} points differ`);
  console.log(`${m.id}: ${knob.name}=${value}: ${points} points, ${bad} differ${invalid ? ' (invalid policy, nothing plotted)' : ''}`);
  await section.screenshot({ path: join(BAY_OUT, `${m.id}.png`) });
  if (!invalid) {
    await checkAxes(m);
    await checkStyles(m);
    await checkReadout(m, native);
    await checkZoom(m);
  }

  if (m.c) {
    await section.locator('button.copy-c').click();
    const literal = await section.locator('textarea.c').inputValue();
    const dir = join(BAY_OUT, m.id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'policy.h'), literal);
    const values = await page.evaluate((id) => window.bay.panels[id].values, m.id);
    const cc = (src, out) => execFileSync('cc', ['-std=c11', '-Wall', '-Wextra', '-Wpedantic', '-Werror',
      `-I${WEIR_ROOT}/include`, `-I${dir}`, `-DBAY_POLICY="policy.h"`, src, WEIR_LIB, '-lpthread', '-ldl', '-lm', '-o', out]);
    // A C replay prints one row per line; `want` is the native run's rows.
    const replay = (name, args, want) => {
      const bin = join(dir, name);
      cc(join(WEIR_ROOT, `bay/c/${name}.c`), bin);
      const out = execFileSync(bin, args).toString().trim();
      let diff = 0, rows = 0;
      if (out === 'invalid policy') {
        diff = Object.keys(native.columns).length === 0 ? 0 : 1;
      } else {
        const lines = out.split('\n');
        rows = lines.length;
        lines.forEach((line, i) => {
          const f = line.split(' ').map(Number);
          if (!want[i] || f.length !== want[i].length || !want[i].every((v, j) => same(f[j], v))) diff++;
        });
        if (rows !== want.length) diff++;
      }
      check(diff === 0, `${name} in C: ${diff} of ${rows} rows differ`);
      console.log(`${name} in C from the copied literal: ${rows} rows, ${diff} differ`);
    };
    const k = Object.fromEntries(m.knobs.map((kn, i) => [kn.name, values[i]]));
    const cols = native.columns;
    const rowsOf = (names, n) => Array.from({ length: n }, (_, i) => names.map((c) => cols[c][i]));
    const argsOf = (names) => names.map((n) => String(k[n])).concat([String(seed)]);
    if (m.id === 'backoff') {
      const head = rowsOf(['ceiling ms', 'rigid max', 'full max', 'equal max', 'decorrelated max', 'spread max',
        'full mean', 'equal mean', 'decorrelated mean', 'spread mean'], (cols.retry || []).length);
      const tail = rowsOf(['bin ms', 'rigid', 'full', 'equal', 'decorrelated', 'spread'], (cols['bin ms'] || []).length);
      replay('backoff', argsOf(['draws']), head.concat(tail));
    } else if (REPLAYS[m.id]) {
      const { traffic, columns } = REPLAYS[m.id];
      replay(m.id, argsOf(traffic), rowsOf(columns, (cols[columns[0]] || []).length));
    } else {
      check(false, `${m.id}: the panel copies C but bay/c has no replay of it`);
    }
  }
}

// The address keeps the knobs: a fresh page at it shows the same series.
const url = page.url();
const before = await page.evaluate(() => Object.values(window.bay.panels).map((p) => JSON.stringify(p.series)));
const again = await browser.newPage();
await again.goto('about:blank');
await again.goto(url);
await again.waitForSelector('body[data-ready=true]');
const after = await again.evaluate(() => Object.values(window.bay.panels).map((p) => JSON.stringify(p.series)));
check(JSON.stringify(before) === JSON.stringify(after), `the address ${url} did not bring the same view back`);
check(offsite.length === 0, `the page asked for ${offsite.join(', ')}`);

// A page at the presets, for the choices and the pictures.
const fresh = await browser.newPage({ viewport: { width: 1100, height: 900 }, deviceScaleFactor: 1 });
fresh.on('pageerror', (e) => failing.push('page error: ' + e.message));
await fresh.goto(BAY_URL);
await fresh.waitForSelector('body[data-ready=true]');

// Every choice, from the presets: each of its words redraws the plot
// (other pixels) and lands in the copied C as its integer; then the knob
// goes back to its preset.
for (const m of meta) {
  for (const [i, k] of m.knobs.entries()) {
    if (!k.choices.length) continue;
    const section = fresh.locator(`#panel-${m.id}`);
    const start = await fresh.evaluate(([id, j]) => window.bay.panels[id].values[j], [m.id, i]);
    let before = await pixels(fresh, m.id);
    const order = k.choices.map((_, c) => k.min + c * k.step).filter((v) => v !== start).concat([start]);
    for (const v of order) {
      const word = k.choices[Math.round((v - k.min) / k.step)];
      await setKnob(section, k, v, m.id, fresh);
      const after = await pixels(fresh, m.id);
      check(after !== before, `${m.id}: choosing ${k.name} = ${word} did not change the plot`);
      before = after;
      const field = k.field.split('.').pop();
      if (field) {
        const literal = await fresh.evaluate((id) => window.bay.cLiteral(window.bay.panels[id].index, window.bay.panels[id].values), m.id);
        check(literal.includes(`.${field} = ${v},`), `${m.id}: ${k.name} = ${word} is not .${field} = ${v} in the copied C`);
      }
    }
    console.log(`${m.id}: ${k.name}: each of ${k.choices.join(', ')} redraws the plot and is its integer in C`);
  }
}

check(failing.length === 0, `the page had ${failing.join(', ')}`);

// The README's pictures: the page's own plots at the presets, each saved as
// a PNG beside a JSON of what it plots (titles, series, their look, every
// value). The JSON must be what the page draws now; the PNG is compared as
// bytes only to say so (fonts and Chromium's version move pixels).
const PICTURES = [
  { file: 'bay-breaker', panel: 'breaker', plots: [0] },
  { file: 'bay-shedder', panel: 'shedder', plots: [0, 1, 2] },
  { file: 'bay-limiters', panel: 'limiters', plots: [0] },
  { file: 'bay-backoff', panel: 'backoff', plots: [0, 1, 2] },
];
const docs = join(WEIR_ROOT, 'docs');
await fresh.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); document.body.classList.add('picture'); });
await fresh.mouse.move(0, 0);
for (const pic of PICTURES) {
  const drawn = await fresh.evaluate(([id, wanted]) => {
    const p = window.bay.panels[id];
    return wanted.map((i) => {
      const u = p.uplots[i], plot = p.meta.plots[i];
      return {
        x: { column: plot.x, title: u.axes[0].label, values: Array.from(u.data[0]) },
        y: { title: u.axes[1].label },
        series: plot.series.map((name, j) => {
          const s = u.series[j + 1];
          return { column: name, label: s.label, stroke: s._stroke, width: s.width, dash: s.dash || null, values: Array.from(u.data[j + 1]) };
        }),
      };
    });
  }, [pic.panel, pic.plots]);
  const json = JSON.stringify({ picture: `docs/${pic.file}.png`, panel: pic.panel, seed: 42, knobs: 'presets', plots: drawn }, null, 2)
    .replace(/\[[-\d\s,.eEnul+]*\]/g, (a) => a.replace(/\s+/g, '')) + '\n';
  const boxes = await Promise.all(pic.plots.map((i) => fresh.locator(`#panel-${pic.panel} .plot[data-plot="${i}"]`).boundingBox()));
  const x = Math.min(...boxes.map((b) => b.x)), y = Math.min(...boxes.map((b) => b.y));
  const clip = { x, y, width: Math.max(...boxes.map((b) => b.x + b.width)) - x, height: Math.max(...boxes.map((b) => b.y + b.height)) - y };
  // At the page's top, the boxes are in the page's coordinates, as a
  // full-page clip wants them.
  const png = await fresh.screenshot({ clip, fullPage: true });
  writeFileSync(join(BAY_OUT, `${pic.file}.png`), png);
  if (BAY_PICTURES === 'write') {
    writeFileSync(join(docs, `${pic.file}.json`), json);
    writeFileSync(join(docs, `${pic.file}.png`), png);
    console.log(`wrote docs/${pic.file}.png and .json`);
  }
  const jsonPath = join(docs, `${pic.file}.json`), pngPath = join(docs, `${pic.file}.png`);
  const current = existsSync(jsonPath) && readFileSync(jsonPath, 'utf8') === json;
  check(current, `docs/${pic.file}.json is not what the page plots now: BAY_PICTURES=write bash .ci/run bay`);
  check(existsSync(pngPath) && readFileSync(pngPath).subarray(1, 4).toString() === 'PNG', `docs/${pic.file}.png is missing`);
  const same = existsSync(pngPath) && Buffer.compare(readFileSync(pngPath), png) === 0;
  console.log(`docs/${pic.file}: its JSON ${current ? 'is current' : 'is STALE'}; its PNG ${same ? 'is byte for byte' : 'differs from'} this Chromium's`);
}
await browser.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
