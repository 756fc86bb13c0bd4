//! Model inputs: one loop nest ([`NestInput`]) and one training example ([`Example`]).

use serde::{Deserialize, Serialize};

use crate::config::ModelConfig;
use crate::error::{Error, Result};

/// One loop nest as the model sees it. All values are already normalized by the caller
/// (the feature crate owns normalization); this crate only checks shapes, indices and
/// finiteness.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NestInput {
    /// One row per loop, each exactly [`ModelConfig::loop_dim`] wide.
    pub loops: Vec<Vec<f32>>,
    /// Tree edges: `loop_parent[i]` is the index (into `loops`) of the loop that directly
    /// encloses loop `i`, `None` for an outermost loop. Same length as `loops`.
    pub loop_parent: Vec<Option<usize>>,
    /// One row per array access, each exactly [`ModelConfig::access_dim`] wide.
    pub accesses: Vec<Vec<f32>>,
    /// `access_loop[j]` is the index of the innermost loop enclosing access `j`. Same
    /// length as `accesses`.
    pub access_loop: Vec<usize>,
    /// Nest-level static features (op histogram, dtypes, ...), [`ModelConfig::global_dim`].
    pub global: Vec<f32>,
    /// Machine features, [`ModelConfig::machine_dim`].
    pub machine: Vec<f32>,
    /// Performance counters / profiling features, [`ModelConfig::counter_dim`]. Entries
    /// whose mask is 0 are ignored (multiplied by the mask).
    pub counters: Vec<f32>,
    /// 1 = counter value available (measured or modelled), 0 = missing;
    /// [`ModelConfig::counter_dim`] entries, each 0 or 1.
    pub counter_mask: Vec<f32>,
}

/// Pairwise-ranking information of one example: examples with the same `group` (e.g.
/// variants of one nest on one machine) are compared by `score`, lower is better (e.g.
/// measured runtime). Only used when [`TrainOptions::ranking_weight`](crate::TrainOptions)
/// is non-zero.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rank {
    /// Group id; only examples of the same group are compared.
    pub group: u64,
    /// Lower is better.
    pub score: f32,
}

/// One training example: a nest and its normalized performance targets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// The nest.
    pub input: NestInput,
    /// Normalized performance targets, [`ModelConfig::target_dim`] entries.
    pub targets: Vec<f32>,
    /// Optional ranking group and score for the pairwise ranking term.
    #[serde(default)]
    pub rank: Option<Rank>,
    /// Pairs (near, far) of indices into the same example list for the contrastive
    /// term: this example's embedding should be nearer the first than the second by
    /// [`TrainOptions::contrastive_margin`](crate::TrainOptions). Used only when
    /// [`TrainOptions::contrastive_weight`](crate::TrainOptions) is non-zero.
    #[serde(default)]
    pub nearer: Vec<(usize, usize)>,
}

fn check_row(what: &str, row: &[f32], width: usize) -> std::result::Result<(), String> {
    if row.len() != width {
        return Err(format!("{what} has {} values, expected {width}", row.len()));
    }
    if let Some(k) = row.iter().position(|v| !v.is_finite()) {
        return Err(format!("{what}[{k}] is not finite ({})", row[k]));
    }
    Ok(())
}

impl NestInput {
    /// Checks this nest against `config`: row widths, equal lengths of the paired vectors,
    /// parent and loop indices in range, no loop its own ancestor, finite values, mask
    /// entries 0 or 1.
    pub fn validate(&self, config: &ModelConfig) -> std::result::Result<(), String> {
        let n = self.loops.len();
        if self.loop_parent.len() != n {
            return Err(format!(
                "{} loops but {} loop_parent entries",
                n,
                self.loop_parent.len()
            ));
        }
        for (i, row) in self.loops.iter().enumerate() {
            check_row(&format!("loop {i}"), row, config.loop_dim)?;
        }
        for (i, p) in self.loop_parent.iter().enumerate() {
            if let Some(p) = *p {
                if p >= n {
                    return Err(format!("loop {i} has parent {p}, but there are {n} loops"));
                }
            }
        }
        // Every chain of parents must end at a root within n steps (no cycles).
        for i in 0..n {
            let mut cur = i;
            let mut steps = 0;
            while let Some(p) = self.loop_parent[cur] {
                cur = p;
                steps += 1;
                if steps > n {
                    return Err(format!(
                        "loop {i} is its own ancestor (cycle in loop_parent)"
                    ));
                }
            }
        }
        if self.access_loop.len() != self.accesses.len() {
            return Err(format!(
                "{} accesses but {} access_loop entries",
                self.accesses.len(),
                self.access_loop.len()
            ));
        }
        for (j, row) in self.accesses.iter().enumerate() {
            check_row(&format!("access {j}"), row, config.access_dim)?;
        }
        for (j, &l) in self.access_loop.iter().enumerate() {
            if l >= n {
                return Err(format!(
                    "access {j} is in loop {l}, but there are {n} loops"
                ));
            }
        }
        check_row("global", &self.global, config.global_dim)?;
        check_row("machine", &self.machine, config.machine_dim)?;
        check_row("counters", &self.counters, config.counter_dim)?;
        check_row("counter_mask", &self.counter_mask, config.counter_dim)?;
        if let Some(k) = self.counter_mask.iter().position(|&m| m != 0.0 && m != 1.0) {
            return Err(format!(
                "counter_mask[{k}] is {}, expected 0 or 1",
                self.counter_mask[k]
            ));
        }
        Ok(())
    }
}

