//! The binary container of tuning databases: a fixed header, then a bincode 2 payload.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "TUNEDB\0\x1a"
//!      8     4  format version (u32, little endian)
//!     12     8  payload length in bytes (u64, little endian)
//!     20    32  BLAKE3 hash of the payload
//!     52     n  payload (bincode 2, standard configuration)
//! ```
//!
//! A file is accepted only whole: wrong magic, a version this build does not read, a
//! length that does not match the file, or a checksum mismatch are refused before the
//! payload is decoded. Version 1 payloads (databases without transfer measurements) and
//! version 2 payloads (entries without their vector ISA) are still read: [`open`] hands
//! back the version and the caller decodes the layout of that version.
//! Files are written to a temporary name, synced, and renamed over the target, so a
//! crash never leaves a half-written database under the real name.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

pub const MAGIC: [u8; 8] = *b"TUNEDB\0\x1a";
/// The version written.
pub const FORMAT_VERSION: u32 = 3;
/// The oldest version read.
pub const OLDEST_VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 8 + 32;

#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not a tune database (bad magic)")]
    Magic { path: String },
    #[error(
        "{path}: database format version {found}, this tune reads versions {oldest} to {newest}"
    )]
    Version {
        path: String,
        found: u32,
        oldest: u32,
        newest: u32,
    },
    #[error(
        "{path}: truncated or damaged database ({found} payload bytes, header says {expected})"
    )]
    Length {
        path: String,
        found: u64,
        expected: u64,
    },
    #[error("{path}: damaged database (checksum mismatch)")]
    Checksum { path: String },
    #[error("{path}: damaged database (payload does not decode: {message})")]
    Decode { path: String, message: String },
    #[error("{path}: cannot encode: {message}")]
    Encode { path: String, message: String },
}

/// Encodes `value` into a container.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    let payload = bincode::serde::encode_to_vec(value, bincode::config::standard())
        .map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(blake3::hash(&payload).as_bytes());
    out.extend_from_slice(&payload);
    Ok(out)
}

/// Checks a whole container (`path` only names it in errors) and returns its format
/// version and its payload, not yet decoded.
pub fn open<'b>(bytes: &'b [u8], path: &str) -> Result<(u32, &'b [u8]), CodecError> {
    let path = path.to_string();
    if bytes.len() < 8 || bytes[..8] != MAGIC {
        return Err(CodecError::Magic { path });
    }
    if bytes.len() < HEADER {
        return Err(CodecError::Length {
            path,
            found: 0,
            expected: 0,
        });
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if !(OLDEST_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(CodecError::Version {
            path,
            found: version,
            oldest: OLDEST_VERSION,
            newest: FORMAT_VERSION,
        });
    }
    let expected = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != expected {
        return Err(CodecError::Length {
            path,
            found: payload.len() as u64,
            expected,
        });
    }
    if blake3::hash(payload).as_bytes() != &bytes[20..52] {
        return Err(CodecError::Checksum { path });
    }
    Ok((version, payload))
}

/// Decodes a checked payload whole (trailing bytes are an error).
pub fn decode_payload<T: DeserializeOwned>(payload: &[u8], path: &str) -> Result<T, CodecError> {
    let (value, used) = bincode::serde::decode_from_slice(payload, bincode::config::standard())
        .map_err(|e| CodecError::Decode {
            path: path.to_string(),
            message: e.to_string(),
        })?;
    if used != payload.len() {
        return Err(CodecError::Decode {
            path: path.to_string(),
            message: format!("{} trailing bytes", payload.len() - used),
        });
    }
    Ok(value)
}

/// Decodes a whole container of the current version.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], path: &str) -> Result<T, CodecError> {
    match open(bytes, path)? {
        (FORMAT_VERSION, payload) => decode_payload(payload, path),
        (found, _) => Err(CodecError::Version {
            path: path.to_string(),
            found,
            oldest: FORMAT_VERSION,
            newest: FORMAT_VERSION,
        }),
    }
}

/// The bytes of a file (errors name it).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, CodecError> {
    std::fs::read(path).map_err(|source| CodecError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Writes atomically ([`profiling::files::write_atomic`]).
pub fn write<T: Serialize>(path: &Path, value: &T) -> Result<(), CodecError> {
    let name = path.display().to_string();
    let io = |source| CodecError::Io {
        path: name.clone(),
        source,
    };
    let bytes = encode(value).map_err(|message| CodecError::Encode {
        path: name.clone(),
        message,
    })?;
    profiling::files::write_atomic(path, &bytes).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Thing {
        name: String,
        values: Vec<f32>,
    }

    fn thing() -> Thing {
        Thing {
            name: "gemm".into(),
            values: vec![1.0, 2.5, -3.0],
        }
    }

    #[test]
    fn round_trip() {
        let bytes = encode(&thing()).unwrap();
        assert_eq!(&bytes[..8], &MAGIC);
        assert_eq!(decode::<Thing>(&bytes, "x").unwrap(), thing());
    }

    #[test]
    fn every_truncation_is_refused() {
        let bytes = encode(&thing()).unwrap();
        for n in 0..bytes.len() {
            let e = decode::<Thing>(&bytes[..n], "db").unwrap_err();
            assert!(
                matches!(e, CodecError::Magic { .. } | CodecError::Length { .. }),
                "{n}: {e}"
            );
        }
    }

    #[test]
    fn every_bit_flip_is_refused() {
        let bytes = encode(&thing()).unwrap();
        for k in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[k / 8] ^= 1 << (k % 8);
            assert!(
                decode::<Thing>(&b, "db").is_err(),
                "flip of bit {k} accepted"
            );
        }
    }

    #[test]
    fn messages_name_the_file_and_the_damage() {
        let mut bytes = encode(&thing()).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        let e = decode::<Thing>(&bytes, "models/default/db.bin").unwrap_err();
        assert_eq!(
            e.to_string(),
            "models/default/db.bin: damaged database (checksum mismatch)"
        );
        bytes[8] = 9;
        let e = decode::<Thing>(&bytes, "db.bin").unwrap_err();
        assert!(e.to_string().contains("format version 9"), "{e}");
    }
}
