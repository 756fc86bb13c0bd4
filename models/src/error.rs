//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong in this crate. Nothing here panics on bad input or on a
/// damaged checkpoint: every refusal is one of these variants.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A [`ModelConfig`](crate::ModelConfig) or [`TrainOptions`](crate::TrainOptions)
    /// that cannot be used (zero widths, zero epochs, ...).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An input that does not fit the model's configuration (row widths, indices out of
    /// range, non-finite values, ...). `index` is the position of the offending nest or
    /// example in the slice that was passed in.
    #[error("invalid input #{index}: {reason}")]
    Input {
        /// Position of the nest / example in the slice.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// Training was asked for on an empty example set.
    #[error("no training examples")]
    NoExamples,
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A checkpoint that is damaged, incomplete, of another format version, or whose
    /// weights do not match its configuration.
    #[error("checkpoint {}: {reason}", path.display())]
    Checkpoint {
        /// The checkpoint directory or file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A checkpoint trained on another feature layout than the caller expects.
    #[error("checkpoint {} was trained with feature version {found}, expected {expected}", path.display())]
    FeatureVersion {
        /// The checkpoint directory.
        path: PathBuf,
        /// Feature version recorded in the checkpoint.
        found: u32,
        /// Feature version the caller asked for.
        expected: u32,
    },
    /// Training diverged (the loss became NaN or infinite).
    #[error("training diverged at epoch {epoch}: loss is {loss}")]
    Diverged {
        /// Epoch (0-based) at which the loss stopped being finite.
        epoch: usize,
        /// The offending loss value.
        loss: f64,
    },
    /// An error reported by libtorch (should not happen on validated inputs).
    #[cfg(feature = "train")]
    #[error("torch: {0}")]
    Torch(String),
    /// Training was asked of a build without the `train` feature (no libtorch).
    #[error(
        "this build cannot train: it was built without the `train` feature \
         (cargo build --features train, which links libtorch)"
    )]
    NoTraining,
}

#[cfg(feature = "train")]
impl From<tch::TchError> for Error {
    fn from(e: tch::TchError) -> Self {
        Error::Torch(e.to_string())
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
