//! The retrieval models in candle: the forward pass of `diffattn::retrieval::forward`, batched
//! over contexts of one length, differentiable (docs/LESSON.md, "The models").
//!
//! ```text
//! x₀ = identity[token] + class[token]                     frozen seeded identity, learned classes
//! x₁ = x₀ + local(x₀)          the binding layer: causal local attention of radius 4, one head,
//!                              zero queries and keys (each token averages itself and the four
//!                              tokens before it), learned values and output: the same in every model
//! x₂ = x₁ + mechanism(x₁)      the retrieving layer: standard, Differential Transformer or
//!                              shift-difference attention over the whole causal context
//! logits = R · x₂[question's ?] + b                       the numbers 0 to 99
//! ```
//!
//! No positional code: the causal mask and the local first layer carry all the order the task
//! needs, and a model without positions reads a 512-token context as it reads a 64-token one.
//! Causal masks hold in every map (DESIGN.md §2): shift-difference attention masks its shifted
//! map again, so `D` and `A′` are zero above the diagonal.

use candle_core::{CpuStorage, CustomOp1, Device, Layout, Result, Shape, Tensor, Var, D};
use candle_nn::ops::sigmoid;
use diffattn::engine::diff_transformer::{lambda_init, DiffTransformerParams, RMS_NORM_EPS};
use diffattn::engine::shift_diff::{Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill};
use diffattn::engine::{Mechanism, MechanismKind, Weights};
use diffattn::model::{RetrievalFile, TokenParts};
use diffattn::retrieval::task::ANSWERS;
use diffattn::retrieval::Layer;
use diffattn::text::seeded_normal;
use ndarray::{Array1, Array2};

/// The mechanisms the retrieval lesson trains in its retrieving layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Scaled dot-product attention (DESIGN.md §1).
    Standard,
    /// The Differential Transformer (§3).
    DiffTransformer,
    /// The seed article's shift-difference gated attention (§2).
    ShiftDiff,
    /// Differential Transformer V2 (§7.5): two query heads per key/value head, a λ per token
    /// and head, `λ = σ(x·W_λᵀ)`, no per-head norm.
    DiffTransformerV2,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 4] = [
        Kind::Standard,
        Kind::DiffTransformer,
        Kind::ShiftDiff,
        Kind::DiffTransformerV2,
    ];

    /// The engine's kind.
    pub fn mechanism(self) -> MechanismKind {
        match self {
            Kind::Standard => MechanismKind::Standard,
            Kind::DiffTransformer => MechanismKind::DiffTransformer,
            Kind::ShiftDiff => MechanismKind::ShiftDiff,
            Kind::DiffTransformerV2 => MechanismKind::DiffTransformerV2,
        }
    }

    /// The name in files and on the command line (the engine's).
    pub fn key(self) -> &'static str {
        self.mechanism().key()
    }

    /// The kind called `key`.
    pub fn from_key(key: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.key() == key)
    }

    /// The kind of an engine mechanism, if the lesson trains it.
    pub fn of(m: &Mechanism) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.mechanism() == m.kind())
    }
}

/// The radius of the binding layer: a fact's number sees its noun four tokens back
/// (`the NOUN of NAME is N`), the question's `?` its noun three back.
pub const BINDING_WINDOW: usize = 4;

/// The shape of a retrieval model.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The mechanism of the retrieving layer.
    pub kind: Kind,
    /// The width `d`.
    pub d_model: usize,
    /// Heads of the retrieving layer (diff heads for the Differential Transformer).
    pub heads: usize,
    /// Vocabulary rows, `<unk>` included.
    pub vocab: usize,
    /// The shift `k` of shift-difference attention (circular, single difference, no
    /// renormalisation, masked again).
    pub shift: i64,
    /// Token classes, each with a learned vector (`data::class_names`).
    pub classes: usize,
}

impl Config {
    /// The shipped shape: `d = 64`; the retrieving layer with four heads of 16 channels (two
    /// diff heads of 2 × 16 for the Differential Transformer: the paper's pairing, the same
    /// query and key widths and parameter count; for V2 four diff heads, each two query heads
    /// of 16 on one key/value head of 16, as V2 doubles the query heads and keeps the key and
    /// value heads of the baseline); shift 1.
    pub fn new(kind: Kind, vocab: usize) -> Config {
        Config {
            kind,
            d_model: 64,
            heads: if kind == Kind::DiffTransformer { 2 } else { 4 },
            vocab,
            shift: 1,
            classes: super::data::class_names().len(),
        }
    }
}

