// The explorer's DOM, built once per instance inside its root (a shadow root, so the ids
// below are its own and several explorers on one page never clash).
//
// The layout is for one screen: a column with the sentence, the mechanism, the view and the
// controls (details behind disclosures) beside the maps, which fill the rest of the window
// from its top; on a narrow screen the maps come right after the sentence, and the other
// tools and the rail below them (explorer.css places them). The markup is static (no user text, no inline styles); strings come from
// i18n.js through `data-i18n*` attributes. `data-control` names a control as the `controls`
// option and the custom element's `controls` attribute do; `data-parameter` marks a control
// that only some mechanisms take (the engine's `view().parameters` says which). The "moved
// away" notice is under the maps, not above the controls: appearing as a slider crosses its
// trained value, it moves neither the slider being dragged nor the maps.

import { byId } from './dom.js';
import { STRINGS } from './i18n.js';
import { SLIDERS } from './controls.js';

/**
 * The markup of the sliders of `group` (the schema's): each with its label (the string
 * `<key>_label`), its output and its range. A slider that is its own control (the shift)
 * carries `data-control` and, for a mechanism's parameter, `data-parameter`; the gate's α, β, γ
 * sit in the gate's disclosure, which carries them. A slider whose value may be unset (λ,
 * learned until chosen) has a note and a way back under it.
 */
function sliders(group) {
  const fields = [];
  for (const [key, s] of SLIDERS) {
    if (s.slider !== group) continue;
    const own = s.control === key;
    const marks = own ? ` data-control="${key}"${s.parameter ? ` data-parameter="${s.parameter}"` : ''}` : '';
    const back = 'unset' in s ? `\n  <p id="${key}-note" class="hint"></p>\n  <button type="button" id="${key}-back" class="button quiet" hidden></button>` : '';
    fields.push(`<div class="field"${marks}>
  <div class="field-head">
    <label for="${key}" data-i18n="${key}_label">${STRINGS.en[`${key}_label`] ?? key}</label>
    <output id="${key}-out" for="${key}"></output>
  </div>
  <input type="range" id="${key}" min="${s.min}" max="${s.max}" step="${s.step}" value="${s.min}">${back}
</div>`);
  }
  return fields.join('\n');
}

/**
 * The picture of what differential attention is for, drawn from the real model's numbers: the
 * row of «it» in all-MiniLM-L6-v2's layer 4 on "The animal didn't cross the street because it
 * was too tired." (16 word pieces; `diffattn encode --attentions`, rounded to two places). Head 2
 * (`A1`) looks at «animal»; head 8 (`A2`) spreads over `[CLS]` and the first words. Their
 * difference `A1 − 0.8·A2` keeps «animal» and cancels what both share (below 0 where `A2` had
 * more); the seed article's `A − shift(A)` instead puts a negative copy beside the peak. One
 * small bar chart per row (the maps' bars up from 0; a difference's up and down, in the
 * colours of the page's diverging scale).
 */
const PURPOSE_ROWS = Object.freeze([
  ['A1', [0.1, 0.04, 0.68, 0, 0, 0, 0.01, 0, 0.05, 0, 0.06, 0, 0, 0.02, 0, 0.01]],
  ['0.8·A2', [0.22, 0.19, 0.15, 0.03, 0.02, 0.01, 0.01, 0.02, 0.02, 0.01, 0.02, 0.02, 0.01, 0.01, 0.03, 0.04]],
  ['A1 − 0.8·A2', [-0.11, -0.15, 0.52, -0.03, -0.01, -0.01, 0.01, -0.01, 0.02, -0.01, 0.04, -0.01, -0.01, 0.01, -0.03, -0.03]],
  ['A − shift(A)', [0.09, -0.06, 0.63, -0.67, 0, 0, 0.01, -0.01, 0.05, -0.05, 0.06, -0.06, 0, 0.02, -0.01, 0.01]],
]);

