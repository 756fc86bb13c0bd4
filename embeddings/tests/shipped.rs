//! The shipped model embeds the shipped database's nests in plain Rust as they were
//! embedded when the database was: every stored embedding is reproduced within 1e-5 (and,
//! with the `train` feature, the libtorch forward pass of the same checkpoint agrees
//! with the plain-Rust one on every entry, with and without performance features).

use std::path::{Path, PathBuf};

use embeddings::embed::Embedder;
use embeddings::{Database, NestFeatures};

const TOLERANCE: f32 = 1e-5;

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../models/default")
        .join(name)
}

/// Largest |a - b| over two equally shaped lists of vectors.
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
fn the_shipped_database_embeddings_are_reproduced_without_libtorch() {
    let model = Embedder::load(&shipped("model")).unwrap();
    let db = Database::load(&shipped("tune.db")).unwrap();
    assert!(!db.entries.is_empty());
    assert_eq!(
        db.model,
        model.id(),
        "the database was embedded by this model"
    );
    let features: Vec<&NestFeatures> = db.entries.iter().map(|e| &e.features).collect();
    let stored: Vec<Vec<f32>> = db.entries.iter().map(|e| e.embedding.clone()).collect();
    let ours = model.embed(&features, false).unwrap();
    let d = max_abs_diff(&ours, &stored);
    eprintln!(
        "{} entries: plain Rust vs stored embeddings, max |difference| {d:e}",
        db.entries.len()
    );
    assert!(d <= TOLERANCE, "max |difference| {d}");
    // Retrieval sees the same database: every entry, as a query, ranks the entries of
    // other programs (the order `tune apply` walks) as the stored embeddings do, up to
    // entries whose stored distances tie within the tolerance.
    let mut same = 0;
    for (e, q) in db.entries.iter().zip(&ours) {
        let others = |x: &embeddings::Entry| x.program != e.program;
        let ranked = db.ranked(q, &ours, &others);
        let stored_distance = |i: usize| embeddings::db::distance(&e.embedding, &stored[i]);
        for w in ranked.windows(2) {
            let (a, b) = (stored_distance(w[0].index), stored_distance(w[1].index));
            assert!(
                b >= a - 2.0 * TOLERANCE,
                "{} {}: {} ranked before {} ({a} > {b})",
                e.program,
                e.nest,
                w[0].index,
                w[1].index
            );
        }
        let by_stored = db.ranked(&e.embedding, &stored, &others);
        same += ranked
            .iter()
            .map(|n| n.index)
            .eq(by_stored.iter().map(|n| n.index)) as usize;
    }
    eprintln!(
        "{same} of {} queries rank the other programs' entries in the stored order exactly",
        db.entries.len()
    );
}

#[cfg(feature = "train")]
#[test]
fn libtorch_and_plain_rust_agree_on_every_shipped_entry() {
    use embeddings::embed::input;
    let model = Embedder::load(&shipped("model")).unwrap();
    let torch = model.checkpoint.torch_model().unwrap();
    let db = Database::load(&shipped("tune.db")).unwrap();
    for static_only in [false, true] {
        let inputs: Vec<_> = db
            .entries
            .iter()
            .map(|e| input(&model.norm.features.apply(&e.features), static_only))
            .collect();
        let want = torch.embed_and_predict(&inputs).unwrap();
        let got = model
            .checkpoint
            .network()
            .embed_and_predict(&inputs)
            .unwrap();
        let (de, dp) = (
            max_abs_diff(&want.embeddings, &got.embeddings),
            max_abs_diff(&want.predictions, &got.predictions),
        );
        eprintln!(
            "{} entries, static_only {static_only}: libtorch vs plain Rust, max |difference| \
             {de:e} (embeddings), {dp:e} (predictions)",
            inputs.len()
        );
        assert!(de <= TOLERANCE && dp <= TOLERANCE, "{de} {dp}");
    }
}

/// What the default ranker (raw votes) and the ISA preference need of the shipped
/// database: at least 500 nests, the core programs with their loop-order variants and
/// synthetic ones, every entry's machine and vector ISA known and one machine for all
/// (so its transfer rows compare times of one host), and transfer rows on every entry
/// with at least its own recipe's row and others' beside it.
#[test]
fn the_shipped_database_holds_500_nests_of_one_machine_with_transfer_rows() {
    let db = Database::load(&shipped("tune.db")).unwrap();
    let n = db.entries.len();
    assert!(n >= 500, "{n} entries");
    let variants = db
        .entries
        .iter()
        .filter(|e| e.origin() != e.program)
        .count();
    let programs: std::collections::BTreeSet<&str> =
        db.entries.iter().map(|e| e.program.as_str()).collect();
    assert!(variants >= 30, "{variants} loop-order variants");
    assert!(programs.len() >= 300, "{} programs", programs.len());
    let first = &db.entries[0];
    assert!(!first.isa.is_empty() && !first.machine.is_empty());
    for e in &db.entries {
        assert_eq!(
            (&e.machine, &e.isa),
            (&first.machine, &first.isa),
            "{}",
            e.program
        );
        assert!(
            e.transfers.len() >= 2,
            "{} {}: {} transfer rows",
            e.program,
            e.nest,
            e.transfers.len()
        );
        if e.best().is_some() {
            assert!(
                e.transfer_from(e).is_some(),
                "{} {}: no row of its own recipe",
                e.program,
                e.nest
            );
        }
    }
}