/// One layer's parameters.
pub struct LayerVars {
    w_q: Var,
    w_k: Var,
    w_v: Var,
    w_o: Var,
    gate: Option<[Var; 3]>,
    lambdas: Option<[Var; 4]>,
    subln: Option<Var>,
    /// V2's `W_λ`, `(heads, d)`.
    w_lambda: Option<Var>,
    /// The binding layer: local attention of this radius with fixed zero queries and keys.
    window: Option<usize>,
    heads: usize,
}

/// A retrieval model's parameters.
pub struct Net {
    /// Its configuration.
    pub config: Config,
    /// The tokens' own vectors (identities): seeded, never trained.
    pub table: Array2<f32>,
    /// Their seed: `table = seeded_normal(vocab, d, identity_seed, 1)`.
    pub identity_seed: u64,
    embedding: Tensor,
    /// The two classes of each vocabulary entry.
    token_class: Vec<[u32; 2]>,
    /// The learned vector of each class, `(classes, d)`.
    class_vectors: Var,
    layers: [LayerVars; 2],
    readout: Var,
    readout_bias: Var,
    device: Device,
}

/// What one forward pass gives.
pub struct Forward {
    /// Each layer's final maps, heads first: `(heads, batch, L, L)`: `A`, `A′` or `A1 − λ·A2`.
    pub maps: Vec<Tensor>,
    /// The logits over the numbers at the positions read, `(read, 100)`.
    pub logits: Tensor,
}

fn var_from(a: &Array2<f32>, device: &Device) -> Result<Var> {
    Var::from_tensor(&tensor_from(a, device)?)
}

fn tensor_from(a: &Array2<f32>, device: &Device) -> Result<Tensor> {
    Tensor::from_slice(
        a.as_standard_layout().as_slice().expect("standard layout"),
        a.dim(),
        device,
    )
}

fn var_vec(v: &[f32], device: &Device) -> Result<Var> {
    Var::from_tensor(&Tensor::from_slice(v, v.len(), device)?)
}

fn to_array(t: &Tensor) -> Result<Array2<f32>> {
    let (r, c) = t.dims2()?;
    Ok(Array2::from_shape_vec((r, c), t.flatten_all()?.to_vec1::<f32>()?).expect("r x c values"))
}

fn to_vec(t: &Tensor) -> Result<Vec<f32>> {
    t.flatten_all()?.to_vec1::<f32>()
}

/// The seed of the identities of a model trained from `seed`.
pub fn table_seed(seed: u64) -> u64 {
    seed.wrapping_mul(1_000).wrapping_add(7)
}

