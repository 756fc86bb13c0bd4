//! The tree-rewrite toolkit of the passes: locating loops by position, rebuilding headers, building and rewriting expressions, renaming, renumbering, fresh names.

use super::*;

/// How a route enters a node: a loop's or block's body, or a branch of an `if`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    Body,
    Then,
    Else,
}

/// The route from `root`'s body to the loop at preorder position `at` (>= 1): per
/// level, the node's index and how to enter it; the last entry is the loop itself.
/// Empty for the root.
pub(crate) fn locate(root: &Loop, at: usize) -> Option<Vec<(usize, Via)>> {
    fn go(body: &[Node], at: usize, counter: &mut usize, route: &mut Vec<(usize, Via)>) -> bool {
        for (i, n) in body.iter().enumerate() {
            match n {
                Node::Loop(l) => {
                    route.push((i, Via::Body));
                    if *counter == at {
                        return true;
                    }
                    *counter += 1;
                    if go(&l.body, at, counter, route) {
                        return true;
                    }
                    route.pop();
                }
                Node::Block(b) => {
                    route.push((i, Via::Body));
                    if go(b, at, counter, route) {
                        return true;
                    }
                    route.pop();
                }
                Node::If(x) => {
                    route.push((i, Via::Then));
                    if go(&x.then_body, at, counter, route) {
                        return true;
                    }
                    route.pop();
                    route.push((i, Via::Else));
                    if go(&x.else_body, at, counter, route) {
                        return true;
                    }
                    route.pop();
                }
                Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {}
            }
        }
        false
    }
    if at == 0 {
        return Some(Vec::new());
    }
    let mut route = Vec::new();
    go(&root.body, at, &mut 1, &mut route).then_some(route)
}

/// The body that holds the loop a (non-empty) route leads to, and its index there.
pub(crate) fn parent_mut<'a>(
    root: &'a mut Loop,
    route: &[(usize, Via)],
) -> (&'a mut Vec<Node>, usize) {
    let (last, inner) = route.split_last().expect("not the root");
    let mut body = &mut root.body;
    for (i, via) in inner {
        body = match (&mut body[*i], via) {
            (Node::Loop(l), _) => &mut l.body,
            (Node::Block(b), _) => b,
            (Node::If(x), Via::Then) => &mut x.then_body,
            (Node::If(x), _) => &mut x.else_body,
            _ => unreachable!("routes lead through containers"),
        };
    }
    (body, last.0)
}

/// The loop at preorder position `at` (0 = `root`).
pub(crate) fn loop_at(root: &Loop, at: usize) -> Option<&Loop> {
    if at == 0 {
        return Some(root);
    }
    crate::program::loops(&root.body).get(at - 1).copied()
}

/// The loop at preorder position `at` (0 = `root`).
pub(crate) fn loop_at_mut(root: &mut Loop, at: usize) -> Option<&mut Loop> {
    fn go<'a>(l: &'a mut Loop, at: usize, counter: &mut usize) -> Option<&'a mut Loop> {
        if *counter == at {
            return Some(l);
        }
        *counter += 1;
        for n in l.body.iter_mut() {
            if let Some(r) = go_node(n, at, counter) {
                return Some(r);
            }
        }
        None
    }
    fn go_node<'a>(n: &'a mut Node, at: usize, counter: &mut usize) -> Option<&'a mut Loop> {
        match n {
            Node::Loop(l) => go(l, at, counter),
            Node::If(i) => {
                for x in i.then_body.iter_mut().chain(i.else_body.iter_mut()) {
                    if let Some(r) = go_node(x, at, counter) {
                        return Some(r);
                    }
                }
                None
            }
            Node::Block(b) => {
                for x in b.iter_mut() {
                    if let Some(r) = go_node(x, at, counter) {
                        return Some(r);
                    }
                }
                None
            }
            Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => None,
        }
    }
    go(root, at, &mut 0)
}

pub(crate) fn var(name: &str) -> Expr {
    Expr::Var(name.to_string())
}

pub(crate) fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr::Binary {
        op,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
    }
}

/// `e + c` (`e - |c|` for negative `c`, `e` for zero).
pub(crate) fn plus(e: Expr, c: i64) -> Expr {
    match c {
        0 => e,
        c if c > 0 => binary(BinOp::Add, e, Expr::int(c)),
        c => binary(BinOp::Sub, e, Expr::int(-c)),
    }
}

/// `e + factor * t` (`e - |factor| * t` for negative factors; no `1 *`).
pub(crate) fn add_scaled(e: Expr, factor: i64, t: &str) -> Expr {
    let mag = factor.unsigned_abs() as i64;
    let term = if mag == 1 {
        var(t)
    } else {
        binary(BinOp::Mul, Expr::int(mag), var(t))
    };
    binary(if factor < 0 { BinOp::Sub } else { BinOp::Add }, e, term)
}

/// `a < b ? a : b`
pub(crate) fn min_expr(a: Expr, b: Expr) -> Expr {
    Expr::Ternary {
        cond: Box::new(binary(BinOp::Lt, a.clone(), b.clone())),
        then: Box::new(a),
        other: Box::new(b),
    }
}

