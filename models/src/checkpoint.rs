//! Checkpoints: a directory with `weights.bin` (the tensors, in this crate's own
//! deterministic, checksummed format: [`crate::weights`]), `meta.json` (configuration,
//! provenance, losses) and `train.json` (wall time of the training run).
//!
//! `weights.bin` and `meta.json` depend only on the training inputs, so training twice
//! with the same seed writes byte-identical files; the wall time lives in `train.json`
//! for that reason (it is informational, and a missing or unreadable `train.json` does
//! not prevent loading).
//!
//! Reading and writing a checkpoint needs no libtorch: the weights are read into a
//! [`Network`], the plain-Rust inference network.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{ModelConfig, TrainOptions};
use crate::error::{Error, Result};
use crate::infer::Network;
use crate::layout::param_shapes;
use crate::weights::{check, decode, encode};
pub use crate::weights::{WEIGHTS_MAGIC, WEIGHTS_VERSION};

/// Version of `meta.json`'s layout (and of the checkpoint as a whole).
pub const FORMAT_VERSION: u32 = 1;
/// File name of the weights inside a checkpoint directory.
pub const WEIGHTS_FILE: &str = "weights.bin";
/// File name of the metadata inside a checkpoint directory.
pub const META_FILE: &str = "meta.json";
/// File name of the (informational) training statistics inside a checkpoint directory.
pub const TRAIN_FILE: &str = "train.json";

/// Everything about a trained model except its weights (`meta.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// Shape of the network.
    pub config: ModelConfig,
    /// Feature layout version given by the caller at training time.
    pub feature_version: u32,
    /// Opaque normalization parameters given by the caller at training time.
    pub normalization: serde_json::Value,
    /// Training seed (same as `options.seed`).
    pub seed: u64,
    /// Epochs trained (same as `options.epochs`).
    pub epochs: usize,
    /// All training options.
    pub options: TrainOptions,
    /// [`data_hash`](crate::data_hash) of the training examples.
    pub data_hash: String,
    /// Number of training examples.
    pub n_examples: usize,
    /// Mean L1 training loss of every epoch (averaged over the epoch's batches).
    pub losses: Vec<f32>,
    /// Last entry of `losses`.
    pub final_loss: f32,
    /// Per-target mean absolute error on the training set after training.
    pub train_mae: Vec<f32>,
    /// blake3 (hex) of `weights.bin`; binds the metadata to its weights.
    pub weights_hash: String,
}

/// Statistics of the training run that are not repeatable (`train.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct TrainStats {
    train_seconds: f64,
}

/// A trained model with its metadata.
#[derive(Debug)]
pub struct Checkpoint {
    /// Configuration, provenance and losses.
    pub meta: CheckpointMeta,
    /// Wall time of the training run in seconds, when known.
    pub train_seconds: Option<f64>,
    network: Network,
}

fn ckpt_err(path: &Path, reason: impl Into<String>) -> Error {
    Error::Checkpoint {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, bytes).map_err(io_err(&tmp))?;
    fs::rename(&tmp, path).map_err(io_err(path))
}

impl Checkpoint {
    #[cfg(feature = "train")]
    pub(crate) fn from_parts(
        meta: CheckpointMeta,
        network: Network,
        train_seconds: Option<f64>,
    ) -> Checkpoint {
        Checkpoint {
            meta,
            train_seconds,
            network,
        }
    }

    /// The trained network (plain-Rust inference).
    pub fn network(&self) -> &Network {
        &self.network
    }

    /// The trained network, dropping the metadata.
    pub fn into_network(self) -> Network {
        self.network
    }

    /// The trained network as a libtorch [`Model`](crate::Model) with the same weights.
    #[cfg(feature = "train")]
    pub fn torch_model(&self) -> Result<crate::Model> {
        crate::Model::from_network(&self.network)
    }

