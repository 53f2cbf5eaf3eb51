// Which model draws the sentence: the trained classifier of the shown mechanism (fetched from
// the WeightsStore, loaded into the engine, its training settings adopted) or the untrained
// seeded one. Later loads win over earlier ones still in flight; a failed load shows a message
// and falls back to the untrained model.

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

  constructor(view, store) {
    this.#view = view;
    this.#store = store;
  }

  /** Reads the model in use from the engine. */
  refreshInfo() {
    this.info = this.#view.engine.call((ex) => ex.model_info());
  }

  /** The person chose `trained` or `untrained` weights. */
  choose(choice) {
    const view = this.#view;
    view.messages.clear('weights');
    if (choice === 'trained') {
      view.specs?.leave?.({ restore: false });
      this.loadTrained(view.state.mechanism);
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
    const pending = job.finally(() => {
      if (this.pending === pending) {
        this.pending = null;
        view.el.weightsProgress.value = 1;
        this.paint();
        view.changed({ notify: false });
      }
    });
    this.pending = pending;
    this.paint();
    return pending;
  }

  #fallBack(mechanism, err) {
    const view = this.#view;
    view.messages.show('weights', view.t('weights_failed', { mech: view.mechName(mechanism), msg: messageOf(err) }));
    view.assign({ weights: 'untrained' });
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
    const loading = !!this.pending && view.state.weights === 'trained';
    el.weightsLoading.hidden = !loading;
    if (loading) {
      const entry = this.#store.entry(this.loadingMechanism);
      const kb = entry ? Math.round(entry.bytes / 1024) : '…';
      el.weightsLoadingText.textContent = view.t('weights_loading', { mech: view.mechName(this.loadingMechanism), kb });
    }
    let prediction = null;
    let computing = false;
    if (view.engine.state === 'ready' && !loading && !view.isEmpty()) {
      try {
        // The prediction needs every head: those a render did not compute follow in tasks
        // (work.js), and this paints again when they are in.
        computing = view.engine.call((ex) => ex.predicts()) && !view.work.now(INLINE_MS, true);
        if (!computing) prediction = view.engine.call((ex) => ex.prediction()) ?? null;
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
        computing,
        modelInfo: this.info,
        view: view.view,
        manifestEntry: this.info?.mechanism ? this.#store.entry(this.info.mechanism) : null,
        weights: view.state.weights,
        loading,
        loadingMechanism: this.loadingMechanism,
        spec: view.specs?.active ?? null,
        empty: view.isEmpty(),
        lang: view.state.lang,
      },
      (k, p) => view.t(k, p),
      (m) => view.mechName(m),
    );
  }
}
