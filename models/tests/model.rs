//! Tests of the model crate: repeatability, batching, learning, checkpoints, refusals.

mod common;

use std::fs;

use common::{config, examples};
use models::{
    train, Checkpoint, Error, Example, FeatureInfo, Model, ModelConfig, NestInput, Network,
    Outputs, TrainOptions, META_FILE, WEIGHTS_FILE,
};

fn features() -> FeatureInfo {
    FeatureInfo {
        feature_version: 3,
        normalization: serde_json::json!({"loops": {"mean": [0.5, 0.1], "std": [1.0, 2.0]}}),
    }
}

fn quick(seed: u64) -> TrainOptions {
    TrainOptions {
        seed,
        epochs: 4,
        lr: 3e-3,
        batch_size: 16,
        ..TrainOptions::default()
    }
}

fn max_abs_diff(a: &[Vec<f32>], b: &[Vec<f32>]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| {
            assert_eq!(x.len(), y.len());
            x.iter().zip(y).map(|(p, q)| (p - q).abs())
        })
        .fold(0.0, f32::max)
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let data = examples(1, 48);
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    for (dir, seed) in dirs.iter().zip([5, 5, 6]) {
        train(&data, &config(), &quick(seed), features())
            .unwrap()
            .save(dir.path())
            .unwrap();
    }
    let read = |i: usize, f: &str| fs::read(dirs[i].path().join(f)).unwrap();
    assert_eq!(read(0, WEIGHTS_FILE), read(1, WEIGHTS_FILE));
    assert_eq!(read(0, META_FILE), read(1, META_FILE));
    assert_ne!(read(0, WEIGHTS_FILE), read(2, WEIGHTS_FILE));
    assert_ne!(read(0, META_FILE), read(2, META_FILE));
}

#[test]
fn batching_equals_one_by_one() {
    let mut data = examples(2, 40);
    // Edge cases: a nest with no accesses, a single loop, a wide flat tree.
    data[0].input.accesses.clear();
    data[0].input.access_loop.clear();
    data[1].input.loops.truncate(1);
    data[1].input.loop_parent.truncate(1);
    data[1].input.access_loop.iter_mut().for_each(|l| *l = 0);
    let inputs: Vec<NestInput> = data.iter().map(|e| e.input.clone()).collect();
    let trained = train(&data, &config(), &quick(1), features())
        .unwrap()
        .torch_model()
        .unwrap();
    let fresh = Model::new(config(), 9).unwrap();
    for model in [&trained, &fresh] {
        let all = model.embed_and_predict(&inputs).unwrap();
        let (emb, pred) = (all.embeddings, all.predictions);
        let mut emb1 = Vec::new();
        let mut pred1 = Vec::new();
        for x in &inputs {
            let one = model.embed_and_predict(std::slice::from_ref(x)).unwrap();
            emb1.extend(one.embeddings);
            pred1.extend(one.predictions);
        }
        assert!(
            max_abs_diff(&emb, &emb1) < 1e-5,
            "{}",
            max_abs_diff(&emb, &emb1)
        );
        assert!(max_abs_diff(&pred, &pred1) < 1e-5);
        // Reversed batch order gives the same per-nest results too.
        let rev: Vec<NestInput> = inputs.iter().rev().cloned().collect();
        let mut emb_rev = model.embed(&rev).unwrap();
        emb_rev.reverse();
        assert!(max_abs_diff(&emb, &emb_rev) < 1e-5);
        // Unit-length embeddings of the configured width.
        for e in &emb {
            assert_eq!(e.len(), model.config().embed_dim);
            let n: f32 = e.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((n - 1.0).abs() < 1e-4, "norm {n}");
        }
    }
}

