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

/// How a command prints its result: `--json`, or `--format text|json`, the same options
/// on every command that prints one.
#[derive(clap::Args, Clone, Copy)]
pub struct Output {
    /// Machine-readable output: JSON (the same as --format json; `run`: on stderr, since
    /// stdout is the program's).
    #[arg(long)]
    json: bool,
    /// Output format.
    #[arg(long, value_name = "FMT", value_enum)]
    format: Option<Format>,
}

impl Output {
    pub fn json(&self) -> bool {
        self.json || self.format == Some(Format::Json)
    }
}

/// The formats of `--format` (`tune bench` adds its report formats).
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Tables for people.
    Text,
    /// JSON for programs.
    Json,
}

/// The orders of `--ranker`: in which order `tune apply` and `tune batch` try the
/// database's entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RankerArg {
    /// Nearest by the model's embedding.
    Embedding,
    /// Nearest by standardized raw features.
    Raw,
    /// The embedding's nearest entries vote, by their transfer rows, for the recipes
    /// that worked on them.
    EmbeddingVotes,
    /// The raw features' nearest entries vote the same way.
    RawVotes,
    /// The embedding's and the raw features' orders fused by their ranks.
    Fused,
    /// The fused order's nearest entries vote by their transfer rows.
    FusedVotes,
}

impl From<RankerArg> for tuner::ranker::RankerKind {
    fn from(r: RankerArg) -> Self {
        use tuner::ranker::RankerKind;
        match r {
            RankerArg::Embedding => RankerKind::Embedding,
            RankerArg::Raw => RankerKind::RawFeatures,
            RankerArg::EmbeddingVotes => RankerKind::EmbeddingVotes,
            RankerArg::RawVotes => RankerKind::RawVotes,
            RankerArg::Fused => RankerKind::Fused,
            RankerArg::FusedVotes => RankerKind::FusedVotes,
        }
    }
}

/// A number of seconds before a run is killed (`--timeout`): positive and finite,
/// refused before any work starts.
pub fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        Ok(_) => Err("must be a number of seconds above 0".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// A time budget in seconds (`--budget-s`, `--time-limit`): finite and not negative (0
/// spends none: everything that needs time is cut and listed).
pub fn budget_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Ok(_) => Err("must be a number of seconds >= 0".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// A fraction in (0, 1) (`--adaptive`).
pub fn fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        Ok(_) => Err("must lie between 0 and 1".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// A positive finite number (`--lr`).
pub fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        Ok(_) => Err("must be a number above 0".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// A file that must exist (a database to read: `--db`).
pub fn existing_file(s: &str) -> Result<std::path::PathBuf, String> {
    let p = std::path::PathBuf::from(s);
    if p.is_file() {
        Ok(p)
    } else if p.exists() {
        Err("not a file".to_string())
    } else {
        Err("no such file".to_string())
    }
}

/// A folder that must exist (a model checkpoint: `--model`; a batch folder: `--tuned`).
pub fn existing_dir(s: &str) -> Result<std::path::PathBuf, String> {
    let p = std::path::PathBuf::from(s);
    if p.is_dir() {
        Ok(p)
    } else if p.exists() {
        Err("not a folder".to_string())
    } else {
        Err("no such folder".to_string())
    }
}
