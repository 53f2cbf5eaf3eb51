//! Writing stages: the engine's typed stages as the JSON of DESIGN.md §6.
//!
//! [`StagesView`] writes them as they are, number by number, into any writer: nothing the size
//! of the answer is built in memory, which at 2,048 tokens and 8 heads is 33 million numbers
//! per map. [`stages_json`] builds the same JSON as values, for the page's export.

use std::io::Write;

use ndarray::{Array2, Array3, ArrayView1, ArrayView2, Axis};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::SpecError;
use crate::engine::{gated_attention, StageId, Stages};
use crate::names::name_of;

/// The maps of one head. Which fields are present depends on the mechanism (DESIGN.md §6).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct HeadStagesJson {
    /// `A` (every mechanism but the Differential Transformer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<Vec<Vec<f32>>>,
    /// `shift_{+k}(A)` (shift_diff).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shifted: Option<Vec<Vec<f32>>>,
    /// `shift_{-k}(A)` (shift_diff, symmetric difference).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shifted_back: Option<Vec<Vec<f32>>>,
    /// `D` (shift_diff).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d: Option<Vec<Vec<f32>>>,
    /// `G` (shift_diff).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub g: Option<Vec<Vec<f32>>>,
    /// `A'` after any renormalisation (shift_diff).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused: Option<Vec<Vec<f32>>>,
    /// `A1` (diff_transformer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a1: Option<Vec<Vec<f32>>>,
    /// `A2` (diff_transformer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a2: Option<Vec<Vec<f32>>>,
    /// `A1 - lambda·A2` (diff_transformer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<Vec<Vec<f32>>>,
    /// Hierarchical attention's weight on the own segment's tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<Vec<Vec<f32>>>,
    /// Hierarchical attention's weight on the other segments, `(tokens, segments)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segments: Option<Vec<Vec<f32>>>,
    /// Gated attention's output gate of this head, `Gₒ[:, h, :]`, `(tokens, d_h)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_gate: Option<Vec<Vec<f32>>>,
    /// Gated attention's head output `(A_h·V_h) ⊙ Gₒ[:, h, :]`, `(tokens, d_h)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gated: Option<Vec<Vec<f32>>>,
}

/// The Differential Transformer's one λ, or V2's λ per token (row) and head (column).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LambdaJson {
    /// One λ for the layer.
    Layer(f32),
    /// `(tokens, heads)`.
    PerToken(Vec<Vec<f32>>),
}

/// The whole answer: per-head maps, lambda for the Differential Transformer, and the output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StagesJson {
    /// One object per head.
    pub heads: Vec<HeadStagesJson>,
    /// The layer's lambda (diff_transformer only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda: Option<LambdaJson>,
    /// Gated attention's output gate, its mean over each head's channels, `(tokens, heads)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_gate_mean: Option<Vec<Vec<f32>>>,
    /// The layer output, `tokens x d`.
    pub output: Vec<Vec<f32>>,
}

fn rows(m: ArrayView2<f32>) -> Vec<Vec<f32>> {
    m.outer_iter().map(|r| r.to_vec()).collect()
}

fn head(maps: &Array3<f32>, h: usize) -> Vec<Vec<f32>> {
    rows(maps.index_axis(Axis(0), h))
}

pub(super) fn matrix(m: &Array2<f32>) -> Vec<Vec<f32>> {
    rows(m.view())
}

/// Head `h`'s columns `h·d_h .. (h+1)·d_h` of a `(tokens, heads · d_h)` matrix.
fn head_columns(m: &Array2<f32>, h: usize, d_h: usize) -> ArrayView2<'_, f32> {
    m.slice(ndarray::s![.., h * d_h..(h + 1) * d_h])
}

