//! Inference in plain Rust: [`Network`], the forward pass of the trained network on
//! `ndarray` matrices, without libtorch.
//!
//! It computes what the training network's forward pass computes (`net`, under the
//! `train` feature), nest by nest instead of over a concatenated batch: the per-loop
//! MLP, the message-passing rounds along the loop tree, the access encoder over
//! `[access row ‖ state of its loop]`, mean and max pooling (zeros for an empty set) and
//! `ln(1 + count)`, the optional global, machine and counter encoders, the merge MLP,
//! the L2 normalization (`z / sqrt(max(Σ z², 1e-12))`) and the head. Results equal the
//! libtorch ones up to float rounding in the matrix products.

use ndarray::{s, Array1, Array2, ArrayView2, Axis};

use crate::config::ModelConfig;
use crate::error::{Error, Result};
use crate::input::{validate_examples, validate_inputs, Example, NestInput};
use crate::layout::{layout, param_shapes, relu_last};
use crate::weights::{check, Param};

/// Embeddings and predictions of a slice of nests, in the slice's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outputs {
    /// One embedding per nest ([`ModelConfig::output_dim`] values).
    pub embeddings: Vec<Vec<f32>>,
    /// One prediction per nest (`target_dim` values).
    pub predictions: Vec<Vec<f32>>,
}

/// `x W^T + b`, `W: [out, in]` as stored.
struct Linear {
    w: Array2<f32>,
    b: Array1<f32>,
}

impl Linear {
    fn forward(&self, x: ArrayView2<f32>) -> Array2<f32> {
        x.dot(&self.w.t()) + &self.b
    }
}

/// Linear layers with ReLU between them (and after the last one if `relu_last`).
struct Mlp {
    layers: Vec<Linear>,
    relu_last: bool,
}

impl Mlp {
    fn forward(&self, x: ArrayView2<f32>) -> Array2<f32> {
        let n = self.layers.len();
        let mut h = x.to_owned();
        for (i, l) in self.layers.iter().enumerate() {
            h = l.forward(h.view());
            if i + 1 < n || self.relu_last {
                h.mapv_inplace(|v| v.max(0.0));
            }
        }
        h
    }

    /// One row in, one row out.
    fn forward_row(&self, x: &[f32]) -> Array2<f32> {
        let row = ArrayView2::from_shape((1, x.len()), x).expect("a row is a 1 x n matrix");
        self.forward(row)
    }
}

/// The trained network with its weights, for inference (no libtorch). `Send` and
/// `Sync`: one network can serve every thread.
pub struct Network {
    config: ModelConfig,
    params: Vec<Param>,
    loop_enc: Mlp,
    rounds: Vec<Mlp>,
    access_enc: Mlp,
    global_enc: Option<Mlp>,
    machine_enc: Option<Mlp>,
    counter_enc: Option<Mlp>,
    merge: Mlp,
    head: Mlp,
    /// Per-column weights of the wide part ([`ModelConfig::wide`]).
    wide: Option<Array1<f32>>,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("config", &self.config)
            .field("parameters", &self.num_parameters())
            .finish()
    }
}

fn matrix(rows: &[Vec<f32>], width: usize) -> Array2<f32> {
    let flat: Vec<f32> = rows.iter().flatten().copied().collect();
    Array2::from_shape_vec((rows.len(), width), flat).expect("validated row widths")
}

/// Mean and max of the rows of `x` (zeros when there are none).
fn pool(x: &Array2<f32>) -> (Array1<f32>, Array1<f32>) {
    let width = x.ncols();
    if x.nrows() == 0 {
        return (Array1::zeros(width), Array1::zeros(width));
    }
    let mut sum = Array1::<f32>::zeros(width);
    let mut max = x.row(0).to_owned();
    for row in x.rows() {
        sum += &row;
        max.zip_mut_with(&row, |m, &v| *m = m.max(v));
    }
    (sum / x.nrows() as f32, max)
}

/// The inputs pooled for the wide part of the embedding: mean and max of the loop rows,
/// of the access rows (left out when accesses have no columns), the global row, the
/// counters times their mask, the machine row.
fn wide_part(x: &NestInput, c: &ModelConfig) -> Vec<f32> {
    let mut out = Vec::with_capacity(c.wide_dim());
    for (rows, width) in [(&x.loops, c.loop_dim), (&x.accesses, c.access_dim)] {
        if width > 0 {
            let (mean, max) = pool(&matrix(rows, width));
            out.extend(mean.iter().chain(max.iter()));
        }
    }
    out.extend(&x.global);
    out.extend(x.counters.iter().zip(&x.counter_mask).map(|(v, m)| v * m));
    out.extend(&x.machine);
    out
}

