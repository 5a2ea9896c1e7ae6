//! TEMPORARY STUB (replaced by the engine branch).
#![allow(dead_code)]
use rquickjs::Ctx;
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotErrorKind {
    Refused,
    Limit,
    Interrupted,
    Oom,
    Malformed,
}
#[derive(Debug, Clone)]
pub struct SnapshotError {
    pub kind: SnapshotErrorKind,
    pub message: String,
}
#[derive(Debug, Clone, Copy)]
pub struct SnapshotLimits {
    pub max_bytes: usize,
    pub max_depth: u32,
    pub max_nodes: u32,
}
pub(crate) fn write_realm_state(
    _ctx: &Ctx<'_>,
    _skip: &[&str],
    _l: &SnapshotLimits,
) -> Result<Vec<u8>, SnapshotError> {
    Ok(Vec::new())
}
pub(crate) fn read_realm_state(
    _ctx: &Ctx<'_>,
    _b: &[u8],
    _l: &SnapshotLimits,
) -> Result<(), SnapshotError> {
    Ok(())
}
pub(crate) fn template_fingerprint(_ctx: &Ctx<'_>) -> [u8; 32] {
    [0; 32]
}