/// The stages in the JSON shape of DESIGN.md §6.
pub fn stages_json(stages: &Stages) -> StagesJson {
    match stages {
        Stages::Attention { a, output } => StagesJson {
            heads: (0..a.len_of(Axis(0)))
                .map(|h| HeadStagesJson {
                    a: Some(head(a, h)),
                    ..Default::default()
                })
                .collect(),
            lambda: None,
            output_gate_mean: None,
            output: matrix(output),
        },
        Stages::ShiftDiff { a, maps, output } => StagesJson {
            heads: (0..a.len_of(Axis(0)))
                .map(|h| HeadStagesJson {
                    a: Some(head(a, h)),
                    shifted: Some(head(&maps.shifted, h)),
                    shifted_back: maps.shifted_back.as_ref().map(|b| head(b, h)),
                    d: Some(head(&maps.d, h)),
                    g: Some(head(&maps.g, h)),
                    fused: Some(head(&maps.fused, h)),
                    ..Default::default()
                })
                .collect(),
            lambda: None,
            output_gate_mean: None,
            output: matrix(output),
        },
        Stages::DiffTransformer { maps, output } => StagesJson {
            heads: (0..maps.diff.len_of(Axis(0)))
                .map(|h| HeadStagesJson {
                    a1: Some(head(&maps.a1, h)),
                    a2: Some(head(&maps.a2, h)),
                    diff: Some(head(&maps.diff, h)),
                    ..Default::default()
                })
                .collect(),
            lambda: Some(LambdaJson::Layer(maps.lambda)),
            output_gate_mean: None,
            output: matrix(output),
        },
        Stages::DiffTransformerV2 { maps, output } => StagesJson {
            heads: (0..maps.diff.len_of(Axis(0)))
                .map(|h| HeadStagesJson {
                    a1: Some(head(&maps.a1, h)),
                    a2: Some(head(&maps.a2, h)),
                    diff: Some(head(&maps.diff, h)),
                    ..Default::default()
                })
                .collect(),
            lambda: Some(LambdaJson::PerToken(matrix(&maps.lambda))),
            output_gate_mean: None,
            output: matrix(output),
        },
        Stages::Hierarchical { maps, output } => StagesJson {
            heads: (0..maps.a.len_of(Axis(0)))
                .map(|h| HeadStagesJson {
                    local: Some(head(&maps.local, h)),
                    segments: Some(head(&maps.segments, h)),
                    a: Some(head(&maps.a, h)),
                    ..Default::default()
                })
                .collect(),
            lambda: None,
            output_gate_mean: None,
            output: matrix(output),
        },
        Stages::GatedAttention {
            a,
            gate,
            gated,
            head_dim,
            output,
        } => {
            let heads = a.len_of(Axis(0));
            StagesJson {
                heads: (0..heads)
                    .map(|h| HeadStagesJson {
                        a: Some(head(a, h)),
                        output_gate: Some(rows(head_columns(gate, h, *head_dim))),
                        gated: Some(rows(head_columns(gated, h, *head_dim))),
                        ..Default::default()
                    })
                    .collect(),
                lambda: None,
                output_gate_mean: Some(matrix(&gated_attention::mean_table(
                    gate.view(),
                    heads,
                    *head_dim,
                ))),
                output: matrix(output),
            }
        }
    }
}

/// Every head's map of `stage`, if the stages hold it.
pub fn stage_maps(stages: &Stages, stage: StageId) -> Option<&Array3<f32>> {
    match (stages, stage) {
        (
            Stages::Attention { a, .. }
            | Stages::ShiftDiff { a, .. }
            | Stages::GatedAttention { a, .. },
            StageId::A,
        ) => Some(a),
        (Stages::ShiftDiff { maps, .. }, _) => maps.stage(stage),
        (Stages::DiffTransformer { maps, .. }, StageId::A1) => Some(&maps.a1),
        (Stages::DiffTransformer { maps, .. }, StageId::A2) => Some(&maps.a2),
        (Stages::DiffTransformer { maps, .. }, StageId::Diff) => Some(&maps.diff),
        (Stages::DiffTransformerV2 { maps, .. }, StageId::A1) => Some(&maps.a1),
        (Stages::DiffTransformerV2 { maps, .. }, StageId::A2) => Some(&maps.a2),
        (Stages::DiffTransformerV2 { maps, .. }, StageId::Diff) => Some(&maps.diff),
        (Stages::Hierarchical { maps, .. }, StageId::A) => Some(&maps.a),
        (Stages::Hierarchical { maps, .. }, StageId::Local) => Some(&maps.local),
        (Stages::Hierarchical { maps, .. }, StageId::Segments) => Some(&maps.segments),
        _ => None,
    }
}

/// The stages as the JSON of DESIGN.md §6, written lazily: serialising a view reads the
/// engine's arrays directly, so `serde_json::to_writer` streams the answer. The keys come in
/// the order [`stages_json`] writes them, so both give the same bytes.
#[derive(Debug, Clone)]
pub struct StagesView<'a> {
    stages: &'a Stages,
    /// The maps to write for each head, in [`StageId::ALL`] order.
    maps: Vec<StageId>,
}