impl Example {
    /// Checks the nest (see [`NestInput::validate`]) and the targets.
    pub fn validate(&self, config: &ModelConfig) -> std::result::Result<(), String> {
        self.input.validate(config)?;
        check_row("targets", &self.targets, config.target_dim)?;
        if let Some(r) = &self.rank {
            if !r.score.is_finite() {
                return Err(format!("rank score is not finite ({})", r.score));
            }
        }
        Ok(())
    }
}

pub(crate) fn validate_inputs(inputs: &[NestInput], config: &ModelConfig) -> Result<()> {
    for (index, x) in inputs.iter().enumerate() {
        x.validate(config)
            .map_err(|reason| Error::Input { index, reason })?;
    }
    Ok(())
}

pub(crate) fn validate_examples(examples: &[Example], config: &ModelConfig) -> Result<()> {
    for (index, x) in examples.iter().enumerate() {
        x.validate(config)
            .map_err(|reason| Error::Input { index, reason })?;
        if let Some(&(a, b)) = x
            .nearer
            .iter()
            .find(|(a, b)| *a >= examples.len() || *b >= examples.len())
        {
            return Err(Error::Input {
                index,
                reason: format!(
                    "contrastive pair ({a}, {b}) is out of range ({} examples)",
                    examples.len()
                ),
            });
        }
    }
    Ok(())
}

/// Canonical byte encoding of examples, hashed into the checkpoint's `data_hash`.
struct Canon(blake3::Hasher);

impl Canon {
    fn u64(&mut self, v: u64) {
        self.0.update(&v.to_le_bytes());
    }
    fn f32s(&mut self, v: &[f32]) {
        self.u64(v.len() as u64);
        for x in v {
            self.0.update(&x.to_bits().to_le_bytes());
        }
    }
    fn rows(&mut self, v: &[Vec<f32>]) {
        self.u64(v.len() as u64);
        for r in v {
            self.f32s(r);
        }
    }
}

/// blake3 (hex) of the canonical little-endian encoding of `examples`, in order: every
/// length, every `f32` by its bit pattern, `None` parents as `u64::MAX`, the ranking
/// information. Two example sets hash equal iff they are bit-for-bit the same sequence.
pub fn data_hash(examples: &[Example]) -> String {
    let mut c = Canon(blake3::Hasher::new());
    c.0.update(b"tune-models/examples/v1\0");
    c.u64(examples.len() as u64);
    for e in examples {
        let x = &e.input;
        c.rows(&x.loops);
        c.u64(x.loop_parent.len() as u64);
        for p in &x.loop_parent {
            c.u64(p.map_or(u64::MAX, |p| p as u64));
        }
        c.rows(&x.accesses);
        c.u64(x.access_loop.len() as u64);
        for &l in &x.access_loop {
            c.u64(l as u64);
        }
        c.f32s(&x.global);
        c.f32s(&x.machine);
        c.f32s(&x.counters);
        c.f32s(&x.counter_mask);
        c.f32s(&e.targets);
        match &e.rank {
            None => c.u64(0),
            Some(r) => {
                c.u64(1);
                c.u64(r.group);
                c.f32s(&[r.score]);
            }
        }
    }
    // Contrastive pairs, only when there are any (hashes of examples without them are
    // those of the layout before the contrastive term).
    if examples.iter().any(|e| !e.nearer.is_empty()) {
        c.0.update(b"nearer\0");
        for e in examples {
            c.u64(e.nearer.len() as u64);
            for &(a, b) in &e.nearer {
                c.u64(a as u64);
                c.u64(b as u64);
            }
        }
    }
    c.0.finalize().to_hex().to_string()
}