#[test]
fn structure_matters() {
    // Same features except the tree shape: embeddings must differ.
    let data = examples(3, 1);
    let mut a = data[0].input.clone();
    a.loops = vec![vec![0.5, 1.0, 0.0, 0.2]; 3];
    a.loop_parent = vec![None, Some(0), Some(1)]; // chain
    a.access_loop = vec![2; a.accesses.len()];
    let mut b = a.clone();
    b.loop_parent = vec![None, Some(0), Some(0)]; // two children
    let model = Model::new(config(), 1).unwrap();
    let e = model.embed(&[a, b]).unwrap();
    assert!(max_abs_diff(&e[..1], &e[1..]) > 1e-4);
}

#[test]
fn training_learns_a_structural_target() {
    let train_set = examples(10, 240);
    let test_set = examples(11, 100);
    let options = TrainOptions {
        seed: 1,
        epochs: 60,
        lr: 3e-3,
        batch_size: 32,
        ..TrainOptions::default()
    };
    let ck = train(&train_set, &config(), &options, features()).unwrap();
    let losses = &ck.meta.losses;
    assert_eq!(losses.len(), 60);
    assert!(
        losses[59] < 0.5 * losses[0],
        "loss {} -> {}",
        losses[0],
        losses[59]
    );
    // Held-out error well below that of predicting the training mean.
    let mae = ck.network().evaluate(&test_set).unwrap();
    for (t, &err) in mae.iter().enumerate() {
        let mean = train_set.iter().map(|e| e.targets[t]).sum::<f32>() / train_set.len() as f32;
        let baseline = test_set
            .iter()
            .map(|e| (e.targets[t] - mean).abs())
            .sum::<f32>()
            / test_set.len() as f32;
        assert!(
            err < 0.5 * baseline,
            "target {t}: mae {err} vs baseline {baseline}"
        );
    }
}

#[test]
fn ranking_term_trains() {
    let data = examples(4, 64);
    let options = TrainOptions {
        ranking_weight: 1.0,
        ..quick(2)
    };
    let ck = train(&data, &config(), &options, features()).unwrap();
    assert!(ck.meta.final_loss.is_finite());
    let plain = train(&data, &config(), &quick(2), features()).unwrap();
    assert_ne!(ck.meta.weights_hash, plain.meta.weights_hash);
}

/// Share of (anchor, same group, other group) triples whose anchor embedding is nearer
/// the same-group example.
fn ordered_share(emb: &[Vec<f32>], group: impl Fn(usize) -> usize) -> f64 {
    let d = |a: &[f32], b: &[f32]| -> f32 { a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum() };
    let (mut good, mut all) = (0usize, 0usize);
    for a in 0..emb.len() {
        for n in (0..emb.len()).filter(|&n| n != a && group(n) == group(a)) {
            for f in (0..emb.len()).filter(|&f| group(f) != group(a)) {
                all += 1;
                good += (d(&emb[a], &emb[n]) < d(&emb[a], &emb[f])) as usize;
            }
        }
    }
    good as f64 / all as f64
}

#[test]
fn contrastive_term_pulls_pairs_together() {
    // Two groups that nothing in the targets tells apart (even and odd examples); the
    // contrastive pairs name three of each example's group and three of the other.
    let n = 40;
    let mut data = examples(7, n);
    for (i, x) in data.iter_mut().enumerate() {
        x.nearer = (1..=3)
            .flat_map(|k| (0..3).map(move |j| ((i + 2 * k) % n, (i + 2 * j + 1) % n)))
            .collect();
    }
    let options = TrainOptions {
        epochs: 60,
        contrastive_weight: 1.0,
        contrastive_margin: 0.3,
        ..quick(4)
    };
    let inputs: Vec<NestInput> = data.iter().map(|x| x.input.clone()).collect();
    let parity = |i: usize| i % 2;
    let with = train(&data, &config(), &options, features()).unwrap();
    let learned = ordered_share(&with.network().embed(&inputs).unwrap(), parity);
    let without = train(
        &data,
        &config(),
        &TrainOptions {
            contrastive_weight: 0.0,
            ..options.clone()
        },
        features(),
    )
    .unwrap();
    let plain = ordered_share(&without.network().embed(&inputs).unwrap(), parity);
    assert!(learned > 0.9, "with the term: {learned}");
    assert!(plain < 0.7, "without the term: {plain}");
    // Repeatable with the term too, and the pairs are part of the data hash.
    let again = train(&data, &config(), &options, features()).unwrap();
    assert_eq!(again.meta.weights_hash, with.meta.weights_hash);
    let mut unpaired = data.clone();
    unpaired.iter_mut().for_each(|x| x.nearer.clear());
    assert_ne!(models::data_hash(&unpaired), with.meta.data_hash);
    // A pair out of range is refused.
    data[3].nearer.push((n, 0));
    let e = train(&data, &config(), &options, features()).unwrap_err();
    assert!(e.to_string().contains("out of range"), "{e}");
}

