// What the explorer does for a control's request, a key and presenting: the commands a person
// gives that are not state (state changes go through `setFromPerson`). Functions over the view,
// so view.js stays the state, the render and the wiring.

import { Engine } from './engine.js';
import { STEP_MS, Work } from './work.js';
import { KEYS } from './settings.generated.js';
import { make, setOptions, setText } from './dom.js';
import { fmt } from './format.js';
import { messageOf } from './messages.js';
import { translate } from './i18n.js';

/**
 * What the model view's chunk (model-view.js) needs of the first view's modules, given to it
 * rather than imported there, so that no module is split off the first view's files for it.
 */
const MODEL_VIEW_PARTS = Object.freeze({ Engine, STEP_MS, Work, KEYS, make, setOptions, setText, fmt, messageOf, translate });

/** What a control of view `v` asked for (`kind`, `payload`: controls.js's `emit`); `exporter()` resolves to its Exporter. */
export function fromControl(v, kind, payload, { exporter }) {
  switch (kind) {
    case 'set':
      v.setFromPerson(payload);
      return;
    case 'text':
    case 'preset':
      v.setFromPerson({ text: payload });
      return;
    case 'weights':
      v.setFromPerson({ weights: payload });
      return;
    case 'spec_file':
      v.specs.open(payload);
      return;
    case 'spec_back':
      v.specs.leave({ restore: true });
      return;
    case 'lambda_back':
      // λ unset: the learned one again (one patch, one frame).
      try {
        v.send({ lambda: null });
      } catch (err) {
        v.report(err);
      }
      v.changed();
      return;
    case 'back_to_trained':
      if (v.state.weights === 'trained') v.loader.loadTrained(v.state.mechanism);
      return;
    case 'export':
      exporter()
        .then((e) => e.run(payload))
        .catch((err) => v.report(err));
      return;
    case 'present':
      v.setFromPerson({ present: !v.state.present });
      return;
    default:
  }
}

/**
 * The exporter of view `v` (exporter.js, a chunk the first view does not load): a function
 * that imports it on first use and resolves to the one Exporter (a failed import is tried
 * again next time). `model` is the view's `lazyModelView`, which the exports of `view=model` draw.
 */
export function lazyExporter(v, model) {
  let exporter = null;
  return () => {
    exporter ??= import('./exporter.js').then(({ Exporter }) => new Exporter(v, model));
    return exporter.catch((err) => {
      exporter = null;
      throw err;
    });
  };
}

/**
 * The model view of view `v` (model-view.js, a chunk the first view does not load):
 * `{ render(), clear(), pending, exportable(), destroy() }`; the first render imports it and renders again
 * when it is in (a failed import is tried again at the next render).
 */
export function lazyModelView(v) {
  let chunk = null;
  let view = null;
  return {
    render() {
      if (view) return view.render();
      chunk ??= import('./model-view.js')
        .then(({ ModelView }) => {
          view = new ModelView(v, MODEL_VIEW_PARTS);
          v.changed({ notify: false });
        })
        .catch((err) => v.report(err))
        .finally(() => (chunk = null));
    },
    clear: () => view?.clear(),
    destroy: () => view?.destroy(),
    exportable: () => view?.exportable() ?? null,
    get pending() {
      return chunk ?? view?.pending ?? null;
    },
  };
}

/** Keys for the whole explorer `v`: P presents, the arrow keys step through the walk. */
export function explorerKey(v, event) {
  const target = event.composedPath()[0];
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
  if (target?.matches?.('input, textarea, select, canvas, [contenteditable]')) return;
  if (event.key === 'p' || event.key === 'P') {
    event.preventDefault();
    v.setFromPerson({ present: !v.state.present });
  } else if (v.state.view === 'walk' && (event.key === 'ArrowRight' || event.key === 'ArrowLeft')) {
    event.preventDefault();
    v.walk.move(event.key === 'ArrowRight' ? 1 : -1);
  }
}

/** Presenting: explorer `v` full screen (where the browser allows it), large type. */
export function present(v, on) {
  v.el.explorer.classList.toggle('presenting', on);
  const host = v.root.host ?? v.el.explorer;
  if (on && !document.fullscreenElement) host.requestFullscreen?.().catch(() => {});
  if (!on && document.fullscreenElement === host) document.exitFullscreen?.().catch(() => {});
}

