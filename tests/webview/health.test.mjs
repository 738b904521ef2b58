// The health panel's one list of advice in headless Chromium: health findings and tuning
// suggestions ranked together by verified gain, the best at the top, each shape once (with the
// findings it answers), never a worse shape above a better one, no command-line text. The
// fixture is the real compiler's report of examples/softmax.py with the tile search
// (tests/webview/make_fixtures.py); every expectation is computed here from it, not by the panel.
// A screenshot at the harness's default size lands in build/webview/screenshots/health-advice.png
// (and /tmp/health-panel.png when PYPTO_HEALTH_SHOT says so).
//
// Run: npm run build:webview && node --test tests/webview/health.test.mjs

import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { clearSent, fixtures, launch, openPanel, send, sent, shot } from './harness.mjs';

let browser;
let fx;

before(async () => {
  fx = fixtures();
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

/** Every verified gain the report offers: a finding's shape (numbers.gain) or a tuning suggestion. */
function gains(report) {
  const out = report.findings.filter((f) => f.level !== 'tuning' && f.numbers.gain && f.edits.length)
    .map((f) => ({ speedup: f.numbers.gain.speedup, text: f.numbers.gain.call, edits: f.edits, rule: f.rule }));
  for (const s of report.suggestions) out.push({ speedup: s.speedup, text: s.text, edits: s.edits, rule: null });
  return out;
}

/** A copy of the fixture's report, and its first finding that offers a shape (a test makes it another one). */
function offeringFinding() {
  const report = structuredClone(fx('softmax_report.json'));
  const f = report.findings.find((x) => x.level !== 'tuning' && x.numbers.gain && x.edits.length);
  assert.ok(f, 'a finding offers a shape');
  return { report, f };
}

async function rows(page) {
  return page.locator('.advice').evaluateAll((els) => els.map((e) => ({
    speedup: Number(e.dataset.speedup), text: e.querySelector('code').textContent,
    rules: [...e.querySelectorAll('.finding')].map((f) => f.dataset.rule),
  })));
}

describe('health panel: one list of advice, best verified gain first', () => {
  test('the top of the panel is the best verified gain of findings and suggestions alike', async () => {
    const p = await openPanel(browser.context, 'health');
    const report = fx('softmax_report.json');
    const all = gains(report);
    assert.ok(report.suggestions.length > 0 && all.some((g) => g.rule), 'the fixture has both kinds of advice');
    const best = all.reduce((a, b) => (b.speedup > a.speedup ? b : a));
    await send(p.page, { type: 'report', report });
    const shown = await rows(p.page);
    assert.ok(shown.length > 0);
    assert.equal(shown[0].speedup.toFixed(2), best.speedup.toFixed(2));
    assert.equal(shown[0].text, best.text);
    assert.ok((await p.page.textContent('.advice')).includes(`${best.speedup.toFixed(2)}×`));
    // ranked: never a smaller gain above a larger one
    for (let i = 1; i < shown.length; i++) assert.ok(shown[i - 1].speedup >= shown[i].speedup, JSON.stringify(shown));
    // each shape once: as many rows as distinct edits
    const keys = new Set(all.map((g) => g.edits.map((e) => `${e.where.line}:${e.text}`).join('\n')));
    assert.equal(shown.length, keys.size);
    // the findings whose shape is the best one are answered in the top row, without an Apply of their own
    for (const g of all.filter((x) => x.rule && x.text === best.text)) assert.ok(shown[0].rules.includes(g.rule), g.rule);
    assert.equal(await p.page.locator('.advice .finding button').count(), 0);
    // the first Apply on the page applies the best shape
    await clearSent(p.page);
    await p.page.locator('button', { hasText: /^Apply/ }).first().click();
    const [msg] = await sent(p.page, 'applyEdit');
    assert.deepEqual(msg.edits.map((e) => e.text), best.edits.map((e) => e.text));
    // nothing tells the user to run a command line
    assert.doesNotMatch(await p.page.textContent('.page'), /pypto-ide|--suggest|\bre-profile\b/);
    await shot(p.page, 'health-advice');
    if (process.env.PYPTO_HEALTH_SHOT) copyFileSync(await shot(p.page, 'health-advice'), process.env.PYPTO_HEALTH_SHOT);
    assert.deepEqual(p.errors, []);
    await p.page.close();
  });

  test('a finding whose shapes the bounded check did not reach offers a longer check, not an Apply', async () => {
    const p = await openPanel(browser.context, 'health');
    const { report, f } = offeringFinding();
    // as the compile's check left it when its bound stopped it (pypto.analysis.advice)
    delete f.numbers.gain;
    f.edits = [];
    f.numbers.check_seconds = 42.4;
    f.suggestion = 'no tile shape is offered here: the sim board\'s check of the advice stopped at its time bound (10 s) '
      + 'before it simulated set_vec_tile_shapes(1, 8, 1, 64), and nothing unchecked is offered; simulating it takes '
      + 'about 42 s: check the advice with a longer time bound';
    await send(p.page, { type: 'report', report });
    const el = p.page.locator(`.finding[data-rule="${f.rule}"]`).filter({ hasText: 'takes about 42 s' });
    assert.equal(await el.locator('button', { hasText: /^Apply/ }).count(), 0);
    const check = el.locator('button', { hasText: 'Simulate its tile shapes' });
    assert.match(await check.getAttribute('title'), /about 42 s/);
    await clearSent(p.page);
    await check.click();
    const [msg] = await sent(p.page, 'checkAdvice');
    assert.equal(msg.type, 'checkAdvice');
    assert.deepEqual(p.errors, []);
    await p.page.close();
  });

  test("a finding's rule-of-thumb shape never sits above the search's better one", async () => {
    const p = await openPanel(browser.context, 'health');
    const { report, f } = offeringFinding();
    // the finding as the rule of thumb had it before the search: a smaller verified gain, another shape
    const before = f.numbers.gain.before_us;
    f.numbers.gain = { ...f.numbers.gain, speedup: 1.97, makespan_us: before / 1.97, call: 'pypto.set_vec_tile_shapes(1, 4, 1, 128)', from: 'rule' };
    f.edits = [{ ...f.edits[0], text: 'pypto.set_vec_tile_shapes(1, 4, 1, 128)' }];
    await send(p.page, { type: 'report', report });
    const shown = await rows(p.page);
    const at = shown.findIndex((r) => r.text === 'pypto.set_vec_tile_shapes(1, 4, 1, 128)');
    assert.ok(at >= 0 && shown[at].rules.includes(f.rule));
    const better = report.suggestions.filter((s) => s.speedup > 1.97).length;
    assert.ok(better > 0);
    assert.equal(at, better, 'below every suggestion with a larger gain');
    assert.deepEqual(p.errors, []);
    await p.page.close();
  });

  test('without any verified shape: the findings alone, and no command to run', async () => {
    const p = await openPanel(browser.context, 'health');
    const report = structuredClone(fx('softmax_report.json'));
    report.suggestions = [];
    report.search = { searched: 21, space: 205, stopped: 'budget', seconds: 0.3 };
    for (const f of report.findings) {
      delete f.numbers.gain;
      f.edits = [];
    }
    await send(p.page, { type: 'report', report });
    assert.equal(await p.page.locator('.advice').count(), 0);
    assert.equal(await p.page.locator('.finding').count(), report.findings.filter((f) => f.level !== 'tuning').length);
    const text = await p.page.textContent('[data-advice]');
    assert.match(text, /^Advice \(0\)/);
    assert.ok(text.includes('No tile shape the sim board simulated is faster than the kernel as written.'), text);
    assert.doesNotMatch(await p.page.textContent('.page'), /pypto-ide|--suggest/);
    assert.equal(await p.page.textContent('[data-search]'), 'searched 21 of 205 shapes in 0.3 s (the evaluation budget was spent)');
    // a search the findings' check left no time (a production kernel's), in a space of 50 digits: said as it is
    report.search = { searched: 7, space: 27689132800763960000000000000000000000000000000000, stopped: 'time', seconds: 0.0, given: 0 };
    await send(p.page, { type: 'report', report });
    await p.page.waitForFunction(() => document.querySelector('[data-search]')?.textContent?.includes('10^49'));
    assert.equal(await p.page.textContent('[data-search]'),
      "searched 7 of 2.8×10^49 shapes in 0.0 s (the time budget ran out: the check of the findings' shapes, which comes first, left the search 0 s)");
    assert.deepEqual(p.errors, []);
    await p.page.close();
  });
});
