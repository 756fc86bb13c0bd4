//! Training: [`train`] (the `train` feature).

use std::time::Instant;

use tch::nn::OptimizerConfig;
use tch::{Kind, Tensor};

use crate::checkpoint::{Checkpoint, CheckpointMeta, FORMAT_VERSION};
use crate::config::{FeatureInfo, ModelConfig, TrainOptions};
use crate::error::{Error, Result};
use crate::input::{data_hash, validate_examples, Example, NestInput};
use crate::model::{single_thread, Model};
use crate::net::Batch;
use crate::rng::SplitMix64;

/// Trains a fresh network on `examples` and returns the checkpoint (not yet saved).
///
/// Adam on the mean L1 loss between predictions and `targets`, plus, when
/// `options.ranking_weight > 0`, `ranking_weight` times the mean hinge
/// `max(0, margin + pred_better - pred_worse)` over the pairs of examples of one batch
/// that share a [`Rank::group`](crate::Rank) (column `options.ranking_target`), plus,
/// when `options.contrastive_weight > 0`, that weight times the mean hinge
/// `max(0, margin + |e - e_near| - |e - e_far|)` over the [`Example::nearer`] pairs of the
/// batch's examples (the embeddings of every example a pair names are computed in the
/// same step, so pairs need not fall into one batch).
///
/// Repeatable: the initial weights and the data order (a seeded shuffle per epoch) come
/// from `options.seed` through this crate's own generator, and libtorch runs with one
/// thread, so the same examples, configuration and options give bit-identical weights
/// (and checkpoint files) on the same machine and libtorch build.
///
/// `features` is stored verbatim in the checkpoint. Fails on invalid configuration or
/// options, an empty or invalid example set, or a diverging loss.
pub fn train(
    examples: &[Example],
    config: &ModelConfig,
    options: &TrainOptions,
    features: FeatureInfo,
) -> Result<Checkpoint> {
    config.validate()?;
    options.validate(config)?;
    if examples.is_empty() {
        return Err(Error::NoExamples);
    }
    validate_examples(examples, config)?;
    let start = Instant::now();
    single_thread();
    let model = Model::new(config.clone(), options.seed)?;
    let mut opt = tch::nn::Adam::default().build(&model.vs, options.lr)?;
    let mut order: Vec<usize> = (0..examples.len()).collect();
    let mut rng = SplitMix64::derive(options.seed, "order");
    let mut losses = Vec::with_capacity(options.epochs);
    for epoch in 0..options.epochs {
        rng.shuffle(&mut order);
        let mut total = 0f64;
        for chunk in order.chunks(options.batch_size) {
            let inputs: Vec<&NestInput> = chunk.iter().map(|&i| &examples[i].input).collect();
            let batch = Batch::new(&inputs, config)?;
            let flat: Vec<f32> = chunk
                .iter()
                .flat_map(|&i| examples[i].targets.iter().copied())
                .collect();
            let targets = Tensor::f_from_slice(&flat)?
                .f_reshape([chunk.len() as i64, config.target_dim as i64])?;
            let (_, pred) = model.net.forward(&batch)?;
            let l1 = pred.f_sub(&targets)?.f_abs()?.f_mean(Kind::Float)?;
            let mut loss = l1.shallow_clone();
            if options.ranking_weight > 0.0 {
                if let Some(rank) = ranking_loss(&pred, chunk, examples, options)? {
                    loss = loss.f_add(&rank.f_mul_scalar(options.ranking_weight)?)?;
                }
            }
            if options.contrastive_weight > 0.0 {
                if let Some(c) = contrastive_loss(&model, chunk, examples, config, options)? {
                    loss = loss.f_add(&c.f_mul_scalar(options.contrastive_weight)?)?;
                }
            }
            opt.backward_step(&loss);
            total += l1.f_double_value(&[])? * chunk.len() as f64;
        }
        let mean = total / examples.len() as f64;
        if !mean.is_finite() {
            return Err(Error::Diverged { epoch, loss: mean });
        }
        losses.push(mean as f32);
    }
    let train_mae = model.evaluate(examples)?;
    let network = model.to_network()?;
    let weights = crate::weights::encode(network.params());
    let meta = CheckpointMeta {
        format_version: FORMAT_VERSION,
        config: config.clone(),
        feature_version: features.feature_version,
        normalization: features.normalization,
        seed: options.seed,
        epochs: options.epochs,
        options: options.clone(),
        data_hash: data_hash(examples),
        n_examples: examples.len(),
        final_loss: *losses.last().unwrap_or(&f32::NAN),
        losses,
        train_mae,
        weights_hash: blake3::hash(&weights).to_hex().to_string(),
    };
    Ok(Checkpoint::from_parts(
        meta,
        network,
        Some(start.elapsed().as_secs_f64()),
    ))
}

