//! Unroll-and-jam: copies of a loop's body merged into its inner loops.

use super::*;

/// How unroll-and-jam treats a node of a body it jams into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JamKind {
    /// A loop whose header is the same in every copy: the copies' bodies are jammed.
    Loop,
    /// A block: its contents are jammed (declarations are renamed per copy).
    Block,
    /// A conditional whose condition is the same in every copy: both branches jammed.
    If,
    /// Anything else: part of a run of nodes that is replicated copy after copy.
    Other,
}

pub(crate) fn jam_kind(n: &Node, v: &str, written: &BTreeSet<String>) -> JamKind {
    let free = |e: &Expr| !e.mentions(v) && !written.iter().any(|w| e.mentions(w));
    match n {
        Node::Loop(x) if x.var != v && !x.has_directives() && free(&x.init) && free(&x.bound) => {
            JamKind::Loop
        }
        Node::Block(_) => JamKind::Block,
        Node::If(i) if free(&i.cond) => JamKind::If,
        _ => JamKind::Other,
    }
}

/// Where a statement lands in the jammed body: per jammed level, the item index and
/// what the item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    Run,
    Block,
    Loop(usize),
    Then,
    Else,
}

pub(crate) fn jam_paths(
    body: &[Node],
    v: &str,
    written: &BTreeSet<String>,
    prefix: &mut Vec<(usize, Item)>,
    out: &mut HashMap<usize, Vec<(usize, Item)>>,
) {
    let mut next = 0;
    let mut run: Option<usize> = None;
    for n in body {
        let kind = jam_kind(n, v, written);
        if kind == JamKind::Other {
            let idx = match run {
                Some(r) => r,
                None => {
                    run = Some(next);
                    next += 1;
                    next - 1
                }
            };
            prefix.push((idx, Item::Run));
            for id in stmt_ids(n) {
                out.insert(id, prefix.clone());
            }
            prefix.pop();
            continue;
        }
        run = None;
        let idx = next;
        next += 1;
        match n {
            Node::Loop(x) => {
                prefix.push((idx, Item::Loop(x.id)));
                jam_paths(&x.body, v, written, prefix, out);
                prefix.pop();
            }
            Node::Block(b) => {
                prefix.push((idx, Item::Block));
                jam_paths(b, v, written, prefix, out);
                prefix.pop();
            }
            Node::If(i) => {
                prefix.push((idx, Item::Then));
                jam_paths(&i.then_body, v, written, prefix, out);
                prefix.pop();
                prefix.push((idx, Item::Else));
                jam_paths(&i.else_body, v, written, prefix, out);
                prefix.pop();
            }
            Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {
                unreachable!("runs hold statements")
            }
        }
    }
}

/// Whether dependence `d` (carried by the unrolled loop, source in an earlier
/// iteration) has its sink before its source in the jammed order.
pub(crate) fn jam_reverses(
    d: &Dependence,
    source: &[(usize, Item)],
    sink: &[(usize, Item)],
) -> bool {
    for (x, y) in source.iter().zip(sink) {
        if x.0 != y.0 {
            return x.0 > y.0;
        }
        match (x.1, y.1) {
            // The same run: copies run in iteration order.
            (Item::Run, Item::Run) => return false,
            (Item::Block, Item::Block) | (Item::Then, Item::Then) | (Item::Else, Item::Else) => {}
            // The condition is the same for all copies at the same jammed iterations:
            // no instance pair takes both branches.
            (Item::Then, Item::Else) | (Item::Else, Item::Then) => return false,
            (Item::Loop(id), Item::Loop(_)) => {
                match d
                    .loops
                    .iter()
                    .position(|l| *l == id)
                    .map(|q| d.directions[q])
                {
                    Some(Dir::Lt) => return false,
                    Some(Dir::Eq) => {}
                    Some(Dir::Gt) | None => return true,
                }
            }
            _ => return true,
        }
    }
    true
}

