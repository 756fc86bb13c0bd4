//! The network: a graph encoder over the loop tree and the accesses, encoders for the
//! global, machine and counter features, a merge MLP producing the embedding, and a
//! prediction head.
//!
//! Variable-size nests are batched by concatenating all loops (and all accesses) of the
//! batch into one matrix and using index tensors for the tree edges and for the nest each
//! row belongs to; aggregation is scatter-sum (`index_add`) and scatter-max
//! (`scatter_reduce(amax)`). No padding is involved, so a nest's result does not depend on
//! the other nests of its batch (up to floating-point rounding in matrix products).

use tch::{nn, Device, Kind, Tensor};

use crate::config::ModelConfig;
use crate::error::Result;
use crate::input::NestInput;
use crate::layout::{layout, relu_last, WIDE_SCALE};
use crate::rng::SplitMix64;

const CPU: (Kind, Device) = (Kind::Float, Device::Cpu);

/// An affine layer `x W^T + b`, `W: [out, in]`.
pub(crate) struct Linear {
    w: Tensor,
    b: Tensor,
}

impl Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(x.f_linear(&self.w, Some(&self.b))?)
    }
}

/// Linear layers with ReLU between them (and after the last one if `relu_last`).
pub(crate) struct Mlp {
    layers: Vec<Linear>,
    relu_last: bool,
}

impl Mlp {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut h = x.shallow_clone();
        let n = self.layers.len();
        for (i, l) in self.layers.iter().enumerate() {
            h = l.forward(&h)?;
            if i + 1 < n || self.relu_last {
                h = h.f_relu()?;
            }
        }
        Ok(h)
    }
}

/// Creates the parameters, in a fixed order, with values drawn from our own seeded
/// generator (PyTorch's default `Linear` init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))).
struct Builder<'a> {
    root: nn::Path<'a>,
    rng: SplitMix64,
    params: Vec<(String, Tensor)>,
}

impl Builder<'_> {
    /// A parameter of `dims` drawn from U(-bound, bound).
    fn param(&mut self, name: String, dims: &[i64], bound: f64) -> Result<Tensor> {
        let count = dims.iter().product::<i64>() as usize;
        let values: Vec<f32> = (0..count)
            .map(|_| self.rng.uniform(-bound, bound))
            .collect();
        self.var(name, dims, &values)
    }

    /// A parameter of `dims` with every value `value`.
    fn constant(&mut self, name: String, dims: &[i64], value: f32) -> Result<Tensor> {
        let count = dims.iter().product::<i64>() as usize;
        self.var(name, dims, &vec![value; count])
    }

    /// Registers a parameter of `dims` holding `values`.
    fn var(&mut self, name: String, dims: &[i64], values: &[f32]) -> Result<Tensor> {
        let init = Tensor::f_from_slice(values)?.f_reshape(dims)?;
        // The VarStore does not allow '.' in names; our own list keeps the dotted name.
        let var = self.root.f_var_copy(&name.replace('.', "__"), &init)?;
        self.params.push((name, var.shallow_clone()));
        Ok(var)
    }

    fn linear(&mut self, name: &str, fan_in: usize, fan_out: usize) -> Result<Linear> {
        let bound = 1.0 / (fan_in.max(1) as f64).sqrt();
        let w = self.param(
            format!("{name}.weight"),
            &[fan_out as i64, fan_in as i64],
            bound,
        )?;
        let b = self.param(format!("{name}.bias"), &[fan_out as i64], bound)?;
        Ok(Linear { w, b })
    }

    fn mlp(&mut self, name: &str, dims: &[usize], relu_last: bool) -> Result<Mlp> {
        let layers = dims
            .windows(2)
            .enumerate()
            .map(|(i, d)| self.linear(&format!("{name}.{i}"), d[0], d[1]))
            .collect::<Result<Vec<_>>>()?;
        Ok(Mlp { layers, relu_last })
    }
}

