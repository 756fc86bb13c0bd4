//! Checkpoints: a directory with `weights.bin` (the tensors, in this crate's own
//! deterministic, checksummed format), `meta.json` (configuration, provenance, losses)
//! and `train.json` (wall time of the training run).
//!
//! `weights.bin` and `meta.json` depend only on the training inputs, so training twice
//! with the same seed writes byte-identical files; the wall time lives in `train.json`
//! for that reason (it is informational, and a missing or unreadable `train.json` does
//! not prevent loading).
//!
//! `weights.bin` layout, all integers little-endian:
//! ```text
//! magic    8 bytes  "TUNEMDLW"
//! version  u32      WEIGHTS_VERSION
//! count    u32      number of tensors
//! count ×  name_len u32, name (UTF-8), ndim u32, dims u64 × ndim, data f32 × prod(dims)
//! blake3   32 bytes of everything above
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tch::Tensor;

use crate::config::{ModelConfig, TrainOptions};
use crate::error::{Error, Result};
use crate::model::Model;
use crate::net::param_shapes;

/// Version of `meta.json`'s layout (and of the checkpoint as a whole).
pub const FORMAT_VERSION: u32 = 1;
/// Version of `weights.bin`'s layout.
pub const WEIGHTS_VERSION: u32 = 1;
/// Magic bytes at the start of `weights.bin`.
pub const WEIGHTS_MAGIC: &[u8; 8] = b"TUNEMDLW";
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
    model: Model,
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
    pub(crate) fn from_parts(
        meta: CheckpointMeta,
        model: Model,
        train_seconds: Option<f64>,
    ) -> Checkpoint {
        Checkpoint {
            meta,
            train_seconds,
            model,
        }
    }

    /// The trained network.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The trained network, dropping the metadata.
    pub fn into_model(self) -> Model {
        self.model
    }

    /// Writes the checkpoint into directory `dir` (created if needed; existing checkpoint
    /// files there are replaced): `weights.bin`, `meta.json`, `train.json`.
    pub fn save(&self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = dir.as_ref();
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        let weights = encode_weights(&self.model)?;
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
        let tensors = decode_weights(&weights).map_err(|r| ckpt_err(&weights_path, r))?;
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
        check_shapes(&tensors, &param_shapes(&meta.config))
            .map_err(|r| ckpt_err(&weights_path, r))?;
        let model = Model::new(meta.config.clone(), 0)?;
        assign(&model, tensors).map_err(|r| ckpt_err(&weights_path, r))?;
        let train_seconds = fs::read(dir.join(TRAIN_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice::<TrainStats>(&b).ok())
            .map(|s| s.train_seconds);
        Ok(Checkpoint {
            meta,
            train_seconds,
            model,
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

/// A tensor read from `weights.bin`.
struct Named {
    name: String,
    dims: Vec<i64>,
    data: Vec<f32>,
}

/// Serializes every parameter of `model`, in their fixed order (see the module docs).
pub(crate) fn encode_weights(model: &Model) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    out.extend_from_slice(WEIGHTS_MAGIC);
    out.extend_from_slice(&WEIGHTS_VERSION.to_le_bytes());
    out.extend_from_slice(&(model.net.params.len() as u32).to_le_bytes());
    for (name, t) in &model.net.params {
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        let dims = t.size();
        out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
        for d in &dims {
            out.extend_from_slice(&(*d as u64).to_le_bytes());
        }
        let numel = t.numel();
        let mut data = vec![0f32; numel];
        t.f_detach()?
            .f_contiguous()?
            .f_copy_data(&mut data, numel)?;
        for v in data {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    let sum = blake3::hash(&out);
    out.extend_from_slice(sum.as_bytes());
    Ok(out)
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| format!("truncated at byte {}", self.pos))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
}

fn decode_weights(bytes: &[u8]) -> std::result::Result<Vec<Named>, String> {
    if bytes.len() < WEIGHTS_MAGIC.len() + 8 + 32 || &bytes[..8] != WEIGHTS_MAGIC {
        return Err("not a weights file (bad magic or too short)".into());
    }
    let (body, sum) = bytes.split_at(bytes.len() - 32);
    if blake3::hash(body).as_bytes() != sum {
        return Err("checksum mismatch (file damaged)".into());
    }
    let mut r = Reader {
        bytes: body,
        pos: 8,
    };
    let version = r.u32()?;
    if version != WEIGHTS_VERSION {
        return Err(format!(
            "weights format version {version}, this build reads {WEIGHTS_VERSION}"
        ));
    }
    let count = r.u32()? as usize;
    let mut out = Vec::new();
    for _ in 0..count {
        let len = r.u32()? as usize;
        let name = std::str::from_utf8(r.take(len)?)
            .map_err(|_| "tensor name is not UTF-8".to_string())?
            .to_string();
        let ndim = r.u32()? as usize;
        if ndim > 8 {
            return Err(format!("tensor {name} has {ndim} dimensions"));
        }
        let mut dims = Vec::with_capacity(ndim);
        let mut numel = 1usize;
        for _ in 0..ndim {
            let d = r.u64()?;
            numel = usize::try_from(d)
                .ok()
                .and_then(|d| numel.checked_mul(d))
                .filter(|&n| n <= body.len() / 4)
                .ok_or_else(|| format!("tensor {name} is larger than the file"))?;
            dims.push(d as i64);
        }
        let raw = r.take(numel * 4)?;
        let data = raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        out.push(Named { name, dims, data });
    }
    if r.pos != body.len() {
        return Err(format!("{} trailing bytes", body.len() - r.pos));
    }
    Ok(out)
}

/// Checks that the loaded tensors are exactly the parameters `expected` (names, order,
/// shapes) and hold finite values.
fn check_shapes(
    tensors: &[Named],
    expected: &[(String, Vec<i64>)],
) -> std::result::Result<(), String> {
    if tensors.len() != expected.len() {
        return Err(format!(
            "{} tensors, the configuration needs {}",
            tensors.len(),
            expected.len()
        ));
    }
    for (t, (name, dims)) in tensors.iter().zip(expected) {
        if &t.name != name {
            return Err(format!("tensor {} where {name} was expected", t.name));
        }
        if &t.dims != dims {
            return Err(format!(
                "tensor {name} has shape {:?}, the configuration needs {dims:?}",
                t.dims
            ));
        }
        if let Some(v) = t.data.iter().find(|v| !v.is_finite()) {
            return Err(format!("tensor {name} holds a non-finite value ({v})"));
        }
    }
    Ok(())
}

/// Copies checked tensors into `model`'s parameters.
fn assign(model: &Model, tensors: Vec<Named>) -> std::result::Result<(), String> {
    for (t, (name, var)) in tensors.into_iter().zip(&model.net.params) {
        if t.dims != var.size() {
            return Err(format!(
                "internal: tensor {name} does not fit its parameter"
            ));
        }
        let src = Tensor::f_from_slice(&t.data)
            .and_then(|s| s.f_reshape(&t.dims))
            .map_err(|e| e.to_string())?;
        let mut var = var.shallow_clone();
        tch::no_grad(|| var.f_copy_(&src)).map_err(|e| e.to_string())?;
    }
    Ok(())
}