/// `a < b ? b : a`
pub(crate) fn max_expr(a: Expr, b: Expr) -> Expr {
    Expr::Ternary {
        cond: Box::new(binary(BinOp::Lt, a.clone(), b.clone())),
        then: Box::new(b),
        other: Box::new(a),
    }
}

pub(crate) fn cmp_op(c: LoopCmp) -> BinOp {
    match c {
        LoopCmp::Lt => BinOp::Lt,
        LoopCmp::Le => BinOp::Le,
        LoopCmp::Gt => BinOp::Gt,
        LoopCmp::Ge => BinOp::Ge,
    }
}

pub(crate) fn assign(target: Expr, value: Expr, pos: crate::program::Pos) -> Node {
    Node::Assign(Assign {
        id: 0,
        target,
        op: AssignOp::Set,
        value,
        pos,
    })
}

/// Ids of the statements in a node.
pub(crate) fn stmt_ids(n: &Node) -> Vec<usize> {
    let mut out = Vec::new();
    crate::program::walk_nodes(std::slice::from_ref(n), &mut |x, _| {
        if let Node::Assign(a) = x {
            out.push(a.id);
        }
    });
    out
}

/// Ids of the loops in a node (itself included).
pub(crate) fn loops_of(n: &Node) -> Vec<usize> {
    crate::program::loops(std::slice::from_ref(n))
        .iter()
        .map(|l| l.id)
        .collect()
}

pub(crate) fn node_mentions(n: &Node, name: &str) -> bool {
    let mut found = false;
    for_each_expr(std::slice::from_ref(n), &mut |e| found |= e.mentions(name));
    found
}

/// Calls `f` on every top-level expression of a body (statements, declarations,
/// conditions, loop headers), recursively.
pub(crate) fn for_each_expr(body: &[Node], f: &mut dyn FnMut(&Expr)) {
    for n in body {
        match n {
            Node::Assign(a) => {
                f(&a.target);
                f(&a.value);
            }
            Node::Decl(d) => {
                d.dims.iter().for_each(&mut *f);
                if let Some(e) = &d.init {
                    f(e);
                }
            }
            Node::If(i) => {
                f(&i.cond);
                for_each_expr(&i.then_body, f);
                for_each_expr(&i.else_body, f);
            }
            Node::Block(b) => for_each_expr(b, f),
            Node::Opaque(_) => {}
            Node::Loop(l) => {
                f(&l.init);
                f(&l.bound);
                for_each_expr(&l.body, f);
            }
        }
    }
}

/// Replaces, bottom-up where `f` declines, every sub-expression for which `f` gives a
/// replacement.
pub(crate) fn rewrite(e: &mut Expr, f: &mut dyn FnMut(&Expr) -> Option<Expr>) {
    if let Some(new) = f(e) {
        *e = new;
        return;
    }
    match e {
        Expr::Int { .. } | Expr::Float { .. } | Expr::Var(_) => {}
        Expr::Access { indices, .. } => indices.iter_mut().for_each(|x| rewrite(x, f)),
        Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => rewrite(arg, f),
        Expr::Binary { lhs, rhs, .. } => {
            rewrite(lhs, f);
            rewrite(rhs, f);
        }
        Expr::Ternary { cond, then, other } => {
            rewrite(cond, f);
            rewrite(then, f);
            rewrite(other, f);
        }
        Expr::Call { args, .. } => args.iter_mut().for_each(|x| rewrite(x, f)),
    }
}

pub(crate) fn rewrite_nodes(body: &mut [Node], f: &mut dyn FnMut(&Expr) -> Option<Expr>) {
    for n in body {
        match n {
            Node::Assign(a) => {
                rewrite(&mut a.target, f);
                rewrite(&mut a.value, f);
            }
            Node::Decl(d) => {
                d.dims.iter_mut().for_each(|x| rewrite(x, f));
                if let Some(e) = &mut d.init {
                    rewrite(e, f);
                }
            }
            Node::If(i) => {
                rewrite(&mut i.cond, f);
                rewrite_nodes(&mut i.then_body, f);
                rewrite_nodes(&mut i.else_body, f);
            }
            Node::Block(b) => rewrite_nodes(b, f),
            Node::Opaque(_) => {}
            Node::Loop(l) => {
                rewrite(&mut l.init, f);
                rewrite(&mut l.bound, f);
                rewrite_nodes(&mut l.body, f);
            }
        }
    }
}

/// Replaces the variable `name` by `with` everywhere in `body`.
pub(crate) fn subst_nodes(body: &mut [Node], name: &str, with: &Expr) {
    rewrite_nodes(body, &mut |e| {
        matches!(e, Expr::Var(v) if v == name).then(|| with.clone())
    });
}

