//! `weights.bin`: the parameters of a network, in plain Rust (no libtorch), so that a
//! checkpoint is read, checked and written the same way whether or not this build can
//! train.
//!
//! Layout, all integers little-endian:
//! ```text
//! magic    8 bytes  "TUNEMDLW"
//! version  u32      WEIGHTS_VERSION
//! count    u32      number of tensors
//! count ×  name_len u32, name (UTF-8), ndim u32, dims u64 × ndim, data f32 × prod(dims)
//! blake3   32 bytes of everything above
//! ```

/// Version of `weights.bin`'s layout.
pub const WEIGHTS_VERSION: u32 = 1;
/// Magic bytes at the start of `weights.bin`.
pub const WEIGHTS_MAGIC: &[u8; 8] = b"TUNEMDLW";

/// Bytes of the checksum that ends the file.
const SUM_LEN: usize = 32;
/// More dimensions than any parameter has: a larger count means a damaged file.
const MAX_DIMS: usize = 8;

/// One named parameter tensor, row-major.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Param {
    pub name: String,
    pub dims: Vec<i64>,
    pub data: Vec<f32>,
}

/// The file's bytes for `params`, in the given order.
pub(crate) fn encode(params: &[Param]) -> Vec<u8> {
    let floats: usize = params.iter().map(|p| p.data.len()).sum();
    let mut out = Vec::with_capacity(16 + 4 * floats + SUM_LEN);
    out.extend_from_slice(WEIGHTS_MAGIC);
    out.extend_from_slice(&WEIGHTS_VERSION.to_le_bytes());
    out.extend_from_slice(&(params.len() as u32).to_le_bytes());
    for p in params {
        out.extend_from_slice(&(p.name.len() as u32).to_le_bytes());
        out.extend_from_slice(p.name.as_bytes());
        out.extend_from_slice(&(p.dims.len() as u32).to_le_bytes());
        for &d in &p.dims {
            out.extend_from_slice(&(d as u64).to_le_bytes());
        }
        for v in &p.data {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    let sum = blake3::hash(&out);
    out.extend_from_slice(sum.as_bytes());
    out
}

/// A cursor over the checked part of the file; every read is bounds-checked.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        match self.bytes.get(self.at..).filter(|rest| rest.len() >= n) {
            Some(rest) => {
                self.at += n;
                Ok(&rest[..n])
            }
            None => Err(format!("truncated at byte {} ({what})", self.at)),
        }
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N, what)?);
        Ok(a)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        self.array(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        self.array(what).map(u64::from_le_bytes)
    }
}

/// The tensors of a `weights.bin`, in file order. Refuses a file that is not one (magic),
/// is damaged (checksum), of another version, truncated, with trailing bytes, or whose
/// tensors claim more values than the file holds.
pub(crate) fn decode(bytes: &[u8]) -> Result<Vec<Param>, String> {
    if bytes.len() < WEIGHTS_MAGIC.len() + 8 + SUM_LEN || !bytes.starts_with(WEIGHTS_MAGIC) {
        return Err("not a weights file (bad magic or too short)".into());
    }
    let (body, sum) = bytes.split_at(bytes.len() - SUM_LEN);
    if blake3::hash(body).as_bytes()[..] != *sum {
        return Err("checksum mismatch (file damaged)".into());
    }
    let mut c = Cursor {
        bytes: body,
        at: WEIGHTS_MAGIC.len(),
    };
    let version = c.u32("version")?;
    if version != WEIGHTS_VERSION {
        return Err(format!(
            "weights format version {version}, this build reads {WEIGHTS_VERSION}"
        ));
    }
    let count = c.u32("tensor count")?;
    let mut params = Vec::new();
    for _ in 0..count {
        let len = c.u32("name length")? as usize;
        let name = std::str::from_utf8(c.bytes(len, "name")?)
            .map_err(|_| "tensor name is not UTF-8".to_string())?
            .to_string();
        let ndim = c.u32("dimension count")? as usize;
        if ndim > MAX_DIMS {
            return Err(format!("tensor {name} has {ndim} dimensions"));
        }
        let mut dims = Vec::with_capacity(ndim);
        // The values left in the file bound every size, so no product can overflow.
        let room = (body.len() - c.at) / 4;
        let mut numel = 1usize;
        for _ in 0..ndim {
            let d = c.u64("dimension")?;
            numel = usize::try_from(d)
                .ok()
                .and_then(|d| numel.checked_mul(d))
                .filter(|&n| n <= room)
                .ok_or_else(|| format!("tensor {name} is larger than the file"))?;
            dims.push(d as i64);
        }
        let data = c
            .bytes(4 * numel, "values")?
            .chunks_exact(4)
            .map(|v| f32::from_le_bytes([v[0], v[1], v[2], v[3]]))
            .collect();
        params.push(Param { name, dims, data });
    }
    if c.at != body.len() {
        return Err(format!("{} trailing bytes", body.len() - c.at));
    }
    Ok(params)
}

