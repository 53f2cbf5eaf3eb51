//! The one schema of settings: every key that the engine's patch, the page's address, the
//! custom element's attributes and the notebook widget's traits name, each declared once in
//! [`table`](self) with its kind, range and step, default, symbol, the cache layer a change of it
//! clears, the control that shows it and the mechanisms that take it (through the engine's
//! registry, [`Parameter`]).
//!
//! From the declarations come the engine's own typed settings ([`MapSettings`],
//! [`ShiftSettings`], [`Settings`]) and their patch ([`SettingsPatch`], with its generic reader
//! [`SettingsPatch::set`]), the JavaScript shapes of the wasm boundary (`src/web/js/settings.rs`
//! walks [`KEYS`]), and the generated files ([`generate`], made natively): the page's tables
//! (`www/explorer/settings.generated.js`), the element's TypeScript types (`pkg/*.d.ts`) and the
//! widget's traits (`python/diffattn/_settings.py`), which `tests/schema.rs` keeps fresh. Nobody
//! writes a list of setting names by hand anywhere else (the same test looks for one).
//!
//! The engine knows nothing of this module (`tests/architecture.rs`): the schema points at the
//! registry, never the other way.

pub mod generate;
mod table;
pub mod value;

use crate::engine::{MechanismKind, Parameter};
pub use table::{MapSettings, Settings, SettingsPatch, ShiftSettings, KEYS};
use value::{Raw, Type, Value};

/// Which caches a change of a key clears (the layers of `crate::explorer`): the maps and
/// everything after them, only the stages after the maps, nothing (the head shown), or the key
/// is the page's own and the engine never holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// `MapSettings`: a change recomputes the maps (when the mechanism takes the setting).
    Maps,
    /// `ShiftSettings`: a change recomputes only the stages after the maps.
    Shift,
    /// Which head is drawn: a change recomputes nothing.
    Head,
    /// The page's own (the view, the language, …): not the engine's.
    Page,
}

/// The names a choice takes: the engine's (a list of the wasm module's `names()`, by its key, so
/// that the page never writes a mechanism's name) or the page's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choices {
    /// `names()[list]`, e.g. `"differences"`.
    Engine(&'static str),
    /// The page's own names, in order.
    Page(&'static [&'static str]),
}

/// How a key's text is read (an address parameter, an attribute) and what it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A slider's number: any finite number, snapped to `step` and clamped into `[min, max]`;
    /// shown with `digits` decimals.
    Slider {
        /// The smallest value.
        min: f64,
        /// The largest value.
        max: f64,
        /// The step the slider moves by.
        step: f64,
        /// Decimals shown beside the slider.
        digits: u8,
    },
    /// A whole number from `min` to `max` (not snapped).
    Int {
        /// The smallest value.
        min: i64,
        /// The largest value.
        max: i64,
    },
    /// `1`/`true`/`yes`/`on`/empty or `0`/`false`/`no`/`off`.
    Bool,
    /// One of a list of names.
    Choice(Choices),
    /// A language: the primary subtag of a language tag (`zh-Hans` is `zh`), one of these.
    Lang(&'static [&'static str]),
    /// Any text (the sentence).
    Text,
    /// A stage's name, or empty for "the final one" (the all-heads view's map).
    Stage,
    /// A step of the guided walk: a stage's name or `output`.
    Step,
    /// A part of a long map, `row,col,size` from 0, or empty for the whole map.
    Viewport,
    /// A comma list of names (`A,D,fused`), `all` or `none`.
    List,
    /// α, β and γ in one text (`1.5,3,-0.5`).
    Gate,
    /// A URL.
    Url,
    /// A stages spec as an object (the widget's trait only).
    Spec,
}

