// End-to-end: real layers on the page (issue 10, items 3 and 4). The λ control of both
// Differential Transformers (live: A1 − λ·A2 and the output follow it; back to the trained or
// captured λ), V2's λ per token and head drawn as a map, hierarchical attention's segment
// control, and a layer captured from a transformers DiffLlama by the Python package
// (tests/e2e/fixtures/captured-diffllama.*, made by make_captured.py; and a captured official
// V2 layer from tests/golden/): opened as JSON and as safetensors, by the picker and by a drop,
// with a progress bar, its token labels on the axes, its model and layer in the header, the
// heads fixed by its weights, and clear messages for what the page cannot draw.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, screenshot, startHarness } from './harness.mjs';
import { canvasInfo, engineView, mapData, openExplorer, setRange, settled } from './www-helpers.mjs';

const FIXTURE = path.join(ROOT, 'tests/e2e/fixtures/captured-diffllama');
const WORDS = ['the', 'film', 'is', 'not', 'good', ',', 'it', 'is', 'wonderful', 'and', 'warm', '.'];

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Picks `file` (a path under the repository) in the explorer's spec file input and waits for it to draw. */
async function pick(page, file) {
  const input = await page.evaluateHandle(() => window.diffattn.root.getElementById('spec-file'));
  await input.asElement().setInputFiles(path.join(ROOT, file));
  await page.waitForFunction(() => window.diffattn.view.specs.active !== null || window.diffattn.root.getElementById('messages').textContent !== '', null, { timeout: 30_000 });
  await settled(page);
}

/** Drops the file at `url` (fetched in the page), named `name`, on the document, as a person drops a file. */
async function drop(page, url, name) {
  await page.evaluate(
    async ({ url, name }) => {
      const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], name));
      for (const type of ['dragenter', 'dragover', 'drop']) {
        document.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
      }
    },
    { url, name },
  );
  await page.waitForFunction(() => window.diffattn.view.specs.active !== null, null, { timeout: 30_000 });
  await settled(page);
}

const text = (page, id) => page.evaluate((i) => window.diffattn.root.getElementById(i).textContent, id);
const hidden = (page, id) => page.evaluate((i) => window.diffattn.root.getElementById(i).hidden || window.diffattn.root.getElementById(i).closest('[hidden]') !== null, id);
const state = (page) => page.evaluate(() => ({ ...window.diffattn.state }));
const recomputations = (page) => page.evaluate(() => window.diffattn.call((ex) => ex.recomputations()));
const prediction = (page) => page.evaluate(() => window.diffattn.call((ex) => ex.prediction())?.positive ?? null);

/** max |a − b| over two maps of one shape. */
function maxDiff(a, b) {
  assert.deepEqual([a.rows, a.cols], [b.rows, b.cols]);
  return a.data.reduce((m, v, i) => Math.max(m, Math.abs(v - b.data[i])), 0);
}