/// Checks that `params` are exactly the parameters `expected` (names, order, shapes) and
/// hold finite values.
pub(crate) fn check(params: &[Param], expected: &[(String, Vec<i64>)]) -> Result<(), String> {
    if params.len() != expected.len() {
        return Err(format!(
            "{} tensors, the configuration needs {}",
            params.len(),
            expected.len()
        ));
    }
    for (p, (name, dims)) in params.iter().zip(expected) {
        if &p.name != name {
            return Err(format!("tensor {} where {name} was expected", p.name));
        }
        if &p.dims != dims {
            return Err(format!(
                "tensor {name} has shape {:?}, the configuration needs {dims:?}",
                p.dims
            ));
        }
        if let Some(v) = p.data.iter().find(|v| !v.is_finite()) {
            return Err(format!("tensor {name} holds a non-finite value ({v})"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Vec<Param> {
        vec![
            Param {
                name: "a.0.weight".into(),
                dims: vec![2, 3],
                data: vec![1.0, -2.0, 3.5, 0.0, f32::MIN_POSITIVE, 6.0],
            },
            Param {
                name: "a.0.bias".into(),
                dims: vec![2],
                data: vec![0.25, -0.5],
            },
        ]
    }

    #[test]
    fn encoded_weights_decode_to_the_same_tensors() {
        let bytes = encode(&params());
        assert_eq!(decode(&bytes).unwrap(), params());
        assert!(bytes.starts_with(WEIGHTS_MAGIC));
        assert_eq!(
            bytes.len(),
            8 + 4 + 4 + (4 + 10 + 4 + 16 + 24) + (4 + 8 + 4 + 8 + 8) + SUM_LEN
        );
    }

    #[test]
    fn damaged_or_truncated_files_are_refused() {
        let bytes = encode(&params());
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        assert!(decode(&flipped).unwrap_err().contains("checksum"));
        assert!(decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(decode(b"TUNEMDLX").is_err());
        // A body cut short but given a valid checksum: refused as truncated.
        let body = &bytes[..bytes.len() - SUM_LEN - 4];
        let mut cut = body.to_vec();
        cut.extend_from_slice(blake3::hash(body).as_bytes());
        assert!(decode(&cut).unwrap_err().contains("truncated"));
        // A dimension larger than the file, checksummed.
        let mut big = params();
        big[1].dims = vec![1 << 40];
        let mut body = encode(&big);
        body.truncate(body.len() - SUM_LEN);
        body.extend_from_slice(blake3::hash(&body.clone()).as_bytes());
        assert!(decode(&body).unwrap_err().contains("larger than the file"));
    }

    #[test]
    fn shapes_names_and_values_are_checked() {
        let expected = vec![
            ("a.0.weight".to_string(), vec![2, 3]),
            ("a.0.bias".to_string(), vec![2]),
        ];
        check(&params(), &expected).unwrap();
        assert!(check(&params()[..1], &expected).is_err());
        let mut wrong = expected.clone();
        wrong[1].1 = vec![3];
        assert!(check(&params(), &wrong).unwrap_err().contains("shape"));
        let mut nan = params();
        nan[0].data[2] = f32::NAN;
        assert!(check(&nan, &expected).unwrap_err().contains("non-finite"));
    }
}
