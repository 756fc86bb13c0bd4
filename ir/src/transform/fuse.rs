//! Fusion of a loop with the loop right after it.

use super::*;

pub(crate) fn fuse(nest: &mut Loop, at: usize, cx: &mut Ctx) -> Result<Post, Refusal> {
    if at == 0 {
        return Err(cx.na("the nest's root has no next loop inside the nest"));
    }
    let route = locate(nest, at).expect("loop");
    let (parent, idx) = parent_mut(nest, &route);
    let (Node::Loop(a), Some(Node::Loop(b))) = (&parent[idx], parent.get(idx + 1)) else {
        return Err(cx.na("the node right after the loop is not a loop"));
    };
    let (a, b) = (a.clone(), b.clone());
    check_pragma_free(&[&a, &b], cx.k)?;
    if a.init != b.init
        || a.bound != b.bound
        || a.cmp != b.cmp
        || a.step != b.step
        || a.var_dtype != b.var_dtype
    {
        return Err(cx.na(format!(
            "loops '{}' and '{}' have different headers",
            a.var, b.var
        )));
    }
    if a.var != b.var && b.body.iter().any(|n| node_mentions(n, &a.var)) {
        return Err(cx.na(format!(
            "the second loop uses '{}', the first loop's variable",
            a.var
        )));
    }
    let mut written = crate::deps::written_names(&a.body);
    written.extend(crate::deps::written_names(&b.body));
    if let Some(w) = written
        .iter()
        .find(|w| a.init.mentions(w) || a.bound.mentions(w))
    {
        return Err(cx.na(format!(
            "the loop bounds depend on '{w}', which the loops write"
        )));
    }
    for n in &a.body {
        if let Node::Decl(d) = n {
            let redeclared = b
                .body
                .iter()
                .any(|m| matches!(m, Node::Decl(e) if e.name == d.name));
            if redeclared || b.body.iter().any(|m| node_mentions(m, &d.name)) {
                return Err(cx.na(format!(
                    "the first loop declares '{}', which the second uses",
                    d.name
                )));
            }
        }
    }
    let split = a.body.len();
    let mut fused = a;
    let mut rest = b.body;
    if b.var != fused.var {
        subst_nodes(&mut rest, &b.var, &var(&fused.var));
    }
    fused.body.extend(rest);
    parent[idx] = Node::Loop(fused);
    parent.remove(idx + 1);
    Ok(Post::Fuse { at, split })
}

/// Fusion is legal when no dependence of the fused loop runs from the second loop's
/// part to a later iteration of the first loop's part (originally the other way).
pub(crate) fn check_fusion(
    nest: &Loop,
    at: usize,
    split: usize,
    an: &Analysis,
    k: usize,
) -> Result<(), Refusal> {
    let f = loop_at(nest, at).expect("fused loop");
    let (stmt_item, loop_item) = item_maps(&f.body, 0);
    let part_of = |a: &AccessRef| -> Option<bool> {
        let item = if a.stmt != usize::MAX {
            stmt_item.get(&a.stmt).copied()
        } else {
            a.loops.iter().find_map(|id| loop_item.get(id).copied())
        };
        item.map(|i| i >= split)
    };
    for d in &an.deps {
        if !carried_by(d, f.id) {
            continue;
        }
        let (a, b) = (&an.accesses[d.source], &an.accesses[d.sink]);
        if a.private_in.contains(&f.id) && b.private_in.contains(&f.id) {
            continue;
        }
        let why = match (part_of(a), part_of(b)) {
            (Some(true), Some(false)) => format!(
                "dependence on '{}' from the first loop to an earlier iteration of the \
                 second would run backwards",
                d.array
            ),
            (Some(_), Some(_)) => continue,
            _ => format!(
                "dependence on '{}' through a condition or loop bound",
                d.array
            ),
        };
        return Err(Refusal::Illegal { step: k, why });
    }
    Ok(())
}
