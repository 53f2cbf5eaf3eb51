// End-to-end: the custom element `<diffattn-explorer>` (pkg/diffattn-explorer.js) as an author
// uses it. The documentation page www/examples/ holds three elements of different attributes
// under the strict Content-Security-Policy: each draws only its maps and shows only its
// controls, a control moves only its own element and fires its `change` event with the full
// state, attributes and properties re-render without one, an invalid value is ignored with
// one warning, no policy violation and no console error. An element added by script works
// (and one with a `src` spec); no horizontal overflow at 320 px; screenshots at 1024 × 768,
// 1280 × 800 and a 390 px phone.

import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, screenshot, startHarness } from './harness.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** The state keys of the `change` event's detail (state.js STATE_KEYS). */
const STATE_NAMES = ['text', 'mechanism', 'heads', 'head', 'causal', 'shift', 'difference', 'fill', 'renormalize', 'alpha', 'beta', 'gamma', 'tau', 'window', 'all_heads', 'weights', 'lang', 'theme'];

/**
 * Opens `pathname` recording CSP violations (`window.violations`), every `change` event of an
 * element (`window.changes`: [id, detail]) and console warnings; waits until every element on
 * it has drawn.
 */
async function openPage(pathname, { width_px = 1280, height_px = 800 } = {}) {
  const { page, errors, context } = await h.newPage({ width_px, height_px });
  const warnings = [];
  page.on('console', (msg) => {
    if (msg.type() === 'warning') warnings.push(msg.text());
  });
  await page.addInitScript(() => {
    window.violations = [];
    window.changes = [];
    document.addEventListener('securitypolicyviolation', (e) => window.violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    document.addEventListener('change', (e) => {
      if (e.target.localName === 'diffattn-explorer') window.changes.push([e.target.id, e.detail]);
    });
  });
  await page.goto(h.url(pathname));
  await page.waitForFunction(() => customElements.get('diffattn-explorer') !== undefined);
  await settled(page);
  return { page, errors, warnings, context };
}

/**
 * Waits until every element of the page has drawn what it was told and its layout is still:
 * a note that appears (e.g. "you moved away from the trained settings") can resize a canvas by
 * a pixel for one frame, and the resize observer's redraw comes after `settled()`.
 */
async function settled(page) {
  await page.evaluate(async () => {
    const all = () => [...document.querySelectorAll('diffattn-explorer')];
    const sizes = () => all().map((e) => [...(e.shadowRoot?.querySelectorAll('canvas.map-canvas') ?? [])].map((c) => `${c.width}x${c.height}`).join(',')).join(';');
    let before = null;
    for (let round = 0; round < 20; round += 1) {
      await Promise.all(all().map((e) => e.settled()));
      await new Promise((r) => setTimeout(r, 60));
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      await Promise.all(all().map((e) => e.settled()));
      const now = sizes();
      if (now === before) return;
      before = now;
    }
  });
}

/** Per map of the element `selector`: its stage and a hash of its pixels. */
async function maps(page, selector) {
  return page.evaluate((sel) => {
    const root = document.querySelector(sel).shadowRoot;
    return [...root.querySelectorAll('canvas.map-canvas')].map((canvas) => {
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let hash = 2166136261;
      for (let k = 0; k < data.length; k += 4) hash = Math.imul(hash ^ data[k] ^ (data[k + 1] << 8) ^ (data[k + 2] << 16), 16777619) >>> 0;
      return { stage: canvas.dataset.stage, hash, size: `${canvas.width}x${canvas.height}` };
    });
  }, selector);
}

/** The names of the controls the element `selector` shows. */
async function visibleControls(page, selector) {
  return page.evaluate((sel) => {
    const root = document.querySelector(sel).shadowRoot;
    const shown = [...root.querySelectorAll('[data-control]')].filter((n) => n.checkVisibility());
    return [...new Set(shown.map((n) => n.dataset.control))].sort();
  }, selector);
}

/** Moves the range input `id` of the element `selector` to `value`, as a person would. */
async function slide(page, selector, id, value) {
  await page.evaluate(
    ([sel, inputId, v]) => {
      const input = document.querySelector(sel).shadowRoot.getElementById(inputId);
      input.value = String(v);
      input.dispatchEvent(new Event('input', { bubbles: true }));
    },
    [selector, id, value],
  );
  await settled(page);
}

const hashes = (list) => list.map((m) => m.hash);

/**
 * Asserts that the maps `after` are the pictures `before`. A canvas can come out a device pixel
 * taller or shorter when the page above it moves (its CSS height is fractional and is rounded
 * where it lands), and is then redrawn at its new size: only maps of the same size compare.
 */
function assertSamePictures(after, before, what, { someComparable = true } = {}) {
  assert.deepEqual(after.map((m) => m.stage), before.map((m) => m.stage), what);
  const comparable = after.filter((m, i) => m.size === before[i].size);
  if (someComparable) assert.ok(comparable.length > 0, `${what}: no map kept its size`);
  for (const [i, m] of after.entries()) {
    if (m.size === before[i].size) assert.equal(m.hash, before[i].hash, `${what}: ${m.stage}`);
  }
}

test('three elements on a strict-CSP documentation page: own maps, own controls, own events', async () => {
  const { page, errors, warnings, context } = await openPage('/www/examples/');
  assert.equal(await page.evaluate(() => document.querySelectorAll('diffattn-explorer').length), 3);

  // Each draws only its maps.
  const first = await maps(page, '#first');
  const second = await maps(page, '#second');
  const third = await maps(page, '#third');
  assert.deepEqual(first.map((m) => m.stage), ['a', 'shifted', 'd', 'g', 'fused'], 'no maps attribute: all of the mechanism');
  assert.deepEqual(second.map((m) => m.stage), ['a', 'd', 'g']);
  assert.deepEqual(third.map((m) => m.stage), ['a', 'd', 'fused']);
  // ... and shows only its controls.
  assert.deepEqual(await visibleControls(page, '#first'), ['heads', 'shift']);
  assert.deepEqual(await visibleControls(page, '#second'), []);
  assert.deepEqual(await visibleControls(page, '#third'), ['shift', 'text']);
  // Attributes became state: the second's shift and causal mask; the third speaks Chinese.
  assert.deepEqual(await page.evaluate(() => [document.querySelector('#second').shift, document.querySelector('#second').causal]), [2, true]);
  assert.equal(await page.evaluate(() => document.querySelector('#third').shadowRoot.querySelector('label[for="shift"]').textContent), '位移 k');
  assert.equal(await page.evaluate(() => document.querySelector('#third').state.lang), 'zh');

  // A person moves the first one's shift: its maps and state change, nobody else's.
  await slide(page, '#first', 'shift', 3);
  const first2 = await maps(page, '#first');
  assertSamePictures(first2.slice(0, 1), first.slice(0, 1), 'A is unchanged', { someComparable: false });
  assert.notEqual(first2[1].hash, first[1].hash, 'shift(A) moved');
  assertSamePictures(await maps(page, '#second'), second, 'the second element was not touched');
  assertSamePictures(await maps(page, '#third'), third, 'the third element was not touched');
  // Its change event carries the full new state, under the attributes' names.
  const changes = await page.evaluate(() => window.changes);
  assert.equal(changes.length, 1);
  assert.equal(changes[0][0], 'first');
  for (const key of STATE_NAMES) assert.ok(key in changes[0][1], `the detail has ${key}`);
  assert.equal(changes[0][1].shift, 3);
  assert.equal(changes[0][1].text, 'The acting is wonderful, but the plot is thin.');
  assert.equal(await page.evaluate(() => document.querySelector('#first').shift), 3, 'the property reads the live state');
  assert.match(await page.locator('#first-log').textContent(), /shift = 3/);

  // An attribute re-renders that element only, with no change event.
  await page.evaluate(() => document.querySelector('#second').setAttribute('shift', '4'));
  await settled(page);
  const second2 = await maps(page, '#second');
  assertSamePictures(second2.slice(0, 1), second.slice(0, 1), 'A is unchanged', { someComparable: false });
  assert.notEqual(second2[1].hash, second[1].hash, 'D follows the new shift');
  assert.equal(await page.evaluate(() => document.querySelector('#second').shift), 4);
  assertSamePictures(await maps(page, '#first'), first2, 'the first element was not touched');

  // Properties write the attribute (reflected) and re-render.
  await page.evaluate(() => {
    const third = document.querySelector('#third');
    third.shift = 2;
    third.maps = ['A', 'fused'];
  });
  await settled(page);
  assert.deepEqual(await page.evaluate(() => [document.querySelector('#third').getAttribute('shift'), document.querySelector('#third').getAttribute('maps')]), ['2', 'A,fused']);
  const third2 = await maps(page, '#third');
  assert.deepEqual(third2.map((m) => m.stage), ['a', 'fused']);
  assert.notEqual(third2[1].hash, third[2].hash, 'A′ follows the new shift');
  await page.evaluate(() => {
    document.querySelector('#third').controls = 'none';
    document.querySelector('#second').gate = '1.5,3,-0.5';
    document.querySelector('#second').text = 'A new sentence for the figure.';
  });
  await settled(page);
  assert.deepEqual(await visibleControls(page, '#third'), []);
  assert.deepEqual(await page.evaluate(() => ['alpha', 'beta', 'gamma', 'gate'].map((k) => document.querySelector('#second')[k])), [1.5, 3, -0.5, '1.5,3,-0.5']);
  assert.equal(await page.evaluate(() => document.querySelector('#second').shadowRoot.querySelector('#token-count').textContent), '7 tokens');
  assert.equal((await page.evaluate(() => window.changes)).length, 1, 'attributes and properties fire no change event');
  // A parameter added to the schema is an attribute and a property like the others.
  await page.evaluate(() => (document.querySelector('#third').temperature = 2.5));
  await settled(page);
  assert.deepEqual(await page.evaluate(() => [document.querySelector('#third').getAttribute('temperature'), document.querySelector('#third').temperature, document.querySelector('#third').state.temperature]), ['2.5', 2.5, 2.5]);

  // An invalid value is ignored and said once on the console; the element keeps its value.
  await page.evaluate(() => {
    const second = document.querySelector('#second');
    second.setAttribute('shift', 'lots');
    second.setAttribute('shift', '4');
    second.setAttribute('shift', 'lots');
    second.setAttribute('maps', 'A,nope');
  });
  await settled(page);
  assert.equal(await page.evaluate(() => document.querySelector('#second').shift), 4);
  assert.deepEqual((await maps(page, '#second')).map((m) => m.stage), ['a']);
  assert.deepEqual(warnings.filter((w) => w.includes('shift="lots"')), ['<diffattn-explorer shift="lots">: not a valid shift; ignored']);
  assert.equal(warnings.filter((w) => w.includes('maps="A,nope"')).length, 1);

  // A property set to the value its attribute already has applies it, when a person has moved
  // the control away since (the widget sets traits that way).
  await page.evaluate(() => (document.querySelector('#first').shift = 5));
  await settled(page);
  await slide(page, '#first', 'shift', 2);
  assert.deepEqual(await page.evaluate(() => [document.querySelector('#first').getAttribute('shift'), document.querySelector('#first').shift]), ['5', 2]);
  await page.evaluate(() => (document.querySelector('#first').shift = 5));
  await settled(page);
  assert.equal(await page.evaluate(() => document.querySelector('#first').shift), 5, 'the same attribute, applied again');

  await screenshot(page, 'element-examples-after');
  assert.deepEqual(await page.evaluate(() => window.violations), [], 'no Content-Security-Policy violation');
  assert.deepEqual(errors, []);
  await context.close();
});

test('an element created by script after load works, with a src spec too; removed, moved and added again', async () => {
  const { page, errors, context } = await openPage('/www/examples/');
  const name = (await readdir(path.join(ROOT, 'tests', 'fixtures', 'stages'))).find((f) => /^shiftdiff_L5_H2_.*_k1_single_none\.spec\.json$/.test(f));
  assert.ok(name, 'a spec fixture');
  await page.evaluate((spec) => {
    const late = document.createElement('diffattn-explorer');
    late.id = 'late';
    late.setAttribute('weights', 'untrained');
    late.setAttribute('maps', 'A,D');
    late.controls = 'shift';
    late.text = 'made by a script';
    document.querySelector('main').append(late);
    // Made where no class is defined (as before the module loads), a property set on it is a
    // plain own property; upgraded on insertion, it becomes the attribute.
    const early = document.implementation.createHTMLDocument('').createElement('diffattn-explorer');
    early.id = 'early';
    early.setAttribute('weights', 'untrained');
    early.shift = 3;
    early.maps = 'D';
    document.querySelector('main').append(document.adoptNode(early));
    const fromSpec = document.createElement('diffattn-explorer');
    fromSpec.id = 'from-spec';
    fromSpec.src = spec;
    document.querySelector('main').append(fromSpec);
  }, `/tests/fixtures/stages/${name}`);
  await settled(page);
  assert.deepEqual((await maps(page, '#late')).map((m) => m.stage), ['a', 'd']);
  assert.deepEqual(await page.evaluate(() => [document.querySelector('#early').getAttribute('shift'), document.querySelector('#early').shift]), ['3', 3]);
  assert.deepEqual((await maps(page, '#early')).map((m) => m.stage), ['d']);
  assert.deepEqual(await visibleControls(page, '#late'), ['shift']);
  assert.equal(await page.evaluate(() => document.querySelector('#late').state.weights), 'untrained');
  const before = await maps(page, '#late');
  await slide(page, '#late', 'shift', 2);
  assert.notEqual((await maps(page, '#late'))[1].hash, before[1].hash);
  assert.deepEqual((await page.evaluate(() => window.changes)).map(([id, d]) => [id, d.shift]), [['late', 2]]);
  // The spec drew in place of a sentence: the banner names it, its 5 tokens are the rows.
  assert.match(await page.evaluate(() => document.querySelector('#from-spec').shadowRoot.querySelector('#spec-banner-text').textContent), new RegExp(name.replace(/[.]/g, '\\.')));
  assert.equal(await page.evaluate(() => document.querySelector('#from-spec').shadowRoot.querySelector('#token-count').textContent), '5 tokens');
  // Removed, an element lets go of its explorer; put back, it starts a new one.
  await page.evaluate(() => document.querySelector('#late').remove());
  await page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
  assert.equal(await page.evaluate(() => document.querySelector('#late') === null), true);
  await page.evaluate(() => {
    const again = document.createElement('diffattn-explorer');
    again.id = 'again';
    again.setAttribute('weights', 'untrained');
    again.setAttribute('maps', 'fused');
    const host = document.querySelector('main');
    host.append(again);
    // Moving an element keeps its explorer (a disconnect and connect in one task).
    host.prepend(again);
  });
  await settled(page);
  assert.deepEqual((await maps(page, '#again')).map((m) => m.stage), ['fused']);
  assert.deepEqual(await page.evaluate(() => window.violations), []);
  assert.deepEqual(errors, []);
  await context.close();
});

for (const [width_px, height_px, name] of [
  [1024, 768, 'element-examples-1024x768'],
  [1280, 800, 'element-examples-1280x800'],
  [390, 844, 'element-examples-390-phone'],
  [320, 640, 'element-examples-320'],
]) {
  test(`the example page at ${width_px} px: no horizontal overflow, every map drawn (${name}.png)`, async () => {
    const { page, errors, context } = await openPage('/www/examples/', { width_px, height_px });
    const overflow = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      elements: [...document.querySelectorAll('diffattn-explorer')].map((e) => e.shadowRoot.querySelector('.explorer').scrollWidth - e.clientWidth),
    }));
    assert.equal(overflow.page, 0, `the page scrolls sideways by ${overflow.page} px`);
    assert.ok(overflow.elements.every((d) => d <= 0), `an element overflows: ${overflow.elements}`);
    const counts = await page.evaluate(() => [...document.querySelectorAll('diffattn-explorer')].map((e) => e.shadowRoot.querySelectorAll('canvas.map-canvas').length));
    assert.deepEqual(counts, [5, 3, 3]);
    await screenshot(page, name);
    assert.deepEqual(await page.evaluate(() => window.violations), []);
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test("an author's attributes are the figure: a fixed trained figure tells its readers nothing moved", async () => {
  const { page, errors, context } = await openPage('/www/examples/');
  await page.evaluate(() => {
    for (const [id, controls] of [['author-fixed', 'none'], ['author-slidable', 'shift']]) {
      const el = document.createElement('diffattn-explorer');
      el.id = id;
      el.setAttribute('shift', '2');
      el.setAttribute('controls', controls);
      el.text = 'The acting is wonderful, but the plot is thin.';
      document.querySelector('main').append(el);
    }
  });
  await settled(page);
  const notice = (sel) =>
    page.evaluate((s) => {
      const root = document.querySelector(s).shadowRoot;
      const box = root.querySelector('#moved-away');
      return { shown: !box.hidden && box.checkVisibility(), text: box.textContent, moved: document.querySelector(s).state.shift };
    }, sel);
  // The examples page's own fixed figure (#second: shift="2" controls="none") too.
  for (const id of ['#author-fixed', '#author-slidable', '#second']) {
    // Trained weights with k = 2 (the model was trained with k = 1): the engine knows it moved...
    assert.deepEqual(await page.evaluate((s) => document.querySelector(s).state.weights, id), 'trained');
    const n = await notice(id);
    assert.equal(n.moved, 2);
    // ...but the reader did not: no notice, no button undoing the figure.
    assert.equal(n.shown, false, `${id}: ${n.text}`);
  }
  // A reader who moves the shift is told, and offered the way back.
  await slide(page, '#author-slidable', 'shift', 3);
  const moved = await notice('#author-slidable');
  assert.equal(moved.shown, true);
  assert.match(moved.text, /moved away from the trained settings \(k\)/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('styleable from outside: custom properties and ::part reach into the shadow root', async () => {
  const { page, errors, context } = await openPage('/www/examples/');
  const styles = await page.evaluate(() => {
    const first = document.querySelector('#first');
    const second = document.querySelector('#second');
    const accent = getComputedStyle(first.shadowRoot.querySelector('.explorer')).getPropertyValue('--accent').trim();
    const prediction = (el) => getComputedStyle(el.shadowRoot.querySelector('[part="prediction"]')).display;
    return { accent, first: prediction(first), second: prediction(second) };
  });
  assert.equal(styles.accent, '#0b6e69', 'examples.css sets --accent on the element');
  assert.notEqual(styles.first, 'none');
  assert.equal(styles.second, 'none', '#second::part(prediction) { display: none }');
  // On the element, a custom property restyles the light theme; on ::part(explorer), both.
  const dark = await page.evaluate(async () => {
    const accent = (el) => getComputedStyle(el.shadowRoot.querySelector('.explorer')).getPropertyValue('--accent').trim();
    const [first, third] = ['#first', '#third'].map((s) => document.querySelector(s));
    const light = accent(third);
    first.theme = 'dark';
    third.theme = 'dark';
    await Promise.all([first.settled(), third.settled()]);
    return { light, first: accent(first), third: accent(third) };
  });
  assert.deepEqual(dark, { light: '#8a3ffc', first: '#79a8ff', third: '#8a3ffc' });
  assert.deepEqual(errors, []);
  await context.close();
});

test('a figure whose src cannot be read says so in the figure, and draws no other sentence in its place', async () => {
  const { page, errors, context } = await openPage('/www/examples/');
  await page.evaluate(() => {
    const el = document.createElement('diffattn-explorer');
    el.id = 'missing';
    el.setAttribute('src', 'no-such-capture.json');
    el.setAttribute('controls', 'none');
    document.querySelector('main').prepend(el);
  });
  await page.waitForFunction(() => /no-such-capture\.json/.test(document.querySelector('#missing')?.shadowRoot?.querySelector('#messages')?.textContent ?? ''));
  await page.evaluate(() => document.querySelector('#missing').settled());
  const seen = await page.evaluate(() => {
    const root = document.querySelector('#missing').shadowRoot;
    const visible = (id) => root.getElementById(id).checkVisibility();
    return {
      message: root.querySelector('#messages').textContent,
      maps: root.querySelectorAll('canvas.map-canvas').length,
      prediction: visible('prediction'),
      hint: visible('empty-hint'),
      text: document.querySelector('#missing').state.text,
    };
  });
  assert.match(seen.message, /Could not draw no-such-capture\.json: HTTP 404/);
  assert.deepEqual([seen.maps, seen.prediction, seen.hint, seen.text], [0, false, false, '']);
  await screenshot(page, 'element-src-missing');
  // The 404 itself is the browser's console error; nothing else went wrong.
  assert.deepEqual(errors.filter((e) => !/no-such-capture\.json|status of 404/.test(e)), []);
  await context.close();
});
