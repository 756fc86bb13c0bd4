//! The libtorch network ([`Model`], `train` feature): what training optimizes, and its
//! forward pass, which the plain-Rust [`Network`] reproduces for inference.

use tch::{nn, Device, Tensor};

use crate::config::ModelConfig;
use crate::error::{Error, Result};
use crate::infer::{mean_abs_error, Network, Outputs};
use crate::input::{validate_examples, validate_inputs, Example, NestInput};
use crate::net::{rows, Batch, Net};
use crate::weights::Param;

/// Nests per forward pass at inference time (bounds memory; results do not depend on it).
const INFERENCE_BATCH: usize = 256;

/// A network with its weights, on the CPU.
///
/// `Model` is `Send` but not `Sync` (libtorch tensors are not shareable between threads
/// through `&`); wrap it in a `Mutex` to share it. Every call runs libtorch with one
/// intra-op thread on the calling thread, so results are repeatable.
pub struct Model {
    config: ModelConfig,
    // Owns the variables that `net` refers to; also what the optimizer trains.
    pub(crate) vs: nn::VarStore,
    pub(crate) net: Net,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("config", &self.config)
            .field("parameters", &self.num_parameters())
            .finish()
    }
}

/// Makes libtorch use one intra-op thread on this thread (repeatable results; the
/// setting is per thread for OpenMP and MKL).
pub(crate) fn single_thread() {
    tch::set_num_threads(1);
}

impl Model {
    /// A freshly initialized (untrained) network for `config`; the initial weights depend
    /// only on `seed`.
    pub fn new(config: ModelConfig, seed: u64) -> Result<Model> {
        config.validate()?;
        single_thread();
        let vs = nn::VarStore::new(Device::Cpu);
        let net = Net::new(&vs, &config, seed)?;
        Ok(Model { config, vs, net })
    }

    /// The configuration the network was built for.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Number of scalar parameters.
    pub fn num_parameters(&self) -> usize {
        self.net.params.iter().map(|(_, t)| t.numel()).sum()
    }

    /// Names and shapes of the parameters, in their fixed order.
    pub fn parameter_shapes(&self) -> Vec<(String, Vec<i64>)> {
        self.net
            .params
            .iter()
            .map(|(n, t)| (n.clone(), t.size()))
            .collect()
    }

    /// Embeddings and predictions of `inputs`, in order.
    pub fn embed_and_predict(&self, inputs: &[NestInput]) -> Result<Outputs> {
        validate_inputs(inputs, &self.config)?;
        let refs: Vec<&NestInput> = inputs.iter().collect();
        self.run(&refs)
    }

    /// Forward passes over validated inputs, in chunks, without gradients.
    fn run(&self, inputs: &[&NestInput]) -> Result<Outputs> {
        single_thread();
        let mut out = Outputs {
            embeddings: Vec::with_capacity(inputs.len()),
            predictions: Vec::with_capacity(inputs.len()),
        };
        for chunk in inputs.chunks(INFERENCE_BATCH) {
            let (z, y) = tch::no_grad(|| -> Result<_> {
                let batch = Batch::new(chunk, &self.config)?;
                let (z, y) = self.net.forward(&batch)?;
                Ok((rows(&z)?, rows(&y)?))
            })?;
            out.embeddings.extend(z);
            out.predictions.extend(y);
        }
        Ok(out)
    }

    /// One embedding per nest, in order ([`ModelConfig::output_dim`] values; the learned
    /// part of unit length when [`ModelConfig::normalize_embedding`]).
    pub fn embed(&self, inputs: &[NestInput]) -> Result<Vec<Vec<f32>>> {
        Ok(self.embed_and_predict(inputs)?.embeddings)
    }

    /// Predicted normalized targets (`target_dim` values) per nest, in order.
    pub fn predict(&self, inputs: &[NestInput]) -> Result<Vec<Vec<f32>>> {
        Ok(self.embed_and_predict(inputs)?.predictions)
    }

    /// Mean absolute error of the predictions, per target (`target_dim` values, in the
    /// normalized units of the targets). Refuses an empty slice.
    pub fn evaluate(&self, examples: &[Example]) -> Result<Vec<f32>> {
        if examples.is_empty() {
            return Err(Error::NoExamples);
        }
        validate_examples(examples, &self.config)?;
        let inputs: Vec<&NestInput> = examples.iter().map(|e| &e.input).collect();
        let predictions = self.run(&inputs)?.predictions;
        Ok(mean_abs_error(
            &predictions,
            examples,
            self.config.target_dim,
        ))
    }

    /// The plain-Rust inference network with this model's weights.
    pub fn to_network(&self) -> Result<Network> {
        let params = self
            .net
            .params
            .iter()
            .map(|(name, t)| {
                let numel = t.numel();
                let mut data = vec![0f32; numel];
                t.f_detach()?
                    .f_contiguous()?
                    .f_copy_data(&mut data, numel)?;
                Ok(Param {
                    name: name.clone(),
                    dims: t.size(),
                    data,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Network::from_params(self.config.clone(), params)
    }

    /// A libtorch model with the weights of `network`.
    pub fn from_network(network: &Network) -> Result<Model> {
        let model = Model::new(network.config().clone(), 0)?;
        for (p, (name, var)) in network.params().iter().zip(&model.net.params) {
            if p.name != *name || p.dims != var.size() {
                return Err(Error::Torch(format!(
                    "tensor {} does not fit parameter {name}",
                    p.name
                )));
            }
            let src = Tensor::f_from_slice(&p.data)?.f_reshape(&p.dims)?;
            let mut var = var.shallow_clone();
            tch::no_grad(|| var.f_copy_(&src))?;
        }
        Ok(model)
    }
}
