//! Walking a folder in the order a tree is shown: depth first, the entries of each folder
//! sorted by name, each folder right before its contents (the order `find` and `tree` print on
//! a sorted file system). Each entry carries its path relative to the walked folder, the form
//! listings show below a folder's own name.

use super::error::{WsError, WsResult};
use super::path::display;
use super::vfs::EntryKind;
use super::Workspace;

/// One entry of [`Workspace::walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    /// Normalized path (`src/app.js`).
    pub path: String,
    /// Path below the walked folder (`app.js` when walking `src`).
    pub relative: String,
    /// Last segment.
    pub name: String,
    /// File or folder.
    pub kind: EntryKind,
    /// Bytes (0 for folders).
    pub size: u64,
    /// 1 for the walked folder's own entries.
    pub depth: usize,
}

impl Workspace {
    /// Everything below the folder `path` that the access rules let be seen, at most
    /// `max_depth` levels deep, in tree order. `NOT_A_DIRECTORY` for a file.
    pub fn walk(&self, path: &str, max_depth: usize) -> WsResult<Vec<WalkEntry>> {
        let base = self.stat(path)?;
        if base.kind != EntryKind::Dir {
            return Err(WsError::not_a_directory(format!(
                "{} is a file, not a directory",
                display(&base.path)
            )));
        }
        let skip = if base.path.is_empty() {
            0
        } else {
            base.path.len() + 1
        };
        let mut entries: Vec<WalkEntry> = self
            .list(&base.path, true)?
            .into_iter()
            .filter_map(|e| {
                let relative = e.path.get(skip..)?.to_string();
                let depth = relative.split('/').count();
                if depth > max_depth {
                    return None;
                }
                let name = relative.rsplit('/').next().unwrap_or_default().to_string();
                Some(WalkEntry {
                    path: e.path,
                    relative,
                    name,
                    kind: e.kind,
                    size: e.size,
                    depth,
                })
            })
            .collect();
        // Segment by segment, so a folder comes right before what is inside it (`a`, `a/b`,
        // `a.txt`) where plain path order would put `a.txt` between them.
        entries.sort_by(|a, b| a.relative.split('/').cmp(b.relative.split('/')));
        Ok(entries)
    }
}