/// The whole network.
pub(crate) struct Net {
    loop_enc: Mlp,
    rounds: Vec<Mlp>,
    access_enc: Mlp,
    global_enc: Option<Mlp>,
    machine_enc: Option<Mlp>,
    counter_enc: Option<Mlp>,
    merge: Mlp,
    head: Mlp,
    /// Per-column weights of the wide part (`ModelConfig::wide`).
    wide: Option<Tensor>,
    normalize: bool,
    /// The learned part's weight in the returned embedding (`ModelConfig::anchored`).
    learned_weight: Option<f64>,
    hidden: i64,
    /// Every parameter with its dotted name, in creation order.
    pub params: Vec<(String, Tensor)>,
}

impl Net {
    /// Builds the network for `config` inside `vs`, initialized from `seed`.
    pub fn new(vs: &nn::VarStore, config: &ModelConfig, seed: u64) -> Result<Net> {
        let mut b = Builder {
            root: vs.root(),
            rng: SplitMix64::derive(seed, "init"),
            params: Vec::new(),
        };
        let mut modules = std::collections::BTreeMap::new();
        for (name, dims) in layout(config) {
            let mlp = b.mlp(&name, &dims, relu_last(&name))?;
            modules.insert(name, mlp);
        }
        let mut take = |name: &str| modules.remove(name);
        let missing = || crate::error::Error::Torch("internal: module missing".into());
        let loop_enc = take("loop_enc").ok_or_else(missing)?;
        let rounds = (0..config.message_rounds)
            .map(|r| take(&format!("message.{r}")).ok_or_else(missing))
            .collect::<Result<Vec<_>>>()?;
        let access_enc = take("access_enc").ok_or_else(missing)?;
        let global_enc = take("global_enc");
        let machine_enc = take("machine_enc");
        let counter_enc = take("counter_enc");
        let merge = take("merge").ok_or_else(missing)?;
        let head = take("head").ok_or_else(missing)?;
        let wide = if config.wide {
            let width = config.wide_dim();
            let init = 1.0 / (width.max(1) as f32).sqrt();
            let scale = b.constant(WIDE_SCALE.to_string(), &[width as i64], init)?;
            // Anchored: the weights keep their initial value. The optimizer skips a
            // parameter without a gradient.
            Some(if config.anchored.is_some() {
                scale.set_requires_grad(false)
            } else {
                scale
            })
        } else {
            None
        };
        Ok(Net {
            loop_enc,
            rounds,
            access_enc,
            global_enc,
            machine_enc,
            counter_enc,
            merge,
            head,
            wide,
            normalize: config.normalize_embedding,
            learned_weight: config.anchored.map(f64::from),
            hidden: config.hidden as i64,
            params: b.params,
        })
    }

    /// Embeddings `[n, embed_dim]` and predictions `[n, target_dim]` of a batch.
    pub fn forward(&self, b: &Batch) -> Result<(Tensor, Tensor)> {
        let h = self.hidden;
        // Loop tree: per-loop MLP, then message passing along parent edges.
        let mut hl = self.loop_enc.forward(&b.loops)?;
        for lin in &self.rounds {
            let zeros = hl.f_zeros_like()?;
            // child -> parent: every loop receives the sum of its children's states.
            let up = zeros.f_index_add(0, &b.edge_parent, &hl.f_index_select(0, &b.edge_child)?)?;
            // parent -> child: every loop receives its parent's state (zero for roots).
            let down =
                zeros.f_index_add(0, &b.edge_child, &hl.f_index_select(0, &b.edge_parent)?)?;
            let msg = lin.forward(&Tensor::f_cat(&[&hl, &up, &down], 1)?)?;
            hl = hl.f_add(&msg)?;
        }
        // Accesses: [access row || hidden state of its loop].
        let at_loop = hl.f_index_select(0, &b.access_loop)?;
        let ha = self
            .access_enc
            .forward(&Tensor::f_cat(&[&b.accesses, &at_loop], 1)?)?;
        let (loop_mean, loop_max) = pool(&hl, &b.loop_nest, &b.loop_count, b.n, h)?;
        let (acc_mean, acc_max) = pool(&ha, &b.access_nest, &b.access_count, b.n, h)?;
        let mut parts = vec![
            loop_mean,
            loop_max,
            acc_mean,
            acc_max,
            b.loop_count.f_log1p()?,
            b.access_count.f_log1p()?,
        ];
        for (enc, x) in [
            (&self.global_enc, &b.global),
            (&self.machine_enc, &b.machine),
            (&self.counter_enc, &b.counters),
        ] {
            if let (Some(enc), Some(x)) = (enc, x) {
                parts.push(enc.forward(x)?);
            }
        }
        let mut z = self.merge.forward(&Tensor::f_cat(&parts, 1)?)?;
        if self.normalize {
            let norm = z
                .f_square()?
                .f_sum_dim_intlist(1, true, Kind::Float)?
                .f_clamp_min(1e-12)?
                .f_sqrt()?;
            z = z.f_div(&norm)?;
        }
        let y = self.head.forward(&z)?;
        if let Some(scale) = &self.wide {
            if let Some(w) = self.learned_weight {
                z = z.f_mul_scalar(w)?;
            }
            z = Tensor::f_cat(&[&z, &self.wide_part(b)?.f_mul(scale)?], 1)?;
        }
        Ok((z, y))
    }

