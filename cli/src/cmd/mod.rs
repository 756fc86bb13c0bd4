//! One module per group of subcommands.

pub mod batch;
pub mod bench;
pub mod db;

/// `--preset NAME`: a dataset size of the suite manifests.
pub fn parse_preset(s: &str) -> Result<datasets::Preset, String> {
    datasets::Preset::parse(s).map_err(|e| e.to_string())
}

/// Events of the long `db` workflows as lines on stderr.
pub fn lines() -> tuner::Events {
    std::sync::Arc::new(|e| {
        if let tuner::Event::Done { line } = e {
            eprintln!("{line}")
        }
    })
}

/// `--strategy NAME`: one of `tuner::StrategyKind`, refused with the list of names.
pub fn parse_strategy(s: &str) -> Result<tuner::StrategyKind, String> {
    s.parse().map_err(|e: tuner::Error| e.to_string())
}

/// A count that must be at least 1 (`--top-k`): refused before any work starts.
pub fn positive_count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}
