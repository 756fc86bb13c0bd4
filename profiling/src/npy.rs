//! Reading data that the runtime saved (NumPy `.npy`), and comparing outputs.
//!
//! Verification of an output against its reference: integers must be equal; floats
//! must satisfy `|got - want| <= rtol·(|want| + max|want|·1e-3)` elementwise, with
//! `rtol = 1e-9` for `f8` and `1e-4` for `f4` (reassociated reductions stay inside,
//! wrong results do not), and NaN matches NaN.

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

/// An `.npy` file as dtype, shape and raw little-endian bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct RawNpy {
    pub descr: String,
    pub shape: Vec<u64>,
    pub data: Vec<u8>,
}

/// Reads any `.npy` (version 1 or 2, C order) without interpreting the elements.
pub fn read_raw(path: &Path) -> Result<RawNpy> {
    let bad = |m: &str| Error::Run(format!("{}: {m}", path.display()));
    let bytes = std::fs::read(path).map_err(crate::io_err(path))?;
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not an .npy file"));
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return Err(bad("unsupported .npy version")),
    };
    let header = bytes
        .get(start..start + hlen)
        .ok_or_else(|| bad("truncated header"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad("header is not text"))?;
    if header.contains("'fortran_order': True") {
        return Err(bad("Fortran-ordered arrays are not supported"));
    }
    let descr = header
        .split("'descr':")
        .nth(1)
        .and_then(|r| r.split('\'').nth(1))
        .ok_or_else(|| bad("no descr"))?
        .to_string();
    let shape_text = header
        .split("'shape':")
        .nth(1)
        .and_then(|r| r.split('(').nth(1))
        .and_then(|r| r.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u64>().map_err(|_| bad("bad shape")))
        .collect::<Result<Vec<_>>>()?;
    let data = bytes[start + hlen..].to_vec();
    let elem = elem_size(&descr).ok_or_else(|| bad("unsupported dtype"))?;
    let count: u64 = shape.iter().product();
    if data.len() as u64 != count * elem as u64 {
        return Err(bad("data size does not match the shape"));
    }
    Ok(RawNpy { descr, shape, data })
}

fn elem_size(descr: &str) -> Option<usize> {
    descr.get(2..)?.parse().ok()
}

/// The first element where `got` and `want` differ beyond the tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub index: usize,
    pub got: f64,
    pub want: f64,
    pub count: usize,
}

/// Compares an output with its reference; `Ok(None)` when they agree.
pub fn compare(got: &RawNpy, want: &RawNpy) -> std::result::Result<Option<Mismatch>, String> {
    if got.descr != want.descr || got.shape != want.shape {
        return Err(format!(
            "dtype/shape {} {:?} vs reference {} {:?}",
            got.descr, got.shape, want.descr, want.shape
        ));
    }
    fn values(r: &RawNpy) -> Vec<f64> {
        let d = &r.data;
        match r.descr.as_str() {
            "<f8" => d
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
            "<f4" => d
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            "<i8" => d
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            "<u8" => d
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            "<i4" => d
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            "<u4" => d
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            "<i2" => d
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            "<u2" => d
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect(),
            "|i1" => d.iter().map(|b| *b as i8 as f64).collect(),
            _ => d.iter().map(|b| *b as f64).collect(),
        }
    }
    let is_float = got.descr.contains('f');
    if !is_float {
        if got.data == want.data {
            return Ok(None);
        }
        let (g, w) = (values(got), values(want));
        let bad: Vec<usize> = (0..g.len()).filter(|&i| g[i] != w[i]).collect();
        return Ok(bad.first().map(|&i| Mismatch {
            index: i,
            got: g[i],
            want: w[i],
            count: bad.len(),
        }));
    }
    let rtol = if got.descr == "<f4" { 1e-4 } else { 1e-9 };
    let (g, w) = (values(got), values(want));
    let scale = w
        .iter()
        .filter(|x| x.is_finite())
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let ok = |a: f64, b: f64| {
        (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= rtol * (b.abs() + scale * 1e-3)
    };
    let bad: Vec<usize> = (0..g.len()).filter(|&i| !ok(g[i], w[i])).collect();
    Ok(bad.first().map(|&i| Mismatch {
        index: i,
        got: g[i],
        want: w[i],
        count: bad.len(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(descr: &str, vals: &[f64]) -> RawNpy {
        let data = match descr {
            "<f8" => vals.iter().flat_map(|v| v.to_le_bytes()).collect(),
            _ => vals
                .iter()
                .flat_map(|v| (*v as i32).to_le_bytes())
                .collect(),
        };
        RawNpy {
            descr: descr.into(),
            shape: vec![vals.len() as u64],
            data,
        }
    }

    #[test]
    fn tolerance_accepts_rounding_and_rejects_wrong_values() {
        let want = raw("<f8", &[1.0, 2.0, 1e6]);
        assert_eq!(
            compare(&raw("<f8", &[1.0, 2.0 + 1e-12, 1e6 * (1.0 + 1e-12)]), &want).unwrap(),
            None
        );
        let m = compare(&raw("<f8", &[1.0, 2.5, 1e6]), &want)
            .unwrap()
            .unwrap();
        assert_eq!((m.index, m.count), (1, 1));
        assert!(compare(&raw("<i4", &[1.0, 3.0]), &raw("<i4", &[1.0, 2.0]))
            .unwrap()
            .is_some());
        assert!(compare(&raw("<i4", &[1.0]), &raw("<i4", &[1.0, 2.0])).is_err());
    }
}
