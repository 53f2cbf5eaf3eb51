// Which model draws the sentence: the trained classifier of the shown mechanism (fetched from
// the WeightsStore, loaded into the engine, its training settings adopted), the untrained
// seeded one, or the pretrained all-MiniLM-L6-v2 (`minilm`: its file and its own wasm module
// fetched on first use with a progress bar, read once for the whole page; it feeds the engine
// what one layer needs through `pretrained`, pretrained.js). Later loads win over earlier ones
// still in flight; a failed load shows a message and falls back to the untrained model.

import { setHidden, setText } from './dom.js';
import { messageOf } from './messages.js';
import { paintModel } from './prediction.js';
import { paintUnknown } from './paint.js';
import { EngineRestarted, EngineStopped } from './engine.js';
import { INLINE_MS } from './work.js';

export class ModelLoader {
  #view;
  #store;
  #loadId = 0;
  /** The promise of the load in flight, or null. */
  pending = null;
  /** The mechanism being loaded. */
  loadingMechanism = null;
  /** The engine's `model_info()` for the model in use. */
  info = null;
  /** How much of the pretrained file is in: `{ loaded, total }`, or null. */
  #progress = null;
  /** The pretrained model's feed of this explorer's engine (pretrained.js), while it draws. */
  #feed = null;

  constructor(view, store) {
    this.#view = view;
    this.#store = store;
  }

  /** The pretrained model's feed of the engine (pretrained.js `PretrainedFeed`) while the model draws, else null: work.js runs its pieces. */
  get pretrained() {
    return this.#feed;
  }

  /** Sends the sentence to `ex` (the engine's handle): cut into the pretrained model's word pieces while it draws. Returns `{ tokens, total, truncated }`. */
  setText(ex, text) {
    return this.#feed ? this.#feed.setText(ex, text) : ex.set_text(text);
  }

  /** The explorer is destroyed: the pretrained model's feed is freed. */
  stop() {
    this.#dropPretrained();
  }

