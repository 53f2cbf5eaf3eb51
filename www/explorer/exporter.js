// Exports of what is on screen: a PNG of one map or of all of them, an SVG drawn by the engine,
// and the JSON of every stage in the CLI's format. File names say what a file is:
// `shift_diff-k1-head2-d.png`, `standard-head1-panel.svg`.

import { setOptions } from './dom.js';
import { composite, download, pngOf, safeName } from './files.js';

export class Exporter {
  #view;

  constructor(view) {
    this.#view = view;
  }

  /** Fills "What to export" with the maps drawn and the panel of all of them. */
  fillTargets(stages) {
    const select = this.#view.el.exportTarget;
    setOptions(select, [...stages.map((s) => ({ value: s.id, label: s.label })), { value: 'panel', label: this.#view.t('export_panel') }]);
    if (!select.value) select.value = 'panel';
  }

  /** The start of every file name: what is drawn, with the settings that shape it. */
  #base() {
    const { state, specs, view } = this.#view;
    if (specs.active) return safeName(specs.active.name, 'spec');
    const parts = [state.mechanism];
    if (view?.parameters.includes('shift')) parts.push(`k${state.shift}`);
    parts.push(state.all_heads ? 'all-heads' : `head${state.head}`);
    return parts.join('-');
  }

  /** Runs one export: `'png'`, `'svg'` or `'json'`. */
  async run(kind) {
    const v = this.#view;
    if (v.engine.state !== 'ready' || v.isEmpty()) return;
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
    const { canvases, stages, background } = v.drawn();
    let chosen = canvases;
    if (target !== 'panel') {
      const i = stages.findIndex((s) => s.id === target);
      chosen = v.state.all_heads ? [] : [canvases[i]].filter(Boolean);
    }
    if (chosen.length === 0) return;
    const blob = chosen.length === 1 ? await pngOf(chosen[0]) : await pngOf(composite(chosen, background));
    download(blob, `${this.#base()}-${target}.png`, parent);
  }
}