impl Network {
    /// The network for `config` with the parameters `params` (names, order and shapes
    /// those of the configuration, finite values).
    pub(crate) fn from_params(config: ModelConfig, params: Vec<Param>) -> Result<Network> {
        config.validate()?;
        check(&params, &param_shapes(&config)).map_err(Error::Config)?;
        let mut next = params.iter();
        let mut modules = std::collections::BTreeMap::new();
        for (name, dims) in layout(&config) {
            let mut layers = Vec::new();
            for w in dims.windows(2) {
                let (weight, bias) = (next.next(), next.next());
                let (Some(weight), Some(bias)) = (weight, bias) else {
                    return Err(Error::Config(format!("{name}: parameters missing")));
                };
                let w = Array2::from_shape_vec((w[1], w[0]), weight.data.clone())
                    .map_err(|e| Error::Config(format!("{}: {e}", weight.name)))?;
                let b = Array1::from_vec(bias.data.clone());
                layers.push(Linear { w, b });
            }
            let relu_last = relu_last(&name);
            modules.insert(name, Mlp { layers, relu_last });
        }
        let mut take = |name: &str| modules.remove(name);
        let missing = |name: &str| Error::Config(format!("module {name} missing"));
        let loop_enc = take("loop_enc").ok_or_else(|| missing("loop_enc"))?;
        let rounds = (0..config.message_rounds)
            .map(|r| {
                let name = format!("message.{r}");
                take(&name).ok_or_else(|| missing(&name))
            })
            .collect::<Result<Vec<_>>>()?;
        let access_enc = take("access_enc").ok_or_else(|| missing("access_enc"))?;
        let global_enc = take("global_enc");
        let machine_enc = take("machine_enc");
        let counter_enc = take("counter_enc");
        let merge = take("merge").ok_or_else(|| missing("merge"))?;
        let head = take("head").ok_or_else(|| missing("head"))?;
        // `check` held the wide weights to their name and shape: the last parameter.
        let wide = config
            .wide
            .then(|| next.next().map(|p| Array1::from_vec(p.data.clone())))
            .flatten();
        Ok(Network {
            config,
            params,
            loop_enc,
            rounds,
            access_enc,
            global_enc,
            machine_enc,
            counter_enc,
            merge,
            head,
            wide,
        })
    }

    /// The parameters, in their fixed order (what `weights.bin` holds).
    pub(crate) fn params(&self) -> &[Param] {
        &self.params
    }

    /// The configuration the network was built for.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Number of scalar parameters.
    pub fn num_parameters(&self) -> usize {
        self.params.iter().map(|p| p.data.len()).sum()
    }

    /// Names and shapes of the parameters, in their fixed order.
    pub fn parameter_shapes(&self) -> Vec<(String, Vec<i64>)> {
        self.params
            .iter()
            .map(|p| (p.name.clone(), p.dims.clone()))
            .collect()
    }

