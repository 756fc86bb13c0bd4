//! The parameter layout of the network: which modules exist for a configuration, their
//! layer widths and the names, order and shapes of their parameters. Shared by the
//! training network (`net`, libtorch) and the inference network ([`crate::Network`]),
//! and what a checkpoint's weights are checked against.

use crate::config::ModelConfig;

/// The modules of the network for `config`, in creation order: name and layer widths
/// (input, hidden..., output). The single source of truth for the parameter layout.
pub(crate) fn layout(config: &ModelConfig) -> Vec<(String, Vec<usize>)> {
    let h = config.hidden;
    let mut m = vec![("loop_enc".to_string(), vec![config.loop_dim, h, h])];
    for r in 0..config.message_rounds {
        m.push((format!("message.{r}"), vec![3 * h, h]));
    }
    m.push(("access_enc".into(), vec![config.access_dim + h, h, h]));
    let mut merge_in = 4 * h + 2;
    for (name, dim) in [
        ("global_enc", config.global_dim),
        ("machine_enc", config.machine_dim),
        ("counter_enc", 2 * config.counter_dim),
    ] {
        if dim > 0 {
            m.push((name.into(), vec![dim, h, h]));
            merge_in += h;
        }
    }
    m.push(("merge".into(), vec![merge_in, 2 * h, config.embed_dim]));
    m.push(("head".into(), vec![config.embed_dim, h, config.target_dim]));
    m
}

/// Names and shapes of every parameter for `config`, in order, computed without
/// allocating anything (used to check a checkpoint before building its network).
pub(crate) fn param_shapes(config: &ModelConfig) -> Vec<(String, Vec<i64>)> {
    let mut out = Vec::new();
    for (name, dims) in layout(config) {
        for (i, w) in dims.windows(2).enumerate() {
            out.push((format!("{name}.{i}.weight"), vec![w[1] as i64, w[0] as i64]));
            out.push((format!("{name}.{i}.bias"), vec![w[1] as i64]));
        }
    }
    if config.wide {
        out.push((WIDE_SCALE.to_string(), vec![config.wide_dim() as i64]));
    }
    out
}

/// The per-column weights of the wide part ([`ModelConfig::wide`]), after every module.
pub(crate) const WIDE_SCALE: &str = "wide.scale";

/// Whether module `name` ends in a ReLU: the encoders do; the merge (embedding) and the
/// head are linear.
pub(crate) fn relu_last(name: &str) -> bool {
    name != "merge" && name != "head"
}