#[test]
fn save_load_round_trip() {
    let data = examples(5, 48);
    let ck = train(&data, &config(), &quick(3), features()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    ck.save(dir.path()).unwrap();
    let back = Checkpoint::load(dir.path()).unwrap();
    assert_eq!(back.meta, ck.meta);
    assert_eq!(back.meta.feature_version, 3);
    assert_eq!(back.meta.normalization, features().normalization);
    assert_eq!(back.meta.data_hash, models::data_hash(&data));
    assert!(back.train_seconds.is_some());
    let inputs: Vec<NestInput> = data.iter().map(|e| e.input.clone()).collect();
    assert_eq!(
        back.network().predict(&inputs).unwrap(),
        ck.network().predict(&inputs).unwrap()
    );
    assert_eq!(
        back.network().embed(&inputs).unwrap(),
        ck.network().embed(&inputs).unwrap()
    );
    // A path to meta.json works too; the feature version is checked on request.
    Checkpoint::load(dir.path().join(META_FILE)).unwrap();
    Checkpoint::load_expecting(dir.path(), 3).unwrap();
    assert!(matches!(
        Checkpoint::load_expecting(dir.path(), 4),
        Err(Error::FeatureVersion {
            found: 3,
            expected: 4,
            ..
        })
    ));
}

#[test]
fn damaged_checkpoints_are_refused() {
    let data = examples(6, 32);
    let ck = train(&data, &config(), &quick(4), features()).unwrap();
    let other = train(&data, &config(), &quick(5), features()).unwrap();
    let fresh = || {
        let dir = tempfile::tempdir().unwrap();
        ck.save(dir.path()).unwrap();
        dir
    };
    let refused = |dir: &tempfile::TempDir, what: &str| {
        let err = Checkpoint::load(dir.path()).expect_err(what);
        assert!(
            matches!(err, Error::Checkpoint { .. } | Error::Io { .. }),
            "{what}: {err}"
        );
        err.to_string()
    };

    // One flipped bit in the weights.
    let dir = fresh();
    let w = dir.path().join(WEIGHTS_FILE);
    let mut bytes = fs::read(&w).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    fs::write(&w, &bytes).unwrap();
    assert!(refused(&dir, "flipped bit").contains("checksum"));

    // Truncated weights, empty weights, bad magic.
    for cut in [bytes.len() - 1, 100, 0] {
        let dir = fresh();
        let w = dir.path().join(WEIGHTS_FILE);
        let good = fs::read(&w).unwrap();
        fs::write(&w, &good[..cut]).unwrap();
        refused(&dir, "truncated");
    }
    let dir = fresh();
    let w = dir.path().join(WEIGHTS_FILE);
    let mut good = fs::read(&w).unwrap();
    good[0] = b'X';
    fs::write(&w, &good).unwrap();
    assert!(refused(&dir, "magic").contains("magic"));

    // Missing files.
    let dir = fresh();
    fs::remove_file(dir.path().join(WEIGHTS_FILE)).unwrap();
    assert!(matches!(
        Checkpoint::load(dir.path()),
        Err(Error::Io { .. })
    ));
    let dir = fresh();
    fs::remove_file(dir.path().join(META_FILE)).unwrap();
    assert!(matches!(
        Checkpoint::load(dir.path()),
        Err(Error::Io { .. })
    ));

    // Unparsable / truncated metadata.
    let dir = fresh();
    let m = dir.path().join(META_FILE);
    let meta = fs::read_to_string(&m).unwrap();
    fs::write(&m, &meta[..meta.len() / 2]).unwrap();
    refused(&dir, "truncated meta");

    // Weights of another checkpoint.
    let dir = fresh();
    let dir2 = tempfile::tempdir().unwrap();
    other.save(dir2.path()).unwrap();
    fs::copy(
        dir2.path().join(WEIGHTS_FILE),
        dir.path().join(WEIGHTS_FILE),
    )
    .unwrap();
    assert!(refused(&dir, "other weights").contains("not the file"));

    // Metadata whose configuration does not fit the weights.
    let dir = fresh();
    let m = dir.path().join(META_FILE);
    let mut meta: serde_json::Value = serde_json::from_slice(&fs::read(&m).unwrap()).unwrap();
    meta["config"]["hidden"] = serde_json::json!(48);
    fs::write(&m, serde_json::to_vec(&meta).unwrap()).unwrap();
    assert!(refused(&dir, "config mismatch").contains("shape"));
    // A huge configuration is refused from the file's shapes, before any allocation.
    meta["config"]["hidden"] = serde_json::json!(60000);
    fs::write(&m, serde_json::to_vec(&meta).unwrap()).unwrap();
    assert!(refused(&dir, "huge config").contains("shape"));

    // Another format version; an invalid configuration.
    let dir = fresh();
    let m = dir.path().join(META_FILE);
    let mut meta: serde_json::Value = serde_json::from_slice(&fs::read(&m).unwrap()).unwrap();
    meta["format_version"] = serde_json::json!(99);
    fs::write(&m, serde_json::to_vec(&meta).unwrap()).unwrap();
    assert!(refused(&dir, "version").contains("version"));
    meta["format_version"] = serde_json::json!(1);
    meta["config"]["embed_dim"] = serde_json::json!(0);
    fs::write(&m, serde_json::to_vec(&meta).unwrap()).unwrap();
    refused(&dir, "invalid config");

    // Not a directory at all.
    assert!(Checkpoint::load("/nonexistent/checkpoint").is_err());
}

#[test]
fn bad_inputs_are_refused() {
    let model = Model::new(config(), 0).unwrap();
    let good = examples(7, 1).remove(0).input;
    type Edit = Box<dyn Fn(&mut NestInput)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("loop width", Box::new(|x| x.loops[0].push(1.0))),
        (
            "access width",
            Box::new(|x| {
                x.accesses = vec![vec![0.0; 3]];
                x.access_loop = vec![0];
            }),
        ),
        ("parent range", Box::new(|x| x.loop_parent[0] = Some(99))),
        (
            "cycle",
            Box::new(|x| {
                x.loops = vec![vec![0.0; 4]; 2];
                x.loop_parent = vec![Some(1), Some(0)];
                x.access_loop.iter_mut().for_each(|l| *l = 0);
            }),
        ),
        (
            "access loop",
            Box::new(|x| {
                x.accesses = vec![vec![0.0; 4]];
                x.access_loop = vec![7];
            }),
        ),
        ("lengths", Box::new(|x| x.loop_parent.push(None))),
        ("nan", Box::new(|x| x.global[0] = f32::NAN)),
        ("machine width", Box::new(|x| x.machine.clear())),
        ("mask", Box::new(|x| x.counter_mask[0] = 0.5)),
    ];
    for (what, edit) in cases {
        let mut x = good.clone();
        edit(&mut x);
        let err = model.embed(&[good.clone(), x]).expect_err(what);
        assert!(
            matches!(err, Error::Input { index: 1, .. }),
            "{what}: {err}"
        );
    }
    // Bad configurations and options.
    let mut c = config();
    c.hidden = 0;
    assert!(matches!(Model::new(c, 0), Err(Error::Config(_))));
    let data = examples(8, 4);
    assert!(matches!(
        train(
            &data,
            &config(),
            &TrainOptions {
                epochs: 0,
                ..quick(0)
            },
            features()
        ),
        Err(Error::Config(_))
    ));
    assert!(matches!(
        train(&[], &config(), &quick(0), features()),
        Err(Error::NoExamples)
    ));
    let mut bad = data.clone();
    bad[2].targets.push(0.0);
    assert!(matches!(
        train(&bad, &config(), &quick(0), features()),
        Err(Error::Input { index: 2, .. })
    ));
}