    /// Embedding and prediction of one validated nest.
    fn forward(&self, x: &NestInput) -> (Vec<f32>, Vec<f32>) {
        let h = self.config.hidden;
        let c = &self.config;
        // Loop tree: per-loop MLP, then message passing along the parent edges.
        let mut hl = self.loop_enc.forward(matrix(&x.loops, c.loop_dim).view());
        for round in &self.rounds {
            // [state ‖ sum of the children's states ‖ the parent's state (zero for roots)]
            let mut cat = Array2::<f32>::zeros((hl.nrows(), 3 * h));
            cat.slice_mut(s![.., ..h]).assign(&hl);
            for (child, parent) in x.loop_parent.iter().enumerate() {
                if let Some(parent) = *parent {
                    let mut up = cat.slice_mut(s![parent, h..2 * h]);
                    up += &hl.row(child);
                    let mut down = cat.slice_mut(s![child, 2 * h..]);
                    down += &hl.row(parent);
                }
            }
            hl += &round.forward(cat.view());
        }
        // Accesses: [access row ‖ state of its loop].
        let mut at = Array2::<f32>::zeros((x.accesses.len(), c.access_dim + h));
        for (j, (row, &l)) in x.accesses.iter().zip(&x.access_loop).enumerate() {
            let mut r = at.row_mut(j);
            r.slice_mut(s![..c.access_dim])
                .assign(&ndarray::aview1(row));
            r.slice_mut(s![c.access_dim..]).assign(&hl.row(l));
        }
        let ha = self.access_enc.forward(at.view());
        let (loop_mean, loop_max) = pool(&hl);
        let (acc_mean, acc_max) = pool(&ha);
        let mut parts: Vec<f32> = Vec::new();
        for p in [&loop_mean, &loop_max, &acc_mean, &acc_max] {
            parts.extend(p.iter());
        }
        parts.push((x.loops.len() as f32).ln_1p());
        parts.push((x.accesses.len() as f32).ln_1p());
        let counters: Vec<f32> = x
            .counters
            .iter()
            .zip(&x.counter_mask)
            .map(|(v, m)| v * m)
            .chain(x.counter_mask.iter().copied())
            .collect();
        for (enc, input) in [
            (&self.global_enc, &x.global),
            (&self.machine_enc, &x.machine),
            (&self.counter_enc, &counters),
        ] {
            if let Some(enc) = enc {
                parts.extend(enc.forward_row(input).iter());
            }
        }
        let mut z = self.merge.forward_row(&parts);
        if c.normalize_embedding {
            let sq: f32 = z.iter().map(|v| v * v).sum();
            z /= sq.max(1e-12).sqrt();
        }
        let y = self.head.forward(z.view());
        let mut embedding = z.index_axis(Axis(0), 0).to_vec();
        // `validate` holds `anchored` to a network with the wide part.
        if let Some(w) = c.anchored {
            embedding.iter_mut().for_each(|v| *v *= w);
        }
        if let Some(scale) = &self.wide {
            let wide = wide_part(x, c);
            embedding.extend(wide.iter().zip(scale).map(|(v, w)| v * w));
        }
        (embedding, y.index_axis(Axis(0), 0).to_vec())
    }

    /// Forward passes over validated inputs.
    fn run(&self, inputs: &[&NestInput]) -> Outputs {
        let (embeddings, predictions) = inputs.iter().map(|x| self.forward(x)).unzip();
        Outputs {
            embeddings,
            predictions,
        }
    }

    /// Embeddings and predictions of `inputs`, in order.
    pub fn embed_and_predict(&self, inputs: &[NestInput]) -> Result<Outputs> {
        validate_inputs(inputs, &self.config)?;
        let refs: Vec<&NestInput> = inputs.iter().collect();
        Ok(self.run(&refs))
    }

    /// One embedding per nest, in order: `embed_dim` learned values (unit length when
    /// [`ModelConfig::normalize_embedding`]), then the wide part when
    /// [`ModelConfig::wide`] ([`ModelConfig::output_dim`] values in all).
    pub fn embed(&self, inputs: &[NestInput]) -> Result<Vec<Vec<f32>>> {
        Ok(self.embed_and_predict(inputs)?.embeddings)
    }

    /// Predicted normalized targets (`target_dim` values) per nest, in order.
    pub fn predict(&self, inputs: &[NestInput]) -> Result<Vec<Vec<f32>>> {
        Ok(self.embed_and_predict(inputs)?.predictions)
    }

    /// Mean absolute error of the predictions, per target (`target_dim` values, in the
    /// normalized units of the targets). Refuses an empty slice.
    pub fn evaluate(&self, examples: &[Example]) -> Result<Vec<f32>> {
        if examples.is_empty() {
            return Err(Error::NoExamples);
        }
        validate_examples(examples, &self.config)?;
        let inputs: Vec<&NestInput> = examples.iter().map(|e| &e.input).collect();
        let predictions = self.run(&inputs).predictions;
        Ok(mean_abs_error(
            &predictions,
            examples,
            self.config.target_dim,
        ))
    }
}

/// Per-target mean absolute error of `predictions` against the examples' targets.
pub(crate) fn mean_abs_error(
    predictions: &[Vec<f32>],
    examples: &[Example],
    target_dim: usize,
) -> Vec<f32> {
    let mut sums = vec![0f64; target_dim];
    for (p, e) in predictions.iter().zip(examples) {
        for (s, (a, b)) in sums.iter_mut().zip(p.iter().zip(&e.targets)) {
            *s += (a - b).abs() as f64;
        }
    }
    sums.into_iter()
        .map(|s| (s / examples.len() as f64) as f32)
        .collect()
}