    /// Writes the checkpoint into directory `dir` (created if needed; existing checkpoint
    /// files there are replaced): `weights.bin`, `meta.json`, `train.json`.
    pub fn save(&self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = dir.as_ref();
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        let weights = encode(self.network.params());
        let hash = blake3::hash(&weights).to_hex().to_string();
        if hash != self.meta.weights_hash {
            // Only possible if the caller edited `meta` by hand.
            return Err(ckpt_err(
                dir,
                "meta.weights_hash does not match the model's weights",
            ));
        }
        let mut meta = serde_json::to_vec_pretty(&self.meta)
            .map_err(|e| ckpt_err(dir, format!("cannot serialize metadata: {e}")))?;
        meta.push(b'\n');
        write_atomic(&dir.join(WEIGHTS_FILE), &weights)?;
        write_atomic(&dir.join(META_FILE), &meta)?;
        let train = dir.join(TRAIN_FILE);
        match self.train_seconds {
            Some(train_seconds) => {
                let mut bytes = serde_json::to_vec_pretty(&TrainStats { train_seconds })
                    .map_err(|e| ckpt_err(dir, format!("cannot serialize statistics: {e}")))?;
                bytes.push(b'\n');
                write_atomic(&train, &bytes)?;
            }
            None => match fs::remove_file(&train) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(io_err(&train)(e));
                }
                _ => {}
            },
        }
        Ok(())
    }

    /// Loads a checkpoint directory written by [`Checkpoint::save`] (a path to its
    /// `meta.json` is accepted too). Refuses, with [`Error::Checkpoint`] or
    /// [`Error::Io`], a missing file, unparsable metadata, another format version, an
    /// invalid configuration, weights that are damaged (checksum), of another format,
    /// not the ones the metadata was written with, or whose names or shapes do not match
    /// the configuration.
    pub fn load(path: impl AsRef<Path>) -> Result<Checkpoint> {
        let path = path.as_ref();
        let dir: PathBuf = if path.file_name().is_some_and(|n| n == META_FILE) && path.is_file() {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            path.to_path_buf()
        };
        let meta_path = dir.join(META_FILE);
        let bytes = fs::read(&meta_path).map_err(io_err(&meta_path))?;
        let meta: CheckpointMeta = serde_json::from_slice(&bytes)
            .map_err(|e| ckpt_err(&meta_path, format!("unreadable metadata: {e}")))?;
        if meta.format_version != FORMAT_VERSION {
            return Err(ckpt_err(
                &meta_path,
                format!(
                    "format version {}, this build reads {FORMAT_VERSION}",
                    meta.format_version
                ),
            ));
        }
        meta.config
            .validate()
            .map_err(|e| ckpt_err(&meta_path, e.to_string()))?;
        let weights_path = dir.join(WEIGHTS_FILE);
        let weights = fs::read(&weights_path).map_err(io_err(&weights_path))?;
        let tensors = decode(&weights).map_err(|r| ckpt_err(&weights_path, r))?;
        let hash = blake3::hash(&weights).to_hex().to_string();
        if hash != meta.weights_hash {
            return Err(ckpt_err(
                &dir,
                format!(
                    "{WEIGHTS_FILE} (blake3 {hash}) is not the file {META_FILE} was written with ({})",
                    meta.weights_hash
                ),
            ));
        }
        // Names and shapes are checked before the network is built, so a damaged
        // configuration cannot make us allocate more than the file holds.
        check(&tensors, &param_shapes(&meta.config)).map_err(|r| ckpt_err(&weights_path, r))?;
        let network = Network::from_params(meta.config.clone(), tensors)
            .map_err(|e| ckpt_err(&weights_path, e.to_string()))?;
        let train_seconds = fs::read(dir.join(TRAIN_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice::<TrainStats>(&b).ok())
            .map(|s| s.train_seconds);
        Ok(Checkpoint {
            meta,
            train_seconds,
            network,
        })
    }

    /// [`Checkpoint::load`], then refuses a checkpoint whose feature version is not
    /// `feature_version` ([`Error::FeatureVersion`]).
    pub fn load_expecting(path: impl AsRef<Path>, feature_version: u32) -> Result<Checkpoint> {
        let ck = Checkpoint::load(path.as_ref())?;
        if ck.meta.feature_version != feature_version {
            return Err(Error::FeatureVersion {
                path: path.as_ref().to_path_buf(),
                found: ck.meta.feature_version,
                expected: feature_version,
            });
        }
        Ok(ck)
    }
}
