//! Fission of a loop into loops over parts of its body.

use super::*;

pub(crate) fn fission(nest: &mut Loop, at: usize, cx: &mut Ctx) -> Result<(), Refusal> {
    if at == 0 {
        return Err(
            cx.na("the nest's root cannot be split (a nest is one loop); split an inner loop")
        );
    }
    let l = loop_at(nest, at).expect("loop").clone();
    check_pragma_free(&[&l], cx.k)?;
    let items = &l.body;
    if items.len() < 2 {
        return Err(cx.na(format!(
            "the body of loop '{}' is a single statement or loop",
            l.var
        )));
    }
    let written = crate::deps::written_names(&l.body);
    if let Some(w) = written
        .iter()
        .find(|w| l.init.mentions(w) || l.bound.mentions(w))
    {
        return Err(cx.na(format!(
            "the bounds of '{}' depend on '{w}', which the loop writes",
            l.var
        )));
    }
    let (stmt_item, loop_item) = item_maps(items, 0);
    let item_of = |a: &AccessRef| -> Option<usize> {
        if a.stmt != usize::MAX {
            stmt_item.get(&a.stmt).copied()
        } else {
            a.loops.iter().find_map(|id| loop_item.get(id).copied())
        }
    };
    // joined[i]: item i stays in the same loop as item i - 1.
    let mut joined = vec![false; items.len()];
    let join = |joined: &mut Vec<bool>, a: usize, b: usize| {
        for j in joined.iter_mut().take(b + 1).skip(a + 1) {
            *j = true;
        }
    };
    for (i, n) in items.iter().enumerate() {
        if let Node::Decl(d) = n {
            for (j, m) in items.iter().enumerate().skip(i + 1) {
                if node_mentions(m, &d.name) {
                    join(&mut joined, i, j);
                }
            }
        }
    }
    let mut why = None;
    for d in &cx.an.deps {
        if !carried_by(d, l.id) {
            continue;
        }
        let (a, b) = (&cx.an.accesses[d.source], &cx.an.accesses[d.sink]);
        match (item_of(a), item_of(b)) {
            (Some(x), Some(y)) if x > y => {
                join(&mut joined, y, x);
                why.get_or_insert(format!(
                    "dependence on '{}' with directions {:?} runs from part {x} back to part {y}",
                    d.array, d.directions
                ));
            }
            (Some(_), Some(_)) => {}
            _ => {
                join(&mut joined, 0, items.len() - 1);
                why.get_or_insert(format!(
                    "dependence on '{}' through a condition or loop bound",
                    d.array
                ));
            }
        }
    }
    let mut parts: Vec<Vec<Node>> = Vec::new();
    for (i, n) in items.iter().enumerate() {
        if i == 0 || !joined[i] {
            parts.push(Vec::new());
        }
        parts.last_mut().expect("a part").push(n.clone());
    }
    if parts.len() < 2 {
        return Err(match why {
            Some(w) => cx.illegal(w),
            None => cx.na("declarations tie the body together"),
        });
    }
    let loops: Vec<Node> = parts
        .into_iter()
        .map(|body| {
            let mut h = header_of(&l);
            h.body = body;
            Node::Loop(h)
        })
        .collect();
    let route = locate(nest, at).expect("loop");
    let (parent, idx) = parent_mut(nest, &route);
    parent.splice(idx..=idx, loops);
    Ok(())
}

/// Which top-level node of `items` each statement id and loop id belongs to.
pub(crate) fn item_maps(
    items: &[Node],
    offset: usize,
) -> (HashMap<usize, usize>, HashMap<usize, usize>) {
    let (mut stmts, mut loops) = (HashMap::new(), HashMap::new());
    for (i, n) in items.iter().enumerate() {
        for id in stmt_ids(n) {
            stmts.insert(id, i + offset);
        }
        for x in loops_of(n) {
            loops.insert(x, i + offset);
        }
    }
    (stmts, loops)
}