impl Net {
    /// A fresh model; every draw is ChaCha8 keyed by `seed`. The identities are
    /// `seeded_normal(vocab, d, table_seed(seed), 1)` and stay fixed: no row is ever trained,
    /// so a name that no training fact used is no different from one that many did.
    pub fn new(config: Config, token_class: Vec<[u32; 2]>, seed: u64) -> Result<Net> {
        let device = Device::Cpu;
        let d = config.d_model;
        let mut n = 0u64;
        let mut draw = |rows: usize, cols: usize, std: f32| {
            n += 1;
            var_from(
                &seeded_normal(
                    rows,
                    cols,
                    seed.wrapping_mul(1_000).wrapping_add(100 + n),
                    std,
                ),
                &device,
            )
        };
        let w = 1.0 / (d as f32).sqrt();
        let zero = || var_from(&Array2::zeros((d, d)), &device);
        let binding = LayerVars {
            w_q: zero()?,
            w_k: zero()?,
            w_v: draw(d, d, w)?,
            w_o: draw(d, d, w)?,
            gate: None,
            lambdas: None,
            subln: None,
            w_lambda: None,
            window: Some(BINDING_WINDOW),
            heads: 1,
        };
        let h = config.heads;
        let q_rows = if config.kind == Kind::DiffTransformerV2 {
            2 * d
        } else {
            d
        };
        let mut retrieving = LayerVars {
            w_q: draw(q_rows, d, w)?,
            w_k: draw(d, d, w)?,
            w_v: draw(d, d, w)?,
            w_o: draw(d, d, w)?,
            gate: None,
            lambdas: None,
            subln: None,
            w_lambda: None,
            window: None,
            heads: h,
        };
        match config.kind {
            Kind::DiffTransformer => {
                let d_h = d / h / 2;
                retrieving.lambdas = Some([
                    draw(1, d_h, 0.1)?,
                    draw(1, d_h, 0.1)?,
                    draw(1, d_h, 0.1)?,
                    draw(1, d_h, 0.1)?,
                ]);
                retrieving.subln = Some(var_vec(&vec![1.0; 2 * d_h], &device)?);
            }
            Kind::ShiftDiff => {
                // sigmoid(0) = 1/2: the gate starts at A′ = A + D/2, as the sentiment models.
                retrieving.gate = Some([
                    var_vec(&vec![0.0; h], &device)?,
                    var_vec(&vec![1.0; h], &device)?,
                    var_vec(&vec![0.0; h], &device)?,
                ]);
            }
            Kind::DiffTransformerV2 => {
                // σ(x·W_λᵀ) starts near 1/2 for every token.
                retrieving.w_lambda = Some(draw(h, d, 0.1 * w)?);
            }
            Kind::Standard => {}
        }
        let readout = draw(ANSWERS, d, w)?;
        let class_vectors = draw(config.classes, d, 1.0)?;
        let table = seeded_normal(config.vocab, d, table_seed(seed), 1.0);
        Net::assemble(
            config,
            table,
            table_seed(seed),
            token_class,
            class_vectors,
            [binding, retrieving],
            readout,
            var_vec(&[0.0; ANSWERS], &device)?,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        config: Config,
        table: Array2<f32>,
        identity_seed: u64,
        token_class: Vec<[u32; 2]>,
        class_vectors: Var,
        layers: [LayerVars; 2],
        readout: Var,
        readout_bias: Var,
    ) -> Result<Net> {
        let device = Device::Cpu;
        let n_classes = class_vectors.dim(0)?;
        if token_class.len() != config.vocab
            || table.nrows() != config.vocab
            || token_class
                .iter()
                .flatten()
                .any(|&c| c as usize >= n_classes)
        {
            return Err(candle_core::Error::Msg(
                "one identity and two classes for every token".into(),
            ));
        }
        Ok(Net {
            embedding: tensor_from(&table, &device)?,
            token_class,
            class_vectors,
            table,
            identity_seed,
            layers,
            readout,
            readout_bias,
            config,
            device,
        })
    }

    /// Every trained parameter. The identities and the binding layer's zero queries and keys
    /// are not among them.
    pub fn vars(&self) -> Vec<Var> {
        let mut v = vec![self.class_vectors.clone()];
        for l in &self.layers {
            if l.window.is_none() {
                v.extend([l.w_q.clone(), l.w_k.clone()]);
            }
            v.extend([l.w_v.clone(), l.w_o.clone()]);
            v.extend(l.gate.iter().flatten().cloned());
            v.extend(l.lambdas.iter().flatten().cloned());
            v.extend(l.subln.iter().cloned());
            v.extend(l.w_lambda.iter().cloned());
        }
        v.extend([self.readout.clone(), self.readout_bias.clone()]);
        v
    }

    /// The device (the CPU).
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// A copy of every parameter's value.
    pub fn snapshot(&self) -> Result<Vec<Tensor>> {
        self.vars().iter().map(|v| v.as_tensor().copy()).collect()
    }

    /// Puts back the values of a [`Net::snapshot`].
    pub fn restore(&self, snapshot: &[Tensor]) -> Result<()> {
        for (v, t) in self.vars().iter().zip(snapshot) {
            v.set(t)?;
        }
        Ok(())
    }

    /// The forward pass over `ids`, `(batch, L)` of `u32`, read at the last token.
    pub fn forward(&self, ids: &Tensor) -> Result<Forward> {
        let (b, l) = ids.dims2()?;
        let at: Vec<u32> = (0..b).map(|i| (i * l + l - 1) as u32).collect();
        self.forward_at(ids, &at)
    }

    /// The forward pass read at the flat positions `at` (`batch index · L + position`); the
    /// logits come in the order of `at`.
    pub fn forward_at(&self, ids: &Tensor, at: &[u32]) -> Result<Forward> {
        let (b, l) = ids.dims2()?;
        let d = self.config.d_model;
        let flat = ids.flatten_all()?;
        let ids_cpu = flat.to_vec1::<u32>()?;
        let class = |k: usize| -> Result<Tensor> {
            let c: Vec<u32> = ids_cpu
                .iter()
                .map(|&i| self.token_class[i as usize][k])
                .collect();
            let c = Tensor::from_vec(c, b * l, &self.device)?;
            self.class_vectors.as_tensor().index_select(&c, 0)
        };
        let mut x = ((self.embedding.index_select(&flat, 0)? + class(0)?)? + class(1)?)?
            .reshape((b, l, d))?;
        let mut maps = Vec::with_capacity(self.layers.len());
        for (depth, layer) in self.layers.iter().enumerate() {
            // Additive masks: causal, and within the window for the binding layer; a 0/1
            // causal mask for the shifted maps.
            let radius = layer.window.unwrap_or(l);
            let additive: Vec<f32> = (0..l * l)
                .map(|c| {
                    let (i, j) = (c / l, c % l);
                    if j <= i && i - j <= radius {
                        0.0
                    } else {
                        -1e30
                    }
                })
                .collect();
            let additive = Tensor::from_vec(additive, (l, l), &self.device)?;
            let allowed: Vec<f32> = (0..l * l)
                .map(|c| if c % l <= c / l { 1.0 } else { 0.0 })
                .collect();
            let allowed = Tensor::from_vec(allowed, (l, l), &self.device)?;
            let (m, out) = self.attention(&x, layer, depth as u32, &additive, &allowed)?;
            x = (x + &out)?;
            maps.push(m);
        }
        let at = Tensor::from_slice(at, at.len(), &self.device)?;
        let read = x.reshape((b * l, d))?.index_select(&at, 0)?;
        let logits = read
            .matmul(&self.readout.as_tensor().t()?)?
            .broadcast_add(self.readout_bias.as_tensor())?;
        Ok(Forward { maps, logits })
    }

    /// One causal layer over `x`, `(batch, L, d)`: its final maps and its output.
    fn attention(
        &self,
        x: &Tensor,
        layer: &LayerVars,
        depth: u32,
        additive: &Tensor,
        allowed: &Tensor,
    ) -> Result<(Tensor, Tensor)> {
        let (b, l, d) = x.dims3()?;
        let h = layer.heads;
        let linear = |t: &Tensor, w: &Var| -> Result<Tensor> {
            let rows = w.as_tensor().dim(0)?;
            t.reshape((b * l, d))?
                .matmul(&w.as_tensor().t()?)?
                .reshape((b, l, rows))
        };
        // Heads first, `(heads, batch, L, width)`: the gradient of a per-head scalar (the gate)
        // then sums over the trailing dimensions, which candle does fast; over the batch and
        // the map's dimensions at once it reduces cell by cell.
        let split = |t: &Tensor, heads: usize| -> Result<Tensor> {
            let width = t.dim(2)?;
            t.reshape((b, l, heads, width / heads))?
                .permute((2, 0, 1, 3))?
                .contiguous()
        };
        let merge = |o: &Tensor| -> Result<Tensor> {
            let merged = o.permute((1, 2, 0, 3))?.contiguous()?.reshape((b, l, d))?;
            linear(&merged, &layer.w_o)
        };
        let masked_softmax = |q: &Tensor, k: &Tensor| -> Result<Tensor> {
            let d_h = q.dim(3)?;
            let s = (q.matmul(&k.transpose(2, 3)?.contiguous()?)? * (1.0 / (d_h as f64).sqrt()))?;
            s.broadcast_add(additive)?.apply_op1(SoftmaxRows)
        };
        let kind = if layer.window.is_some() {
            Kind::Standard
        } else {
            self.config.kind
        };
        match kind {
            Kind::DiffTransformer => {
                let q = split(&linear(x, &layer.w_q)?, 2 * h)?;
                let k = split(&linear(x, &layer.w_k)?, 2 * h)?;
                let v = split(&linear(x, &layer.w_v)?, h)?;
                // Query and key heads 2h and 2h + 1 form diff head h.
                let a = masked_softmax(&q, &k)?.reshape((h, 2, b, l, l))?;
                let a1 = a.narrow(1, 0, 1)?.squeeze(1)?;
                let a2 = a.narrow(1, 1, 1)?.squeeze(1)?;
                let [q1, k1, q2, k2] = layer.lambdas.as_ref().expect("diff_transformer lambdas");
                let dot = |p: &Var, q: &Var| (p.as_tensor() * q.as_tensor())?.sum_all();
                let init = f64::from(lambda_init(depth));
                let lambda = ((dot(q1, k1)?.exp()? - dot(q2, k2)?.exp()?)? + init)?;
                let diff = (a1 - a2.broadcast_mul(&lambda)?)?;
                let o = diff.matmul(&v)?;
                let rms = (o.sqr()?.mean_keepdim(D::Minus1)? + f64::from(RMS_NORM_EPS))?.sqrt()?;
                let subln = layer.subln.as_ref().expect("diff_transformer subln");
                let o = (o.broadcast_div(&rms)?.broadcast_mul(subln.as_tensor())? * (1.0 - init))?;
                Ok((diff, merge(&o)?))
            }
            Kind::DiffTransformerV2 => {
                let q = split(&linear(x, &layer.w_q)?, 2 * h)?;
                let k = split(&linear(x, &layer.w_k)?, h)?;
                let v = split(&linear(x, &layer.w_v)?, h)?;
                let d_h = k.dim(3)?;
                // Query heads 2g and 2g + 1 share key head g: (h, 2·batch, L, d_h) both.
                let q = q.reshape((h, 2 * b, l, d_h))?;
                let k = k
                    .unsqueeze(1)?
                    .broadcast_as((h, 2, b, l, d_h))?
                    .contiguous()?
                    .reshape((h, 2 * b, l, d_h))?;
                let a = masked_softmax(&q, &k)?.reshape((h, 2, b, l, l))?;
                let a1 = a.narrow(1, 0, 1)?.squeeze(1)?;
                let a2 = a.narrow(1, 1, 1)?.squeeze(1)?;
                let w_lambda = layer
                    .w_lambda
                    .as_ref()
                    .expect("diff_transformer_v2 w_lambda");
                // λ[h, b, i] = σ(x_i·W_λ[h]), one per query row.
                let lambda = sigmoid(&linear(x, w_lambda)?)?
                    .permute((2, 0, 1))?
                    .contiguous()?
                    .unsqueeze(3)?;
                let diff = (a1 - a2.broadcast_mul(&lambda)?)?;
                let out = merge(&diff.matmul(&v)?)?;
                Ok((diff, out))
            }
            kind => {
                let q = split(&linear(x, &layer.w_q)?, h)?;
                let k = split(&linear(x, &layer.w_k)?, h)?;
                let v = split(&linear(x, &layer.w_v)?, h)?;
                let a = masked_softmax(&q, &k)?;
                let a = if kind == Kind::ShiftDiff {
                    let [alpha, beta, gamma] = layer.gate.as_ref().expect("shift_diff gate");
                    let per_head = |v: &Var| v.as_tensor().reshape((h, 1, 1, 1));
                    // shift_k(A), masked again: no mass moves into the future (DESIGN.md §2).
                    let shifted = roll_keys(&a, self.config.shift)?.broadcast_mul(allowed)?;
                    let diff = (&a - shifted)?;
                    let g = sigmoid(
                        &a.broadcast_mul(&per_head(alpha)?)?
                            .add(&diff.broadcast_mul(&per_head(beta)?)?)?
                            .broadcast_add(&per_head(gamma)?)?,
                    )?;
                    (&a + g.mul(&diff)?)?
                } else {
                    a
                };
                let out = merge(&a.matmul(&v)?)?;
                Ok((a, out))
            }
        }
    }

    /// Every token's vector as the engine reads it: its identity plus its two classes'.
    pub fn token_vectors(&self) -> Result<Array2<f32>> {
        let classes = to_array(self.class_vectors.as_tensor())?;
        let mut t = self.table.clone();
        for (mut row, c) in t.rows_mut().into_iter().zip(&self.token_class) {
            row += &classes.row(c[0] as usize);
            row += &classes.row(c[1] as usize);
        }
        Ok(t)
    }

    /// The library's model with these parameters, as its weights file holds it: the
    /// vocabulary `vocab` (one token per table row), the class names `classes`, and `info`.
    pub fn to_file(
        &self,
        vocab: &[String],
        classes: &[String],
        info: serde_json::Value,
    ) -> Result<RetrievalFile> {
        let wrap = candle_core::Error::wrap;
        let mut layers = Vec::new();
        for (depth, l) in self.layers.iter().enumerate() {
            let w_lambda = l
                .w_lambda
                .as_ref()
                .map(|w| to_array(w.as_tensor()))
                .transpose()?;
            let weights = Weights::real(
                to_array(l.w_q.as_tensor())?,
                to_array(l.w_k.as_tensor())?,
                to_array(l.w_v.as_tensor())?,
                to_array(l.w_o.as_tensor())?,
                Default::default(),
                w_lambda,
                Default::default(),
            )
            .map_err(wrap)?;
            let mechanism = match (l.window, self.config.kind) {
                (Some(window), _) => Mechanism::Local { window },
                (None, Kind::Standard) => Mechanism::Standard,
                (None, Kind::DiffTransformerV2) => Mechanism::DiffTransformerV2 { lambda: None },
                (None, Kind::ShiftDiff) => {
                    let [a, b, g] = l.gate.as_ref().expect("gate");
                    Mechanism::ShiftDiff(ShiftDiffParams {
                        shift: self.config.shift,
                        difference: Difference::Single,
                        fill: ShiftFill::Circular,
                        renormalize: Renormalize::None,
                        gate: Gate {
                            alpha: to_vec(a.as_tensor())?,
                            beta: to_vec(b.as_tensor())?,
                            gamma: to_vec(g.as_tensor())?,
                        },
                    })
                }
                (None, Kind::DiffTransformer) => {
                    let [q1, k1, q2, k2] = l.lambdas.as_ref().expect("lambdas");
                    Mechanism::DiffTransformer(DiffTransformerParams {
                        depth: depth as u32,
                        lambda_q1: to_vec(q1.as_tensor())?,
                        lambda_k1: to_vec(k1.as_tensor())?,
                        lambda_q2: to_vec(q2.as_tensor())?,
                        lambda_k2: to_vec(k2.as_tensor())?,
                        subln: to_vec(l.subln.as_ref().expect("subln").as_tensor())?,
                        ..Default::default()
                    })
                }
            };
            layers.push(Layer {
                weights,
                mechanism,
                heads: l.heads,
            });
        }
        let tokens = TokenParts {
            vocab: vocab.to_vec(),
            identity_seed: self.identity_seed,
            identity_std: 1.0,
            classes: classes.to_vec(),
            class_vectors: to_array(self.class_vectors.as_tensor())?,
            token_class: self
                .token_class
                .iter()
                .map(|c| c.map(|k| u8::try_from(k).expect("fewer than 128 classes")))
                .collect(),
        };
        let file = RetrievalFile::new(
            tokens,
            layers,
            to_array(self.readout.as_tensor())?,
            Array1::from(to_vec(self.readout_bias.as_tensor())?),
            info,
        )
        .map_err(candle_core::Error::wrap)?;
        if file.model.table.vectors != self.token_vectors()? {
            return Err(candle_core::Error::Msg(
                "the file's table differs from the trainer's token vectors".into(),
            ));
        }
        Ok(file)
    }

    /// A candle model holding the parameters of a weights file (for the equivalence test): the
    /// same identities (from the file's seed), classes and layers.
    pub fn from_file(file: &RetrievalFile) -> Result<Net> {
        let device = Device::Cpu;
        let model = &file.model;
        let fail = |m: &str| candle_core::Error::Msg(m.to_string());
        let [first, second] = &model.layers[..] else {
            return Err(fail("a binding layer and a retrieving layer"));
        };
        let kind = Kind::of(&second.mechanism).ok_or_else(|| fail("not a retrieval mechanism"))?;
        let mut config = Config::new(kind, model.table.tokens().len());
        config.d_model = model.d_model();
        config.heads = second.heads;
        config.classes = file.tokens.class_vectors.nrows();
        let m = |a: &Array2<f32>| var_from(a, &device);
        let v = |a: &[f32]| var_vec(a, &device);
        let row = |a: &[f32]| {
            var_from(
                &Array2::from_shape_vec((1, a.len()), a.to_vec()).expect("1 x n"),
                &device,
            )
        };
        let vars = |l: &Layer, window: Option<usize>| -> Result<LayerVars> {
            Ok(LayerVars {
                w_q: m(&l.weights.w_q)?,
                w_k: m(&l.weights.w_k)?,
                w_v: m(&l.weights.w_v)?,
                w_o: m(&l.weights.w_o)?,
                gate: None,
                lambdas: None,
                subln: None,
                w_lambda: l.weights.w_lambda.as_ref().map(m).transpose()?,
                window,
                heads: l.heads,
            })
        };
        let Mechanism::Local { window } = first.mechanism else {
            return Err(fail("the first layer is local attention"));
        };
        let binding = vars(first, Some(window))?;
        let mut retrieving = vars(second, None)?;
        match &second.mechanism {
            Mechanism::Standard | Mechanism::DiffTransformerV2 { lambda: None } => {}
            Mechanism::ShiftDiff(p) => {
                if p.difference != Difference::Single
                    || p.fill != ShiftFill::Circular
                    || p.renormalize != Renormalize::None
                {
                    return Err(fail("the trainer knows circular single difference"));
                }
                config.shift = p.shift;
                retrieving.gate = Some([v(&p.gate.alpha)?, v(&p.gate.beta)?, v(&p.gate.gamma)?]);
            }
            Mechanism::DiffTransformer(p) => {
                if p.depth != 1 || p.lambda_init.is_some() || p.subln_eps != RMS_NORM_EPS {
                    return Err(fail("the trainer's retrieving layer has depth 1"));
                }
                retrieving.lambdas = Some([
                    row(&p.lambda_q1)?,
                    row(&p.lambda_k1)?,
                    row(&p.lambda_q2)?,
                    row(&p.lambda_k2)?,
                ]);
                retrieving.subln = Some(v(&p.subln)?);
            }
            _ => return Err(fail("not a retrieval mechanism")),
        }
        if file.tokens.identity_std != 1.0 {
            return Err(fail("the trainer's identities have standard deviation 1"));
        }
        Net::assemble(
            config,
            file.tokens.identities(),
            file.tokens.identity_seed,
            file.tokens
                .token_class
                .iter()
                .map(|c| c.map(u32::from))
                .collect(),
            m(&file.tokens.class_vectors)?,
            [binding, retrieving],
            m(&model.readout)?,
            v(&model.readout_bias.to_vec())?,
        )
    }

    /// The trained scalars worth reporting: the retrieving layer's lambda, or its gate.
    pub fn describe(&self) -> Result<String> {
        let l = &self.layers[1];
        if let Some([q1, k1, q2, k2]) = &l.lambdas {
            let dot = |p: &Var, q: &Var| -> Result<f32> {
                (p.as_tensor() * q.as_tensor())?
                    .sum_all()?
                    .to_scalar::<f32>()
            };
            let lambda = dot(q1, k1)?.exp() - dot(q2, k2)?.exp() + lambda_init(1);
            return Ok(format!("λ = {lambda:.3} (λ_init {:.3})", lambda_init(1)));
        }
        if let Some([a, b, g]) = &l.gate {
            let f = |v: &Var| -> Result<String> {
                Ok(to_vec(v.as_tensor())?
                    .iter()
                    .map(|x| format!("{x:.2}"))
                    .collect::<Vec<_>>()
                    .join(", "))
            };
            return Ok(format!("α [{}], β [{}], γ [{}]", f(a)?, f(b)?, f(g)?));
        }
        Ok("–".into())
    }
}

/// A softmax over the last dimension with its gradient. candle_nn's `softmax_last_dim` is
/// forward-only (no gradient would reach the scores, so attention could never learn where to
/// look), and the softmax composed of candle operations is several times slower on these maps.
/// A masked score (`-1e30`) gives exactly 0 without calling `exp`, whose underflow path is
/// slow.
struct SoftmaxRows;

impl CustomOp1 for SoftmaxRows {
    fn name(&self) -> &'static str {
        "softmax-rows"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let CpuStorage::F32(src) = storage else {
            candle_core::bail!("softmax-rows: f32 only")
        };
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("softmax-rows: contiguous input only")
        };
        let src = &src[start..end];
        let n = *layout.dims().last().unwrap_or(&1);
        let mut dst = vec![0f32; src.len()];
        for (row, out) in src.chunks(n.max(1)).zip(dst.chunks_mut(n.max(1))) {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0f32;
            for (x, y) in row.iter().zip(out.iter_mut()) {
                let z = x - max;
                *y = if z < -88.0 { 0.0 } else { z.exp() };
                sum += *y;
            }
            let inv = 1.0 / sum;
            out.iter_mut().for_each(|y| *y *= inv);
        }
        Ok((CpuStorage::F32(dst), layout.shape().clone()))
    }

    fn bwd(&self, _arg: &Tensor, res: &Tensor, grad_res: &Tensor) -> Result<Option<Tensor>> {
        Ok(Some(res.contiguous()?.apply_op2_no_bwd(
            &grad_res.contiguous()?,
            &SoftmaxRowsGrad,
        )?))
    }
}