#[test]
fn optional_encoders_can_be_left_out() {
    let mut c = ModelConfig::new(4, 4, 0, 0, 0, 1);
    c.message_rounds = 1;
    c.normalize_embedding = false;
    let data: Vec<_> = examples(9, 24)
        .into_iter()
        .map(|mut e| {
            e.input.global.clear();
            e.input.machine.clear();
            e.input.counters.clear();
            e.input.counter_mask.clear();
            e.targets.truncate(1);
            e
        })
        .collect();
    let ck = train(&data, &c, &quick(0), features()).unwrap();
    let mae = ck.network().evaluate(&data).unwrap();
    assert_eq!(mae.len(), 1);
    // Recorded by libtorch at training time, recomputed here in plain Rust.
    assert!((ck.meta.train_mae[0] - mae[0]).abs() < 1e-5);
}

/// Timing of a realistic run: 500 small nests, 100 epochs (run with `--ignored
/// --nocapture`).
#[test]
#[ignore]
fn timing_500_examples_100_epochs() {
    let data = examples(12, 500);
    let options = TrainOptions {
        seed: 0,
        epochs: 100,
        ..TrainOptions::default()
    };
    let ck = train(&data, &config(), &options, features()).unwrap();
    println!(
        "500 examples x 100 epochs: {:.2} s, {} parameters, loss {} -> {}",
        ck.train_seconds.unwrap(),
        ck.network().num_parameters(),
        ck.meta.losses[0],
        ck.meta.final_loss
    );
}