test('the λ slider: A1 − λ·A2 and the prediction follow it, only that map is recomputed, and the trained λ comes back', async () => {
  const { page, errors, context } = await openExplorer(h, 'mechanism=diff_transformer&text=the+plot+is+thin+but+the+acting+is+warm');
  assert.equal(await hidden(page, 'lambda'), false, 'the λ slider shows for the Differential Transformer');
  assert.equal(await hidden(page, 'shift'), true, 'the shift slider does not');
  assert.equal(await hidden(page, 'lambda-back'), true);
  const learned = (await state(page)).lambda;
  const v0 = await engineView(page);
  assert.equal(v0.lambda_learned, true);
  assert.match(await text(page, 'lambda-out'), new RegExp(learned.toFixed(2).replace('-', '\u2212')));
  const [a1, a2, diff0] = [await mapData(page, 'a1'), await mapData(page, 'a2'), await mapData(page, 'diff')];
  const p0 = await prediction(page);
  assert.equal(typeof p0, 'number', 'the trained model predicts');
  const r0 = await recomputations(page);

  await setRange(page, '#lambda', 1.5);
  const s1 = await state(page);
  assert.equal(s1.lambda, 1.5);
  const diff1 = await mapData(page, 'diff');
  const want = { ...a1, data: a1.data.map((v, i) => v - 1.5 * a2.data[i]) };
  assert.ok(maxDiff(diff1, want) < 1e-6, 'A1 − 1.5·A2 from the same A1 and A2');
  assert.ok(maxDiff(diff1, diff0) > 1e-3, 'the map moved');
  const r1 = await recomputations(page);
  assert.deepEqual([r1.projections, r1.maps], [r0.projections, r0.maps], 'A1 and A2 were not recomputed');
  assert.ok(r1.lambda > r0.lambda);
  const p1 = await prediction(page);
  assert.notEqual(p1, p0, 'the output (and so the prediction) follows λ');
  const v1 = await engineView(page);
  assert.equal(v1.lambda_learned, false);
  assert.ok(v1.moved_away.includes('lambda'));
  assert.equal(await hidden(page, 'lambda-back'), false);
  assert.equal(await text(page, 'lambda-back'), 'Back to the trained λ');
  assert.match(await text(page, 'moved-away-text'), /λ/);
  assert.match(page.url(), /[?&]lambda=1\.5(&|$)/, 'the address names the moved λ');
  const readout = await text(page, 'param-readout');
  assert.match(readout, /λ = 1\.5/);
  await screenshot(page, 'lambda-moved');

  await page.click('#lambda-back');
  await settled(page);
  assert.equal((await state(page)).lambda, learned);
  assert.equal(maxDiff(await mapData(page, 'diff'), diff0), 0, 'back to the trained map bit for bit');
  assert.equal(await prediction(page), p0);
  assert.equal((await engineView(page)).lambda_learned, true);
  assert.equal(await hidden(page, 'lambda-back'), true);
  assert.doesNotMatch(page.url(), /[?&]lambda=/, 'a learned λ is not written');

  // The address opens a moved λ again.
  const { page: again, context: c2 } = await openExplorer(h, 'mechanism=diff_transformer&lambda=0.25&text=the+plot+is+thin');
  assert.equal((await state(again)).lambda, 0.25);
  assert.equal((await engineView(again)).lambda_learned, false);
  await c2.close();
  assert.deepEqual(errors, []);
  await context.close();
});

