//! What the page draws and says (`ViewJs`, what `view()` returns): the mechanism's stages
//! (`StageJs`), its controls, and a loaded layer (`LayerJs`).

use serde::Serialize;

use diffattn::engine::{Columns, StageId};
use diffattn::explorer;
use diffattn::names::name_of;

/// `{ id, label, formula, scale: "sequential" | "unit" | "diverging", columns: "keys" |
/// "segments" | "heads", sink: boolean }`: `id` is the stage's name (`"fused"`), `label` what a
/// learner reads (`"A′"`), `columns` what the map's columns are (V2's λ has one per head),
/// `sink` whether the map has the learned sink's strip beside it (DESIGN.md §7.9).
#[derive(Serialize)]
pub(crate) struct StageJs {
    id: &'static str,
    label: &'static str,
    formula: String,
    scale: &'static str,
    columns: &'static str,
    sink: bool,
}

impl StageJs {
    pub(crate) fn new(state: &explorer::Explorer, stage: StageId) -> StageJs {
        StageJs {
            id: name_of(stage),
            label: stage.label(),
            formula: state.formula(stage),
            scale: name_of(stage.scale_kind()),
            columns: match stage.columns() {
                Columns::Keys => "keys",
                Columns::Segments => "segments",
                Columns::Heads => "heads",
            },
            sink: state.has_sink(stage),
        }
    }
}

/// Everything the page draws and says, so that it never branches on the mechanism:
/// `{ mechanism, mechanism_choices: string[], stages: StageJs[], final_stage,
///    parameters: string[], head_choices: number[], heads, head, head_width, d_model,
///    tokens: number, keys: number, readout: string | null, moved_away: string[],
///    gate_learned, lambda_learned, lambda_per_token, spec, layer: LayerJs | null,
///    masked: boolean, layers: number, partner: number | null, cross: boolean }`.
/// `mechanism_choices` are the mechanisms that can draw what is shown (every one for the
/// sentence; for a loaded layer those its weights fit); `parameters` names the controls the
/// mechanism takes (`"shift"`, `"difference"`, `"fill"`, `"renormalize"`, `"gate"`, `"tau"`,
/// `"window"`, `"segment"`, `"lambda"`); `moved_away` the controls whose values left the
/// trained (or loaded) ones; `lambda_per_token` whether the learned λ is one per token and
/// head (V2) rather than one per layer; `layer` what the loaded spec says about its layer; `masked`
/// whether some cell of the maps is masked; `layers` how many layers the source has (a
/// pretrained model's; 1 otherwise), which the layer control offers; `partner` the head whose
/// map is `A2` for the head shown (from 1), when the Differential Transformer pairs a
/// pretrained layer's heads (the `partner` control shows then); `cross` whether the keys are
/// a second sequence's (a captured cross-attention layer: the causal control hides).
#[derive(Serialize)]
pub(crate) struct ViewJs {
    pub mechanism: &'static str,
    pub mechanism_choices: Vec<&'static str>,
    pub stages: Vec<StageJs>,
    pub final_stage: &'static str,
    pub parameters: Vec<&'static str>,
    pub head_choices: Vec<usize>,
    pub heads: usize,
    pub head: usize,
    pub head_width: usize,
    pub d_model: usize,
    pub tokens: usize,
    pub keys: usize,
    pub readout: Option<String>,
    pub moved_away: Vec<&'static str>,
    pub gate_learned: bool,
    pub lambda_learned: bool,
    pub lambda_per_token: bool,
    pub spec: bool,
    pub layer: Option<LayerJs>,
    pub masked: bool,
    pub layers: usize,
    pub partner: Option<usize>,
    pub cross: bool,
}

/// `{ settings: SettingsJs, view: ViewJs }`: what `update` and `frame` return, read once per
/// change.
#[derive(Serialize)]
pub(crate) struct FrameJs {
    pub settings: super::SettingsJs,
    pub view: ViewJs,
}

/// `{ model: string | null, layer: number | null, labelled, heads, kv_heads, head_dim,
///    d_model, rope: { layout: "half" | "interleaved", theta: number | null } | null,
///    biases: boolean }`: a loaded layer's name, index and head layout.
#[derive(Serialize)]
pub(crate) struct LayerJs {
    model: Option<String>,
    layer: Option<u64>,
    labelled: bool,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    d_model: usize,
    rope: Option<RopeJs>,
    biases: bool,
}

/// `{ layout, theta }`
#[derive(Serialize)]
struct RopeJs {
    layout: &'static str,
    theta: Option<f64>,
}

impl From<explorer::LayerInfo> for LayerJs {
    fn from(info: explorer::LayerInfo) -> LayerJs {
        LayerJs {
            model: info.model,
            layer: info.layer,
            labelled: info.labelled,
            heads: info.heads,
            kv_heads: info.kv_heads,
            head_dim: info.head_dim,
            d_model: info.d_model,
            rope: info.rope.map(|(layout, theta)| RopeJs {
                layout: name_of(layout),
                theta,
            }),
            biases: info.biases,
        }
    }
}

impl ViewJs {
    pub(crate) fn new(state: &explorer::Explorer) -> ViewJs {
        let settings = state.settings();
        let kind = state.kind();
        let (mask, offset) = state.mask();
        let (rows, keys) = (state.len(), state.key_count());
        ViewJs {
            mechanism: name_of(kind),
            mechanism_choices: state.mechanism_choices().into_iter().map(name_of).collect(),
            stages: state
                .stages()
                .into_iter()
                .map(|s| StageJs::new(state, s))
                .collect(),
            final_stage: name_of(state.final_stage()),
            parameters: kind.parameters().iter().map(|&p| name_of(p)).collect(),
            head_choices: state.head_choices(),
            heads: settings.maps.heads,
            head: state.head() + 1,
            head_width: state.head_width(),
            d_model: state.d_model(),
            tokens: rows,
            keys,
            readout: state.parameter_readout(),
            moved_away: state.moved_away(),
            gate_learned: state.gate_is_learned(),
            lambda_learned: state.lambda_is_learned(),
            lambda_per_token: kind.lambda_per_token(),
            spec: state.is_spec(),
            layer: state.layer_info().map(LayerJs::from),
            masked: (0..rows).any(|i| mask.allowed_keys(i, offset, keys) != (0..keys)),
            layers: state.layers(),
            partner: state.partner_of(state.head()).map(|h| h + 1),
            cross: state.is_cross(),
        }
    }
}
