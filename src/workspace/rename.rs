//! Moving a file, or a folder with everything in it, to another path as one history entry.

use std::collections::BTreeSet;

use super::access::AccessOp;
use super::error::{WsError, WsResult};
use super::path::{self, display};
use super::vfs::Content;
use super::Workspace;

impl Workspace {
    /// Moves `from` (a file, or a folder with everything in it) to `to`, creating missing
    /// parent folders of `to`; recorded as `rename <from> -> <to>`. An existing `to` is
    /// `EXISTS` unless `overwrite`, which replaces it (a folder with everything in it). Both
    /// paths follow the access rules: everything moved must be readable and writable where it
    /// is, and writable where it goes. `INVALID_INPUT` for the root and for a move into itself.
    /// Returns the history entry id (`None` when `from` and `to` are the same path).
    pub fn rename(&mut self, from: &str, to: &str, overwrite: bool) -> WsResult<Option<u64>> {
        let src = self.resolve(AccessOp::Write, from)?;
        let dst = self.resolve(AccessOp::Write, to)?;
        if src.is_empty() || dst.is_empty() {
            return Err(WsError::invalid_input(format!(
                "cannot rename {} to {}: the workspace root cannot be moved or replaced",
                display(&src),
                display(&dst)
            )));
        }
        self.vfs.stat(&src)?;
        if src == dst {
            return Ok(None);
        }
        if path::is_within(&dst, &src) {
            return Err(WsError::invalid_input(format!(
                "cannot move {} into itself ({})",
                display(&src),
                display(&dst)
            )));
        }
        let moved = self.vfs.subtree_keys(&src);
        for key in &moved {
            self.resolve(AccessOp::Write, key)?;
            if self
                .vfs
                .content(key)
                .is_some_and(|c| !matches!(c, Content::Dir))
            {
                self.resolve(AccessOp::Read, key)?;
            }
        }
        let replaced = if self.vfs.exists(&dst) {
            if !overwrite {
                return Err(WsError::exists(format!(
                    "{} already exists; pass overwrite to replace it",
                    display(&dst)
                )));
            }
            if path::is_within(&src, &dst) {
                return Err(WsError::invalid_input(format!(
                    "cannot replace {} with {}, which is inside it",
                    display(&dst),
                    display(&src)
                )));
            }
            self.vfs.subtree_keys(&dst)
        } else {
            Vec::new()
        };
        let target = |key: &str| format!("{dst}{}", &key[src.len()..]);
        for key in replaced.iter().chain(&moved) {
            let landing = if path::is_within(key, &src) {
                target(key)
            } else {
                key.clone()
            };
            self.resolve(AccessOp::Write, &landing)?;
        }

        let mut work = self.vfs.clone();
        let mut keys: BTreeSet<String> = replaced.iter().cloned().collect();
        if !replaced.is_empty() {
            work.delete(&dst, true)?;
        }
        for folder in path::ancestors(&dst) {
            match work.content(folder) {
                Some(Content::Dir) => {}
                Some(Content::File(_)) => {
                    return Err(WsError::not_a_directory(format!(
                        "cannot move {} to {}: {} is a file, not a directory",
                        display(&src),
                        display(&dst),
                        display(folder)
                    )))
                }
                None => {
                    work.mkdir(folder, true)?;
                    keys.insert(folder.to_string());
                }
            }
        }
        for key in &moved {
            work.set_content(&target(key), self.vfs.content(key));
            keys.insert(target(key));
        }
        for key in moved.iter().rev() {
            work.set_content(key, None);
            keys.insert(key.clone());
        }
        let label = format!("rename {} -> {}", display(&src), display(&dst));
        Ok(self.adopt(work, keys, &label))
    }
}