/// Where a key is named: the page's address, the element's attributes (each a property of the
/// same name), the widget's traits, and the state the `change` event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Surfaces {
    /// A parameter of the address (`?shift=2`).
    pub address: bool,
    /// An attribute of `<diffattn-explorer>`, and a property of the same name.
    pub attribute: bool,
    /// A synced trait of `diffattn.Explorer`.
    pub widget: bool,
    /// A key of the explorer's state (the `change` event's detail, `element.state`).
    pub state: bool,
}

impl Surfaces {
    /// Everywhere: the address, the attribute, the trait and the state.
    pub const ALL: Surfaces = Surfaces {
        address: true,
        attribute: true,
        widget: true,
        state: true,
    };
    /// Nowhere (set each with the methods below).
    pub const NONE: Surfaces = Surfaces {
        address: false,
        attribute: false,
        widget: false,
        state: false,
    };
}

/// Which panels of the compare view a setting reaches: every panel, only the panel of the
/// mechanism shown (when that mechanism takes it), or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// Every panel follows it (the causal mask).
    Every,
    /// The shown mechanism's panel follows it.
    Shown,
    /// No panel (each panel is its own mechanism and draws its first head).
    No,
}

/// The control that shows a key, as the `controls` option and attribute name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    /// The control's name (`"shift"`; the three gate sliders are one control, `"gate"`).
    pub name: &'static str,
    /// For a slider the page builds from the schema, the group of the controls it sits in
    /// (`"shift"`, `"gate"`, `"params"`); `None` for a control of the static markup.
    pub slider_group: Option<&'static str>,
    /// Shown on an embedded page (`embed=1`) that names no controls.
    pub embed: bool,
    /// Shown while presenting.
    pub present: bool,
}

impl Control {
    /// A control of the static markup, shown neither embedded nor while presenting.
    pub const fn named(name: &'static str) -> Control {
        Control {
            name,
            slider_group: None,
            embed: false,
            present: false,
        }
    }
    /// A slider built from the schema, in `group`.
    pub const fn slider(name: &'static str, group: &'static str) -> Control {
        Control {
            slider_group: Some(group),
            ..Control::named(name)
        }
    }
    /// Also shown on an embedded page.
    pub const fn embed(self) -> Control {
        Control {
            embed: true,
            ..self
        }
    }
    /// Also shown while presenting.
    pub const fn present(self) -> Control {
        Control {
            present: true,
            ..self
        }
    }
}

/// Which learned value a setting may show: the gate (the sliders show the mean of a learned
/// per-head gate until one moves) or λ (unset until a person chooses one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LearnedBy {
    /// The gate's scalars.
    Gate,
    /// λ of the Differential Transformers.
    Lambda,
}

impl LearnedBy {
    /// The frame's flag that says so.
    pub const fn flag(self) -> &'static str {
        match self {
            LearnedBy::Gate => "gate_learned",
            LearnedBy::Lambda => "lambda_learned",
        }
    }
}

/// A page key's default (the engine's defaults are its own `Settings::default()`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PageDefault {
    /// None: the page decides (the sentence: an example in the reader's language).
    None,
    /// A boolean.
    Bool(bool),
    /// A number.
    Int(i64),
    /// A text.
    Text(&'static str),
}

/// How the engine reads and reports one of its settings (made by the table's macro).
#[derive(Clone, Copy)]
pub struct Access {
    /// The setting's value in `settings`, with `head` the head shown from 0.
    pub get: fn(&Settings, usize) -> Value,
    /// Puts `raw` into the patch, or says why it cannot (naming the key).
    pub patch: fn(&mut SettingsPatch, &Raw) -> Result<(), String>,
    /// How its Rust type is written in the generated files.
    pub ty: Type,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access").field("ty", &self.ty).finish()
    }
}

