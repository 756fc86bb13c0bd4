//! From neighbours to candidates: walking the database entries in a retrieval order
//! (nearest first, or any other order a baseline gives), each entry's best recipe is
//! re-fitted to the nest, and the first `k` that are non-empty and distinct after the
//! re-fit become the candidates to measure. Nearby nests often carry the same recipe
//! (the nests of one program, a program's variants), and a recipe that shrinks to
//! nothing or to one already picked would spend a measurement slot on nothing new;
//! such entries are passed over and the walk goes on to the next entry.

use crate::ranker::{Query, Ranker};
use embeddings::db::{Database, Entry};
use ir::canonical::{refit, RoleRecipe};
use ir::transform::Recipe;
use ir::Program;

/// What became of one entry on the walk.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A candidate: its re-fitted recipe is new and not empty.
    Pick,
    /// No step of its recipe applies to this nest.
    Empty,
    /// Re-fitted, it is the recipe of the entry at this position of the walk.
    Same(usize),
    /// Its best recipe could not be read.
    Unreadable(String),
}

/// One entry met on the walk.
#[derive(Debug, Clone)]
pub struct Visited {
    /// Index in the database.
    pub index: usize,
    /// Distance from the query in the retrieval's space (0 for orders without one).
    pub distance: f32,
    /// The recipe re-fitted to the nest (empty unless it could be read).
    pub recipe: Recipe,
    /// Source step index and why it did not carry over.
    pub dropped: Vec<(usize, String)>,
    /// What became of the entry.
    pub outcome: Outcome,
}

impl Visited {
    /// The entry became a candidate.
    pub fn is_pick(&self) -> bool {
        self.outcome == Outcome::Pick
    }
}

/// The entries `usable` accepts in `ranker`'s order, those measured with the vector
/// ISA `isa` first: the ranker orders this machine's kind of entries among themselves,
/// then the others among themselves, so a recipe found with other vector registers is
/// tried only where none of this machine's kind is left. Each group is one call of the
/// ranker, so a voting ranker's voters and the recipes they credit come from the group
/// (a transfer row was measured on its entry's machine). Entries whose ISA is not known
/// count as this machine's; a database of one kind is one call, as without the split.
pub fn rank_by_isa(
    ranker: &mut dyn Ranker,
    db: &Database,
    query: Query,
    usable: &(dyn Fn(&Entry) -> bool + Sync),
    isa: &str,
) -> crate::Result<Vec<(usize, f32)>> {
    let ours = |e: &Entry| usable(e) && e.isa_matches(isa);
    let theirs = |e: &Entry| usable(e) && !e.isa_matches(isa);
    if !db.entries.iter().any(&theirs) {
        return ranker.rank(db, query, usable);
    }
    let mut order = if db.entries.iter().any(&ours) {
        ranker.rank(db, query, &ours)?
    } else {
        Vec::new()
    };
    order.extend(ranker.rank(db, query, &theirs)?);
    Ok(order)
}

