//! The classifier in candle: the same forward pass as the engine (DESIGN.md §1–§4, and
//! `diffattn::engine`), batched over reviews of one length, differentiable.
//!
//! tokens → table + sinusoidal positions → (BiLSTM for input difference) → one attention layer
//! of the chosen mechanism (no mask, no biases, `W_q, W_k, W_v, W_o`) → mean and max over tokens
//! → linear → two logits. The engine computes the same numbers one sentence at a time; the
//! tests in `tests/engine_matches_candle.rs` hold the two within 1e-5.

use candle_core::{DType, Device, Result, Tensor, Var, D};
use candle_nn::ops::{sigmoid, softmax};
use diffattn::engine::bilstm::{BiLstm, LstmWeights};
use diffattn::engine::diff_transformer::{lambda_init, DiffTransformerParams, RMS_NORM_EPS};
use diffattn::engine::shift_diff::{Difference, Gate, Renormalize, ShiftDiffParams, ShiftFill};
use diffattn::engine::MechanismKind;
use diffattn::engine::{Mechanism, Weights};
use diffattn::model::{Model, ModelError, Pooling, Quantization, TokenTable, Trained};
use diffattn::text::{seeded_normal, sinusoidal_positions, MAX_TOKENS};
use ndarray::{Array1, Array2};

/// The shape of a classifier and the settings its mechanism is trained with.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The mechanism.
    pub mechanism: MechanismKind,
    /// The model width `d`.
    pub d_model: usize,
    /// Heads (diff heads for the Differential Transformer).
    pub heads: usize,
    /// The vocabulary size, `<unk>` included.
    pub vocab: usize,
    /// The shift `k` of shift-difference attention (circular, single difference, no
    /// renormalisation: the defaults of DESIGN.md §2).
    pub shift: i64,
    /// The radius of local attention.
    pub window: usize,
    /// The Differential Transformer's layer depth (0: one layer).
    pub depth: u32,
    /// Hierarchical attention's segment size.
    pub segment: usize,
    /// How the output is pooled.
    pub pooling: Pooling,
    /// Whether a BiLSTM encoder (hidden d/2 per direction) sits before the attention layer:
    /// always for input difference (the BiLSTM article's model); for standard attention only
    /// as the experiment's control, never shipped.
    pub bilstm: bool,
}

impl Config {
    /// The settings every shipped model uses: `d = 32`, four heads of 8 channels (two diff
    /// heads of 2 × 8 for the Differential Transformer; for V2 four heads, each two query heads
    /// of 8 sharing one key/value head, so `W_q` is 64 × 32), shift 1, radius 3, segments of 4
    /// tokens, mean-and-max pooling.
    pub fn new(mechanism: MechanismKind, vocab: usize) -> Config {
        Config {
            mechanism,
            d_model: 32,
            heads: if mechanism == MechanismKind::DiffTransformer {
                2
            } else {
                4
            },
            vocab,
            shift: 1,
            window: 3,
            depth: 0,
            segment: 4,
            pooling: Pooling::MeanMax,
            bilstm: mechanism == MechanismKind::InputDiff,
        }
    }
}

/// One LSTM direction's parameters (PyTorch layout and gate order i, f, g, o).
pub struct LstmVars {
    w_ih: Var,
    w_hh: Var,
    b_ih: Var,
    b_hh: Var,
}

/// The classifier's parameters.
pub struct Net {
    /// Its configuration.
    pub config: Config,
    embedding: Var,
    w_q: Var,
    w_k: Var,
    w_v: Var,
    w_o: Var,
    classifier: Var,
    classifier_bias: Var,
    gate: Option<[Var; 3]>,
    lambdas: Option<[Var; 4]>,
    subln: Option<Var>,
    /// V2's `W_λ`, `(heads, d)`.
    w_lambda: Option<Var>,
    /// Gated attention's output gate `W_og`, `(d, d)` (DESIGN.md §4.1; no bias).
    w_output_gate: Option<Var>,
    tau: Option<Var>,
    lstm: Option<[LstmVars; 2]>,
    positions: Tensor,
    device: Device,
}

