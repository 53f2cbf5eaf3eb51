//! The figures of docs/MODEL.md: maps of the shipped models on a few sentences, drawn by the
//! page's own renderer (`diffattn::render`) as SVG, with each model's prediction in the title.

use std::fmt::Write as _;
use std::path::Path;

use diffattn::engine::Stages;
use diffattn::model::Model;
use diffattn::render::{panel_svg, Frame, FrameParts, Panel, Scale, Theme};
use diffattn::text::tokenize;
use ndarray::{Array2, ArrayView2, Axis};

/// (file stem, mechanism, sentence) of every figure.
pub const FIGURES: [(&str, &str, &str); 7] = [
    ("shift_diff-not-good", "shift_diff", "not good"),
    ("shift_diff-not-bad", "shift_diff", "not bad"),
    (
        "shift_diff-contrast",
        "shift_diff",
        "the plot is thin , but the acting is wonderful",
    ),
    ("shift_diff-zh", "shift_diff", "虽然有点贵，但是质量很好"),
    (
        "input_diff-contrast",
        "input_diff",
        "the plot is thin , but the acting is wonderful",
    ),
    (
        "diff_transformer-contrast",
        "diff_transformer",
        "the plot is thin , but the acting is wonderful",
    ),
    ("standard-intensifier", "standard", "a very very good film"),
];

fn abs_max(m: ArrayView2<f32>) -> f32 {
    m.iter().fold(0.0f32, |a, v| a.max(v.abs())).max(1e-6)
}

/// Writes `dir/<stem>.svg` for every figure and returns Markdown that shows them.
pub fn write_figures(weights: &Path, dir: &Path) -> Result<String, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let theme = Theme::light();
    let mut md = String::new();
    for (stem, mechanism, sentence) in FIGURES {
        let path = weights.join(format!("{mechanism}.bin"));
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let model = Model::from_bytes(&bytes).map_err(|e| e.to_string())?;
        let tokens = tokenize(sentence);
        let (stages, p) = model.forward(&tokens).map_err(|e| e.to_string())?;
        let labels: Vec<String> = tokens.iter().map(|t| t.text.clone()).collect();
        let keys: Vec<String> = if mechanism == "input_diff" {
            labels
                .windows(2)
                .map(|w| format!("{}→{}", w[0], w[1]))
                .collect()
        } else {
            labels.clone()
        };
        // One panel per head of the map each head mixes values with, plus for shift_diff the
        // A, D, G of the head whose A' moves furthest from A.
        let mut maps: Vec<(String, Array2<f32>, bool)> = Vec::new();
        let finals = stages.final_maps();
        let name = match &stages {
            Stages::ShiftDiff { .. } => "A′",
            Stages::DiffTransformer { .. } | Stages::DiffTransformerV2 { .. } => "A1 − λ·A2",
            Stages::Attention { .. }
            | Stages::Hierarchical { .. }
            | Stages::GatedAttention { .. } => "A",
        };
        for (h, m) in finals.axis_iter(Axis(0)).enumerate() {
            let signed = !matches!(
                stages,
                Stages::Attention { .. } | Stages::GatedAttention { .. }
            );
            maps.push((format!("{name}, head {}", h + 1), m.to_owned(), signed));
        }
        if let Stages::ShiftDiff { a, maps: s, .. } = &stages {
            let h = (0..a.len_of(Axis(0)))
                .max_by(|&i, &j| {
                    let d = |h: usize| abs_max(s.d.index_axis(Axis(0), h));
                    d(i).total_cmp(&d(j))
                })
                .unwrap_or(0);
            maps.push((
                format!("A, head {}", h + 1),
                a.index_axis(Axis(0), h).to_owned(),
                false,
            ));
            maps.push((
                format!("D, head {}", h + 1),
                s.d.index_axis(Axis(0), h).to_owned(),
                true,
            ));
            maps.push((
                format!("G, head {}", h + 1),
                s.g.index_axis(Axis(0), h).to_owned(),
                false,
            ));
        }
        let scales: Vec<Scale> = maps
            .iter()
            .map(|(_, m, signed)| {
                if *signed {
                    Scale::diverging(abs_max(m.view()))
                } else {
                    Scale::unit()
                }
            })
            .collect();
        let panels: Vec<Panel> = maps
            .iter()
            .zip(&scales)
            .map(|((title, m, _), scale)| Panel {
                map: m.view(),
                frame: Frame {
                    title,
                    row_labels: &labels,
                    col_labels: &keys,
                    scale,
                    theme: &theme,
                    font_px: 13.0,
                    mask: None,
                    masked_label: "",
                    constant: None,
                    constant_label: "",
                    parts: FrameParts::ALL,
                    strip: None,
                },
            })
            .collect();
        let size = if tokens.len() > 6 { 340 } else { 260 };
        let svg = panel_svg(&panels, size, size);
        let file = dir.join(format!("{stem}.svg"));
        std::fs::write(&file, svg).map_err(|e| format!("{}: {e}", file.display()))?;
        let _ = writeln!(
            md,
            "- `{mechanism}` on “{sentence}”: **{}** (p = {:.2}).\n\n  ![{mechanism} maps of “{sentence}”](maps/{stem}.svg)\n",
            p.label.as_str(),
            p.probability
        );
    }
    Ok(md)
}
