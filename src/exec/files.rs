//! Everything file-related of one run, shared by the module loader, the `fs` shims and the
//! caller: the run's file system, the modules it loaded, and where loading failed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::fs::FsHost;
use super::lock_unpoisoned;
use super::typescript::PositionMap;

/// A loaded workspace module: its original text and, for TypeScript, the position map.
#[derive(Debug, Clone)]
pub struct ModuleRecord {
    pub source: String,
    pub map: Option<PositionMap>,
}

/// The last module that failed to load, to place the error it caused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadFailure {
    /// A module did not compile; the location is known for TypeScript.
    Compile {
        file: String,
        line: Option<u32>,
        column: Option<u32>,
    },
    /// An import was refused or not found.
    Import { importer: String, specifier: String },
}

/// Everything file-related of one run, shared by the loader, the shims and the caller.
#[derive(Debug)]
pub struct RealmFiles {
    pub fs: FsHost,
    pub modules: HashMap<String, ModuleRecord>,
    pub failure: Option<LoadFailure>,
    /// Set when the run must stop (`process.exit`): every later fs call is refused.
    pub halted: bool,
    /// The entry module (`import.meta.main` is true there).
    pub entry: Option<String>,
    /// How many workspace modules were loaded.
    pub(super) loaded: usize,
}

pub type SharedFiles = Arc<Mutex<RealmFiles>>;

impl RealmFiles {
    pub fn new(fs: FsHost) -> Self {
        RealmFiles {
            fs,
            modules: HashMap::new(),
            failure: None,
            halted: false,
            entry: None,
            loaded: 0,
        }
    }

    pub fn shared(fs: FsHost) -> SharedFiles {
        Arc::new(Mutex::new(RealmFiles::new(fs)))
    }
}

/// Locks the run's files; a panic elsewhere never makes them unusable.
pub fn lock(files: &SharedFiles) -> MutexGuard<'_, RealmFiles> {
    lock_unpoisoned(files)
}