#[test]
fn model_and_checkpoint_are_send() {
    fn send<T: Send>() {}
    fn shared<T: Send + Sync>() {}
    send::<Model>();
    shared::<Checkpoint>();
    shared::<Network>();
}

/// Largest |a - b| over the embeddings and predictions of two forward passes.
fn outputs_diff(a: &Outputs, b: &Outputs) -> f32 {
    max_abs_diff(&a.embeddings, &b.embeddings).max(max_abs_diff(&a.predictions, &b.predictions))
}

#[test]
fn the_plain_rust_network_computes_what_libtorch_computes() {
    let mut data = examples(14, 64);
    // Edge cases: no accesses, a single loop, several roots.
    data[0].input.accesses.clear();
    data[0].input.access_loop.clear();
    data[1].input.loops.truncate(1);
    data[1].input.loop_parent.truncate(1);
    data[1].input.access_loop.iter_mut().for_each(|l| *l = 0);
    data[2].input.loop_parent.iter_mut().for_each(|p| *p = None);
    let inputs: Vec<NestInput> = data.iter().map(|e| e.input.clone()).collect();
    let mut configs = vec![(config(), inputs.clone())];
    // Without the optional encoders, without message passing, without normalization.
    let mut bare = ModelConfig::new(4, 4, 0, 0, 0, 2);
    bare.message_rounds = 0;
    bare.normalize_embedding = false;
    bare.hidden = 16;
    let stripped = inputs
        .iter()
        .map(|x| NestInput {
            global: Vec::new(),
            machine: Vec::new(),
            counters: Vec::new(),
            counter_mask: Vec::new(),
            ..x.clone()
        })
        .collect();
    configs.push((bare, stripped));
    let mut deep = config();
    deep.message_rounds = 5;
    deep.embed_dim = 7;
    configs.push((deep, inputs.clone()));
    let mut wide = config();
    wide.wide = true;
    configs.push((wide, inputs));
    for (c, inputs) in configs {
        for seed in [0, 1] {
            let torch = Model::new(c.clone(), seed).unwrap();
            let network = torch.to_network().unwrap();
            assert_eq!(network.parameter_shapes(), torch.parameter_shapes());
            assert_eq!(network.num_parameters(), torch.num_parameters());
            let want = torch.embed_and_predict(&inputs).unwrap();
            let got = network.embed_and_predict(&inputs).unwrap();
            let d = outputs_diff(&want, &got);
            assert!(d < 1e-5, "{c:?} seed {seed}: differs by {d}");
            // And back: the same weights in a libtorch model give the same outputs.
            let again = Model::from_network(&network).unwrap();
            assert_eq!(again.embed_and_predict(&inputs).unwrap(), want);
        }
    }
    // A trained checkpoint, through a save and a load.
    let ck = train(&data, &config(), &quick(2), features()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    ck.save(dir.path()).unwrap();
    let back = Checkpoint::load(dir.path()).unwrap();
    let inputs: Vec<NestInput> = data.iter().map(|e| e.input.clone()).collect();
    let want = back
        .torch_model()
        .unwrap()
        .embed_and_predict(&inputs)
        .unwrap();
    let got = back.network().embed_and_predict(&inputs).unwrap();
    assert!(outputs_diff(&want, &got) < 1e-5);
}

/// Mean and max of each column of `rows` (zeros when there are none).
fn mean_max(rows: &[Vec<f32>], width: usize) -> Vec<f32> {
    let n = rows.len().max(1) as f32;
    let mean = (0..width).map(|k| rows.iter().map(|r| r[k]).sum::<f32>() / n);
    let max = (0..width).map(|k| {
        rows.iter()
            .map(|r| r[k])
            .fold(None, |m: Option<f32>, v| Some(m.map_or(v, |m| m.max(v))))
            .unwrap_or(0.0)
    });
    mean.chain(max).collect()
}

#[test]
fn the_wide_part_is_the_pooled_inputs_scaled_by_learned_weights() {
    let data = examples(5, 24);
    let inputs: Vec<NestInput> = data.iter().map(|e| e.input.clone()).collect();
    let c = config_wide();
    let width = 2 * c.loop_dim + 2 * c.access_dim + c.global_dim + c.counter_dim + c.machine_dim;
    assert_eq!(c.output_dim(), c.embed_dim + width);
    let model = Model::new(c.clone(), 3).unwrap();
    let init = 1.0 / (width as f32).sqrt();
    for (e, x) in model.embed(&inputs).unwrap().iter().zip(&inputs) {
        assert_eq!(e.len(), c.output_dim());
        let unit: f32 = e[..c.embed_dim].iter().map(|v| v * v).sum();
        assert!((unit - 1.0).abs() < 1e-5, "{unit}");
        let mut want = mean_max(&x.loops, c.loop_dim);
        want.extend(mean_max(&x.accesses, c.access_dim));
        want.extend(&x.global);
        want.extend(x.counters.iter().zip(&x.counter_mask).map(|(v, m)| v * m));
        want.extend(&x.machine);
        for (got, want) in e[c.embed_dim..].iter().zip(&want) {
            assert!((got - want * init).abs() < 1e-6, "{got} vs {}", want * init);
        }
    }
    // The contrastive term moves the weights (the head's loss cannot: it sees the
    // learned part only).
    let (paired, options) = ring_pairs(&data);
    let scale = |ck: &Checkpoint| {
        ck.network()
            .parameter_shapes()
            .last()
            .map(|(name, dims)| (name.clone(), dims.clone()))
            .unwrap()
    };
    let with = train(&paired, &c, &options, features()).unwrap();
    assert_eq!(scale(&with), ("wide.scale".to_string(), vec![width as i64]));
    let moved = with.network().embed(&inputs).unwrap();
    let head_only = train(&data, &c, &options, features()).unwrap();
    let kept = head_only.network().embed(&inputs).unwrap();
    let tail = |v: &[Vec<f32>]| wide_parts(v, c.embed_dim);
    assert!(max_abs_diff(&tail(&kept), &tail(&model.embed(&inputs).unwrap())) < 1e-6);
    assert!(max_abs_diff(&tail(&moved), &tail(&kept)) > 1e-4);
}

#[test]
fn an_anchored_embedding_keeps_the_raw_feature_distance_and_weights_the_learned_part() {
    let data = examples(5, 24);
    let inputs: Vec<NestInput> = data.iter().map(|e| e.input.clone()).collect();
    let (paired, options) = ring_pairs(&data);
    let mut c = config_wide();
    let free = train(&paired, &c, &options, features()).unwrap();
    let free = free.network().embed(&inputs).unwrap();
    c.anchored = Some(0.25);
    let anchored = train(&paired, &c, &options, features()).unwrap();
    // The weights round-trip through a checkpoint with the configuration.
    let dir = tempfile::tempdir().unwrap();
    anchored.save(dir.path()).unwrap();
    let loaded = Checkpoint::load(dir.path()).unwrap();
    assert_eq!(loaded.meta.config.anchored, Some(0.25));
    let got = loaded.network().embed(&inputs).unwrap();
    let width = c.output_dim() - c.embed_dim;
    let init = 1.0 / (width as f32).sqrt();
    let untrained = Model::new(config_wide(), 3)
        .unwrap()
        .embed(&inputs)
        .unwrap();
    let tail = |v: &[Vec<f32>]| wide_parts(v, c.embed_dim);
    // The wide part: the pooled inputs times the initial weight, after training.
    assert!(max_abs_diff(&tail(&got), &tail(&untrained)) < 1e-6);
    for (e, x) in got.iter().zip(&inputs) {
        // The learned part: a unit vector times the weight.
        let norm: f32 = e[..c.embed_dim].iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 0.25).abs() < 1e-5, "{norm}");
        assert!(
            (e[c.embed_dim]
                - x.loops.iter().map(|r| r[0]).sum::<f32>() / x.loops.len() as f32 * init)
                .abs()
                < 1e-5
        );
    }
    // Trained freely, the same terms move the wide part.
    assert!(max_abs_diff(&tail(&free), &tail(&untrained)) > 1e-4);
    // At weight 0 the distances are the raw features' alone.
    c.anchored = Some(0.0);
    let zero = train(&paired, &c, &options, features()).unwrap();
    for e in zero.network().embed(&inputs).unwrap() {
        assert!(e[..c.embed_dim].iter().all(|v| *v == 0.0));
    }
    // Anchoring needs the wide part, and a weight >= 0.
    let mut bad = config();
    bad.anchored = Some(0.5);
    assert!(bad.validate().is_err());
    bad.wide = true;
    bad.anchored = Some(-1.0);
    assert!(bad.validate().is_err());
    bad.anchored = Some(f32::NAN);
    assert!(bad.validate().is_err());
}

fn config_wide() -> ModelConfig {
    let mut c = config();
    c.wide = true;
    c
}

/// `data` with one contrastive pair per example (nearer the one two ahead than the next
/// one, in a ring), and quick options with the contrastive term on.
fn ring_pairs(data: &[Example]) -> (Vec<Example>, TrainOptions) {
    let mut paired = data.to_vec();
    let n = paired.len();
    for (i, x) in paired.iter_mut().enumerate() {
        x.nearer = vec![((i + 2) % n, (i + 1) % n)];
    }
    let options = TrainOptions {
        contrastive_weight: 1.0,
        ..quick(1)
    };
    (paired, options)
}

/// The wide part of each embedding (what follows the `embed_dim` learned values).
fn wide_parts(v: &[Vec<f32>], embed_dim: usize) -> Vec<Vec<f32>> {
    v.iter().map(|e| e[embed_dim..].to_vec()).collect()
}