/// What one forward pass gives.
pub struct Forward {
    /// The map each head mixes values with, `(batch, heads, queries, keys)`: `A`, `A'` or
    /// `A1 - lambda A2`. `None` for a one-token input-difference batch (no keys).
    pub maps: Option<Tensor>,
    /// The layer output, `(batch, tokens, d)`.
    pub output: Tensor,
    /// The logits, `(batch, 2)`.
    pub logits: Tensor,
}

fn var_from(a: &Array2<f32>, device: &Device) -> Result<Var> {
    Var::from_tensor(&Tensor::from_slice(
        a.as_standard_layout().as_slice().expect("standard layout"),
        a.dim(),
        device,
    )?)
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

impl Net {
    /// A freshly initialised classifier; every draw comes from ChaCha8 keyed by `seed`. Rows
    /// of `pretrained` that are `Some` replace the random token vectors (GloVe for English).
    pub fn new(config: Config, seed: u64, pretrained: &[Option<Vec<f32>>]) -> Result<Net> {
        let device = Device::Cpu;
        let d = config.d_model;
        let mut n = 0u64;
        let mut draw = |rows: usize, cols: usize, std: f32| {
            n += 1;
            var_from(
                &seeded_normal(rows, cols, seed.wrapping_mul(1_000).wrapping_add(n), std),
                &device,
            )
        };
        let w = 1.0 / (d as f32).sqrt();
        let features = config.pooling.features(d);
        let mut table = seeded_normal(config.vocab, d, seed.wrapping_mul(1_000), 1.0);
        for (mut row, p) in table.rows_mut().into_iter().zip(pretrained) {
            if let Some(p) = p {
                row.assign(&ndarray::ArrayView1::from(&p[..]));
            }
        }
        let embedding = var_from(&table, &device)?;
        // V2 has two query heads per head: W_q is 2d x d.
        let q_rows = if config.mechanism == MechanismKind::DiffTransformerV2 {
            2 * d
        } else {
            d
        };
        let (w_q, w_k, w_v, w_o) = (
            draw(q_rows, d, w)?,
            draw(d, d, w)?,
            draw(d, d, w)?,
            draw(d, d, w)?,
        );
        let classifier = draw(2, features, 1.0 / (features as f32).sqrt())?;
        let h = config.heads;
        let mut net_lambdas = None;
        let mut subln = None;
        if config.mechanism == MechanismKind::DiffTransformer {
            let d_h = d / h / 2;
            net_lambdas = Some([
                draw(1, d_h, 0.1)?,
                draw(1, d_h, 0.1)?,
                draw(1, d_h, 0.1)?,
                draw(1, d_h, 0.1)?,
            ]);
            subln = Some(var_vec(&vec![1.0; 2 * d_h], &device)?);
        }
        let lstm = if config.bilstm {
            let hidden = d / 2;
            let std = 1.0 / (3.0 * hidden as f32).sqrt();
            let mut dir = || -> Result<LstmVars> {
                Ok(LstmVars {
                    w_ih: draw(4 * hidden, d, std)?,
                    w_hh: draw(4 * hidden, hidden, std)?,
                    b_ih: var_vec(&vec![0.0; 4 * hidden], &device)?,
                    b_hh: var_vec(&vec![0.0; 4 * hidden], &device)?,
                })
            };
            Some([dir()?, dir()?])
        } else {
            None
        };
        let gate = (config.mechanism == MechanismKind::ShiftDiff).then(|| {
            [
                var_vec(&vec![0.0; h], &device),
                var_vec(&vec![1.0; h], &device),
                var_vec(&vec![0.0; h], &device),
            ]
        });
        let gate = match gate {
            Some([a, b, c]) => Some([a?, b?, c?]),
            None => None,
        };
        let tau = if config.mechanism == MechanismKind::Cosine {
            Some(var_vec(&[10.0], &device)?)
        } else {
            None
        };
        let w_lambda = if config.mechanism == MechanismKind::DiffTransformerV2 {
            Some(draw(h, d, w)?)
        } else {
            None
        };
        // Drawn last, so the other mechanisms' draws are as they were.
        let w_output_gate = if config.mechanism == MechanismKind::GatedAttention {
            Some(draw(d, d, w)?)
        } else {
            None
        };
        Ok(Net {
            positions: positions(d, &device)?,
            embedding,
            w_q,
            w_k,
            w_v,
            w_o,
            classifier_bias: var_vec(&[0.0, 0.0], &device)?,
            classifier,
            gate,
            lambdas: net_lambdas,
            subln,
            w_lambda,
            w_output_gate,
            tau,
            lstm,
            config,
            device,
        })
    }

    /// Every trainable parameter.
    pub fn vars(&self) -> Vec<Var> {
        let mut v = vec![
            self.embedding.clone(),
            self.w_q.clone(),
            self.w_k.clone(),
            self.w_v.clone(),
            self.w_o.clone(),
            self.classifier.clone(),
            self.classifier_bias.clone(),
        ];
        v.extend(self.gate.iter().flatten().cloned());
        v.extend(self.lambdas.iter().flatten().cloned());
        v.extend(self.subln.iter().cloned());
        v.extend(self.w_lambda.iter().cloned());
        v.extend(self.w_output_gate.iter().cloned());
        v.extend(self.tau.iter().cloned());
        for dir in self.lstm.iter().flatten() {
            v.extend([
                dir.w_ih.clone(),
                dir.w_hh.clone(),
                dir.b_ih.clone(),
                dir.b_hh.clone(),
            ]);
        }
        v
    }

    /// The device (always the CPU).
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// A copy of every parameter's value, to restore the best epoch later.
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

    /// The forward pass over `ids`, `(batch, tokens)` of `u32`, every review the same length.
    pub fn forward(&self, ids: &Tensor) -> Result<Forward> {
        let (b, l) = ids.dims2()?;
        let d = self.config.d_model;
        let x = self
            .embedding
            .as_tensor()
            .index_select(&ids.flatten_all()?, 0)?
            .reshape((b, l, d))?
            .broadcast_add(&self.positions.narrow(0, 0, l)?)?;
        let x = match &self.lstm {
            Some([fwd, bwd]) => {
                let f = lstm(&x, fwd, false)?;
                let r = lstm(&x, bwd, true)?;
                Tensor::cat(&[&f, &r], 2)?
            }
            None => x,
        };
        let (maps, output) = self.attention(&x)?;
        let mean = output.mean(1)?;
        let features = match self.config.pooling {
            Pooling::Mean => mean,
            Pooling::MeanMax => Tensor::cat(&[&mean, &output.max(1)?], 1)?,
        };
        let logits = features
            .matmul(&self.classifier.as_tensor().t()?)?
            .broadcast_add(self.classifier_bias.as_tensor())?;
        Ok(Forward {
            maps,
            output,
            logits,
        })
    }

    /// The attention layer over `x`, `(batch, tokens, d)`: the final maps and the output.
    fn attention(&self, x: &Tensor) -> Result<(Option<Tensor>, Tensor)> {
        let (b, l, d) = x.dims3()?;
        let h = self.config.heads;
        let linear = |t: &Tensor, w: &Var| -> Result<Tensor> {
            let (b, n, _) = t.dims3()?;
            let out = w.as_tensor().dim(0)?;
            t.reshape((b * n, d))?
                .matmul(&w.as_tensor().t()?)?
                .reshape((b, n, out))
        };
        let split = |t: &Tensor, heads: usize| -> Result<Tensor> {
            let (b, n, width) = t.dims3()?;
            t.reshape((b, n, heads, width / heads))?
                .transpose(1, 2)?
                .contiguous()
        };
        let merge = |o: &Tensor| -> Result<Tensor> {
            let merged = o.transpose(1, 2)?.contiguous()?.reshape((b, l, d))?;
            linear(&merged, &self.w_o)
        };
        let scaled_scores = |q: &Tensor, k: &Tensor| -> Result<Tensor> {
            let d_h = q.dim(3)?;
            q.matmul(&k.transpose(2, 3)?.contiguous()?)? * (1.0 / (d_h as f64).sqrt())
        };
        match self.config.mechanism {
            MechanismKind::InputDiff => {
                if l < 2 {
                    // One token: no steps, no keys, a zero output (DESIGN.md §4).
                    return Ok((None, Tensor::zeros((b, l, d), DType::F32, &self.device)?));
                }
                let delta = (x.narrow(1, 1, l - 1)? - x.narrow(1, 0, l - 1)?)?;
                let q = split(&linear(x, &self.w_q)?, h)?;
                let k = split(&linear(&delta, &self.w_k)?, h)?;
                let v = split(&linear(&delta, &self.w_v)?, h)?;
                let a = softmax(&scaled_scores(&q, &k)?, D::Minus1)?;
                let out = merge(&a.matmul(&v)?)?;
                Ok((Some(a), out))
            }
            MechanismKind::DiffTransformer => {
                let q = split(&linear(x, &self.w_q)?, 2 * h)?;
                let k = split(&linear(x, &self.w_k)?, 2 * h)?;
                let v = split(&linear(x, &self.w_v)?, h)?;
                let a = softmax(&scaled_scores(&q, &k)?, D::Minus1)?.reshape((b, h, 2, l, l))?;
                let a1 = a.narrow(2, 0, 1)?.squeeze(2)?;
                let a2 = a.narrow(2, 1, 1)?.squeeze(2)?;
                let [q1, k1, q2, k2] = self.lambdas.as_ref().expect("diff_transformer lambdas");
                let dot = |p: &Var, q: &Var| (p.as_tensor() * q.as_tensor())?.sum_all();
                let init = f64::from(lambda_init(self.config.depth));
                let lambda = ((dot(q1, k1)?.exp()? - dot(q2, k2)?.exp()?)? + init)?;
                let diff = (a1 - a2.broadcast_mul(&lambda)?)?;
                let o = diff.matmul(&v)?;
                let rms = (o.sqr()?.mean_keepdim(D::Minus1)? + f64::from(RMS_NORM_EPS))?.sqrt()?;
                let subln = self.subln.as_ref().expect("diff_transformer subln");
                let o = (o.broadcast_div(&rms)?.broadcast_mul(subln.as_tensor())? * (1.0 - init))?;
                Ok((Some(diff), merge(&o)?))
            }
            MechanismKind::DiffTransformerV2 => {
                // Query heads 2h and 2h+1 (width d/H) share key/value head h (DESIGN.md §7.5).
                let q = split(&linear(x, &self.w_q)?, 2 * h)?;
                let k = split(&linear(x, &self.w_k)?, h)?;
                let v = split(&linear(x, &self.w_v)?, h)?;
                let d_h = d / h;
                let q = q.reshape((b, h, 2, l, d_h))?;
                let q1 = q.narrow(2, 0, 1)?.squeeze(2)?.contiguous()?;
                let q2 = q.narrow(2, 1, 1)?.squeeze(2)?.contiguous()?;
                let a1 = softmax(&scaled_scores(&q1, &k)?, D::Minus1)?;
                let a2 = softmax(&scaled_scores(&q2, &k)?, D::Minus1)?;
                let w_lambda = self
                    .w_lambda
                    .as_ref()
                    .expect("diff_transformer_v2 w_lambda");
                // λ[i, h] = σ(x_i · W_λ[h]), as (b, H, l, 1).
                let lambda = sigmoid(&linear(x, w_lambda)?)?
                    .transpose(1, 2)?
                    .contiguous()?
                    .unsqueeze(3)?;
                let diff = (a1 - a2.broadcast_mul(&lambda)?)?;
                let out = merge(&diff.matmul(&v)?)?;
                Ok((Some(diff), out))
            }
            MechanismKind::Hierarchical => {
                let q = split(&linear(x, &self.w_q)?, h)?;
                let k = split(&linear(x, &self.w_k)?, h)?;
                let v = split(&linear(x, &self.w_v)?, h)?;
                let s = self.config.segment.max(1);
                let n = l.div_ceil(s);
                let of = |i: usize| i / s;
                let size = |m: usize| ((m + 1) * s).min(l) - m * s;
                // spread[m, j] = 1/|m| for the tokens j of segment m: K̄ = spread·K, and the
                // token map is local + segments·spread (DESIGN.md §7.6).
                let spread: Vec<f32> = (0..n * l)
                    .map(|c| {
                        let (m, j) = (c / l, c % l);
                        if of(j) == m {
                            1.0 / size(m) as f32
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let spread = Tensor::from_vec(spread, (n, l), &self.device)?;
                let means = spread.broadcast_matmul(&k)?;
                let excluded = |allowed: bool| if allowed { 0.0f32 } else { -1e30 };
                let token_mask: Vec<f32> = (0..l * l)
                    .map(|c| excluded(of(c / l) == of(c % l)))
                    .collect();
                let summary_mask: Vec<f32> =
                    (0..l * n).map(|c| excluded(of(c / n) != c % n)).collect();
                let token_mask = Tensor::from_vec(token_mask, (l, l), &self.device)?;
                let summary_mask = Tensor::from_vec(summary_mask, (l, n), &self.device)?;
                let scores = Tensor::cat(
                    &[
                        scaled_scores(&q, &k)?.broadcast_add(&token_mask)?,
                        scaled_scores(&q, &means)?.broadcast_add(&summary_mask)?,
                    ],
                    3,
                )?;
                let p = softmax(&scores, D::Minus1)?;
                let local = p.narrow(3, 0, l)?;
                let segments = p.narrow(3, l, n)?.contiguous()?;
                let a = (local + segments.broadcast_matmul(&spread)?)?;
                let out = merge(&a.matmul(&v)?)?;
                Ok((Some(a), out))
            }
            kind => {
                let q = split(&linear(x, &self.w_q)?, h)?;
                let k = split(&linear(x, &self.w_k)?, h)?;
                let v = split(&linear(x, &self.w_v)?, h)?;
                let scores = match kind {
                    MechanismKind::Cosine => {
                        let unit = |t: &Tensor| -> Result<Tensor> {
                            t.broadcast_div(&(t.sqr()?.sum_keepdim(D::Minus1)? + 1e-20)?.sqrt()?)
                        };
                        let tau = self.tau.as_ref().expect("cosine tau");
                        unit(&q)?
                            .matmul(&unit(&k)?.transpose(2, 3)?.contiguous()?)?
                            .broadcast_mul(tau.as_tensor())?
                    }
                    MechanismKind::Local => {
                        let w = self.config.window;
                        let mask: Vec<f32> = (0..l * l)
                            .map(|c| {
                                if (c / l).abs_diff(c % l) > w {
                                    -1e30
                                } else {
                                    0.0
                                }
                            })
                            .collect();
                        let mask = Tensor::from_vec(mask, (l, l), &self.device)?;
                        scaled_scores(&q, &k)?.broadcast_add(&mask)?
                    }
                    _ => scaled_scores(&q, &k)?,
                };
                let a = softmax(&scores, D::Minus1)?;
                let a = if kind == MechanismKind::ShiftDiff {
                    let [alpha, beta, gamma] = self.gate.as_ref().expect("shift_diff gate");
                    let per_head = |v: &Var| v.as_tensor().reshape((1, h, 1, 1));
                    let shifted = a.roll(self.config.shift as i32, D::Minus1)?;
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
                let heads_out = a.matmul(&v)?;
                let heads_out = match &self.w_output_gate {
                    // O_h = (A_h·V_h) ⊙ σ(x·W_ogᵀ)[:, h, :] (DESIGN.md §4.1): the gate split into
                    // heads like the query.
                    Some(w_og) => heads_out.mul(&sigmoid(&split(&linear(x, w_og)?, h)?)?)?,
                    None => heads_out,
                };
                let out = merge(&heads_out)?;
                Ok((Some(a), out))
            }
        }
    }

    /// The engine's model with these parameters.
    pub fn to_model(&self, info: serde_json::Value, vocab: &[String]) -> Result<Model> {
        let (w_q, w_k, w_v, w_o) = (
            to_array(self.w_q.as_tensor())?,
            to_array(self.w_k.as_tensor())?,
            to_array(self.w_v.as_tensor())?,
            to_array(self.w_o.as_tensor())?,
        );
        let w_og = match &self.w_output_gate {
            Some(w) => Some(to_array(w.as_tensor())?),
            None => None,
        };
        let weights = match (&self.w_lambda, w_og) {
            (Some(w_lambda), _) => Weights::real(
                w_q,
                w_k,
                w_v,
                w_o,
                Default::default(),
                Some(to_array(w_lambda.as_tensor())?),
                Default::default(),
            ),
            (None, Some(w_og)) => {
                Weights::new(w_q, w_k, w_v, w_o).and_then(|w| w.with_output_gate(w_og, None))
            }
            (None, None) => Weights::new(w_q, w_k, w_v, w_o),
        }
        .map_err(candle_core::Error::wrap)?;
        let h = self.config.heads;
        let mechanism = match self.config.mechanism {
            MechanismKind::Standard => Mechanism::Standard,
            MechanismKind::InputDiff => Mechanism::InputDiff,
            MechanismKind::Local => Mechanism::Local {
                window: self.config.window,
            },
            MechanismKind::Cosine => Mechanism::Cosine {
                tau: to_vec(self.tau.as_ref().expect("tau").as_tensor())?[0],
            },
            MechanismKind::ShiftDiff => {
                let [a, b, g] = self.gate.as_ref().expect("gate");
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
            MechanismKind::DiffTransformerV2 => Mechanism::DiffTransformerV2 { lambda: None },
            MechanismKind::Hierarchical => Mechanism::Hierarchical {
                segment: self.config.segment,
            },
            MechanismKind::GatedAttention => Mechanism::GatedAttention,
            MechanismKind::DiffTransformer => {
                let [q1, k1, q2, k2] = self.lambdas.as_ref().expect("lambdas");
                Mechanism::DiffTransformer(DiffTransformerParams {
                    depth: self.config.depth,
                    lambda_q1: to_vec(q1.as_tensor())?,
                    lambda_k1: to_vec(k1.as_tensor())?,
                    lambda_q2: to_vec(q2.as_tensor())?,
                    lambda_k2: to_vec(k2.as_tensor())?,
                    subln: to_vec(self.subln.as_ref().expect("subln").as_tensor())?,
                    ..Default::default()
                })
            }
        };
        let encoder = match &self.lstm {
            Some([f, r]) => {
                let dir = |v: &LstmVars| -> Result<LstmWeights> {
                    Ok(LstmWeights {
                        w_ih: to_array(v.w_ih.as_tensor())?,
                        w_hh: to_array(v.w_hh.as_tensor())?,
                        b_ih: Array1::from(to_vec(v.b_ih.as_tensor())?),
                        b_hh: Array1::from(to_vec(v.b_hh.as_tensor())?),
                    })
                };
                Some(BiLstm::new(dir(f)?, dir(r)?).map_err(candle_core::Error::wrap)?)
            }
            None => None,
        };
        let trained = Trained {
            mechanism,
            heads: h,
            table: TokenTable::new(vocab.to_vec(), to_array(self.embedding.as_tensor())?)
                .map_err(candle_core::Error::wrap)?,
            encoder,
            pooling: self.config.pooling,
            classifier: to_array(self.classifier.as_tensor())?,
            classifier_bias: Array1::from(to_vec(self.classifier_bias.as_tensor())?),
            quantization: Quantization::F32,
            info,
        };
        Model::from_trained(weights, trained).map_err(candle_core::Error::wrap)
    }

    /// A classifier holding the parameters of a trained engine model (for the equivalence
    /// tests and for evaluating the quantised files with candle).
    pub fn from_model(model: &Model) -> std::result::Result<Net, ModelError> {
        let t = model.trained_parts().ok_or(ModelError::Untrained)?;
        let wrap = |e: candle_core::Error| ModelError::Invalid(e.to_string());
        let device = Device::Cpu;
        let m = |a: &Array2<f32>| var_from(a, &device).map_err(wrap);
        let v = |a: &[f32]| var_vec(a, &device).map_err(wrap);
        let row = |a: &[f32]| {
            var_from(
                &Array2::from_shape_vec((1, a.len()), a.to_vec()).expect("1 x n"),
                &device,
            )
            .map_err(wrap)
        };
        let kind = t.mechanism.kind();
        let mut config = Config::new(kind, t.table.tokens().len());
        config.d_model = model.d_model();
        config.heads = t.heads;
        config.pooling = t.pooling;
        config.bilstm = t.encoder.is_some();
        let (mut gate, mut lambdas, mut subln, mut tau) = (None, None, None, None);
        match &t.mechanism {
            Mechanism::ShiftDiff(p) => {
                if p.difference != Difference::Single
                    || p.fill != ShiftFill::Circular
                    || p.renormalize != Renormalize::None
                {
                    return Err(ModelError::Invalid(
                        "the trainer knows circular single difference without renormalisation"
                            .to_string(),
                    ));
                }
                config.shift = p.shift;
                gate = Some([v(&p.gate.alpha)?, v(&p.gate.beta)?, v(&p.gate.gamma)?]);
            }
            Mechanism::DiffTransformer(p) => {
                config.depth = p.depth;
                lambdas = Some([
                    row(&p.lambda_q1)?,
                    row(&p.lambda_k1)?,
                    row(&p.lambda_q2)?,
                    row(&p.lambda_k2)?,
                ]);
                subln = Some(v(&p.subln)?);
            }
            Mechanism::Cosine { tau: t } => tau = Some(v(&[*t])?),
            Mechanism::Local { window } => config.window = *window,
            Mechanism::Hierarchical { segment } => config.segment = *segment,
            Mechanism::DiffTransformerV2 { lambda: None } => {}
            Mechanism::Standard | Mechanism::InputDiff | Mechanism::GatedAttention => {}
            Mechanism::DiffTransformerV2 { lambda: Some(_) } => {
                return Err(ModelError::Invalid(
                    "the trainer learns V2's λ; a fixed one is not trained".to_string(),
                ))
            }
        }
        let w_lambda = match &model.weights.w_lambda {
            Some(w) => Some(m(w)?),
            None => None,
        };
        let w_output_gate = match &model.weights.output_gate {
            Some(g) if g.b.is_some() => {
                return Err(ModelError::Invalid(
                    "the trainer's output gate has no bias".to_string(),
                ))
            }
            Some(g) if kind == MechanismKind::GatedAttention => Some(m(&g.w)?),
            _ => None,
        };
        let lstm = match &t.encoder {
            Some(e) => {
                let dir = |l: &LstmWeights| -> std::result::Result<LstmVars, ModelError> {
                    Ok(LstmVars {
                        w_ih: m(&l.w_ih)?,
                        w_hh: m(&l.w_hh)?,
                        b_ih: v(&l.b_ih.to_vec())?,
                        b_hh: v(&l.b_hh.to_vec())?,
                    })
                };
                Some([dir(&e.forward)?, dir(&e.backward)?])
            }
            None => None,
        };
        Ok(Net {
            positions: positions(config.d_model, &device).map_err(wrap)?,
            embedding: m(&t.table.vectors)?,
            w_q: m(&model.weights.w_q)?,
            w_k: m(&model.weights.w_k)?,
            w_v: m(&model.weights.w_v)?,
            w_o: m(&model.weights.w_o)?,
            classifier: m(&t.classifier)?,
            classifier_bias: v(&t.classifier_bias.to_vec())?,
            gate,
            lambdas,
            subln,
            w_lambda,
            w_output_gate,
            tau,
            lstm,
            config,
            device,
        })
    }
}

/// The sinusoidal position codes of the page, `(MAX_TOKENS, d)`.
fn positions(d: usize, device: &Device) -> Result<Tensor> {
    let pe = sinusoidal_positions(MAX_TOKENS, d);
    Tensor::from_slice(pe.as_slice().expect("standard layout"), pe.dim(), device)
}

/// One LSTM direction over `x`, `(batch, tokens, input)`: `(batch, tokens, hidden)`.
fn lstm(x: &Tensor, w: &LstmVars, reverse: bool) -> Result<Tensor> {
    let (b, l, input) = x.dims3()?;
    let four = w.w_ih.dim(0)?;
    let n = four / 4;
    let bias = (w.b_ih.as_tensor() + w.b_hh.as_tensor())?;
    let projected = x
        .reshape((b * l, input))?
        .matmul(&w.w_ih.as_tensor().t()?)?
        .broadcast_add(&bias)?
        .reshape((b, l, four))?;
    let w_hh = w.w_hh.as_tensor().t()?;
    let mut h = Tensor::zeros((b, n), DType::F32, x.device())?;
    let mut c = h.clone();
    let mut outs: Vec<Option<Tensor>> = vec![None; l];
    let order: Box<dyn Iterator<Item = usize>> = if reverse {
        Box::new((0..l).rev())
    } else {
        Box::new(0..l)
    };
    for t in order {
        let z = (projected.narrow(1, t, 1)?.squeeze(1)? + h.matmul(&w_hh)?)?;
        let i = sigmoid(&z.narrow(1, 0, n)?)?;
        let f = sigmoid(&z.narrow(1, n, n)?)?;
        let g = z.narrow(1, 2 * n, n)?.tanh()?;
        let o = sigmoid(&z.narrow(1, 3 * n, n)?)?;
        c = ((f * &c)? + (i * g)?)?;
        h = (o * c.tanh()?)?;
        outs[t] = Some(h.clone());
    }
    let outs: Vec<Tensor> = outs
        .into_iter()
        .map(|o| o.expect("every step ran"))
        .collect();
    Tensor::stack(&outs, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small gated attention classifier (d = 8, two heads of 4 channels) and a batch of two
    /// reviews of five tokens.
    fn gated_net() -> (Net, Tensor) {
        let mut config = Config::new(MechanismKind::GatedAttention, 20);
        config.d_model = 8;
        config.heads = 2;
        let net = Net::new(config, 7, &[]).unwrap();
        let ids = Tensor::from_vec(
            vec![1u32, 4, 9, 2, 7, 3, 3, 11, 19, 0],
            (2, 5),
            &Device::Cpu,
        )
        .unwrap();
        (net, ids)
    }

    /// A scalar of the logits with fixed, unequal weights, so every logit counts.
    fn loss(net: &Net, ids: &Tensor) -> Tensor {
        let logits = net.forward(ids).unwrap().logits;
        let c = Tensor::from_vec(vec![0.7f32, -1.3, 0.4, 0.9], (2, 2), &Device::Cpu).unwrap();
        (logits * c).unwrap().sum_all().unwrap()
    }

    fn scalar(t: &Tensor) -> f64 {
        f64::from(t.to_scalar::<f32>().unwrap())
    }

    #[test]
    fn the_output_gates_gradient_matches_finite_differences() {
        // dL/dW_og reaches the gate through σ and the product with A·V (DESIGN.md §4.1); the
        // autograd's gradient must agree with central differences of the loss, entry by entry.
        let (net, ids) = gated_net();
        let w_og = net.w_output_gate.clone().expect("gated attention has W_og");
        let grads = loss(&net, &ids).backward().unwrap();
        let analytic = to_array(grads.get(w_og.as_tensor()).expect("a gradient")).unwrap();
        assert!(analytic.iter().any(|g| g.abs() > 1e-4), "the gate learns");
        let base = to_array(w_og.as_tensor()).unwrap();
        let eps = 1e-2f32;
        let mut checked = 0;
        for (r, c) in [(0, 0), (1, 5), (3, 2), (4, 7), (6, 1), (7, 6)] {
            let at = |delta: f32| {
                let mut w = base.clone();
                w[(r, c)] += delta;
                w_og.set(&var_from(&w, &Device::Cpu).unwrap()).unwrap();
                scalar(&loss(&net, &ids))
            };
            let numeric = (at(eps) - at(-eps)) / (2.0 * f64::from(eps));
            let want = f64::from(analytic[(r, c)]);
            assert!(
                (numeric - want).abs() <= 2e-3 + 2e-2 * want.abs(),
                "W_og[{r}, {c}]: autograd {want}, finite differences {numeric}"
            );
            checked += 1;
        }
        w_og.set(&var_from(&base, &Device::Cpu).unwrap()).unwrap();
        assert_eq!(checked, 6);
    }

    #[test]
    fn the_gated_classifier_is_the_engines_model() {
        // The layer output of candle's forward equals the engine's gated attention on the same
        // vectors (the gate split into heads like the query, multiplied onto A·V before W_o).
        let (net, ids) = gated_net();
        let forward = net.forward(&ids).unwrap();
        let vocab: Vec<String> = std::iter::once("<unk>".to_string())
            .chain((1..20).map(|i| format!("w{i}")))
            .collect();
        let model = net.to_model(serde_json::json!({}), &vocab).unwrap();
        let weights = model.layer_weights(MechanismKind::GatedAttention, 2);
        let x = net
            .embedding
            .as_tensor()
            .index_select(&ids.get(0).unwrap(), 0)
            .unwrap()
            .broadcast_add(&net.positions.narrow(0, 0, 5).unwrap())
            .unwrap();
        let x = to_array(&x).unwrap();
        let stages =
            diffattn::engine::run(x.view(), &weights, 2, false, &Mechanism::GatedAttention)
                .unwrap();
        let want = to_array(&forward.output.get(0).unwrap()).unwrap();
        let diff = (stages.output() - &want).mapv(f32::abs);
        assert!(diff.iter().all(|&d| d < 1e-5), "{diff:?}");
    }
}