/// The gradient of [`SoftmaxRows`]: for `y = softmax(x)` and `dy`, `dx = y ⊙ (dy − Σ_j dy_j y_j)`
/// row by row, in one pass (the same from candle operations allocates three maps more).
struct SoftmaxRowsGrad;

impl candle_core::CustomOp2 for SoftmaxRowsGrad {
    fn name(&self) -> &'static str {
        "softmax-rows-grad"
    }

    fn cpu_fwd(
        &self,
        y: &CpuStorage,
        y_layout: &Layout,
        dy: &CpuStorage,
        dy_layout: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (CpuStorage::F32(y), CpuStorage::F32(dy)) = (y, dy) else {
            candle_core::bail!("softmax-rows-grad: f32 only")
        };
        let (Some((ys, ye)), Some((ds, de))) = (
            y_layout.contiguous_offsets(),
            dy_layout.contiguous_offsets(),
        ) else {
            candle_core::bail!("softmax-rows-grad: contiguous inputs only")
        };
        let (y, dy) = (&y[ys..ye], &dy[ds..de]);
        let n = (*y_layout.dims().last().unwrap_or(&1)).max(1);
        let mut dx = vec![0f32; y.len()];
        for ((y, dy), dx) in y.chunks(n).zip(dy.chunks(n)).zip(dx.chunks_mut(n)) {
            let dot: f32 = y.iter().zip(dy).map(|(a, b)| a * b).sum();
            for ((out, &yv), &g) in dx.iter_mut().zip(y).zip(dy) {
                *out = yv * (g - dot);
            }
        }
        Ok((CpuStorage::F32(dx), y_layout.shape().clone()))
    }
}

