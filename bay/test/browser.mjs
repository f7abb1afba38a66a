// The bay in a real browser: Debian's Chromium, driven by playwright-core.
// For every panel: a knob set to a random value through the page, the
// plotted series read back from the SVG and compared point by point with
// the native binary's run of the same scenario, knob and seed; the "copy as
// C" literal compiled against include/weir.h (the breaker's, the shedder's
// and backoff's replayed in C and compared too, the others' made into a policy by their
// constructors);
// a screenshot of every panel.
//
// Environment: BAY_URL (the served page), BAY_NATIVE (the native bay
// binary), BAY_OUT (a scratch dir for screenshots and C programs),
// WEIR_LIB (libweir.a), WEIR_ROOT (the repository).
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const { BAY_URL, BAY_NATIVE, BAY_OUT, WEIR_LIB, WEIR_ROOT } = process.env;
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

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
const offsite = [];
page.on('request', (r) => { if (!r.url().startsWith(BAY_URL)) offsite.push(r.url()); });
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
  const runs = Number(await section.getAttribute('data-runs'));
  const input = section.locator(`input[data-knob="${knob.name}"]`);
  await input.fill(String(value));
  await input.dispatchEvent('change');
  await page.waitForFunction(([id, n]) => Number(document.getElementById('panel-' + id).dataset.runs) > n, [m.id, runs]);
  const plotted = await section.evaluate((s) => [...s.querySelectorAll('svg')].map((svg) => ({
    x: svg.dataset.x, xs: JSON.parse(svg.dataset.xValues),
    lines: [...svg.querySelectorAll('path[data-column]')].map((p) => [p.dataset.column, JSON.parse(p.dataset.values)]),
  })));
  const native = JSON.parse(execFileSync(BAY_NATIVE, ['json', m.id, String(seed), `${knob.name}=${value}`]).toString());
  let points = 0, bad = 0;
  for (const svg of plotted) {
    for (const [name, values] of [[svg.x, svg.xs], ...svg.lines]) {
      const want = native.columns[name] || [];
      if (want.length !== values.length) bad++;
      values.forEach((v, i) => { points++; if (!same(v, want[i])) bad++; });
    }
  }
  const invalid = Object.keys(native.columns).length === 0;
  check(bad === 0 && (points > 0 || invalid), `${m.id}: ${knob.name}=${value}: ${bad} of ${points} points differ`);
  console.log(`${m.id}: ${knob.name}=${value}: ${points} points, ${bad} differ${invalid ? ' (invalid policy, nothing plotted)' : ''}`);
  await section.screenshot({ path: join(BAY_OUT, `${m.id}.png`) });

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
          if (!want[i] || !want[i].every((v, j) => f[j] === v)) diff++;
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
    if (m.id === 'breaker') {
      replay('breaker', argsOf(['rate', 'fail', 'down_fail', 'outage_at', 'outage_s', 'latency_ms', 'seconds']),
        rowsOf(['t', 'through', 'refused', 'probes', 'ratio', 'down'], (cols.t || []).length));
    } else if (m.id === 'shedder') {
      replay('shedder', argsOf(['capacity', 'service_ms', 'start_rate', 'peak_rate', 'seconds']),
        rowsOf(['t', 'offered', 'cpu', 'flying', 'limit', 'refused', 'passed'], (cols.t || []).length));
    } else if (m.id === 'backoff') {
      const head = rowsOf(['ceiling ms', 'rigid max', 'full max', 'equal max', 'decorrelated max', 'spread max',
        'full mean', 'equal mean', 'decorrelated mean', 'spread mean'], (cols.retry || []).length);
      const tail = rowsOf(['bin ms', 'rigid', 'full', 'equal', 'decorrelated', 'spread'], (cols['bin ms'] || []).length);
      replay('backoff', argsOf(['draws']), head.concat(tail));
    } else {
      const bin = join(dir, 'accepts');
      const calls = ['limiters', 'words', 'bloom'].includes(m.id);
      cc(join(WEIR_ROOT, calls ? 'bay/c/calls.c' : 'bay/c/accepts.c'), bin);
      const out = execFileSync(bin, [m.id]).toString().trim();
      const valid = await page.evaluate((id) => Object.keys(window.bay.panels[id].series.columns).length > 0, m.id);
      check(out === (valid ? 'accepted' : 'refused'), `${m.id}: C says ${out}, the page ${valid ? 'plotted' : 'refused'}`);
      console.log(`${m.id}: the copied literal compiles; weir says ${out}`);
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
await browser.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