function purposePicture() {
  const x0 = 74;
  const step = 13;
  const unit = 50; // pixels per 1.0 of attention
  let y = 16;
  const rows = PURPOSE_ROWS.map(([label, row], r) => {
    const signed = r >= 2;
    const up = Math.ceil(Math.max(...row) * unit);
    const down = signed ? Math.ceil(-Math.min(...row) * unit) : 0;
    const base = y + up + 1;
    const bars = row.map((v, c) => {
      const h = Math.max(0.5, Math.abs(v) * unit);
      const cls = !signed ? 'attn' : v < 0 ? 'neg' : 'pos';
      return `<rect class="${cls}" x="${x0 + c * step + 1}" y="${(v < 0 ? base : base - h).toFixed(1)}" width="${step - 2}" height="${h.toFixed(1)}"><title>${v}</title></rect>`;
    });
    const out = `<text x="${x0 - 4}" y="${base + 3}" text-anchor="end">${label}</text><line x1="${x0}" x2="${x0 + 16 * step}" y1="${base}" y2="${base}"/>${bars.join('')}`;
    y = base + down + 6;
    return out;
  });
  const column = (c, text, anchor = 'middle') => `<text x="${x0 + c * step + 6.5}" y="10" text-anchor="${anchor}">${text}</text>`;
  return `<svg class="purpose-picture" viewBox="0 0 ${x0 + 16 * step + 14} ${y}" role="img" aria-labelledby="purpose-picture-label">
  <title id="purpose-picture-label" data-i18n="purpose_picture"></title>
  ${column(0, '[CLS]')}${column(2.4, 'animal')}${column(15, '[SEP]')}
  ${rows.join('\n  ')}
</svg>`;
}