/// Walks `order` (database index, distance) until `k` entries are picked or the order
/// ends; returns every entry met, in order (the picks and those passed over before the
/// last pick).
pub fn walk(
    db: &Database,
    order: impl IntoIterator<Item = (usize, f32)>,
    k: usize,
    program: &Program,
    region: usize,
    root: usize,
) -> Vec<Visited> {
    let mut met: Vec<Visited> = Vec::new();
    let mut picks = 0;
    for (index, distance) in order {
        if picks >= k {
            break;
        }
        let Some(best) = db.entries.get(index).and_then(|e| e.best()) else {
            continue;
        };
        let mut v = Visited {
            index,
            distance,
            recipe: Recipe::default(),
            dropped: Vec::new(),
            outcome: Outcome::Pick,
        };
        match serde_json::from_str::<RoleRecipe>(best) {
            Err(e) => v.outcome = Outcome::Unreadable(e.to_string()),
            Ok(rr) => {
                let fit = refit(&rr, program, region, root);
                v.recipe = fit.recipe;
                v.dropped = fit.dropped;
                if v.recipe.steps.is_empty() {
                    v.outcome = Outcome::Empty;
                } else if let Some(at) =
                    met.iter().position(|m| m.is_pick() && m.recipe == v.recipe)
                {
                    v.outcome = Outcome::Same(at);
                }
            }
        }
        if v.is_pick() {
            picks += 1;
        }
        met.push(v);
    }
    met
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Ranks the usable entries by index, last first, and records each call's entries.
    struct Backwards(Vec<Vec<usize>>);

    impl Ranker for Backwards {
        fn kind(&self) -> crate::ranker::RankerKind {
            crate::ranker::RankerKind::Random
        }

        fn rank(
            &mut self,
            db: &Database,
            _: Query,
            usable: &(dyn Fn(&Entry) -> bool + Sync),
        ) -> crate::Result<Vec<(usize, f32)>> {
            let got: Vec<usize> = (0..db.entries.len())
                .rev()
                .filter(|&i| usable(&db.entries[i]))
                .collect();
            self.0.push(got.clone());
            Ok(got.into_iter().map(|i| (i, 0.0)).collect())
        }
    }

    #[test]
    fn entries_of_another_vector_isa_are_ranked_after_the_others_and_apart_from_them() {
        let mut db = Database::default();
        for (k, isa) in ["avx2", "avx512", "", "avx2", "sse"].iter().enumerate() {
            db.entries.push(crate::workflows::test_entry::entry(
                &format!("p{k}"),
                0.0,
                "r",
            ));
            db.entries[k].isa = isa.to_string();
        }
        let ranked = |db: &Database, isa: &str, usable: &(dyn Fn(&Entry) -> bool + Sync)| {
            let mut r = Backwards(Vec::new());
            let got: Vec<usize> = rank_by_isa(&mut r, db, Query::Entry(0), usable, isa)
                .unwrap()
                .into_iter()
                .map(|x| x.0)
                .collect();
            (got, r.0)
        };
        // Each group is ranked by a call of its own: the unknown ISA (entry 2) counts
        // as this machine's.
        let (got, calls) = ranked(&db, "avx512", &|_| true);
        assert_eq!(got, [2, 1, 4, 3, 0]);
        assert_eq!(calls, [vec![2, 1], vec![4, 3, 0]]);
        let (got, calls) = ranked(&db, "avx2", &|e| e.program != "p3");
        assert_eq!(got, [2, 0, 4, 1]);
        assert_eq!(calls, [vec![2, 0], vec![4, 1]]);
        // No entry of this machine's kind: the others, in one call.
        let (got, calls) = ranked(&db, "neon", &|e| e.program != "p2");
        assert_eq!(got, [4, 3, 1, 0]);
        assert_eq!(calls.len(), 1);
        // One kind in the database, or a machine whose ISA is not known: one call over
        // every usable entry, as a ranker alone would give.
        let (got, calls) = ranked(&db, "", &|_| true);
        assert_eq!(got, [4, 3, 2, 1, 0]);
        assert_eq!(calls.len(), 1);
        for e in &mut db.entries {
            e.isa = "avx2".into();
        }
        let (got, calls) = ranked(&db, "avx2", &|_| true);
        assert_eq!(got, [4, 3, 2, 1, 0]);
        assert_eq!(calls.len(), 1);
        assert_eq!(
            embeddings::db::vector_isa(&["avx2".into(), "avx512f".into()]),
            "avx512"
        );
        assert_eq!(embeddings::db::vector_isa(&["fma".into()]), "sse");
    }

    #[test]
    fn the_walk_picks_distinct_non_empty_recipes_and_passes_over_the_rest() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let db = Database::load(&root.join("models/default/tune.db")).unwrap();
        let opts = ir::FrontendOptions {
            flags: vec!["-DMINI_DATASET".into()],
            ..Default::default()
        };
        let file = root.join("datasets/programs/2mm.c");
        let parsed = ir::load(&file.display().to_string(), &opts).unwrap();
        let nests = ir::codegen::nests(&parsed.program);
        let n = &nests[1];
        let order = || (0..db.entries.len()).map(|i| (i, 0.0));
        let all = walk(&db, order(), usize::MAX, &parsed.program, n.region, n.root);
        assert_eq!(
            all.len(),
            db.entries.iter().filter(|e| e.best().is_some()).count()
        );
        let picks: Vec<&Visited> = all.iter().filter(|v| v.is_pick()).collect();
        // Nearby entries share recipes: the database holds fewer distinct ones than
        // entries, and the walk measures each once.
        assert!(
            picks.len() >= 2 && picks.len() < all.len(),
            "{}",
            picks.len()
        );
        for (i, a) in picks.iter().enumerate() {
            assert!(!a.recipe.steps.is_empty());
            for b in &picks[i + 1..] {
                assert_ne!(a.recipe, b.recipe);
            }
        }
        for v in &all {
            match &v.outcome {
                Outcome::Same(at) => {
                    assert!(all[*at].is_pick());
                    assert_eq!(all[*at].recipe, v.recipe);
                }
                Outcome::Empty => assert!(v.recipe.steps.is_empty()),
                Outcome::Pick => {}
                Outcome::Unreadable(e) => panic!("{e}"),
            }
        }
        // With k = 3 the walk stops at the third pick: the same three, in order.
        let three = walk(&db, order(), 3, &parsed.program, n.region, n.root);
        assert!(three.last().unwrap().is_pick());
        let first: Vec<&Recipe> = three
            .iter()
            .filter(|v| v.is_pick())
            .map(|v| &v.recipe)
            .collect();
        assert_eq!(first.len(), 3);
        assert_eq!(
            first,
            picks[..3].iter().map(|v| &v.recipe).collect::<Vec<_>>()
        );
        assert_eq!(
            three.len(),
            all.iter().position(|v| std::ptr::eq(v, picks[2])).unwrap() + 1
        );
    }
}
