//! A session snapshot's container, packed and read where the workspaces are: the world and its
//! proposals are exported into the archive and opened from it natively, so their bytes cross
//! to JavaScript once (the archive itself) instead of once per part and again for the archive.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use sha2::{Digest, Sha256};

use super::ArchiveEntry;
use crate::napi::workspace::{run, ZipWorkspace};
use crate::workspace::{pack, unpack, WsError, ZipExport, ZipLimits};

/// A part's name and the SHA-256 of its bytes (hex), for the snapshot's signature.
#[napi(object)]
pub struct PartDigest {
    pub name: String,
    pub sha256: String,
}

fn digests(parts: &[(String, Vec<u8>)]) -> Vec<PartDigest> {
    parts
        .iter()
        .map(|(name, data)| PartDigest {
            name: name.clone(),
            sha256: Sha256::digest(data)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
        })
        .collect()
}

/// The parts of a snapshot being written.
#[napi]
pub struct SnapshotPacker {
    parts: Vec<(String, Vec<u8>)>,
}

#[napi]
impl SnapshotPacker {
    /// `entries` as given, then each named workspace exported uncompressed with its history
    /// (`world.zip`, `staged.zip`, `staged-origin.zip`).
    #[napi(factory, catch_unwind)]
    pub fn start(
        entries: Vec<ArchiveEntry>,
        world: &ZipWorkspace,
        staged: Option<&ZipWorkspace>,
        staged_origin: Option<&ZipWorkspace>,
    ) -> SnapshotPacker {
        let how = || ZipExport {
            history: true,
            compress: false,
        };
        let mut parts: Vec<(String, Vec<u8>)> = entries
            .into_iter()
            .map(|e| (e.name, e.data.to_vec()))
            .collect();
        parts.push(("world.zip".into(), world.ws().export(how())));
        for (name, ws) in [("staged.zip", staged), ("staged-origin.zip", staged_origin)] {
            if let Some(ws) = ws {
                parts.push((name.into(), ws.ws().export(how())));
            }
        }
        SnapshotPacker { parts }
    }

    /// The digest of every part so far.
    #[napi(catch_unwind)]
    pub fn digests(&self) -> Vec<PartDigest> {
        digests(&self.parts)
    }

    /// Adds a part (the signature, made over the digests).
    #[napi(catch_unwind)]
    pub fn add(&mut self, name: String, data: Buffer) {
        self.parts.push((name, data.to_vec()));
    }

    /// The archive of stored entries.
    #[napi(catch_unwind)]
    pub fn finish(&self, env: Env) -> Result<Buffer> {
        run(env, |_| {
            let parts: Vec<(&str, &[u8])> = self
                .parts
                .iter()
                .map(|(n, d)| (n.as_str(), d.as_slice()))
                .collect();
            pack(&parts).map(Buffer::from)
        })
    }
}

/// The parts of a snapshot being read.
#[napi]
pub struct SnapshotReader {
    parts: Vec<(String, Vec<u8>)>,
}

#[napi]
impl SnapshotReader {
    /// Reads the archive: at most `maxEntries` entries and `maxTotalBytes` bytes.
    #[napi(factory, catch_unwind)]
    pub fn open(
        env: Env,
        bytes: Buffer,
        max_entries: u32,
        max_total_bytes: f64,
    ) -> Result<SnapshotReader> {
        let max_total = if max_total_bytes.is_finite() && max_total_bytes > 0.0 {
            max_total_bytes as u64
        } else {
            0
        };
        run(env, |_| {
            unpack(&bytes, max_entries as usize, max_total).map(|parts| SnapshotReader { parts })
        })
    }

    fn part(&self, name: &str) -> Option<&[u8]> {
        self.parts
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.as_slice())
    }

    /// The digest of every part.
    #[napi(catch_unwind)]
    pub fn digests(&self) -> Vec<PartDigest> {
        digests(&self.parts)
    }

    /// A small part's bytes (`null` when absent).
    #[napi(catch_unwind)]
    pub fn bytes(&self, name: String) -> Option<Buffer> {
        self.part(&name).map(Buffer::from)
    }

    /// Whether the archive holds part `name`.
    #[napi(catch_unwind)]
    pub fn has(&self, name: String) -> bool {
        self.part(&name).is_some()
    }

    /// Part `name` opened as a workspace with its history (`null` when absent), within the
    /// given sizes.
    #[napi(catch_unwind)]
    pub fn workspace(
        &self,
        env: Env,
        name: String,
        max_entry_bytes: f64,
        max_total_bytes: f64,
    ) -> Result<Option<ZipWorkspace>> {
        run(env, |_| {
            let Some(zip) = self.part(&name) else {
                return Ok(None);
            };
            let mut limits = ZipLimits::default();
            let size = |n: f64| -> std::result::Result<u64, WsError> {
                if n.is_finite() && n >= 0.0 {
                    Ok(n as u64)
                } else {
                    Err(WsError::invalid_input("limits must be whole numbers ≥ 0"))
                }
            };
            limits.max_entry_size = size(max_entry_bytes)?;
            limits.max_total_size = size(max_total_bytes)?;
            crate::workspace::Workspace::from_zip(zip, &limits)
                .map(|ws| Some(ZipWorkspace::from_workspace(ws)))
        })
    }
}