/// Renames declared scalars (declarations and uses).
pub(crate) fn rename_nodes(body: &mut [Node], renames: &HashMap<String, String>) {
    rewrite_nodes(body, &mut |e| match e {
        Expr::Var(v) => renames.get(v).map(|n| var(n)),
        _ => None,
    });
    fn decls(body: &mut [Node], renames: &HashMap<String, String>) {
        for n in body {
            match n {
                Node::Decl(d) => {
                    if let Some(new) = renames.get(&d.name) {
                        d.name = new.clone();
                    }
                }
                Node::If(i) => {
                    decls(&mut i.then_body, renames);
                    decls(&mut i.else_body, renames);
                }
                Node::Block(b) => decls(b, renames),
                Node::Opaque(_) => {}
                Node::Loop(l) => decls(&mut l.body, renames),
                Node::Assign(_) => {}
            }
        }
    }
    decls(body, renames);
}

pub(crate) fn path_to_loop(body: &[Node], id: usize) -> Option<Vec<usize>> {
    for (i, n) in body.iter().enumerate() {
        match n {
            Node::Loop(l) if l.id == id => return Some(vec![i]),
            Node::Loop(l) => {
                if let Some(mut p) = path_to_loop(&l.body, id) {
                    p.insert(0, i);
                    return Some(p);
                }
            }
            Node::Block(b) => {
                if let Some(mut p) = path_to_loop(b, id) {
                    p.insert(0, i);
                    return Some(p);
                }
            }
            Node::If(x) => {
                // then-branch indices first, else-branch after them
                let both: Vec<Node> = x.then_body.iter().chain(&x.else_body).cloned().collect();
                if let Some(mut p) = path_to_loop(&both, id) {
                    p.insert(0, i);
                    return Some(p);
                }
            }
            Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => {}
        }
    }
    None
}

pub(crate) fn loop_at_path_mut<'a>(body: &'a mut [Node], path: &[usize]) -> &'a mut Loop {
    let (first, rest) = path.split_first().expect("non-empty path");
    match &mut body[*first] {
        Node::Loop(l) => {
            if rest.is_empty() {
                l
            } else {
                loop_at_path_mut(&mut l.body, rest)
            }
        }
        Node::Block(b) => loop_at_path_mut(b, rest),
        Node::If(x) => {
            let (r0, r1) = rest.split_first().expect("path continues");
            let n_then = x.then_body.len();
            let sub = if *r0 < n_then {
                std::slice::from_mut(&mut x.then_body[*r0])
            } else {
                std::slice::from_mut(&mut x.else_body[*r0 - n_then])
            };
            let mut p = vec![0];
            p.extend_from_slice(r1);
            loop_at_path_mut(sub, &p)
        }
        _ => unreachable!("paths lead to loops"),
    }
}

/// Loop ids in preorder again, after a transformation added or moved loops.
pub(crate) fn renumber(body: &mut [Node]) {
    let mut next = 0;
    crate::program::for_each_loop_mut(body, &mut |l| {
        l.id = next;
        next += 1;
    });
}

/// Statement ids in source order again, after a transformation copied statements.
pub(crate) fn renumber_statements(body: &mut [Node]) {
    fn go(body: &mut [Node], next: &mut usize) {
        for n in body {
            match n {
                Node::Assign(a) => {
                    a.id = *next;
                    *next += 1;
                }
                Node::Loop(l) => go(&mut l.body, next),
                Node::If(i) => {
                    go(&mut i.then_body, next);
                    go(&mut i.else_body, next);
                }
                Node::Block(b) => go(b, next),
                Node::Decl(_) | Node::Opaque(_) => {}
            }
        }
    }
    go(body, &mut 0);
}

/// Every name in use: arrays, scalars and loop variables of all regions.
pub(crate) fn used_names(p: &Program) -> BTreeSet<String> {
    let mut s: BTreeSet<String> = p
        .arrays
        .iter()
        .map(|a| a.name.clone())
        .chain(p.scalars.iter().map(|x| x.name.clone()))
        .collect();
    for r in &p.regions {
        for l in crate::program::loops(&r.body) {
            s.insert(l.var.clone());
        }
        crate::program::walk_nodes(&r.body, &mut |n, _| {
            if let Node::Decl(d) = n {
                s.insert(d.name.clone());
            }
        });
    }
    s
}

pub(crate) fn fresh(base: &str, taken: &mut BTreeSet<String>) -> String {
    let mut name = base.to_string();
    let mut k = 1;
    while taken.contains(&name) {
        name = format!("{base}{k}");
        k += 1;
    }
    taken.insert(name.clone());
    name
}

/// Replaces the statement that is loop `id` (anywhere in `body`) by `with`; whether it
/// was found.
pub(crate) fn replace_loop_node(body: &mut [Node], id: usize, with: &mut Option<Node>) -> bool {
    for n in body.iter_mut() {
        let found = match n {
            Node::Loop(l) if l.id == id => {
                if let Some(w) = with.take() {
                    *n = w;
                }
                return true;
            }
            Node::Loop(l) => replace_loop_node(&mut l.body, id, with),
            Node::Block(b) => replace_loop_node(b, id, with),
            Node::If(x) => {
                replace_loop_node(&mut x.then_body, id, with)
                    || replace_loop_node(&mut x.else_body, id, with)
            }
            Node::Assign(_) | Node::Decl(_) | Node::Opaque(_) => false,
        };
        if found {
            return true;
        }
    }
    false
}
