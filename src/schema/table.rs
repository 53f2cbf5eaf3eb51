//! The table: every key once. The engine's settings are declared in groups by the cache layer
//! a change of them clears; from each line the macro below makes the typed field (in
//! [`MapSettings`] or [`ShiftSettings`]), its default, its field of [`SettingsPatch`], and its
//! row of [`KEYS`] with the engine's access to it. The page's own keys (the view, the language,
//! the attributes' lists, …) are rows of the same table with a default instead of an access.
//!
//! Adding a parameter to a mechanism is one line here (ARCHITECTURE.md, "Adding a parameter").

use super::value::{Raw, SettingValue, Value};
use super::{Access, Compare, Control, Key, Kind, Layer, LearnedBy, PageDefault, Surfaces};
use crate::engine::shift_diff::{Difference, Renormalize, ShiftFill};
use crate::engine::{MechanismKind, Parameter};

/// Makes the settings' structs, their defaults, the patch and the table from one declaration
/// per setting: `/// doc` `name: Type = default => Key::…(…).symbol(…).control(…)…,`.
macro_rules! schema {
    (
        before: [$($before:expr,)*]
        $(
            $(#[doc = $group_doc:literal])*
            $group:ident: $Group:ident ($layer:expr) {
                $(
                    $(#[doc = $doc:literal])*
                    $key:ident: $ty:ty = $default:expr => $meta:expr,
                )*
            }
        )*
        @head: $head:expr,
        after: [$($after:expr,)*]
    ) => {
        $(
            $(#[doc = $group_doc])*
            #[derive(Debug, Clone, Copy, PartialEq)]
            pub struct $Group {
                $( $(#[doc = $doc])* pub $key: $ty, )*
            }

            impl Default for $Group {
                fn default() -> $Group {
                    $Group { $( $key: $default, )* }
                }
            }
        )*

        /// Every setting the engine holds, by the cache layer a change of it clears.
        #[derive(Debug, Clone, Copy, PartialEq, Default)]
        pub struct Settings {
            $( $(#[doc = $group_doc])* pub $group: $Group, )*
        }

        /// A change to any of the settings at once, each `None` left as it is: what the page
        /// sends when a person moves one control or an author sets several attributes.
        /// `head` counts from 0.
        #[derive(Debug, Clone, Copy, PartialEq, Default)]
        pub struct SettingsPatch {
            $( $( $(#[doc = $doc])* pub $key: Option<$ty>, )* )*
            /// The head shown, from 0.
            pub head: Option<usize>,
        }

        impl SettingsPatch {
            /// `settings` with every setting of this patch applied (the head shown is not one
            /// of `Settings`: the explorer applies it).
            pub fn apply(&self, settings: &mut Settings) {
                $( $( if let Some(v) = self.$key { settings.$group.$key = v; } )* )*
            }
        }

        /// Every key of the schema: the page's, the engine's settings, the head shown, the
        /// page's again (the order of the generated tables).
        pub const KEYS: &[Key] = &[
            $($before,)*
            $( $(
                $meta.engine(
                    stringify!($key),
                    concat!($($doc, "\n",)*),
                    $layer,
                    Access {
                        get: |s: &Settings, _head: usize| SettingValue::to_value(s.$group.$key),
                        patch: |p: &mut SettingsPatch, raw: &Raw| {
                            p.$key = Some(SettingValue::from_raw(stringify!($key), raw)?);
                            Ok(())
                        },
                        ty: <$ty as SettingValue>::TYPE,
                    },
                ),
            )* )*
            $head,
            $($after,)*
        ];
    };
}

/// The sliders' ranges of the gate's scalars.
const GATE: Key = Key::slider(-10.0, 10.0, 0.1, 1);

schema! {
    before: [
        Key::of(Kind::Text)
            .control(Control::named("text").embed().present())
            .page("text", "The sentence drawn."),
        Key::of(Kind::Text)
            .control(Control::named("other"))
            .default(PageDefault::Text(""))
            .page("other", "A second sentence the pretrained model compares the typed one with (`weights=minilm`)."),
    ]

    /// What the maps depend on: which mechanism, how many heads, the mask, and the parameters
    /// that shape the maps themselves (a change recomputes the maps).
    maps: MapSettings (Layer::Maps) {
        /// A mechanism of the engine (the wasm module's `names().mechanisms`).
        mechanism: MechanismKind = MechanismKind::ShiftDiff =>
            Key::engine_choice("mechanisms")
                .control(Control::named("mechanism").present())
                .aliases(&["mech"]),
        /// Heads (diff heads for the Differential Transformers): a count the model width allows.
        heads: usize = 4 =>
            Key::int(1, 4096)
                .symbol("H")
                .control(Control::named("heads").embed().present())
                .compare(Compare::Shown),
        /// The layer of a pretrained model drawn, from 1 (a model of one attention layer has only 1).
        layer: usize = 1 =>
            Key::int(1, 64)
                .control(Control::named("layer").embed().present())
                .compare(Compare::Every),
        /// The Differential Transformer's second map on a pretrained layer: `A2` is this head of
        /// the layer (from 1) for every head; 0 pairs each head with the next one.
        partner: usize = 0 =>
            Key::int(0, 4096)
                .control(Control::named("partner"))
                .compare(Compare::No),
        /// The causal mask: no query looks at a later key.
        causal: bool = false =>
            Key::boolean()
                .control(Control::named("causal").present())
                .compare(Compare::Every),
        /// Cosine attention's temperature `τ`; 10 keeps cosine maps from being flat.
        tau: f32 = 10.0 =>
            Key::slider(0.1, 20.0, 0.1, 1)
                .symbol("τ")
                .control(Control::slider("tau", "params"))
                .parameter(Parameter::Tau)
                .compare(Compare::Shown),
        /// Local attention's radius `w` (0: each token itself); 2 shows a visible band.
        window: usize = 2 =>
            Key::slider(0.0, 32.0, 1.0, 0)
                .symbol("w")
                .control(Control::slider("window", "params"))
                .parameter(Parameter::Window)
                .compare(Compare::Shown)
                .aliases(&["w"]),
        /// Hierarchical attention's segment size `s`, in tokens.
        segment: usize = 4 =>
            Key::slider(1.0, 32.0, 1.0, 0)
                .symbol("s")
                .control(Control::slider("segment", "params").present())
                .parameter(Parameter::Segment)
                .compare(Compare::Shown),
        /// The Differential Transformer's softmax temperature `T`: both maps' scores are
        /// divided by it (DESIGN.md §3); 1 is the paper's maps.
        temperature: f32 = 1.0 =>
            Key::slider(0.1, 4.0, 0.1, 1)
                .symbol("T")
                .control(Control::slider("temperature", "params"))
                .parameter(Parameter::Temperature)
                .compare(Compare::Shown),
    }

    /// What the stages after the maps depend on: the shift stages (shift-difference attention)
    /// and the λ of both Differential Transformers (`A1 − λ·A2` from the kept `A1` and `A2`).
    shift: ShiftSettings (Layer::Shift) {
        /// The shift `k`: positive moves attention to later keys.
        shift: i64 = 1 =>
            Key::slider(-24.0, 24.0, 1.0, 0)
                .symbol("k")
                .wraps()
                .control(Control::slider("shift", "shift").embed().present())
                .parameter(Parameter::Shift)
                .compare(Compare::Shown)
                .aliases(&["k"]),
        /// Single (`A − shift(A)`, the article's text) or symmetric difference.
        difference: Difference = Difference::Single =>
            Key::engine_choice("differences")
                .symbol("D")
                .control(Control::named("difference"))
                .parameter(Parameter::Difference)
                .compare(Compare::Shown)
                .aliases(&["diff"]),
        /// What fills the cells a shift uncovers: circular or zero.
        fill: ShiftFill = ShiftFill::Circular =>
            Key::engine_choice("fills")
                .control(Control::named("fill"))
                .parameter(Parameter::Fill)
                .compare(Compare::Shown),
        /// Whether `A′` is renormalised (`softmax`) or not (`none`, the article's text).
        renormalize: Renormalize = Renormalize::None =>
            Key::engine_choice("renormalizations")
                .control(Control::named("renormalize"))
                .parameter(Parameter::Renormalize)
                .compare(Compare::Shown)
                .aliases(&["renorm"]),
        /// The gate's weight `α` of `A`, for every head (the sliders show the mean of a learned gate).
        alpha: f32 = 0.0 =>
            GATE.symbol("α")
                .control(Control::slider("gate", "gate"))
                .parameter(Parameter::Gate)
                .compare(Compare::Shown)
                .learned(LearnedBy::Gate),
        /// The gate's weight `β` of `D`, for every head; 4 opens the gate where `D` is positive.
        beta: f32 = 4.0 =>
            GATE.symbol("β")
                .control(Control::slider("gate", "gate"))
                .parameter(Parameter::Gate)
                .compare(Compare::Shown)
                .learned(LearnedBy::Gate),
        /// The gate's bias `γ`, for every head.
        gamma: f32 = 0.0 =>
            GATE.symbol("γ")
                .control(Control::slider("gate", "gate"))
                .parameter(Parameter::Gate)
                .compare(Compare::Shown)
                .learned(LearnedBy::Gate),
        /// λ of both Differential Transformers: unset, the learned one (V2: its mean over
        /// tokens and heads); set, the same for every token and head.
        lambda: Option<f32> = None =>
            Key::slider(-1.0, 2.0, 0.01, 2)
                .symbol("λ")
                .control(Control::slider("lambda", "params").present())
                .parameter(Parameter::Lambda)
                .compare(Compare::Shown)
                .learned(LearnedBy::Lambda)
                .unset(0.5),
    }

    @head: Key::int(1, 4096)
        .symbol("h")
        .control(Control::named("head").present())
        .engine(
            "head",
            "The head shown, from 1.",
            Layer::Head,
            Access {
                get: |_: &Settings, head: usize| Value::Int(head as i64 + 1),
                patch: |p: &mut SettingsPatch, raw: &Raw| {
                    let head = usize::from_raw("head", raw)?;
                    if head == 0 {
                        return Err("head: heads count from 1, found 0".to_string());
                    }
                    p.head = Some(head - 1);
                    Ok(())
                },
                ty: <usize as SettingValue>::TYPE,
            },
        ),

    after: [
        Key::boolean()
            .control(Control::named("all_heads"))
            .default(PageDefault::Bool(false))
            .aliases(&["all"])
            .page("all_heads", "Every head side by side."),
        Key::of(Kind::Stage)
            .default(PageDefault::Text(""))
            .page("all_heads_stage", "The map shown for every head (a stage's name; empty: the final map)."),
        Key::boolean()
            .control(Control::named("shared_scale"))
            .default(PageDefault::Bool(true))
            .page("shared_scale", "One colour scale for the maps of one kind (attention, difference, gate), shown once in a legend; off: each map its own, with its own colour bar."),
        Key::int(0, 1_000_000)
            .default(PageDefault::Int(0))
            .page("row", "The query row of the row view, from 1; 0 closes it."),
        Key::page_choice(&["explore", "walk", "compare", "model"])
            .control(Control::named("views").present())
            .default(PageDefault::Text("explore"))
            .page("view", "What is drawn: the maps, the guided walk, several mechanisms side by side, or every layer and head of the model (`model`, one map each of the `all_heads_stage` stage, with the heads' statistics)."),
        Key::page_choice(&["layer", "entropy", "sink", "previous", "next"])
            .default(PageDefault::Text("layer"))
            .page("model_sort", "The model view's order: by layer and head, or by a head statistic (highest first): the mean row entropy, the mass on the sink tokens, the previous- or next-token score."),
        Key::of(Kind::Step)
            .default(PageDefault::Text(""))
            .page("step", "The guided walk's step: a stage's name, or `output`."),
        Key::boolean()
            .control(Control::named("present").present())
            .default(PageDefault::Bool(false))
            .page("present", "Presenting: full screen, large type."),
        Key::of(Kind::Viewport)
            .default(PageDefault::Text(""))
            .page("viewport", "The part of a long map drawn, `row,col,size` from 0; empty for whole maps."),
        Key::page_choice(&["trained", "untrained", "minilm"])
            .control(Control::named("weights"))
            .default(PageDefault::Text("trained"))
            .aliases(&["model"])
            .page("weights", "The trained model of the mechanism, the untrained seeded one, or the pretrained all-MiniLM-L6-v2 (`minilm`, its layer picked by `layer`)."),
        Key::of(Kind::Lang(&["en", "zh"]))
            .default(PageDefault::Text("en"))
            .page("lang", "The language spoken (a language tag's primary subtag)."),
        Key::page_choice(&["auto", "light", "dark"])
            .default(PageDefault::Text("auto"))
            .page("theme", "The colours: the system's, light or dark."),
        Key::of(Kind::Gate)
            .surfaces(Surfaces { attribute: true, widget: true, ..Surfaces::NONE })
            .page("gate", "α, β and γ in one text, `\"1.5,3,-0.5\"`; set from that text, an array or `{ alpha, beta, gamma }`."),
        Key::of(Kind::List)
            .surfaces(Surfaces { attribute: true, widget: true, address: true, ..Surfaces::NONE })
            .page("maps", "The stages drawn: a comma list (`\"A,D,fused\"`), `\"all\"` (the default) or `\"none\"`; also an array."),
        Key::of(Kind::List)
            .surfaces(Surfaces { attribute: true, widget: true, address: true, ..Surfaces::NONE })
            .page("controls", "The controls shown: a comma list (`\"shift,heads\"`), `\"all\"` (the default) or `\"none\"`; also an array."),
        Key::of(Kind::Url)
            .surfaces(Surfaces { attribute: true, ..Surfaces::NONE })
            .page("src", "URL of a stages spec (JSON or safetensors) to draw in place of the sentence, relative to the document."),
        Key::of(Kind::Spec)
            .surfaces(Surfaces { widget: true, ..Surfaces::NONE })
            .page("spec", "A stages spec as a dict (such as `diffattn.capture`'s), drawn in place of the sentence."),
        Key::boolean()
            .surfaces(Surfaces { address: true, ..Surfaces::NONE })
            .page("embed", "An embedded page: only a few controls unless `controls` names others, sized by its frame."),
        Key::boolean()
            .surfaces(Surfaces { address: true, ..Surfaces::NONE })
            .page("debug", "Show the render's timings."),
    ]
}
