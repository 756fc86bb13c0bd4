//! Synthetic nests for the tests.
#![allow(dead_code)]

use models::{Example, ModelConfig, NestInput, Rank};

/// Small deterministic generator for test data.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub fn unit(&mut self) -> f32 {
        (self.next() % 1_000_000) as f32 / 1_000_000.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

pub fn config() -> ModelConfig {
    ModelConfig::new(4, 4, 3, 2, 3, 2)
}

/// A random nest: 1..=5 loops in a random tree, 0..=4 accesses with strides in
/// {0, 1, 2, 4}. Target 0 = sqrt(#loops × mean normalized stride), a nonlinear function
/// of the structure; target 1 = (max depth / 5)² + counter 0 when available.
pub fn example(rng: &mut Lcg, max_accesses: usize) -> Example {
    let n_loops = 1 + rng.below(5);
    let mut parent = vec![None];
    let mut depth = vec![1usize];
    for i in 1..n_loops {
        let p = rng.below(i);
        parent.push(Some(p));
        depth.push(depth[p] + 1);
    }
    let loops: Vec<Vec<f32>> = (0..n_loops)
        .map(|i| {
            vec![
                rng.unit(),
                rng.below(2) as f32,
                rng.below(2) as f32,
                depth[i] as f32 / 5.0,
            ]
        })
        .collect();
    let n_acc = rng.below(max_accesses + 1);
    let mut accesses = Vec::new();
    let mut access_loop = Vec::new();
    let mut stride_sum = 0.0;
    for _ in 0..n_acc {
        let stride = [0.0f32, 1.0, 2.0, 4.0][rng.below(4)] / 4.0;
        stride_sum += stride;
        accesses.push(vec![stride, rng.below(2) as f32, rng.unit(), rng.unit()]);
        access_loop.push(rng.below(n_loops));
    }
    let mean_stride = if n_acc == 0 {
        0.0
    } else {
        stride_sum / n_acc as f32
    };
    let counters = vec![rng.unit(), rng.unit(), rng.unit()];
    let counter_mask: Vec<f32> = (0..3).map(|_| rng.below(2) as f32).collect();
    let max_depth = *depth.iter().max().unwrap() as f32;
    let targets = vec![
        (n_loops as f32 * mean_stride).sqrt(),
        (max_depth / 5.0).powi(2) + counters[0] * counter_mask[0],
    ];
    let group = rng.below(4) as u64;
    Example {
        input: NestInput {
            loops,
            loop_parent: parent,
            accesses,
            access_loop,
            global: vec![rng.unit(), rng.unit(), rng.unit()],
            machine: vec![rng.unit(), rng.unit()],
            counters,
            counter_mask,
        },
        rank: Some(Rank {
            group,
            score: targets[0],
        }),
        targets,
        nearer: Vec::new(),
    }
}

pub fn examples(seed: u64, n: usize) -> Vec<Example> {
    let mut rng = Lcg(seed);
    (0..n).map(|_| example(&mut rng, 4)).collect()
}