/// `torch.roll(a, k, dim=-1)`: `out[.., j] = a[.., (j - k) mod L]`. candle's own `roll` cuts
/// with non-contiguous views and returns a transposed layout that makes every later operation on
/// the map strided and several times slower; cutting contiguous copies first keeps the fast path.
fn roll_keys(a: &Tensor, k: i64) -> Result<Tensor> {
    let l = a.dim(D::Minus1)?;
    let k = k.rem_euclid(l as i64) as usize;
    if k == 0 {
        return Ok(a.clone());
    }
    let tail = a.narrow(D::Minus1, l - k, k)?.contiguous()?;
    let head = a.narrow(D::Minus1, 0, l - k)?.contiguous()?;
    Tensor::cat(&[&tail, &head], D::Minus1)
}

/// `(batch, L)` ids from token rows of one length.
pub fn ids_tensor(rows: &[Vec<u32>], device: &Device) -> Result<Tensor> {
    let l = rows.first().map_or(0, Vec::len);
    let flat: Vec<u32> = rows.iter().flatten().copied().collect();
    Tensor::from_vec(flat, (rows.len(), l), device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_softmax_matches_candles_and_so_does_its_gradient() {
        let device = Device::Cpu;
        let x = Var::from_tensor(
            &Tensor::new(&[[0.5f32, -1.0, 2.0], [3.0, -1e30, 0.0]], &device).unwrap(),
        )
        .unwrap();
        let w = Tensor::new(&[[1.0f32, 2.0, 3.0], [-1.0, 0.5, 2.0]], &device).unwrap();
        let ours = x.as_tensor().apply_op1(SoftmaxRows).unwrap();
        let theirs = candle_nn::ops::softmax(x.as_tensor(), D::Minus1).unwrap();
        let diff = (&ours - &theirs).unwrap().abs().unwrap().max_all().unwrap();
        assert!(diff.to_scalar::<f32>().unwrap() < 1e-6);
        // A masked cell is exactly 0.
        assert_eq!(ours.to_vec2::<f32>().unwrap()[1][1], 0.0);
        let g = |y: &Tensor| {
            let loss = (y * &w).unwrap().sum_all().unwrap();
            loss.backward().unwrap().get(x.as_tensor()).unwrap().clone()
        };
        let (ga, gb) = (g(&ours), g(&theirs));
        let diff = (&ga - &gb).unwrap().abs().unwrap().max_all().unwrap();
        assert!(diff.to_scalar::<f32>().unwrap() < 1e-6);
    }

    #[test]
    fn every_parameter_gets_a_gradient_through_the_maps() {
        // The queries and keys are trained only if the gradient crosses the softmax; a
        // forward-only softmax would leave w_q and w_k without one.
        for kind in Kind::ALL {
            let mut config = Config::new(kind, 12);
            config.d_model = 8;
            config.classes = 2;
            let net = Net::new(config, vec![[0, 1]; 12], 3).unwrap();
            let ids = Tensor::new(&[[1u32, 2, 3, 4, 5, 6]], net.device()).unwrap();
            let labels = Tensor::new(&[7u32], net.device()).unwrap();
            let logits = net.forward(&ids).unwrap().logits;
            let loss = candle_nn::loss::cross_entropy(&logits, &labels).unwrap();
            let grads = loss.backward().unwrap();
            for (i, v) in net.vars().iter().enumerate() {
                let g = grads.get(v.as_tensor());
                let norm = g.map_or(0.0, |g| {
                    g.sqr()
                        .unwrap()
                        .sum_all()
                        .unwrap()
                        .to_scalar::<f32>()
                        .unwrap()
                });
                assert!(norm > 0.0, "{}: parameter {i} has no gradient", kind.key());
            }
        }
    }
}
