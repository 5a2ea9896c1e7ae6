//! A persistent realm's state as sealed bytes: the engine's own state format (see
//! `snapshot.rs`) in an envelope that says which engine and template wrote it, authenticated
//! with HMAC-SHA256 under the host's key.
//!
//! The engine's reader loads bytecode, which is not safe against crafted input, so nothing
//! reaches it before the MAC verifies: any other bytes are `SNAPSHOT_TAMPERED`. Authentic bytes
//! from another engine build, format or template are `SNAPSHOT_VERSION`.
//!
//! Layout: `QRST` · format (1 byte) · engine build (16 bytes) · template fingerprint (16 bytes)
//! · payload length (u32, little-endian) · payload · MAC over everything before it (32 bytes).

use super::errors::{ErrorCode, ErrorInfo};
use hmac::{Hmac, Mac};
use sha2::Sha256;

const MAGIC: &[u8; 4] = b"QRST";
/// Bumped whenever the payload's meaning changes.
pub const FORMAT: u8 = 1;
const BUILD_LEN: usize = 16;
const FINGERPRINT_LEN: usize = 16;
const HEADER_LEN: usize = MAGIC.len() + 1 + BUILD_LEN + FINGERPRINT_LEN + 4;
const MAC_LEN: usize = 32;
/// Shortest key accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 16;

/// The engine this addon was built with (a hash of the patched sources, from `build.rs`).
pub fn engine_build() -> [u8; BUILD_LEN] {
    let hex = env!("QUICKREALM_ENGINE_BUILD").as_bytes();
    let mut out = [0u8; BUILD_LEN];
    for (i, pair) in hex.chunks(2).take(BUILD_LEN).enumerate() {
        let text = std::str::from_utf8(pair).unwrap_or("00");
        out[i] = u8::from_str_radix(text, 16).unwrap_or(0);
    }
    out
}

fn mac(key: &[u8]) -> Result<Hmac<Sha256>, ErrorInfo> {
    if key.len() < MIN_KEY_BYTES {
        return Err(ErrorInfo::invalid(format!(
            "a state key must be at least {MIN_KEY_BYTES} bytes"
        )));
    }
    Hmac::<Sha256>::new_from_slice(key).map_err(|e| ErrorInfo::internal(e.to_string()))
}

/// Seals the engine's state bytes under `key`.
pub fn seal(payload: &[u8], fingerprint: &[u8; 32], key: &[u8]) -> Result<Vec<u8>, ErrorInfo> {
    let len = u32::try_from(payload.len()).map_err(|_| {
        ErrorInfo::new(
            ErrorCode::StateTooLarge,
            "RangeError",
            "the state is over 4 GiB",
        )
    })?;
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len() + MAC_LEN);
    out.extend_from_slice(MAGIC);
    out.push(FORMAT);
    out.extend_from_slice(&engine_build());
    out.extend_from_slice(&fingerprint[..FINGERPRINT_LEN]);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(payload);
    let mut m = mac(key)?;
    m.update(&out);
    out.extend_from_slice(&m.finalize().into_bytes());
    Ok(out)
}

fn tampered(why: &str) -> ErrorInfo {
    ErrorInfo::new(
        ErrorCode::SnapshotTampered,
        "Error",
        format!("the state is refused: {why}"),
    )
}

/// Sealed bytes whose MAC verified under the key they were opened with.
#[derive(Debug)]
pub struct Opened<'a> {
    pub fingerprint: [u8; FINGERPRINT_LEN],
    pub payload: &'a [u8],
}

impl Opened<'_> {
    /// Refuses a state written over another template (another set of built-ins).
    pub fn check_template(&self, fingerprint: &[u8; 32]) -> Result<(), ErrorInfo> {
        if self.fingerprint[..] != fingerprint[..FINGERPRINT_LEN] {
            return Err(version_error(
                "it was written by a realm with other built-ins",
            ));
        }
        Ok(())
    }
}

fn version_error(why: &str) -> ErrorInfo {
    ErrorInfo::new(
        ErrorCode::SnapshotVersion,
        "Error",
        format!("the state cannot be read by this build: {why}; re-create it with this version"),
    )
}