    /// The inputs pooled for the wide part, `[n, wide_dim]`: mean and max of the loop
    /// rows, of the access rows, the global row, the counters (times their mask), the
    /// machine row.
    fn wide_part(&self, b: &Batch) -> Result<Tensor> {
        let mut parts = Vec::new();
        for (x, seg, count) in [
            (&b.loops, &b.loop_nest, &b.loop_count),
            (&b.accesses, &b.access_nest, &b.access_count),
        ] {
            let width = x.size()[1];
            if width > 0 {
                let (mean, max) = pool(x, seg, count, b.n, width)?;
                parts.push(mean);
                parts.push(max);
            }
        }
        if let Some(g) = &b.global {
            parts.push(g.shallow_clone());
        }
        if let Some(c) = &b.counters {
            // [counters * mask ‖ mask]: the first half.
            let half = c.size()[1] / 2;
            parts.push(c.f_narrow(1, 0, half)?);
        }
        if let Some(m) = &b.machine {
            parts.push(m.shallow_clone());
        }
        Ok(Tensor::f_cat(&parts, 1)?)
    }
}

/// Mean and max of the rows of `x` per segment (`seg[i]` = nest of row `i`); empty
/// segments give zeros.
fn pool(x: &Tensor, seg: &Tensor, count: &Tensor, n: i64, h: i64) -> Result<(Tensor, Tensor)> {
    let zeros = Tensor::f_zeros([n, h], CPU)?;
    let mean = zeros
        .f_index_add(0, seg, x)?
        .f_div(&count.f_clamp_min(1.0)?)?;
    let rows = x.size()[0];
    let idx = seg
        .f_unsqueeze(1)?
        .f_expand([rows, h], false)?
        .f_contiguous()?;
    // `scatter_reduce.two` (tch names it `internal_scatter_reduce`); `index_reduce`
    // would do the same without the expanded index but prints a "beta" warning.
    let max = zeros.f_internal_scatter_reduce(0, &idx, x, "amax", false)?;
    Ok((mean, max))
}

/// A batch of nests as tensors (see the module documentation).
pub(crate) struct Batch {
    n: i64,
    loops: Tensor,
    loop_nest: Tensor,
    edge_child: Tensor,
    edge_parent: Tensor,
    accesses: Tensor,
    access_loop: Tensor,
    access_nest: Tensor,
    loop_count: Tensor,
    access_count: Tensor,
    global: Option<Tensor>,
    machine: Option<Tensor>,
    counters: Option<Tensor>,
}

fn matrix(data: &[f32], rows: usize, cols: usize) -> Result<Tensor> {
    Ok(Tensor::f_from_slice(data)?.f_reshape([rows as i64, cols as i64])?)
}

fn index(data: &[i64]) -> Result<Tensor> {
    Ok(Tensor::f_from_slice(data)?)
}