test('Differential Transformer V2: its λ per token and head is a map, the slider sets one λ for all, trained and seeded', async () => {
  for (const weights of ['trained', 'untrained']) {
    const { page, errors, context } = await openExplorer(h, `mechanism=diff_transformer_v2&weights=${weights}&text=not+good+at+all+,+sadly`);
    const v = await engineView(page);
    assert.deepEqual(v.stages.map((s) => s.id), ['a1', 'a2', 'lambda', 'diff']);
    assert.equal(v.lambda_per_token, true);
    const stages = (await canvasInfo(page)).map((c) => c.stage);
    assert.deepEqual(stages, ['a1', 'a2', 'lambda', 'diff'], 'the λ map is drawn with the others');
    const table = await mapData(page, 'lambda');
    assert.deepEqual([table.rows, table.cols], [v.tokens, v.heads], 'rows are tokens, columns heads');
    assert.ok(table.data.every((l) => l > 0 && l < 1), 'σ(x·W_λ)');
    assert.ok(new Set(table.data.map((l) => l.toFixed(6))).size > 1, 'one λ per token and head');
    const mean = table.data.reduce((a, b) => a + b, 0) / table.data.length;
    assert.ok(Math.abs((await state(page)).lambda - mean) < 1e-5, 'the slider shows their mean');
    assert.match(await text(page, 'lambda-note'), weights === 'trained' ? /trained λ is one per token/ : /seeded W_λ/);
    if (weights === 'trained') {
      assert.equal((await page.evaluate(() => window.diffattn.view.loader.info)).mechanism, 'diff_transformer_v2', 'a trained V2 model draws');
      assert.equal(typeof (await prediction(page)), 'number');
    }
    const p0 = await prediction(page);
    await setRange(page, '#lambda', 0.2);
    const moved = await mapData(page, 'lambda');
    assert.ok(moved.data.every((l) => Math.abs(l - 0.2) < 1e-7), 'the slider’s λ in every cell');
    if (weights === 'trained') assert.notEqual(await prediction(page), p0);
    // The readout of a cell of A1 − λ·A2 uses that row's λ.
    await page.click('#lambda-back');
    await settled(page);
    assert.equal(maxDiff(await mapData(page, 'lambda'), table), 0);
    await screenshot(page, `v2-${weights}`);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('hierarchical attention: the segment control redraws the segment maps and lives in the address', async () => {
  const { page, errors, context } = await openExplorer(h, 'mechanism=hierarchical&text=one+two+three+four+five+six+seven');
  assert.equal(await hidden(page, 'segment'), false);
  assert.equal(await hidden(page, 'lambda'), true);
  const v = await engineView(page);
  assert.deepEqual(v.stages.map((s) => s.id), ['local', 'segments', 'a']);
  assert.deepEqual(v.stages.map((s) => s.columns), ['keys', 'segments', 'keys']);
  assert.equal((await page.evaluate(() => window.diffattn.view.loader.info)).mechanism, 'hierarchical', 'the trained hierarchical model draws');
  const s0 = (await state(page)).segment;
  assert.equal((await mapData(page, 'segments')).cols, Math.ceil(7 / s0));
  const p0 = await prediction(page);
  await setRange(page, '#segment', 2);
  assert.equal((await state(page)).segment, 2);
  assert.equal((await mapData(page, 'segments')).cols, 4, '⌈7 / 2⌉ segments');
  assert.equal(await text(page, 'segment-out'), '2');
  assert.match(await text(page, 'param-readout'), /s = 2/);
  assert.notEqual(await prediction(page), p0);
  assert.ok((await engineView(page)).moved_away.includes('segment'));
  assert.match(page.url(), /[?&]segment=2(&|$)/);
  // A's rows still sum to 1.
  const a = await mapData(page, 'a');
  for (let i = 0; i < a.rows; i++) {
    const sum = a.data.slice(i * a.cols, (i + 1) * a.cols).reduce((x, y) => x + y, 0);
    assert.ok(Math.abs(sum - 1) < 1e-5);
  }
  await screenshot(page, 'hierarchical');
  assert.deepEqual(errors, []);
  await context.close();
});

test('zoomed into a long sentence: the segments map shows the segments of the keys shown, V2’s λ every head', async () => {
  const words = Array.from({ length: 48 }, (_, i) => `w${i}`).join(' ');
  for (const mechanism of ['hierarchical', 'diff_transformer_v2']) {
    const { page, errors, context } = await openExplorer(h, { mechanism, text: words, viewport: '10,10,16' });
    const v = await engineView(page);
    const rects = await page.evaluate(
      (stages) =>
        stages.map((_, i) => ({
          inside: window.diffattn.call((ex) => ex.cell_rect(i, 12, 12)) ?? null,
          before: window.diffattn.call((ex) => ex.cell_rect(i, 12, 3)) ?? null,
          above: window.diffattn.call((ex) => ex.cell_rect(i, 2, 12)) ?? null,
        })),
      v.stages,
    );
    for (const [i, stage] of v.stages.entries()) {
      assert.ok(rects[i].inside, `${mechanism} ${stage.id}: the cell (12, 12) is drawn`);
      assert.equal(rects[i].above, null, `${mechanism} ${stage.id}: row 2 is outside the viewport`);
      // Key 3 is outside the keys shown (10–25) except in λ's table, whose column is the head.
      if (stage.columns === 'heads') assert.ok(rects[i].before, 'the λ table shows every head');
      else assert.equal(rects[i].before, null, `${mechanism} ${stage.id}: key 3 is outside`);
    }
    if (mechanism === 'hierarchical') {
      // Keys 10–25 fall in segments 2–6 (of 4 tokens): five columns, labelled by their tokens.
      const i = v.stages.findIndex((s) => s.id === 'segments');
      const first = await page.evaluate((k) => window.diffattn.call((ex) => ex.cell_rect(k, 12, 8)), i);
      const last = await page.evaluate((k) => window.diffattn.call((ex) => ex.cell_rect(k, 12, 27)), i);
      const past = await page.evaluate((k) => window.diffattn.call((ex) => ex.cell_rect(k, 12, 28)), i);
      assert.ok(first && last && !past, 'segments 9–12 to 25–28 are drawn, 29–32 not');
      assert.equal(Math.round((last.x + last.width - first.x) / first.width), 5);
    }
    await screenshot(page, `zoomed-${mechanism}`);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

for (const [w, ht] of [
  [1280, 800],
  [1024, 768],
  [390, 844],
]) {
  test(`${w}×${ht}: a captured DiffLlama layer (safetensors, picked) draws with its tokens, its model and layer, and fixed heads`, async () => {
    const { page, errors, context } = await openExplorer(h, '', { width_px: w, height_px: ht });
    await pick(page, 'tests/e2e/fixtures/captured-diffllama.safetensors');
    assert.equal(await text(page, 'messages'), '');
    const labels = await page.evaluate(() => window.diffattn.call((ex) => ex.labels()));
    assert.deepEqual(labels.rows, WORDS, 'the axes are the captured tokens');
    assert.deepEqual(labels.keys, WORDS);
    const v = await engineView(page);
    assert.equal(v.spec, true);
    assert.deepEqual(v.layer, { model: 'tiny-random-DiffLlama', layer: 1, labelled: true, heads: 4, kv_heads: 1, head_dim: 8, d_model: 64, rope: { layout: 'half', theta: 10000 }, biases: false });
    const lede = await page.evaluate(() => document.querySelector('.lede').textContent);
    assert.match(lede, /^Layer 1 of tiny-random-DiffLlama, captured/, 'the header names the model and the layer');
    assert.match(await text(page, 'spec-banner-text'), /layer 1 of tiny-random-DiffLlama from captured-diffllama\.safetensors: 12 tokens/);
    assert.match(await text(page, 'spec-layout'), /4 heads of 8 channels, key\/value heads: 1, d_model = 64 · RoPE \(half, θ = 10000\)/);
    // The heads control offers only what the weights allow.
    assert.deepEqual(v.head_choices, [4]);
    const heads = await page.evaluate(() => {
      const el = window.diffattn.root.getElementById('heads');
      return { disabled: el.disabled, max: el.max, out: window.diffattn.root.getElementById('heads-out').textContent };
    });
    assert.deepEqual(heads, { disabled: true, max: '0', out: '4 · d_h = 8 (fixed)' });
    const options = await page.evaluate(() => [...window.diffattn.root.getElementById('mechanism').options].filter((o) => !o.disabled).map((o) => o.value));
    assert.deepEqual(options, v.mechanism_choices, 'the mechanism menu offers what the layer runs');
    assert.ok(options.includes('diff_transformer') && !options.includes('shift_diff'));
    const head = await page.evaluate(() => [...window.diffattn.root.getElementById('head').options].map((o) => o.value));
    assert.deepEqual(head, ['1', '2', '3', '4']);
    // Every map is drawn, the causal mask hatched, and a cell's readout names the tokens.
    assert.deepEqual((await canvasInfo(page)).map((c) => c.stage), ['a1', 'a2', 'diff']);
    assert.equal((await state(page)).causal, true);
    const cell = await page.evaluate(() => window.diffattn.call((ex) => ex.cell(4, 3)));
    assert.deepEqual([cell.query, cell.key], ['good', 'not']);
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }));
    assert.ok(scrollWidth <= innerWidth, `no horizontal scroll (${scrollWidth} > ${innerWidth})`);
    await screenshot(page, `captured-${w}`);
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('a captured layer opens the same from JSON (picked) and safetensors (dropped); its λ moves and comes back to the layer’s', async () => {
  const { page, errors, context } = await openExplorer(h, 'mechanism=diff_transformer');
  const trained = (await state(page)).lambda;
  await pick(page, 'tests/e2e/fixtures/captured-diffllama.json');
  const fromJson = { a1: await mapData(page, 'a1'), diff: await mapData(page, 'diff'), lambda: (await state(page)).lambda };
  assert.match(await text(page, 'spec-banner-text'), /captured-diffllama\.json/);
  await page.click('#spec-back');
  await settled(page);
  const back = await engineView(page);
  assert.equal(back.spec, false);
  assert.equal(back.lambda_learned, true, 'the sentence’s trained λ again, not a slider’s');
  assert.deepEqual(back.moved_away, []);
  assert.equal((await state(page)).lambda, trained);
  assert.doesNotMatch(await page.evaluate(() => document.querySelector('.lede').textContent), /captured/, 'the header is the sentence’s again');
  await drop(page, '/tests/e2e/fixtures/captured-diffllama.safetensors', 'captured-diffllama.safetensors');
  assert.match(await text(page, 'spec-banner-text'), /captured-diffllama\.safetensors/);
  assert.equal(maxDiff(await mapData(page, 'a1'), fromJson.a1), 0, 'the same f32 values from both forms');
  assert.equal(maxDiff(await mapData(page, 'diff'), fromJson.diff), 0);
  assert.equal((await state(page)).lambda, fromJson.lambda, 'the captured λ');
  assert.match(await text(page, 'lambda-note'), /loaded layer’s own/);
  const r0 = await recomputations(page);
  await setRange(page, '#lambda', 0);
  assert.equal(maxDiff(await mapData(page, 'diff'), await mapData(page, 'a1')), 0, 'λ = 0 leaves A1');
  assert.equal((await recomputations(page)).maps, r0.maps);
  assert.equal(await text(page, 'lambda-back'), 'Back to the layer’s λ');
  await page.click('#lambda-back');
  await settled(page);
  assert.equal(maxDiff(await mapData(page, 'diff'), fromJson.diff), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a captured official V2 layer (tests/golden) draws its λ table; the walk reads it', async () => {
  const { page, errors, context } = await openExplorer(h);
  await pick(page, 'tests/golden/official_v2_L11_H2_kv1_hd8_d32.spec.safetensors');
  const v = await engineView(page);
  assert.equal(v.mechanism, 'diff_transformer_v2');
  assert.deepEqual([v.layer.heads, v.layer.kv_heads], [2, 1]);
  const table = await mapData(page, 'lambda');
  assert.deepEqual([table.rows, table.cols], [11, 2]);
  await page.click('#view-walk');
  await settled(page);
  await page.click('#walk-next');
  await page.click('#walk-next');
  await settled(page);
  assert.match(await text(page, 'walk-title'), /Step 3 of 5: λ/);
  assert.match(await text(page, 'walk-text'), /σ\(x·W_λ\)/);
  await screenshot(page, 'captured-v2-walk');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a captured gpt-oss layer (tests/golden) with learned sinks: its rows sum to less than 1, and the readout says what the sink took', async () => {
  const { page, errors, context } = await openExplorer(h);
  await pick(page, 'tests/golden/gpt_oss_L16_H4_kv2_d32_hd8_layer1_sinks.spec.safetensors');
  const v = await engineView(page);
  assert.equal(v.mechanism, 'standard');
  const a = await mapData(page, 'a');
  assert.deepEqual([a.rows, a.cols], [16, 16]);
  const sums = Array.from({ length: a.rows }, (_, i) => a.data.slice(i * a.cols, (i + 1) * a.cols).reduce((x, y) => x + y, 0));
  // Each row keeps what the sink leaves it: never more than 1, and well below 1 where the sink's
  // logit beats the row's scores.
  assert.ok(sums.every((s) => s <= 1 + 1e-6), `${sums.map((s) => s.toFixed(3))}`);
  assert.ok(Math.min(...sums) < 0.5, `some row gives most of its attention to the sink: ${sums.map((s) => s.toFixed(3))}`);
  // A cell chosen with the keyboard, as a person without a mouse does.
  await page.focus('canvas.map-canvas');
  await page.keyboard.press('ArrowDown');
  await settled(page);
  const readout = await text(page, 'readout');
  const sink = 1 - sums[0];
  assert.match(readout, /The learned sink takes ([0-9.]+) of this row/);
  assert.ok(Math.abs(Number(readout.match(/sink takes ([0-9.]+)/)[1]) - sink) < 0.01, `${readout} vs ${sink}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a captured cross-attention layer (tests/golden, BART): rows are the decoder’s tokens, columns the encoder’s, and only standard attention is offered', async () => {
  const { page, errors, context } = await openExplorer(h);
  await pick(page, 'tests/golden/bart_L5x12_H4_d32_cross.spec.safetensors');
  const v = await engineView(page);
  assert.equal(v.mechanism, 'standard');
  assert.deepEqual([v.tokens, v.keys], [5, 12], 'five decoder queries, twelve encoder keys');
  assert.deepEqual(v.mechanism_choices, ['standard']);
  // No encoder token is "after" a decoder token: the causal mask is not offered.
  assert.equal(v.cross, true);
  assert.equal(await page.locator('#causal-field').isHidden(), true, 'the causal control hides');
  const labels = await page.evaluate(() => window.diffattn.call((ex) => ex.labels()));
  assert.ok(labels.rows.every((t) => t.startsWith('t')) && labels.rows.length === 5, `${labels.rows}`);
  assert.ok(labels.keys.every((t) => t.startsWith('e')) && labels.keys.length === 12, `${labels.keys}`);
  const a = await mapData(page, 'a');
  assert.deepEqual([a.rows, a.cols], [5, 12]);
  await page.focus('canvas.map-canvas');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('End');
  await settled(page);
  assert.match(await text(page, 'readout'), new RegExp(`key ${labels.keys[11]}`));
  await screenshot(page, 'captured-cross-attention');
  // A plain captured layer keeps it.
  await pick(page, 'tests/golden/bart_L8_H4_d32_decoder_self.spec.safetensors');
  await page.waitForFunction(() => window.diffattn.call((ex) => ex.view().cross) === false);
  await settled(page);
  assert.equal(await page.locator('#causal-field').isVisible(), true, 'the causal control is back');
  assert.deepEqual(errors, []);
  await context.close();
});

test('reading a binary spec shows a progress bar, and it is gone once the maps are drawn', async () => {
  const { page, errors, context } = await openExplorer(h);
  const seen = await page.evaluate(async () => {
    const root = window.diffattn.root;
    const box = root.getElementById('spec-loading');
    const seen = { shown: false, texts: new Set() };
    const observer = new MutationObserver(() => {
      if (!box.hidden) {
        seen.shown = true;
        seen.texts.add(root.getElementById('spec-loading-text').textContent);
      }
    });
    observer.observe(box, { attributes: true, subtree: true, childList: true, characterData: true });
    const bytes = new Uint8Array(await (await fetch('/tests/e2e/fixtures/captured-diffllama.safetensors')).arrayBuffer());
    await window.diffattn.view.specs.open(new File([bytes], 'layer.safetensors'));
    await window.diffattn.settled();
    observer.disconnect();
    return { shown: seen.shown, texts: [...seen.texts], hiddenAfter: box.hidden, drawn: window.diffattn.view.specs.active?.name };
  });
  assert.equal(seen.shown, true, 'the progress bar showed');
  assert.ok(seen.texts.some((t) => /^Reading layer\.safetensors \(0 MB\)…$/.test(t)), seen.texts.join(' | '));
  assert.ok(seen.texts.some((t) => /^Preparing layer\.safetensors/.test(t)), seen.texts.join(' | '));
  assert.equal(seen.hiddenAfter, true);
  assert.equal(seen.drawn, 'layer.safetensors');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a spec the page cannot draw says why and leaves the page as it was: too many tokens, an unsupported layout, too many bytes', async () => {
  const { page, errors, context } = await openExplorer(h);
  const tokens0 = await page.evaluate(() => window.diffattn.call((ex) => ex.labels().rows));
  const fixture = JSON.parse(await readFile(`${FIXTURE}.json`, 'utf8'));
  const open = async (name, content) => {
    await page.evaluate(
      async ({ name, content }) => {
        await window.diffattn.view.specs.open(new File([content], name));
        await window.diffattn.settled();
      },
      { name, content },
    );
    return text(page, 'messages');
  };
  const row = Array.from({ length: 4 }, (_, i) => (i === 0 ? 1 : 0));
  const eye = [0, 1, 2, 3].map((i) => row.map((_, j) => (i === j ? 1 : 0)));
  const long = { mechanism: 'standard', heads: 1, causal: false, x: Array.from({ length: 2049 }, () => row), w_q: eye, w_k: eye, w_v: eye, w_o: eye };
  const tooMany = await open('long.json', JSON.stringify(long));
  assert.match(tooMany, /Could not draw long\.json: x: more than 2,048 tokens \(rows\); the limit is 2,048 \(diffattn::text::limits::PAGE_MAX_TOKENS\) on the page/);
  const zigzag = { ...fixture, rope: { ...fixture.rope, layout: 'zigzag' } };
  const layout = await open('zigzag.json', JSON.stringify(zigzag));
  assert.match(layout, /Could not draw zigzag\.json: rope\.layout: unknown "zigzag"; expected "half" or "interleaved"/);
  const steps = { ...fixture, mechanism: 'input_diff' };
  for (const k of ['lambda_q1', 'lambda_k1', 'lambda_q2', 'lambda_k2', 'subln', 'pairing', 'depth', 'subln_eps']) delete steps[k];
  const noPositions = await open('steps.json', JSON.stringify(steps));
  assert.match(noPositions, /Could not draw steps\.json: rope: input_diff has no positions for its keys/);
  const huge = await page.evaluate(async () => {
    await window.diffattn.view.specs.open(new File([new Uint8Array(65 * 1024 * 1024)], 'huge.json'));
    return window.diffattn.root.getElementById('messages').textContent;
  });
  assert.match(huge, /huge\.json is too large for the page \(65 MB; it reads at most 64 MB, and safetensors files, which diffattn\.save writes, up to 256 MB\)/);
  assert.equal((await engineView(page)).spec, false, 'the sentence is still drawn');
  assert.deepEqual(await page.evaluate(() => window.diffattn.call((ex) => ex.labels().rows)), tokens0);
  await screenshot(page, 'captured-refused');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the spec files are a chunk the first view does not load; when it cannot load, a message, and the next pick draws', async () => {
  const { page, errors, context } = await openExplorer(h, { text: 'the cat sat' });
  const requested = [];
  page.on('request', (r) => requested.push(new URL(r.url()).pathname));
  await page.reload();
  await page.waitForFunction(() => window.diffattn?.view?.engine?.state === 'ready');
  await settled(page);
  assert.ok(!requested.some((p) => /\/spec-files-[^/]*\.js$/.test(p)), `the first view loaded the spec files: ${requested.join(', ')}`);
  // The chunk's first request fails (a dropped connection); the second is served.
  let refused = 0;
  await page.route(/\/spec-files-[^/]*\.js$/, (route) => (refused++ === 0 ? route.abort() : route.continue()));
  await pick(page, 'tests/e2e/fixtures/captured-diffllama.json');
  assert.equal(await page.evaluate(() => window.diffattn.view.specs.active), null);
  assert.match(await text(page, 'messages'), /Could not load the spec reader/);
  // The message stays up, so wait for the spec itself.
  const input = await page.evaluateHandle(() => window.diffattn.root.getElementById('spec-file'));
  await input.asElement().setInputFiles(path.join(ROOT, 'tests/e2e/fixtures/captured-diffllama.json'));
  await page.waitForFunction(() => window.diffattn.view.specs.active !== null, null, { timeout: 30_000 });
  await settled(page);
  assert.equal(refused, 2);
  assert.equal((await engineView(page)).tokens, 12);
  assert.equal(await page.evaluate(() => window.diffattn.view.specs.active.name), 'captured-diffllama.json');
  // The dropped connection is the only error the console saw.
  assert.ok(errors.every((e) => /spec-files|Failed to fetch|dynamically imported|ERR_FAILED/i.test(e)), errors.join('\n'));
  await context.close();
});
