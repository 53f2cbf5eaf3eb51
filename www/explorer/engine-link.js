// The link from the explorer to its engine: what the explorer has sent the handle (so that a
// render sends only what changed) and the one way a patch of settings reaches it. A render
// calls `apply()`: the theme, the maps' words, the shared scale, the viewport, the other
// sentence and the text when they differ from what was sent, then the state's pending patch
// through `send(patch)`, which takes the one frame the engine returns (`{ settings, view }`)
// into the view. A fresh handle (a restart) or a text the handle lost (a spec was left) is
// sent again after `forget()` or `forgetText()`.

import { EngineRestarted, EngineStopped } from './engine.js';
import { messageOf } from './messages.js';

const nothingSent = () => ({ text: null, other: null, theme: null, words: null, shared: null, viewport: null });

export class EngineLink {
  #view;
  /** The view's state (view-state.js): its pending patch, and the frame's settings taken in. */
  #state;
  #sent = nothingSent();

  constructor(view, state) {
    this.#view = view;
    this.#state = state;
  }

  /** Sends what changed to the engine; a refused value goes back to what the engine has. */
  apply() {
    const v = this.#view;
    const sent = this.#sent;
    const state = v.state;
    const theme = v.resolvedTheme();
    const words = [v.t('masked_label'), v.t('constant_label'), v.t('row_label'), v.t('sink_label')];
    const wordsKey = words.join('\n');
    v.engine.call((ex) => {
      if (theme !== sent.theme) ex.set_theme((sent.theme = theme));
      if (wordsKey !== sent.words) {
        ex.set_labels(...words);
        sent.words = wordsKey;
      }
      if (!!state.shared_scale !== sent.shared) ex.set_shared_scale((sent.shared = !!state.shared_scale));
      const viewport = state.viewport || '';
      if (viewport !== sent.viewport) {
        const [row, col, size] = viewport ? viewport.split(',').map(Number) : [0, 0, 0];
        ex.set_viewport(row, col, size, size);
        sent.viewport = viewport;
      }
      const other = state.other ?? '';
      if (other !== sent.other) ex.set_other_text((sent.other = other));
      if (!v.specs.active && state.text.trim() !== '' && state.text !== sent.text) {
        v.sentence = v.loader.setText(ex, state.text);
        sent.text = state.text;
      }
    });
    this.send(this.#state.take());
  }

  /**
   * Sends `patch` to the engine and takes the frame it returns: what the engine made of it (a
   * new mechanism snaps the heads; the learned λ; a refused patch changes nothing, and its
   * message says why).
   */
  send(patch) {
    const v = this.#view;
    let frame = null;
    try {
      frame = v.engine.call((ex) => ex.update(patch));
      if (Object.keys(patch).length) v.messages.clear('settings');
    } catch (err) {
      if (err instanceof EngineRestarted || err instanceof EngineStopped) throw err;
      v.messages.show('settings', messageOf(err));
    }
    this.adopt(frame ?? v.engine.call((ex) => ex.frame()));
  }

  /** Takes `frame` into the view; of the pending settings only those `keep` names stay (all when null). */
  adopt(frame, keep = null) {
    const v = this.#view;
    v.frame = frame;
    v.view = v.specs?.withLayers(frame.view) ?? frame.view;
    this.#state.adopt(frame.settings, keep);
  }

  /** The handle is a fresh one: everything is sent again at the next `apply()`. */
  forget() {
    this.#sent = nothingSent();
  }

  /** The handle's text changed behind the explorer's back (a spec was left): send it again. */
  forgetText() {
    this.#sent.text = null;
  }
}
