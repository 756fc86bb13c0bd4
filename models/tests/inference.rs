//! Inference without libtorch: the shipped checkpoint is read, embeds, and its weights
//! are written back byte for byte by the plain-Rust reader and writer.

use std::path::Path;

use models::{Checkpoint, NestInput, META_FILE, WEIGHTS_FILE};

fn shipped() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/default/model"))
}

#[test]
fn the_shipped_checkpoint_reads_embeds_and_writes_back() {
    let ck = Checkpoint::load(shipped()).unwrap();
    let c = ck.network().config().clone();
    // Seven two-layer modules (every optional encoder present) and the rounds' layers,
    // a weight and a bias each; then the wide part's column weights, where there is one.
    assert_eq!(
        ck.network().parameter_shapes().len(),
        2 * (7 * 2 + c.message_rounds) + usize::from(c.wide)
    );
    let dir = tempfile::tempdir().unwrap();
    ck.save(dir.path()).unwrap();
    let read = |d: &Path| std::fs::read(d.join(WEIGHTS_FILE)).unwrap();
    assert!(
        read(dir.path()) == read(shipped()),
        "{WEIGHTS_FILE} differs"
    );
    let back = Checkpoint::load(dir.path().join(META_FILE)).unwrap();
    assert_eq!(back.meta, ck.meta);
    // A nest of two loops and one access: an embedding of the configured width whose
    // learned part is a unit vector, times the anchor's weight where it is anchored.
    let x = NestInput {
        loops: vec![vec![0.5; c.loop_dim], vec![-0.25; c.loop_dim]],
        loop_parent: vec![None, Some(0)],
        accesses: vec![vec![1.0; c.access_dim]],
        access_loop: vec![1],
        global: vec![0.1; c.global_dim],
        machine: vec![0.0; c.machine_dim],
        counters: vec![0.3; c.counter_dim],
        counter_mask: vec![1.0; c.counter_dim],
    };
    let out = ck.network().embed_and_predict(&[x]).unwrap();
    assert_eq!(out.embeddings[0].len(), c.output_dim());
    assert_eq!(out.predictions[0].len(), c.target_dim);
    let learned = &out.embeddings[0][..c.embed_dim];
    let norm: f32 = learned.iter().map(|v| v * v).sum::<f32>().sqrt();
    let expected = c.anchored.unwrap_or(1.0);
    assert!(
        (norm - expected).abs() < 1e-5,
        "norm {norm}, expected {expected}"
    );
    if c.wide {
        // The wide part: the pooled inputs, each times its column weight; not all zero.
        assert!(out.embeddings[0][c.embed_dim..].iter().any(|v| *v != 0.0));
    }
}

#[cfg(not(feature = "train"))]
#[test]
fn training_is_refused_without_the_train_feature() {
    let ck = Checkpoint::load(shipped()).unwrap();
    let e = models::train(
        &[],
        ck.network().config(),
        &models::TrainOptions::default(),
        models::FeatureInfo::default(),
    )
    .unwrap_err();
    assert!(matches!(e, models::Error::NoTraining), "{e}");
}