impl<'a> StagesView<'a> {
    /// Every map of every head.
    pub fn new(stages: &'a Stages) -> StagesView<'a> {
        let maps = StageId::ALL
            .into_iter()
            .filter(|&s| stage_maps(stages, s).is_some())
            .collect();
        StagesView { stages, maps }
    }

    /// Only the maps in `wanted` (the layer output, and lambda for the Differential
    /// Transformer, are always written). A map these stages do not have is an error that lists
    /// the ones they do.
    ///
    /// ```
    /// use diffattn::engine::StageId;
    /// use diffattn::spec::{parse_spec, StagesView};
    /// let spec = r#"{"mechanism": "standard", "heads": 1, "causal": true,
    ///   "x": [[1.0], [2.0]], "w_q": [[1.0]], "w_k": [[1.0]], "w_v": [[1.0]], "w_o": [[1.0]]}"#;
    /// let stages = parse_spec(spec).unwrap().run().unwrap();
    /// assert!(StagesView::with_maps(&stages, &[StageId::A]).is_ok());
    /// let e = StagesView::with_maps(&stages, &[StageId::D]).unwrap_err();
    /// assert_eq!(e.to_string(), "maps: these stages have no map \"d\"; they have \"a\"");
    /// ```
    pub fn with_maps(stages: &'a Stages, wanted: &[StageId]) -> Result<StagesView<'a>, SpecError> {
        let all = StagesView::new(stages);
        if let Some(missing) = wanted.iter().find(|s| !all.maps.contains(s)) {
            let have: Vec<String> = all
                .maps
                .iter()
                .map(|&s| format!("{:?}", name_of(s)))
                .collect();
            return Err(SpecError::new(
                "maps",
                format!(
                    "these stages have no map {:?}; they have {}",
                    name_of(*missing),
                    have.join(", ")
                ),
            ));
        }
        let maps = all
            .maps
            .into_iter()
            .filter(|s| wanted.contains(s))
            .collect();
        Ok(StagesView { stages, maps })
    }

    /// The maps written for each head.
    pub fn maps(&self) -> &[StageId] {
        &self.maps
    }
}

impl Serialize for StagesView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("heads", &Heads(self))?;
        match self.stages {
            // One number per layer, or one per token and head (L x H).
            Stages::DiffTransformer { maps, .. } => map.serialize_entry("lambda", &maps.lambda)?,
            Stages::DiffTransformerV2 { maps, .. } => {
                map.serialize_entry("lambda", &Rows(maps.lambda.view()))?
            }
            Stages::GatedAttention {
                a, gate, head_dim, ..
            } => {
                let table = gated_attention::mean_table(gate.view(), a.len_of(Axis(0)), *head_dim);
                map.serialize_entry("output_gate_mean", &Rows(table.view()))?
            }
            _ => {}
        }
        map.serialize_entry("output", &Rows(self.stages.output().view()))?;
        map.end()
    }
}

/// The list of heads of a view.
struct Heads<'v, 'a>(&'v StagesView<'a>);

impl Serialize for Heads<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let heads = self.0.stages.final_maps().len_of(Axis(0));
        serializer.collect_seq((0..heads).map(|h| Head(self.0, h)))
    }
}

/// One head of a view: its maps by name.
struct Head<'v, 'a>(&'v StagesView<'a>, usize);

impl Serialize for Head<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Head(view, h) = *self;
        let mut map = serializer.serialize_map(Some(view.maps.len()))?;
        for &stage in &view.maps {
            if let Some(maps) = stage_maps(view.stages, stage) {
                map.serialize_entry(name_of(stage), &Rows(maps.index_axis(Axis(0), h)))?;
            }
        }
        // Gated attention's gate and gated output per channel, always written (like λ).
        if let Stages::GatedAttention {
            gate,
            gated,
            head_dim,
            ..
        } = view.stages
        {
            map.serialize_entry("output_gate", &Rows(head_columns(gate, h, *head_dim)))?;
            map.serialize_entry("gated", &Rows(head_columns(gated, h, *head_dim)))?;
        }
        map.end()
    }
}

/// A matrix as a list of rows.
struct Rows<'a>(ArrayView2<'a, f32>);

impl Serialize for Rows<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.outer_iter().map(Row))
    }
}

/// One row of numbers.
struct Row<'a>(ArrayView1<'a, f32>);

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter())
    }
}

/// Writes a view as JSON into `writer` as it is read (compact, or indented by two spaces when
/// `pretty`), followed by a newline. Errors are the writer's, such as a full disk.
pub fn write_stages<W: Write>(
    mut writer: W,
    view: &StagesView,
    pretty: bool,
) -> std::io::Result<()> {
    if pretty {
        serde_json::to_writer_pretty(&mut writer, view)?;
    } else {
        serde_json::to_writer(&mut writer, view)?;
    }
    writer.write_all(b"\n")?;
    writer.flush()
}
