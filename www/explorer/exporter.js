// Exports of what is on screen: a PNG of one map or of all of them, for slides (at a chosen
// size, with a title, the formula, the sentence and the settings above the maps), an SVG drawn
// by the engine, and the JSON of a spec that opens again on the page (the vectors, weights,
// settings and tokens, with the stages for reading). File names say what a file is:
// `shift_diff-k1-head2-d.png`, `standard-head1-panel.svg`. In the model view (`view=model`) the
// PNG and the SVG are that view, every layer × head as on screen (model-export.js):
// `shift_diff-k1-model-fused.png`; its JSON export is off (one layer's spec is the explore
// view's). The first view does not load this module: the view imports it when a person first
// exports (a chunk of the bundle).

import { make } from './dom.js';
import { download, pngOf, safeName } from './files.js';
import { fmt } from './format.js';
import { parameterParts } from './state.js';
import { modelCanvas, modelSvg, nothingToExport } from './model-export.js';

/** The widest PNG a "for slides" export makes, in pixels. */
export const SLIDE_WIDTH_PX = 1920;

export class Exporter {
  #view;
  #model;

  /** `model` is the view's model view (commands.js `lazyModelView`), which `view=model` exports. */
  constructor(view, model = null) {
    this.#view = view;
    this.#model = model;
  }

  /** The start of every file name: what is drawn (`what`: the head, or `model`), with the settings that shape it. */
  #base(what = null) {
    const { state, specs, view } = this.#view;
    if (specs.active) return [safeName(specs.active.name, 'spec'), what].filter(Boolean).join('-');
    const parts = [state.mechanism];
    if (view?.parameters.includes('shift')) parts.push(`k${state.shift}`);
    parts.push(what ?? (state.all_heads ? 'all-heads' : `head${state.head}`));
    return parts.join('-');
  }

  /**
   * Exports the model view as it is on screen (`'png'` at the export size chosen, or `'svg'`)
   * once every layer is drawn; says so when it has no head (a loaded layer's note).
   */
  async #runModel(kind) {
    const v = this.#view;
    // Every layer drawn first (the view's chunk, the walk under way, a change not yet drawn).
    await v.settled();
    const model = this.#model?.exportable();
    if (!model?.cards.length) {
      v.messages.show('export', nothingToExport(v));
      return;
    }
    const parent = v.el.exportTarget.parentElement;
    const name = `${this.#base('model')}-${safeName(model.stage, 'map')}`;
    if (kind === 'svg') {
      download(new Blob([modelSvg(v, model)], { type: 'image/svg+xml' }), `${name}.svg`, parent);
      return;
    }
    download(await pngOf(modelCanvas(v, model, v.el.exportSize.value)), `${name}.png`, parent);
  }

  /** Runs one export: `'png'`, `'svg'` or `'json'`. */
  async run(kind) {
    const v = this.#view;
    if (v.engine.state !== 'ready' || v.isEmpty()) return;
    if (v.state.view === 'model' && kind !== 'json') return this.#runModel(kind);
    const target = v.el.exportTarget.value || 'panel';
    const parent = v.el.exportTarget.parentElement;
    if (kind === 'json') {
      const json = v.engine.call((ex) => ex.export_json());
      download(new Blob([json], { type: 'application/json' }), `${this.#base()}-stages.json`, parent);
      return;
    }
    if (kind === 'svg') {
      const svg = v.engine.call((ex) => (target === 'panel' ? ex.export_panel_svg() : ex.export_svg(target)));
      download(new Blob([svg], { type: 'image/svg+xml' }), `${this.#base()}-${target}.svg`, parent);
      return;
    }
    const blob = await pngOf(this.slide(target, v.el.exportSize.value));
    download(blob, `${this.#base()}-${target}.png`, parent);
  }

  /**
   * A canvas for a slide: the maps of `target` (a stage or `'panel'`) drawn afresh at `size`
   * (`'1'`, `'2'`: times the size on screen; `'1920'`: that many pixels wide), under a header
   * with the title, the formula, the sentence and the settings. The maps on screen are drawn
   * again afterwards (their layouts are the ones hover uses).
   */
  slide(target, size) {
    const v = this.#view;
    const { canvases, stages, background } = v.drawn();
    const onScreen = v.state.all_heads ? [] : stages;
    const chosen = target === 'panel' ? onScreen : onScreen.filter((s) => s.id === target);
    const shown = chosen.length ? chosen : onScreen;
    const mapW = canvases[0]?.width || 600;
    const mapH = canvases[0]?.height || 525;
    const dpr = globalThis.devicePixelRatio || 1;
    const wide = size === String(SLIDE_WIDTH_PX);
    const scale = wide ? SLIDE_WIDTH_PX / (mapW * Math.min(shown.length, 3) + 32) : Number(size) || 1;
    const perRow = Math.min(shown.length, wide ? 3 : 6);
    const rows = Math.ceil(shown.length / perRow);
    const [w, h] = [Math.round(mapW * scale), Math.round(mapH * scale)];
    const gap = Math.round(16 * scale);
    const font = Math.round(v.drawn().font * scale);
    const header = Math.round(font * 6.2);
    const out = make('canvas');
    out.width = wide ? SLIDE_WIDTH_PX : perRow * w + (perRow + 1) * gap;
    out.height = header + rows * h + (rows + 1) * gap;
    const maps = shown.map(() => Object.assign(make('canvas'), { width: w, height: h }));
    v.engine.call((ex) => ex.render(maps, font, shown.map((s) => s.id)));
    v.changed({ notify: false });
    const ctx = out.getContext('2d');
    ctx.fillStyle = background;
    ctx.fillRect(0, 0, out.width, out.height);
    const style = getComputedStyle(v.el.explorer);
    ctx.fillStyle = style.getPropertyValue('--text').trim() || '#111';
    ctx.textBaseline = 'top';
    const family = style.fontFamily || 'sans-serif';
    const line = (text, y, px, weight = '') => {
      ctx.font = `${weight} ${px}px ${family}`;
      ctx.fillText(text, gap, y, out.width - 2 * gap);
    };
    const names = shown.map((s) => s.label).join(', ');
    line(`${v.mechName(v.state.mechanism)} · ${names}`, gap, Math.round(font * 1.5), '600');
    line(shown.map((s) => s.formula).join('    '), gap + font * 2, font);
    const sentence = v.specs.active ? v.specs.active.name : v.state.text;
    line(`“${sentence.length > 160 ? `${sentence.slice(0, 157)}…` : sentence}”`, gap + font * 3.4, font);
    line(this.#settings(), gap + font * 4.8, Math.round(font * 0.85));
    maps.forEach((c, i) => {
      const x = gap + (i % perRow) * (w + gap);
      const y = header + gap + Math.floor(i / perRow) * (h + gap);
      ctx.drawImage(c, x, y);
    });
    out.dataset.dpr = String(dpr);
    return out;
  }

  /** The settings a slide names: the heads, the mechanism's parameters as the trained-with note names them (state.js `parameterParts`), the readout, the mask. */
  #settings() {
    const { state, view } = this.#view;
    const parts = [this.#view.t('tw_heads', { n: state.heads }), this.#view.t('head_option', { n: state.head, total: state.heads })];
    parts.push(...parameterParts(view?.parameters ?? [], state, fmt, { lambdaPerToken: view?.lambda_per_token }));
    if (view?.readout && !parts.includes(view.readout)) parts.push(view.readout);
    parts.push(this.#view.t(state.causal ? 'tw_causal' : 'tw_no_causal'));
    return parts.join(' · ');
  }
}