impl Batch {
    /// Builds a batch from validated inputs.
    pub fn new(inputs: &[&NestInput], config: &ModelConfig) -> Result<Batch> {
        let n = inputs.len();
        let mut loops = Vec::new();
        let mut loop_nest = Vec::new();
        let (mut edge_child, mut edge_parent) = (Vec::new(), Vec::new());
        let mut accesses = Vec::new();
        let (mut access_loop, mut access_nest) = (Vec::new(), Vec::new());
        let (mut loop_count, mut access_count) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut global = Vec::with_capacity(n * config.global_dim);
        let mut machine = Vec::with_capacity(n * config.machine_dim);
        let mut counters = Vec::with_capacity(n * 2 * config.counter_dim);
        let mut loop_base = 0i64;
        for (k, x) in inputs.iter().enumerate() {
            for (i, row) in x.loops.iter().enumerate() {
                loops.extend_from_slice(row);
                loop_nest.push(k as i64);
                if let Some(p) = x.loop_parent[i] {
                    edge_child.push(loop_base + i as i64);
                    edge_parent.push(loop_base + p as i64);
                }
            }
            for (row, &l) in x.accesses.iter().zip(&x.access_loop) {
                accesses.extend_from_slice(row);
                access_loop.push(loop_base + l as i64);
                access_nest.push(k as i64);
            }
            loop_base += x.loops.len() as i64;
            loop_count.push(x.loops.len() as f32);
            access_count.push(x.accesses.len() as f32);
            global.extend_from_slice(&x.global);
            machine.extend_from_slice(&x.machine);
            counters.extend(x.counters.iter().zip(&x.counter_mask).map(|(c, m)| c * m));
            counters.extend_from_slice(&x.counter_mask);
        }
        let optional = |data: &[f32], dim: usize| -> Result<Option<Tensor>> {
            if dim == 0 {
                Ok(None)
            } else {
                Ok(Some(matrix(data, n, dim)?))
            }
        };
        Ok(Batch {
            n: n as i64,
            loops: matrix(&loops, loop_nest.len(), config.loop_dim)?,
            loop_nest: index(&loop_nest)?,
            edge_child: index(&edge_child)?,
            edge_parent: index(&edge_parent)?,
            accesses: matrix(&accesses, access_nest.len(), config.access_dim)?,
            access_loop: index(&access_loop)?,
            access_nest: index(&access_nest)?,
            loop_count: matrix(&loop_count, n, 1)?,
            access_count: matrix(&access_count, n, 1)?,
            global: optional(&global, config.global_dim)?,
            machine: optional(&machine, config.machine_dim)?,
            counters: optional(&counters, 2 * config.counter_dim)?,
        })
    }
}

/// Copies a 2-D float tensor out as rows.
pub(crate) fn rows(t: &Tensor) -> Result<Vec<Vec<f32>>> {
    let size = t.size();
    let (r, c) = (size[0] as usize, size[1] as usize);
    let mut flat = vec![0f32; r * c];
    t.f_contiguous()?.f_copy_data(&mut flat, r * c)?;
    if c == 0 {
        return Ok(vec![Vec::new(); r]);
    }
    Ok(flat.chunks(c).map(|x| x.to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_shapes_match_the_built_network() {
        let mut configs = vec![
            ModelConfig::new(4, 4, 3, 2, 3, 2),
            ModelConfig::new(1, 0, 0, 0, 0, 1),
        ];
        let mut c = ModelConfig::new(5, 3, 0, 7, 0, 4);
        c.hidden = 8;
        c.embed_dim = 3;
        c.message_rounds = 0;
        configs.push(c);
        for config in configs {
            let vs = nn::VarStore::new(Device::Cpu);
            let net = Net::new(&vs, &config, 1).unwrap();
            let built: Vec<(String, Vec<i64>)> = net
                .params
                .iter()
                .map(|(n, t)| (n.clone(), t.size()))
                .collect();
            assert_eq!(built, crate::layout::param_shapes(&config));
        }
    }
}
