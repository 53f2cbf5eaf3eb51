//! Writing stages: the engine's typed stages as the JSON of DESIGN.md §6.

use ndarray::{Array2, Array3, ArrayView2, Axis};
use serde::Serialize;

use crate::engine::Stages;

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
    /// The layer output, `tokens x d`.
    pub output: Vec<Vec<f32>>,
}

fn rows(m: ArrayView2<f32>) -> Vec<Vec<f32>> {
    m.outer_iter().map(|r| r.to_vec()).collect()
}

fn head(maps: &Array3<f32>, h: usize) -> Vec<Vec<f32>> {
    rows(maps.index_axis(Axis(0), h))
}

fn matrix(m: &Array2<f32>) -> Vec<Vec<f32>> {
    rows(m.view())
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
            output: matrix(output),
        },
    }
}