/// `d` is carried by loop `id`: `=` outside it, `<` at it.
pub(crate) fn carried_by(d: &Dependence, id: usize) -> bool {
    let Some(p) = d.loops.iter().position(|x| *x == id) else {
        return false;
    };
    d.directions[..p].iter().all(|x| *x == Dir::Eq) && d.directions[p] == Dir::Lt
}

pub(crate) fn unroll_jam(l: &mut Loop, factor: u32, cx: &mut Ctx) -> Result<(), Refusal> {
    if !(2..=16).contains(&factor) {
        return Err(cx.na(format!("unroll-and-jam factor {factor} (2..=16)")));
    }
    if l.step != 1 || !matches!(l.cmp, LoopCmp::Lt | LoopCmp::Le) {
        return Err(cx.na(format!(
            "loop '{}' is not an increasing unit-step loop",
            l.var
        )));
    }
    let inner = crate::program::loops(&l.body);
    let band: Vec<&Loop> = std::iter::once(&*l).chain(inner.iter().copied()).collect();
    check_pragma_free(&band, cx.k)?;
    if inner.iter().any(|x| x.var == l.var) {
        return Err(cx.na(format!("an inner loop reuses the variable '{}'", l.var)));
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
    let mut decls: Vec<(String, DType)> = Vec::new();
    let mut local_array = None;
    crate::program::walk_nodes(&l.body, &mut |n, _| {
        if let Node::Decl(d) = n {
            if !d.dims.is_empty() {
                local_array = Some(d.name.clone());
            } else if !decls.iter().any(|(x, _)| x == &d.name) {
                decls.push((d.name.clone(), d.dtype));
            }
        }
    });
    if let Some(a) = local_array {
        return Err(cx.na(format!("the loop declares the local array '{a}'")));
    }
    // Copies rename the loop's declarations: every use must be in a declaration's scope.
    let declared: BTreeSet<String> = decls.iter().map(|(n, _)| n.clone()).collect();
    if let Some(v) = used_out_of_scope(&l.body, &declared, &mut Vec::new()) {
        return Err(cx.na(format!(
            "'{v}' is declared inside the loop and also used outside that declaration"
        )));
    }

    // Legality: no dependence carried by the loop runs backwards in the jammed order.
    let mut paths = HashMap::new();
    jam_paths(&l.body, &l.var, &written, &mut Vec::new(), &mut paths);
    for d in &cx.an.deps {
        if !carried_by(d, l.id) {
            continue;
        }
        let (a, b) = (&cx.an.accesses[d.source], &cx.an.accesses[d.sink]);
        // Declared inside the loop: every copy gets its own variable.
        if a.private_in.contains(&l.id) || b.private_in.contains(&l.id) {
            continue;
        }
        match (paths.get(&a.stmt), paths.get(&b.stmt)) {
            (Some(pa), Some(pb)) => {
                if jam_reverses(d, pa, pb) {
                    return Err(cx.illegal(format!(
                        "dependence on '{}' with directions {:?} would run backwards once \
                         the copies of '{}' are jammed",
                        d.array, d.directions, l.var
                    )));
                }
            }
            _ => {
                return Err(cx.illegal(format!(
                    "dependence on '{}' through a condition, loop bound or declaration",
                    d.array
                )))
            }
        }
    }

    let f = factor as i64;
    let mut copies = Vec::new();
    for c in 0..f {
        let mut body = l.body.clone();
        if c > 0 {
            subst_nodes(&mut body, &l.var, &plus(var(&l.var), c));
            let mut renames = HashMap::new();
            for (name, dtype) in &decls {
                let new = cx.fresh(&format!("{name}_{c}"));
                cx.declare(&new, *dtype);
                renames.insert(name.clone(), new);
            }
            rename_nodes(&mut body, &renames);
        }
        copies.push(body);
    }
    let jammed = jam(&copies, &l.var, &written);
    let rvar = cx.fresh(&format!("{}_r", l.var));
    let mut rem = header_of(l);
    rem.var = rvar.clone();
    rem.declares_var = true;
    rem.init = var(&l.var);
    rem.body = l.body.clone();
    subst_nodes(&mut rem.body, &l.var, &var(&rvar));
    let guard = binary(cmp_op(l.cmp), plus(var(&l.var), f - 1), l.bound.clone());
    l.step = f;
    l.body = vec![Node::If(If {
        cond: guard,
        then_body: jammed,
        else_body: vec![Node::Loop(rem)],
        pos: l.pos,
    })];
    Ok(())
}

/// A name of `declared` that `body` uses where no declaration of it is in scope.
pub(crate) fn used_out_of_scope(
    body: &[Node],
    declared: &BTreeSet<String>,
    scope: &mut Vec<String>,
) -> Option<String> {
    let mark = scope.len();
    let mut found = None;
    let check = |e: &Expr, scope: &Vec<String>, found: &mut Option<String>| {
        e.walk(&mut |x| {
            if let Expr::Var(v) = x {
                if declared.contains(v) && !scope.contains(v) && found.is_none() {
                    *found = Some(v.clone());
                }
            }
        })
    };
    for n in body {
        match n {
            Node::Decl(d) => {
                d.dims
                    .iter()
                    .chain(&d.init)
                    .for_each(|e| check(e, scope, &mut found));
                scope.push(d.name.clone());
            }
            Node::Assign(a) => {
                check(&a.target, scope, &mut found);
                check(&a.value, scope, &mut found);
            }
            Node::If(i) => {
                check(&i.cond, scope, &mut found);
                found = found
                    .or_else(|| used_out_of_scope(&i.then_body, declared, scope))
                    .or_else(|| used_out_of_scope(&i.else_body, declared, scope));
            }
            Node::Block(b) => found = found.or_else(|| used_out_of_scope(b, declared, scope)),
            Node::Opaque(_) => {}
            Node::Loop(l) => {
                check(&l.init, scope, &mut found);
                check(&l.bound, scope, &mut found);
                found = found.or_else(|| used_out_of_scope(&l.body, declared, scope));
            }
        }
        if found.is_some() {
            break;
        }
    }
    scope.truncate(mark);
    found
}

/// Merges copies of a body (same shape): loops, blocks and conditionals that are the
/// same in every copy are merged and their bodies jammed; runs of other nodes are
/// replicated, copy after copy.
pub(crate) fn jam(copies: &[Vec<Node>], v: &str, written: &BTreeSet<String>) -> Vec<Node> {
    let mut out = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let flush = |run: &mut Vec<usize>, out: &mut Vec<Node>| {
        for c in copies {
            out.extend(run.iter().map(|&i| c[i].clone()));
        }
        run.clear();
    };
    for (i, n) in copies[0].iter().enumerate() {
        let kind = jam_kind(n, v, written);
        if kind == JamKind::Other {
            run.push(i);
            continue;
        }
        flush(&mut run, &mut out);
        match n {
            Node::Loop(x) => {
                let bodies: Vec<Vec<Node>> = copies
                    .iter()
                    .map(|c| match &c[i] {
                        Node::Loop(y) => y.body.clone(),
                        _ => unreachable!("copies have the same shape"),
                    })
                    .collect();
                let mut h = header_of(x);
                h.body = jam(&bodies, v, written);
                out.push(Node::Loop(h));
            }
            Node::Block(_) => {
                let bodies: Vec<Vec<Node>> = copies
                    .iter()
                    .map(|c| match &c[i] {
                        Node::Block(b) => b.clone(),
                        _ => unreachable!("copies have the same shape"),
                    })
                    .collect();
                out.push(Node::Block(jam(&bodies, v, written)));
            }
            Node::If(x) => {
                let (mut thens, mut elses) = (Vec::new(), Vec::new());
                for c in copies {
                    match &c[i] {
                        Node::If(y) => {
                            thens.push(y.then_body.clone());
                            elses.push(y.else_body.clone());
                        }
                        _ => unreachable!("copies have the same shape"),
                    }
                }
                out.push(Node::If(If {
                    cond: x.cond.clone(),
                    then_body: jam(&thens, v, written),
                    else_body: jam(&elses, v, written),
                    pos: x.pos,
                }));
            }
            Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {
                unreachable!("statements are in runs")
            }
        }
    }
    flush(&mut run, &mut out);
    out
}