/// Mean hinge over the ordered pairs (better, worse) of one batch that share a group.
fn ranking_loss(
    pred: &Tensor,
    chunk: &[usize],
    examples: &[Example],
    options: &TrainOptions,
) -> Result<Option<Tensor>> {
    let (mut better, mut worse) = (Vec::new(), Vec::new());
    for (a, &i) in chunk.iter().enumerate() {
        for (b, &j) in chunk.iter().enumerate() {
            if let (Some(ri), Some(rj)) = (&examples[i].rank, &examples[j].rank) {
                if ri.group == rj.group && ri.score < rj.score {
                    better.push(a as i64);
                    worse.push(b as i64);
                }
            }
        }
    }
    if better.is_empty() {
        return Ok(None);
    }
    let p = pred.f_select(1, options.ranking_target as i64)?;
    let pb = p.f_index_select(0, &Tensor::f_from_slice(&better)?)?;
    let pw = p.f_index_select(0, &Tensor::f_from_slice(&worse)?)?;
    let hinge = pb
        .f_sub(&pw)?
        .f_add_scalar(options.ranking_margin)?
        .f_relu()?
        .f_mean(Kind::Float)?;
    Ok(Some(hinge))
}

/// Mean hinge over the contrastive pairs of the chunk's examples. The anchors, their
/// near and their far examples are embedded together in one forward pass.
fn contrastive_loss(
    model: &Model,
    chunk: &[usize],
    examples: &[Example],
    config: &ModelConfig,
    options: &TrainOptions,
) -> Result<Option<Tensor>> {
    let mut slot: std::collections::BTreeMap<usize, i64> = Default::default();
    let mut at = |i: usize| -> i64 {
        let next = slot.len() as i64;
        *slot.entry(i).or_insert(next)
    };
    let (mut anchor, mut near, mut far) = (Vec::new(), Vec::new(), Vec::new());
    for &i in chunk {
        for &(n, f) in &examples[i].nearer {
            anchor.push(at(i));
            near.push(at(n));
            far.push(at(f));
        }
    }
    if anchor.is_empty() {
        return Ok(None);
    }
    let mut order = vec![0usize; slot.len()];
    for (&i, &k) in &slot {
        order[k as usize] = i;
    }
    let inputs: Vec<&NestInput> = order.iter().map(|&i| &examples[i].input).collect();
    let (emb, _) = model.net.forward(&Batch::new(&inputs, config)?)?;
    let pick =
        |v: &[i64]| -> Result<Tensor> { Ok(emb.f_index_select(0, &Tensor::f_from_slice(v)?)?) };
    let (a, n, f) = (pick(&anchor)?, pick(&near)?, pick(&far)?);
    let dist = |x: &Tensor| -> Result<Tensor> {
        Ok(a.f_sub(x)?
            .f_square()?
            .f_sum_dim_intlist(1, false, Kind::Float)?
            .f_add_scalar(1e-9)?
            .f_sqrt()?)
    };
    let hinge = dist(&n)?
        .f_sub(&dist(&f)?)?
        .f_add_scalar(options.contrastive_margin)?
        .f_relu()?
        .f_mean(Kind::Float)?;
    Ok(Some(hinge))
}