/// One key of the schema.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    /// The one snake_case name of the address, the attribute, the engine's patch and the trait.
    pub name: &'static str,
    /// How its text is read.
    pub kind: Kind,
    /// The caches a change clears, or [`Layer::Page`].
    pub layer: Layer,
    /// Its symbol in the formulas (`k`, `α`, `τ`, `λ`; empty for none).
    pub symbol: &'static str,
    /// One sentence for readers of the generated types and docstrings (empty in wasm).
    pub doc: &'static str,
    /// The control that shows it.
    pub control: Option<Control>,
    /// The registry's parameter it is, or part of: only mechanisms that take it use it. `None`:
    /// every mechanism (or the page).
    pub parameter: Option<Parameter>,
    /// Which compare panels follow it.
    pub compare: Compare,
    /// What says the value is the learned one, for settings whose value may come from the
    /// trained model or the loaded spec (the frame's flag `gate_learned` or `lambda_learned`).
    pub learned_flag: Option<LearnedBy>,
    /// What is shown when the value is not set and nothing learned it (λ for a mechanism that
    /// has none).
    pub unset: Option<f32>,
    /// Whether the value is taken modulo the keys (the shift): its slider says the residue too.
    pub wraps: bool,
    /// Older names still read in the address (`k` for `shift`).
    pub aliases: &'static [&'static str],
    /// Where it is named.
    pub surfaces: Surfaces,
    /// A page key's default.
    pub default: PageDefault,
    /// The engine's access to it, for the engine's settings.
    pub access: Option<Access>,
}

impl Key {
    const fn new(kind: Kind) -> Key {
        Key {
            name: "",
            kind,
            layer: Layer::Page,
            symbol: "",
            doc: "",
            control: None,
            parameter: None,
            compare: Compare::No,
            learned_flag: None,
            unset: None,
            wraps: false,
            aliases: &[],
            surfaces: Surfaces::ALL,
            default: PageDefault::None,
            access: None,
        }
    }
    /// A slider of `[min, max]` by `step`, shown with `digits` decimals.
    pub const fn slider(min: f64, max: f64, step: f64, digits: u8) -> Key {
        Key::new(Kind::Slider {
            min,
            max,
            step,
            digits,
        })
    }
    /// A whole number from `min` to `max`.
    pub const fn int(min: i64, max: i64) -> Key {
        Key::new(Kind::Int { min, max })
    }
    /// A boolean.
    pub const fn boolean() -> Key {
        Key::new(Kind::Bool)
    }
    /// One of the engine's names (`names()[list]`).
    pub const fn engine_choice(list: &'static str) -> Key {
        Key::new(Kind::Choice(Choices::Engine(list)))
    }
    /// One of the page's own names.
    pub const fn page_choice(names: &'static [&'static str]) -> Key {
        Key::new(Kind::Choice(Choices::Page(names)))
    }
    /// Any other kind.
    pub const fn of(kind: Kind) -> Key {
        Key::new(kind)
    }
    /// With its symbol.
    pub const fn symbol(self, symbol: &'static str) -> Key {
        Key { symbol, ..self }
    }
    /// With its control.
    pub const fn control(self, control: Control) -> Key {
        Key {
            control: Some(control),
            ..self
        }
    }
    /// The registry's parameter it is.
    pub const fn parameter(self, parameter: Parameter) -> Key {
        Key {
            parameter: Some(parameter),
            ..self
        }
    }
    /// Which compare panels follow it.
    pub const fn compare(self, compare: Compare) -> Key {
        Key { compare, ..self }
    }
    /// Its value may be the learned one, which `flag` says.
    pub const fn learned(self, flag: LearnedBy) -> Key {
        Key {
            learned_flag: Some(flag),
            ..self
        }
    }
    /// Shown as `value` when unset and nothing learned it.
    pub const fn unset(self, value: f32) -> Key {
        Key {
            unset: Some(value),
            ..self
        }
    }
    /// Taken modulo the keys.
    pub const fn wraps(self) -> Key {
        Key {
            wraps: true,
            ..self
        }
    }
    /// Older names still read in the address.
    pub const fn aliases(self, aliases: &'static [&'static str]) -> Key {
        Key { aliases, ..self }
    }
    /// Named only where `surfaces` says.
    pub const fn surfaces(self, surfaces: Surfaces) -> Key {
        Key { surfaces, ..self }
    }
    /// A page key's default.
    pub const fn default(self, default: PageDefault) -> Key {
        Key { default, ..self }
    }
    /// A page key named `name`, described by `doc`.
    pub const fn page(self, name: &'static str, doc: &'static str) -> Key {
        Key {
            name,
            doc: native_only(doc),
            layer: Layer::Page,
            ..self
        }
    }
    /// An engine setting (the table's macro fills these in).
    pub(crate) const fn engine(
        self,
        name: &'static str,
        doc: &'static str,
        layer: Layer,
        access: Access,
    ) -> Key {
        Key {
            name,
            doc: native_only(doc),
            layer,
            access: Some(access),
            ..self
        }
    }

    /// Whether the engine holds it (a setting of the patch), rather than the page.
    pub fn is_engine(&self) -> bool {
        self.access.is_some()
    }

    /// Whether mechanism `kind` uses it (every mechanism uses a key of no parameter).
    pub fn applies_to(&self, kind: MechanismKind) -> bool {
        self.parameter.is_none_or(|p| kind.takes(p))
    }

    /// The mechanisms that use it, from the registry.
    pub fn mechanisms(&self) -> Vec<MechanismKind> {
        MechanismKind::ALL
            .into_iter()
            .filter(|&k| self.applies_to(k))
            .collect()
    }
}

