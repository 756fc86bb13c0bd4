//! Reading data that the runtime saved (NumPy `.npy`).

use crate::{Error, Result};
use ndarray::ArrayD;
use std::path::Path;

/// Reads an `.npy` file of doubles.
pub fn read_f64(path: &Path) -> Result<ArrayD<f64>> {
    ndarray_npy::read_npy(path).map_err(|e| Error::Run(format!("{}: {e}", path.display())))
}

/// Reads an `.npy` file of 32-bit integers.
pub fn read_i32(path: &Path) -> Result<ArrayD<i32>> {
    ndarray_npy::read_npy(path).map_err(|e| Error::Run(format!("{}: {e}", path.display())))
}

/// Reads an `.npy` file of floats.
pub fn read_f32(path: &Path) -> Result<ArrayD<f32>> {
    ndarray_npy::read_npy(path).map_err(|e| Error::Run(format!("{}: {e}", path.display())))
}
