//! [`train`] in a build without the `train` feature: there is no libtorch to train with.

use crate::checkpoint::Checkpoint;
use crate::config::{FeatureInfo, ModelConfig, TrainOptions};
use crate::error::{Error, Result};
use crate::input::Example;

/// Training is not part of this build (the `train` feature is off): always
/// [`Error::NoTraining`].
pub fn train(
    _examples: &[Example],
    _config: &ModelConfig,
    _options: &TrainOptions,
    _features: FeatureInfo,
) -> Result<Checkpoint> {
    Err(Error::NoTraining)
}