/// `text` natively, nothing in wasm: the descriptions are for the generated files, which are
/// made natively, and the page's download needs none of them.
const fn native_only(text: &'static str) -> &'static str {
    if cfg!(target_arch = "wasm32") {
        ""
    } else {
        text
    }
}

/// The key named `name`.
pub fn key(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

/// The engine's settings, in the table's order.
pub fn engine_keys() -> impl Iterator<Item = &'static Key> {
    KEYS.iter().filter(|k| k.is_engine())
}

/// The controls that show no key (the examples menu, the spec picker, the export, the zoom, the
/// readout, the how-to, what differential attention is for), after the keys' own controls in
/// `controls`.
pub const OTHER_CONTROLS: &[Control] = &[
    Control::named("presets"),
    Control::named("spec"),
    Control::named("export"),
    Control::named("zoom"),
    Control::named("readout"),
    Control::named("howto"),
    Control::named("purpose").present(),
];

/// Every control's name once, the keys' controls in the table's order, then the others.
pub fn controls() -> Vec<Control> {
    let mut out: Vec<Control> = Vec::new();
    for c in KEYS
        .iter()
        .filter_map(|k| k.control)
        .chain(OTHER_CONTROLS.iter().copied())
    {
        if !out.iter().any(|o| o.name == c.name) {
            out.push(c);
        }
    }
    out
}

impl SettingsPatch {
    /// Sets the key `name` of this patch to `raw`, or says why not: an unknown key (naming the
    /// closest), a wrong type or an unknown name.
    pub fn set(&mut self, name: &str, raw: &Raw) -> Result<(), String> {
        match key(name).and_then(|k| k.access) {
            Some(access) => (access.patch)(self, raw),
            None => Err(not_a_setting(name)),
        }
    }
}

/// The error for a key the engine does not hold, naming the closest setting
/// (`shiftt: not a setting (did you mean "shift"?)`).
pub fn not_a_setting(name: &str) -> String {
    let names: Vec<&str> = engine_keys().map(|k| k.name).collect();
    let hint = crate::names::closest(name, &names)
        .map(|k| format!(" (did you mean {k:?}?)"))
        .unwrap_or_default();
    format!("{name}: not a setting{hint}")
}

impl Settings {
    /// The value of the engine's setting `key` (with `head` the head shown, from 0), or `None`
    /// for a key the engine does not hold.
    pub fn value(&self, key: &Key, head: usize) -> Option<Value> {
        key.access.map(|a| (a.get)(self, head))
    }
}