  #dropPretrained() {
    this.#feed?.stop();
    this.#feed = null;
  }

  /** Reads the model in use from the engine. */
  refreshInfo() {
    this.info = this.#view.engine.call((ex) => ex.model_info());
  }

  /** The person chose `trained`, `untrained` or `minilm` weights. */
  choose(choice) {
    const view = this.#view;
    view.messages.clear('weights');
    if (choice !== 'minilm') this.#dropPretrained();
    if (choice === 'trained') {
      view.specs?.leave?.({ restore: false });
      this.loadTrained(view.state.mechanism);
      return;
    }
    if (choice === 'minilm') {
      view.specs?.leave?.({ restore: false });
      this.loadPretrained();
      return;
    }
    this.#loadId += 1; // a load in flight is dropped
    try {
      this.info = view.engine.call((ex) => ex.use_untrained());
      view.adoptEngineSettings();
    } catch (err) {
      view.report(err);
    }
    view.changed({ notify: false });
  }

  /**
   * Loads `mechanism`'s trained model at the settings it was trained with; `keep` names the
   * state keys that stay as they are (the address's, at start).
   */
  loadTrained(mechanism, keep = new Set()) {
    const view = this.#view;
    const id = ++this.#loadId;
    this.loadingMechanism = mechanism;
    view.el.weightsProgress.removeAttribute('value');
    const job = (async () => {
      let buffer;
      try {
        buffer = await this.#store.fetch(mechanism);
      } catch (err) {
        if (id === this.#loadId && view.state.weights === 'trained') this.#fallBack(mechanism, err);
        return;
      }
      if (id !== this.#loadId || view.state.weights !== 'trained' || view.engine.state !== 'ready') return;
      try {
        this.info = view.engine.call((ex) => ex.load_model(new Uint8Array(buffer)));
      } catch (err) {
        if (err instanceof EngineRestarted || err instanceof EngineStopped) view.report(err);
        else this.#fallBack(mechanism, err);
        return;
      }
      view.messages.clear('weights');
      view.adoptEngineSettings(keep);
    })();
    view.el.weightsProgress.max = 1;
    return this.#track(job);
  }

  /**
   * Draws with the pretrained model: the one some explorer of the page read already, or its
   * file and module fetched (the loading line shows how much of the file is in) and the model
   * read. `keep` as for `loadTrained`.
   */
  loadPretrained(keep = new Set()) {
    const view = this.#view;
    const id = ++this.#loadId;
    this.loadingMechanism = null;
    this.#progress = null;
    const ready = this.#store.pretrainedReady;
    if (ready) {
      try {
        this.#usePretrained(ready, keep);
      } catch (err) {
        view.report(err);
      }
      view.changed({ notify: false });
      return Promise.resolve();
    }
    view.el.weightsProgress.removeAttribute('value');
    const job = (async () => {
      let model;
      try {
        model = await this.#store.pretrained((loaded, total) => {
          if (id !== this.#loadId) return;
          this.#progress = { loaded, total };
          if (total) {
            view.el.weightsProgress.max = total;
            view.el.weightsProgress.value = loaded;
          }
          this.#paintLoading();
        });
      } catch (err) {
        if (id === this.#loadId && view.state.weights === 'minilm') this.#pretrainedFailed(err);
        return;
      }
      if (id !== this.#loadId || view.state.weights !== 'minilm' || view.engine.state !== 'ready') return;
      try {
        this.#usePretrained(model, keep);
      } catch (err) {
        if (err instanceof EngineRestarted || err instanceof EngineStopped) view.report(err);
        else this.#pretrainedFailed(err);
      }
    })();
    return this.#track(job);
  }

  /** The pretrained model (pretrained.js's runtime) draws: a feed of it for the engine, and the engine's settings adopted. */
  #usePretrained(model, keep) {
    const view = this.#view;
    this.#dropPretrained();
    const feed = model.feed();
    try {
      this.info = view.engine.call((ex) => feed.attach(ex));
    } catch (err) {
      feed.stop();
      throw err;
    }
    this.#feed = feed;
    view.messages.clear('weights');
    view.adoptEngineSettings(keep);
  }

  /** The load in flight is `job`: the loading line shows until it settles, then all is drawn. */
  #track(job) {
    const view = this.#view;
    const pending = job.finally(() => {
      if (this.pending === pending) {
        this.pending = null;
        view.el.weightsProgress.value = view.el.weightsProgress.max;
        this.paint();
        view.changed({ notify: false });
      }
    });
    this.pending = pending;
    this.paint();
    return pending;
  }

  /** The pretrained model could not be fetched or read: say why, offer to try again, and draw with the untrained model meanwhile. */
  #pretrainedFailed(err) {
    const view = this.#view;
    view.messages.show('weights', view.t('pretrained_failed', { msg: messageOf(err) }), {
      action: { label: view.t('retry'), run: () => view.setFromPerson({ weights: 'minilm' }) },
    });
    view.assign({ weights: 'untrained' });
    this.#dropPretrained();
    try {
      this.info = view.engine.call((ex) => ex.use_untrained());
    } catch (again) {
      view.report(again);
    }
  }

  /** The loading line's words: the trained file's size, or how much of the pretrained file is in. */
  #paintLoading() {
    const view = this.#view;
    const el = view.el;
    if (view.state.weights === 'minilm') {
      const mb = (n) => (n / 1e6).toFixed(1);
      const p = this.#progress;
      el.weightsLoadingText.textContent = p?.total
        ? view.t('pretrained_loading', { done: mb(p.loaded), total: mb(p.total) })
        : view.t('pretrained_loading_start');
      return;
    }
    const entry = this.#store.entry(this.loadingMechanism);
    const kb = entry ? Math.round(entry.bytes / 1024) : '…';
    setText(el.weightsLoadingText, view.t('weights_loading', { mech: view.mechName(this.loadingMechanism), kb }));
  }

  #fallBack(mechanism, err) {
    const view = this.#view;
    // A build without that model is the author's to hear; a failed download the reader's.
    if (err?.forAuthor) console.warn(err.message);
    else view.messages.show('weights', view.t('weights_failed', { mech: view.mechName(mechanism), msg: messageOf(err) }));
    view.assign({ weights: 'untrained' });
    this.#dropPretrained();
    try {
      this.info = view.engine.call((ex) => ex.use_untrained());
    } catch (again) {
      view.report(again);
    }
  }

  /** Paints the weights badge, the loading line and the prediction. */
  paint() {
    const view = this.#view;
    const el = view.el;
    const loading = !!this.pending && (view.state.weights === 'trained' || view.state.weights === 'minilm');
    setHidden(el.weightsLoading, !loading);
    if (loading) this.#paintLoading();
    let prediction = null;
    let similarity = null;
    let computing = false;
    if (view.engine.state === 'ready' && !loading && !view.isEmpty()) {
      try {
        // The prediction (or a pretrained model's similarity) needs every head: those a render
        // did not compute follow in tasks (work.js), and this paints again when they are in.
        computing = view.engine.call((ex) => ex.predicts() || ex.compares()) && !view.work.now(INLINE_MS, true);
        if (!computing) prediction = view.engine.call((ex) => ex.prediction()) ?? null;
        if (!computing) similarity = view.engine.call((ex) => ex.similarity()) ?? null;
      } catch (err) {
        if (err instanceof EngineRestarted || err instanceof EngineStopped) throw err;
      }
    }
    // The unknown words' note stays as it was until the prediction is in (no layout change).
    if (!computing) paintUnknown(view, prediction);
    paintModel(
      el,
      {
        prediction,
        similarity,
        other: view.state.other ?? '',
        mechanism: view.state.mechanism,
        computing,
        modelInfo: this.info,
        view: view.view,
        readerMoved: view.readerMoved,
        manifestEntry: this.info?.mechanism ? this.#store.entry(this.info.mechanism) : null,
        weights: view.state.weights,
        layer: view.state.layer,
        loading,
        loadingMechanism: this.loadingMechanism,
        spec: view.specs?.active ?? (view.specs?.expected ? { expected: true } : null),
        empty: view.isEmpty(),
        lang: view.state.lang,
      },
      (k, p) => view.t(k, p),
      (m) => view.mechName(m),
    );
  }
}