/// Verifies the MAC first (in constant time), then the format and engine build.
pub fn open<'a>(sealed: &'a [u8], key: &[u8]) -> Result<Opened<'a>, ErrorInfo> {
    let mut m = mac(key)?;
    if sealed.len() < HEADER_LEN + MAC_LEN {
        return Err(tampered("it is too short to be a sealed state"));
    }
    let (body, tag) = sealed.split_at(sealed.len() - MAC_LEN);
    m.update(body);
    if m.verify_slice(tag).is_err() {
        return Err(tampered("its signature does not verify with this key"));
    }
    if &body[..MAGIC.len()] != MAGIC {
        return Err(tampered("it is not a quickrealm state"));
    }
    let format = body[MAGIC.len()];
    if format != FORMAT {
        return Err(version_error(&format!(
            "it is in format {format}, this build reads format {FORMAT}"
        )));
    }
    let mut at = MAGIC.len() + 1;
    if body[at..at + BUILD_LEN] != engine_build() {
        return Err(version_error("it was written by another engine build"));
    }
    at += BUILD_LEN;
    let mut fingerprint = [0u8; FINGERPRINT_LEN];
    fingerprint.copy_from_slice(&body[at..at + FINGERPRINT_LEN]);
    at += FINGERPRINT_LEN;
    let mut len = [0u8; 4];
    len.copy_from_slice(&body[at..at + 4]);
    let payload = &body[HEADER_LEN..];
    if u32::from_le_bytes(len) as usize != payload.len() {
        return Err(tampered("its length does not match its contents"));
    }
    Ok(Opened {
        fingerprint,
        payload,
    })
}

/// Verifies `sealed` under `from` and seals the same state under `to` (a snapshot handed out
/// with the caller's key, or taken back in).
pub fn reseal(sealed: &[u8], from: &[u8], to: &[u8]) -> Result<Vec<u8>, ErrorInfo> {
    let opened = open(sealed, from)?;
    let mut body = sealed[..sealed.len() - MAC_LEN].to_vec();
    debug_assert_eq!(body.len(), HEADER_LEN + opened.payload.len());
    let mut m = mac(to)?;
    m.update(&body);
    body.extend_from_slice(&m.finalize().into_bytes());
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"0123456789abcdef0123";

    #[test]
    fn a_sealed_state_opens_with_its_key_only() {
        let sealed = seal(b"payload", &[7; 32], KEY).unwrap();
        let opened = open(&sealed, KEY).unwrap();
        assert_eq!(opened.payload, b"payload");
        assert!(opened.check_template(&[7; 32]).is_ok());
        let other = opened.check_template(&[8; 32]).unwrap_err();
        assert_eq!(other.code, ErrorCode::SnapshotVersion);
        let wrong = open(&sealed, b"another key of 16+ bytes").unwrap_err();
        assert_eq!(wrong.code, ErrorCode::SnapshotTampered);
    }

    #[test]
    fn every_flipped_or_cut_byte_is_refused_before_reading() {
        let sealed = seal(b"some engine bytes", &[1; 32], KEY).unwrap();
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x40;
            assert_eq!(
                open(&bad, KEY).err().map(|e| e.code),
                Some(ErrorCode::SnapshotTampered)
            );
            assert_eq!(
                open(&sealed[..i], KEY).err().map(|e| e.code),
                Some(ErrorCode::SnapshotTampered)
            );
        }
    }

    #[test]
    fn authentic_bytes_of_another_format_or_build_are_a_version_error() {
        for at in [MAGIC.len(), MAGIC.len() + 1] {
            let mut body = seal(b"x", &[1; 32], KEY).unwrap();
            body.truncate(body.len() - MAC_LEN);
            body[at] ^= 1;
            let mut m = mac(KEY).unwrap();
            m.update(&body);
            body.extend_from_slice(&m.finalize().into_bytes());
            assert_eq!(
                open(&body, KEY).err().map(|e| e.code),
                Some(ErrorCode::SnapshotVersion)
            );
        }
    }

    #[test]
    fn resealing_moves_a_state_to_another_key() {
        let sealed = seal(b"state", &[3; 32], KEY).unwrap();
        let other = b"the caller's own key";
        let moved = reseal(&sealed, KEY, other).unwrap();
        assert_eq!(open(&moved, other).unwrap().payload, b"state");
        assert!(open(&moved, KEY).is_err());
        assert_eq!(
            reseal(&moved, KEY, other).err().map(|e| e.code),
            Some(ErrorCode::SnapshotTampered)
        );
        assert_eq!(
            seal(b"x", &[0; 32], b"short").err().map(|e| e.code),
            Some(ErrorCode::InvalidInput)
        );
    }
}
