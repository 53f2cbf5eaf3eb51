// What the explorer says about the model: the weights badge, the live prediction of a trained
// classifier, the settings it was trained with, and which controls moved away from them
// (the engine's `view().moved_away`, so nothing here knows a mechanism's parameters).

import { setAttr, setHidden, setText, setTitle } from './dom.js';
import { fmt } from './format.js';
import { KEYS } from './settings.generated.js';
import { parameterParts } from './state.js';

/**
 * Paints the badge, the prediction and the trained-with notes. `s` is
 * `{ prediction, computing, modelInfo, view, manifestEntry, weights, loading, loadingMechanism,
 *    spec, empty, lang }` (`computing`: the other heads the prediction needs are on their way); `t` translates and `mechName(m)` names a mechanism.
 */
export function paintModel(el, s, t, mechName) {
  paintBadge(el, s, t, mechName);
  paintPrediction(el, s, t, mechName);
  paintTrainedWith(el, s, t, mechName);
}

function paintBadge(el, s, t, mechName) {
  const info = s.modelInfo;
  setHidden(el.modelStatus, !info);
  if (!info) return;
  setAttr(el.modelStatus, 'data-model', s.spec ? 'spec' : info.pretrained ? 'pretrained' : info.trained ? 'trained' : 'untrained');
  setText(
    el.modelStatus,
    s.spec
      ? t('model_spec', { name: s.spec.name, d: s.view?.d_model ?? info.d_model })
      : s.loading && s.weights === 'minilm'
        ? t('pretrained_loading_start')
        : info.pretrained
          ? t('model_pretrained', { name: info.label, layer: s.layer ?? 1, layers: info.layers, d: info.d_model })
          : s.loading && s.weights === 'trained'
            ? t('model_loading', { mech: mechName(s.loadingMechanism) })
            : info.trained
              ? t('model_trained', { mech: mechName(info.mechanism), d: info.d_model })
              : t('model_untrained', { d: info.d_model }),
  );
}

function reason(s) {
  if (s.computing) return 'prediction_computing';
  if (s.weights === 'trained' && (s.loading || !s.modelInfo)) return 'prediction_none_loading';
  if (!s.modelInfo?.trained) return 'prediction_none_untrained';
  if (s.modelInfo.pretrained) return 'prediction_none_pretrained';
  if (s.spec) return 'prediction_none_spec';
  if (s.empty) return 'prediction_none_empty';
  return 'prediction_none_mechanism';
}

/** A pretrained model: how close the second sentence is, by the model and with the mechanism at the layer drawn. */
function paintSimilarity(el, s, t, mechName) {
  const box = el.prediction;
  setText(el.predictionTitle, t('similarity_title'));
  box.toggleAttribute('data-computing', !!s.computing);
  setAttr(box, 'aria-busy', String(!!s.computing));
  setHidden(el.predictionMeter, true);
  if (s.computing && box.dataset.label === 'similarity') return;
  const sim = s.similarity;
  if (sim) {
    box.dataset.label = 'similarity';
    setText(el.predictionValue, t('similarity_value', { model: fmt(sim.model, 3) }));
    setText(el.predictionReason, t('similarity_moved', { mech: mechName(s.mechanism), layer: s.layer ?? 1, value: fmt(sim.mechanism, 3) }));
  } else {
    box.dataset.label = 'none';
    setText(el.predictionValue, '—');
    setText(el.predictionReason, t(s.computing ? 'prediction_computing' : s.empty ? 'prediction_none_empty' : 'similarity_none'));
  }
}

function paintPrediction(el, s, t, mechName) {
  if (s.modelInfo?.pretrained && !s.spec) return paintSimilarity(el, s, t, mechName);
  setText(el.predictionTitle, t('prediction_title'));
  const p = s.prediction;
  const box = el.prediction;
  box.toggleAttribute('data-computing', !!s.computing);
  setAttr(box, 'aria-busy', String(!!s.computing));
  // While the other heads are computed the last prediction stays, dimmed, so that nothing
  // above the maps changes size (a new size is a new render of every map).
  if (s.computing && box.dataset.label !== 'none' && box.dataset.label !== undefined) return;
  if (p) {
    // A probability never reaches 1: above 99.5 % the page says "> 99" rather than "100".
    const percent = p.probability >= 0.995 ? '> 99' : String(Math.round(p.probability * 100));
    box.dataset.label = p.label;
    box.dataset.probability = String(p.probability);
    setText(el.predictionValue, t('prediction_value', { label: t(`sentiment_${p.label}`), p: percent }));
    setHidden(el.predictionMeter, false);
    el.predictionMeter.value = p.probability;
    setTitle(el.predictionMeter, t('prediction_meter', { p: percent }));
    setText(el.predictionReason, '');
  } else {
    box.dataset.label = 'none';
    delete box.dataset.probability;
    setText(el.predictionValue, '—');
    setHidden(el.predictionMeter, true);
    setText(el.predictionReason, t(reason(s)));
  }
}

function paintTrainedWith(el, s, t, mechName) {
  const info = s.modelInfo;
  const trainedWith = info?.trained && !s.spec ? info.trained_with : null;
  setHidden(el.trainedWith, !trainedWith);
  if (!trainedWith) {
    setHidden(el.movedAway, true);
    return;
  }
  const comma = s.lang === 'zh' ? '，' : ', ';
  const parts = [mechName(trainedWith.mechanism), t('tw_heads', { n: trainedWith.heads })];
  if (trainedWith.mechanism === info.mechanism && s.view?.mechanism === info.mechanism) {
    // The mechanism's own parameters, as the engine lists them for it and the schema names
    // them (one learned λ per layer is a number; V2's, one per token and head, is a map).
    parts.push(...parameterParts(s.view.parameters, trainedWith, fmt, { lambdaPerToken: s.view.lambda_per_token }));
  }
  parts.push(t(trainedWith.causal ? 'tw_causal' : 'tw_no_causal'));
  let settings = parts.join(comma);
  const acc = s.manifestEntry?.test_int8;
  if (acc?.en && acc?.zh) {
    const pct = (a) => (a * 100).toFixed(1);
    settings = t('trained_with_accuracy', { settings, en: pct(acc.en.accuracy), zh: pct(acc.zh.accuracy) });
  }
  setText(el.trainedWith, t('trained_with', { settings }));
  // Only what the reader moved: an author's figure (attributes, a shared address) is not
  // "moved away" for the reader, and offers no button that would undo it.
  const moved = readerMoved(s.view?.moved_away ?? [], s.readerMoved);
  setHidden(el.movedAway, moved.length === 0);
  if (moved.length) {
    const list = moved.map((m) => t(`moved_${m}`)).join(s.lang === 'zh' ? '、' : ', ');
    setText(el.movedAwayText, t('moved_away', { what: list }));
  }
}

/**
 * Of the engine's `moved_away` names (`heads`, `causal`, a registry parameter such as `shift`
 * or `gate`), those the reader changed: a state key of that name, or one whose schema
 * parameter it is, is in `touched` (the view's `readerMoved`). Pure (page-logic tests run it).
 */
export function readerMoved(moved, touched) {
  if (!touched) return moved;
  return moved.filter((name) => [...touched].some((key) => key === name || KEYS[key]?.parameter === name));
}