const MARKUP = `
<div id="explorer" class="explorer" part="explorer">
  <div id="messages" class="messages" role="alert" part="messages"></div>

  <div id="topbar" class="topbar" part="topbar">
    <div class="field sentence-field" data-control="text">
      <label for="sentence" data-i18n="sentence_label">Sentence</label>
      <textarea id="sentence" rows="1" spellcheck="false" autocomplete="off" part="sentence" data-i18n-placeholder="sentence_placeholder" placeholder="Type a sentence…"></textarea>
    </div>
    <div id="tools" class="tools">
      <div class="field" data-control="presets">
        <label for="presets" data-i18n="presets_label">Examples</label>
        <select id="presets"></select>
      </div>
      <div class="field" data-control="mechanism">
        <label for="mechanism" data-i18n="mechanism_label">Mechanism</label>
        <select id="mechanism"></select>
      </div>
    </div>
  </div>

  <details id="purpose" class="purpose" part="purpose" data-control="purpose">
    <summary data-i18n="purpose_title">What is differential attention for?</summary>
    <div class="purpose-body">
      <div class="purpose-text">
        <p data-i18n="purpose_noise"></p>
        <p data-i18n="purpose_shift"></p>
        <p id="purpose-lesson-line" hidden><a id="purpose-lesson" data-i18n="purpose_lesson" href="?lesson=noise"></a></p>
      </div>
      <figure class="purpose-figure">
        ${purposePicture()}
        <figcaption class="purpose-caption" data-i18n="purpose_picture"></figcaption>
      </figure>
    </div>
  </details>

  <div id="status-line" class="status-line" part="status">
    <div class="views" role="group" data-control="views" data-i18n-aria-label="views_label" aria-label="View">
      <button type="button" id="view-explore" class="button tab" data-view="explore" data-i18n="view_explore">Explore</button>
      <button type="button" id="view-walk" class="button tab" data-view="walk" data-i18n="view_walk">Guided walk</button>
      <button type="button" id="view-compare" class="button tab" data-view="compare" data-i18n="view_compare">Compare</button>
      <button type="button" id="view-model" class="button tab" data-view="model" data-i18n="view_model">Model</button>
      <button type="button" id="present" class="button quiet" data-control="present" data-i18n="present" data-i18n-title="present_title" title="Present (P)">Present</button>
    </div>
    <span id="token-count"></span>
    <span id="param-readout" hidden></span>
    <span id="timing" class="muted" hidden></span>
    <div id="prediction" class="prediction" data-label="none" part="prediction">
      <span id="prediction-title" class="prediction-title" data-i18n="prediction_title">Predicted sentiment</span>
      <strong id="prediction-value" class="prediction-value" aria-live="polite">—</strong>
      <meter id="prediction-meter" class="prediction-meter" min="0" max="1" value="0" hidden></meter>
      <span id="prediction-reason" class="muted prediction-reason"></span>
    </div>
  </div>

  <div id="notes" class="notes" part="notes">
    <p id="unknown-note" class="notice compact" hidden></p>
    <p id="truncated-notice" class="notice compact" hidden></p>
    <div id="spec-banner" class="notice compact spec-banner" hidden>
      <span id="spec-banner-text"></span>
      <span id="spec-layout" class="muted"></span>
      <button type="button" id="spec-back" class="button" data-i18n="spec_back">Back to the sentence</button>
    </div>
  </div>

    <section id="controls" class="controls rail" part="controls" data-i18n-aria-label="controls_label" aria-label="Controls">
      <fieldset class="group group-shift">
        <legend data-i18n="group_shift">Shift and difference</legend>
${sliders('shift')}
        <details id="more-shift" class="more" data-control="difference" data-parameter="difference">
          <summary data-i18n="more_shift">Difference, fill, renormalisation</summary>
          <div class="field">
            <label for="difference" data-i18n="difference_label">Difference D</label>
            <select id="difference"></select>
          </div>
          <div class="field">
            <label for="fill" data-i18n="fill_label">Shift fill</label>
            <select id="fill"></select>
          </div>
          <div class="field">
            <label for="renormalize" data-i18n="renorm_label">Renormalise A′</label>
            <select id="renormalize"></select>
          </div>
        </details>
      </fieldset>

      <fieldset class="group group-mech">
        <legend data-i18n="group_heads">Heads and mask</legend>
        <div class="field" data-control="weights">
          <label for="weights" data-i18n="model_label">Weights</label>
          <select id="weights">
            <option value="trained" data-i18n="model_opt_trained">trained (default)</option>
            <option value="untrained" data-i18n="model_opt_untrained">untrained (seeded)</option>
            <option value="minilm" data-i18n="model_opt_minilm">pretrained: all-MiniLM-L6-v2</option>
            <option value="spec" data-i18n="model_opt_spec" disabled hidden>from your file</option>
          </select>
          <span id="model-status" class="badge" hidden></span>
          <p id="pretrained-note" class="hint" data-i18n="pretrained_note" hidden></p>
        </div>
        <div class="field" data-control="other" id="other-field" hidden>
          <label for="other" data-i18n="other_label">Compare with a second sentence</label>
          <input type="text" id="other" autocomplete="off" spellcheck="false">
        </div>
        <div class="field" data-control="layer" id="layer-field" hidden>
          <label for="layer" data-i18n="layer_label">Layer</label>
          <select id="layer"></select>
        </div>
        <div class="field" data-control="partner" id="partner-field" hidden>
          <label for="partner" data-i18n="partner_label">A2: the layer’s head</label>
          <select id="partner"></select>
          <p class="hint" data-i18n="partner_note"></p>
        </div>
        <div class="field" data-control="heads">
          <div class="field-head">
            <label for="heads" data-i18n="heads_label">Number of heads</label>
            <output id="heads-out" for="heads"></output>
          </div>
          <input type="range" id="heads" min="0" max="0" step="1" value="0">
        </div>
        <div class="field" data-control="head">
          <label for="head" data-i18n="head_label">Head shown</label>
          <select id="head"></select>
        </div>
        <div class="field check" id="causal-field" data-control="causal">
          <input type="checkbox" id="causal">
          <label for="causal" data-i18n="causal_label">Causal mask (no looking ahead)</label>
        </div>
      </fieldset>

      <fieldset class="group group-gate">
        <legend data-i18n="group_gate">Gate G</legend>
        <details id="more-gate" class="more" data-control="gate" data-parameter="gate">
          <summary id="gate-summary" data-i18n="more_gate">α, β, γ</summary>
${sliders('gate')}
        </details>
        <p id="gate-learned-note" class="hint" data-i18n="gate_learned" hidden>The gate is the trained per-head gate (the sliders show its mean) until you move a slider.</p>
        <p id="gate-spec-note" class="hint" data-i18n="gate_from_spec" hidden>The gate comes from your file (one α, β, γ per head).</p>
      </fieldset>

      <fieldset class="group group-params">
        <legend data-i18n="group_params">Parameters</legend>
${sliders('params')}
      </fieldset>

      <fieldset class="group group-view">
        <legend data-i18n="group_view">View</legend>
        <div class="field check" data-control="shared_scale">
          <input type="checkbox" id="shared-scale">
          <label for="shared-scale" data-i18n="shared_scale_label">One colour scale for all maps</label>
        </div>
        <div class="field check" data-control="all_heads">
          <input type="checkbox" id="all-heads">
          <label for="all-heads" data-i18n="all_heads_label">Every head side by side</label>
        </div>
        <div class="field" data-control="all_heads" id="all-heads-stage-field" hidden>
          <label for="all-heads-stage" data-i18n="all_heads_stage_label">Map shown for every head</label>
          <select id="all-heads-stage"></select>
        </div>
        <div class="field" data-control="spec">
          <label class="button file-button">
            <input type="file" id="spec-file" accept=".json,.safetensors,application/json,application/octet-stream" class="visually-hidden">
            <span data-i18n="spec_open">Open a spec file…</span>
          </label>
          <p class="hint" data-i18n="spec_hint">Your own vectors and weights: a stages spec (.json), also by dropping it here.</p>
        </div>
      </fieldset>

      <details id="export-tools" class="group more export-tools" role="group" data-control="export" data-i18n-aria-label="group_export" aria-label="Export">
        <summary data-i18n="group_export">Export</summary>
        <div class="field" id="export-target-field" data-control="export">
          <label for="export-target" data-i18n="export_map_label">What to export</label>
          <select id="export-target"></select>
        </div>
        <div class="field">
          <label for="export-size" data-i18n="export_size_label">PNG size</label>
          <select id="export-size">
            <option value="1" data-i18n="export_size_1">as on screen</option>
            <option value="2" data-i18n="export_size_2">twice as large (2×)</option>
            <option value="1920" data-i18n="export_size_1920">1920 px wide, for slides</option>
          </select>
        </div>
        <div class="row">
          <button type="button" id="export-png" class="button" data-i18n="export_png">PNG</button>
          <button type="button" id="export-svg" class="button" data-i18n="export_svg">SVG</button>
          <button type="button" id="export-json" class="button" data-i18n="export_json">JSON (opens again)</button>
        </div>
      </details>
    </section>

    <section id="maps-section" class="maps-section stage" part="maps-section" tabindex="-1" aria-labelledby="maps-heading">
      <h2 id="maps-heading" class="visually-hidden" data-i18n="maps_label">Attention maps</h2>
      <div id="loading" class="loading" role="status">
        <progress id="load-progress" max="1"></progress>
        <span data-i18n="loading">Loading the WebAssembly engine…</span>
      </div>
      <div id="spec-loading" class="loading" role="status" hidden>
        <progress id="spec-progress" max="1"></progress>
        <span id="spec-loading-text"></span>
      </div>
      <div id="weights-loading" class="loading" role="status" hidden>
        <progress id="weights-progress" max="1"></progress>
        <span id="weights-loading-text"></span>
      </div>
      <div id="busy" class="loading busy" role="status" hidden>
        <progress id="busy-progress"></progress>
        <span id="busy-text"></span>
      </div>
      <div id="walk" class="walk" part="walk" hidden>
        <div class="walk-head">
          <button type="button" id="walk-back" class="button" data-i18n="walk_back">← Back</button>
          <h3 id="walk-title" class="walk-title"></h3>
          <button type="button" id="walk-next" class="button" data-i18n="walk_next">Next →</button>
        </div>
        <p id="walk-text" class="walk-text" aria-live="polite"></p>
      </div>
      <p id="empty-hint" class="empty-hint" hidden data-i18n="empty_hint">Type a sentence in the box above, or pick an example, to see its attention maps.</p>
      <p id="maps-hint" class="visually-hidden" data-i18n="map_keys_hint">Arrow keys move the selected cell, Escape clears it.</p>
      <div id="zoom" class="zoom" part="zoom" hidden>
        <div class="zoom-frame">
          <canvas id="zoom-overview" class="zoom-overview" role="img" tabindex="0"></canvas>
          <div id="zoom-window" class="zoom-window" hidden></div>
        </div>
        <div class="zoom-side">
          <p id="zoom-status" class="zoom-status" aria-live="polite"></p>
          <div class="zoom-buttons">
            <button type="button" id="zoom-out" class="button" data-i18n-aria-label="zoom_out" aria-label="Zoom out" data-i18n-title="zoom_out" title="Zoom out">−</button>
            <button type="button" id="zoom-in" class="button" data-i18n-aria-label="zoom_in" aria-label="Zoom in" data-i18n-title="zoom_in" title="Zoom in">+</button>
            <button type="button" id="zoom-whole" class="button quiet" data-i18n="zoom_whole">Whole map</button>
          </div>
          <p class="zoom-hint muted" data-i18n="zoom_hint">Ctrl + scroll or pinch on a map to zoom, drag to move; + − 0 on a focused map.</p>
        </div>
      </div>
      <div id="maps" class="maps" part="maps"></div>
      <div id="compare" class="compare" part="compare" hidden></div>
      <div id="row-view" class="row-view" part="row-view" hidden>
        <div class="row-view-head">
          <span id="row-view-title" class="row-view-title"></span>
          <button type="button" id="row-close" class="button quiet" data-i18n="row_close">Close the row view</button>
        </div>
        <div class="row-frame"><canvas id="row-canvas" class="row-canvas" role="img" tabindex="0"></canvas></div>
      </div>
      <div id="readout" class="readout" aria-live="polite" part="readout" data-control="readout">
        <p class="muted" data-i18n="readout_hint">Hover over a map, tap it, or focus it and use the arrow keys, to see the arithmetic of one cell.</p>
      </div>
      <p id="trained-with" class="prediction-note muted" hidden></p>
      <div id="moved-away" class="notice compact moved-away" hidden>
        <span id="moved-away-text"></span>
        <button type="button" id="back-to-trained" class="button quiet" data-i18n="back_to_trained">Back to the trained settings</button>
        <details id="heads-explain" class="inline-details">
          <summary data-i18n="model_doc_link">What happens to the per-head parameters</summary>
          <p data-i18n="heads_explain"></p>
        </details>
      </div>
      <div id="table-fallback" class="visually-hidden"></div>
    </section>

  <details id="howto" class="howto" part="howto" data-control="howto">
    <summary data-i18n="howto_title">How to read these maps</summary>
    <p data-i18n="howto_intro"></p>
    <dl>
      <dt>A</dt><dd data-i18n="howto_a"></dd>
      <dt>shift(A)</dt><dd data-i18n="howto_shifted"></dd>
      <dt>D</dt><dd data-i18n="howto_d"></dd>
      <dt>G</dt><dd data-i18n="howto_g"></dd>
      <dt>A′</dt><dd data-i18n="howto_fused"></dd>
      <dt>A1, A2, A1 − λ·A2</dt><dd data-i18n="howto_difftr"></dd>
      <dt>…</dt><dd data-i18n="howto_other"></dd>
    </dl>
  </details>

  <div id="tooltip" class="tooltip" aria-hidden="true" hidden></div>
  <div id="drop-overlay" class="drop-overlay" hidden><p data-i18n="drop_here">Drop a spec file to draw it</p></div>
</div>`;

/** Builds the explorer's DOM in `root` and returns its elements by camel-cased id. */
export function buildExplorerDom(root) {
  const template = document.createElement('template');
  template.innerHTML = MARKUP;
  root.append(template.content);
  return byId(root);
}
