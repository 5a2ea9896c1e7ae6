//! Linear history of workspace changes: list, diff, undo, redo, restore.
//!
//! Every entry stores, for each path it touched, the state before and after (absent, a
//! directory, or a file with its bytes). Undo puts the "before" states back, redo the
//! "after" states; both first check that the tree still holds the states they expect, so a
//! tree changed behind history's back is reported instead of corrupted.
//!
//! The newest [`HistoryConfig::keep_full`] entries keep their contents. Older ones are
//! compacted: their contents are dropped and only metadata stays, so undo stops there.
//! Contents are also dropped, oldest first, while the kept bytes exceed
//! [`HistoryConfig::max_full_bytes`]. At most [`HistoryConfig::max_entries`] entries are
//! kept in all.
//!
//! History is saved inside the workspace archive under `.time/`: `log.json` holds the
//! entries and `pack-NNNNN.bin` files hold the contents they refer to (each distinct
//! content stored once). An archive is hostile input, so an imported history must belong to
//! the files imported with it: every entry that keeps its contents is undone or redone from
//! them once, on a copy, before the history is accepted (see [`HistoryState::from_archive`]),
//! and every undo and redo also checks that the tree keeps its shape.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::access;
use super::bounds::MAX_EXACT;
use super::error::{WsError, WsResult};
use super::path::display;
use super::text::{self, DiffText};
use super::vfs::{Content, Vfs};

/// Path of the history log inside an archive.
pub const LOG_FILE: &str = ".time/log.json";
/// A compacted entry keeps at most this many of its paths (its `path_count` stays exact).
pub const MAX_KEPT_PATHS: usize = 100;
/// Highest `next_id` a history holds: ids stay far inside the integers a JavaScript number
/// holds exactly ([`MAX_EXACT`], 2^53 - 1), with 2^32 to spare. An imported history past it
/// is refused; a workspace that reaches it renumbers its entries (see
/// [`HistoryState::record`]), so an exported history always imports again.
pub const MAX_NEXT_ID: u64 = MAX_EXACT - (1 << 32);
/// Longest diff [`HistoryState::diff`] returns, in bytes (the line saying it was cut aside).
pub const MAX_DIFF_BYTES: usize = 1024 * 1024;
const PACK_TARGET_BYTES: usize = 32 * 1024 * 1024;
const LOG_FORMAT: u32 = 1;

fn pack_name(index: usize) -> String {
    format!(".time/pack-{index:05}.bin")
}

/// How much history is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryConfig {
    /// Newest entries that keep their contents (and so can be undone).
    pub keep_full: usize,
    /// Most entries kept in all; the oldest are dropped beyond it.
    pub max_entries: usize,
    /// Most content bytes kept by entries (undo and redo together); older entries are
    /// compacted beyond it.
    pub max_full_bytes: u64,
}

impl Default for HistoryConfig {
    fn default() -> Self {
        HistoryConfig {
            keep_full: 50,
            max_entries: 200,
            max_full_bytes: 64 * 1024 * 1024,
        }
    }
}

/// The change one entry made to one path. `None` means the path did not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Normalized path.
    pub path: String,
    /// State before the operation.
    pub before: Option<Content>,
    /// State after the operation.
    pub after: Option<Content>,
}

impl Change {
    fn bytes(&self) -> u64 {
        self.before.as_ref().map_or(0, Content::size) + self.after.as_ref().map_or(0, Content::size)
    }

    /// The state the path must hold before the change is applied in `direction`.
    fn expected(&self, direction: Direction) -> &Option<Content> {
        match direction {
            Direction::Back => &self.after,
            Direction::Forward => &self.before,
        }
    }

    /// The state the path holds once the change is applied in `direction`.
    fn target(&self, direction: Direction) -> &Option<Content> {
        match direction {
            Direction::Back => &self.before,
            Direction::Forward => &self.after,
        }
    }
}

/// Public view of one history entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    /// Monotonic id, starting at 1.
    pub id: u64,
    /// What was done, e.g. `write src/a.js`.
    pub op: String,
    /// Paths the entry changed, sorted (a compacted entry keeps only the first
    /// [`MAX_KEPT_PATHS`]).
    pub paths: Vec<String>,
    /// How many paths the entry changed.
    pub path_count: usize,
    /// When, in milliseconds since the Unix epoch.
    pub time: u64,
    /// Whether the entry's contents were dropped (it can no longer be undone or diffed).
    pub compacted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    id: u64,
    op: String,
    time: u64,
    paths: Vec<String>,
    path_count: usize,
    /// `None` once compacted.
    changes: Option<Vec<Change>>,
}

impl Record {
    fn bytes(&self) -> u64 {
        self.changes
            .as_ref()
            .map_or(0, |c| c.iter().map(Change::bytes).sum())
    }

    fn compact(&mut self) {
        self.changes = None;
        self.paths.truncate(MAX_KEPT_PATHS);
    }

    /// What the workspace itself never records: no change at all, a change that changes
    /// nothing, numbers past [`MAX_EXACT`], kept paths out of order or more than
    /// [`MAX_KEPT_PATHS`] of them. `HISTORY_INVALID`.
    fn check(&self) -> WsResult<()> {
        let refuse = |why: String| Err(untrusted(format!("entry #{} {why}", self.id)));
        if self.time > MAX_EXACT || self.path_count as u64 > MAX_EXACT {
            return refuse("has a time or path count past 2^53".into());
        }
        match &self.changes {
            Some(changes) if changes.is_empty() => refuse("records no change".into()),
            Some(changes) => match changes.iter().find(|c| c.before == c.after) {
                Some(c) => refuse(format!("records no change at {}", display(&c.path))),
                None => Ok(()),
            },
            None if self.paths.len() > MAX_KEPT_PATHS => {
                refuse(format!("keeps more than {MAX_KEPT_PATHS} paths"))
            }
            None if self.paths.windows(2).any(|w| w[0] >= w[1]) => {
                refuse("lists its paths out of order".into())
            }
            None => Ok(()),
        }
    }

    fn entry(&self) -> HistoryEntry {
        HistoryEntry {
            id: self.id,
            op: self.op.clone(),
            paths: self.paths.clone(),
            path_count: self.path_count,
            time: self.time,
            compacted: self.changes.is_none(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Back,
    Forward,
}

impl Direction {
    /// What undoing (back) or redoing (forward) an entry is called in messages.
    fn verb(self) -> &'static str {
        match self {
            Direction::Back => "undone",
            Direction::Forward => "redone",
        }
    }
}

/// Why a record could not be applied.
#[derive(Debug)]
enum ApplyError {
    /// The record's contents were dropped.
    Compacted,
    /// A path does not hold the state the record expects.
    Mismatch(String),
    /// Applying it would leave the tree out of shape (see [`Vfs::shape_error`]).
    Shape(String),
}

impl ApplyError {
    /// The error a history operation on the workspace reports.
    fn into_ws(self, record: &Record, direction: Direction) -> WsError {
        match self {
            ApplyError::Compacted => WsError::history(format!(
                "entry #{} was compacted; its contents are no longer kept",
                record.id
            )),
            ApplyError::Mismatch(path) => WsError::history(format!(
                "{} no longer matches entry #{} ({}); it was changed outside history",
                display(&path),
                record.id,
                record.op
            )),
            ApplyError::Shape(why) => WsError::history_invalid(format!(
                "entry #{} ({}) cannot be {}: {why}",
                record.id,
                record.op,
                direction.verb()
            )),
        }
    }
}

/// Applies one record to `vfs` in the given direction, after checking that every path
/// holds the state the record expects, and checks that the tree keeps its shape around every
/// path it changed. Nothing changes if a check fails.
fn apply(vfs: &mut Vfs, record: &Record, direction: Direction) -> Result<(), ApplyError> {
    let Some(changes) = &record.changes else {
        return Err(ApplyError::Compacted);
    };
    for c in changes {
        if vfs.content(&c.path) != *c.expected(direction) {
            return Err(ApplyError::Mismatch(c.path.clone()));
        }
    }
    for c in changes {
        vfs.set_content(&c.path, c.target(direction).clone());
    }
    if let Some(why) = changes.iter().find_map(|c| vfs.shape_error(&c.path)) {
        for c in changes {
            vfs.set_content(&c.path, c.expected(direction).clone());
        }
        return Err(ApplyError::Shape(why));
    }
    Ok(())
}

/// Applies `records`, in order and in `direction`, to a copy of `vfs`, which replaces `vfs`
/// only if every one of them applied. Returns their ids.
fn replay<'a>(
    vfs: &mut Vfs,
    records: impl Iterator<Item = &'a Record>,
    direction: Direction,
) -> WsResult<Vec<u64>> {
    let mut work = vfs.clone();
    let mut ids = Vec::new();
    for record in records {
        apply(&mut work, record, direction).map_err(|e| e.into_ws(record, direction))?;
        ids.push(record.id);
    }
    *vfs = work;
    Ok(ids)
}

/// The recorded history of a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryState {
    /// Applied entries, oldest first.
    done: VecDeque<Record>,
    /// Undone entries; the last one is the next to redo.
    redo: Vec<Record>,
    next_id: u64,
    config: HistoryConfig,
}

impl Default for HistoryState {
    fn default() -> Self {
        HistoryState::new()
    }
}

impl HistoryState {
    /// Empty history with the default configuration.
    pub fn new() -> Self {
        Self::with_config(HistoryConfig::default())
    }

    /// Empty history with the given configuration.
    pub fn with_config(config: HistoryConfig) -> Self {
        HistoryState {
            done: VecDeque::new(),
            redo: Vec::new(),
            next_id: 1,
            config,
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> HistoryConfig {
        self.config
    }

    /// Changes the configuration and compacts to fit it.
    pub fn set_config(&mut self, config: HistoryConfig) {
        self.config = config;
        self.compact();
    }

    /// Whether no applied entry is kept.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.done.is_empty()
    }

    /// How many entries can be undone now.
    pub fn undo_depth(&self) -> usize {
        self.done
            .iter()
            .rev()
            .take_while(|r| r.changes.is_some())
            .count()
    }

    /// How many entries can be redone now.
    #[cfg(test)]
    pub fn redo_depth(&self) -> usize {
        self.redo.len()
    }

    /// Id of the newest applied entry.
    #[cfg(test)]
    pub fn last_id(&self) -> Option<u64> {
        self.done.back().map(|r| r.id)
    }

    /// Records an operation. Changes whose before and after states are equal are dropped;
    /// if none is left nothing is recorded and `None` is returned. Otherwise the new
    /// entry's id is returned and the redo stack is cleared. Should the ids reach
    /// [`MAX_NEXT_ID`] (only a history imported that close to it can), the kept entries are
    /// renumbered from 1 first.
    pub fn record(&mut self, changes: Vec<Change>, op: &str, time: u64) -> Option<u64> {
        let mut changes: Vec<Change> = changes
            .into_iter()
            .filter(|c| c.before != c.after)
            .collect();
        if changes.is_empty() {
            return None;
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        changes.dedup_by(|later, earlier| later.path == earlier.path);
        if self.next_id >= MAX_NEXT_ID {
            self.renumber();
        }
        let id = self.next_id;
        self.next_id += 1;
        self.done.push_back(Record {
            id,
            op: op.to_string(),
            time,
            paths: changes.iter().map(|c| c.path.clone()).collect(),
            path_count: changes.len(),
            changes: Some(changes),
        });
        self.redo.clear();
        self.compact();
        Some(id)
    }

    /// Gives the kept entries the ids 1, 2, ... in their order.
    fn renumber(&mut self) {
        let mut next = 1;
        for record in self.done.iter_mut().chain(self.redo.iter_mut().rev()) {
            record.id = next;
            next += 1;
        }
        self.next_id = next;
    }

    fn compact(&mut self) {
        let mut full = self.done.iter().filter(|r| r.changes.is_some()).count();
        let mut bytes: u64 = self
            .done
            .iter()
            .chain(self.redo.iter())
            .map(Record::bytes)
            .sum();
        for record in self.done.iter_mut() {
            if full <= self.config.keep_full && bytes <= self.config.max_full_bytes {
                break;
            }
            if record.changes.is_some() {
                bytes -= record.bytes();
                record.compact();
                full -= 1;
            }
        }
        while self.done.len() > self.config.max_entries {
            self.done.pop_front();
        }
    }

    /// The newest `n` applied entries that changed `path` (a normalized path), newest first.
    pub fn entries_touching(&self, n: usize, path: &str) -> Vec<HistoryEntry> {
        self.done
            .iter()
            .rev()
            .filter(|r| r.paths.iter().any(|p| p == path))
            .take(n)
            .map(Record::entry)
            .collect()
    }

    /// The state `path` (a normalized path) was in right before entry `id` (applied or undone)
    /// was made, with `now` the tree as it is: the entry's own record if it changed the path,
    /// otherwise the nearest later applied entry (or earlier undone one) that did, otherwise
    /// `now`. `HISTORY` for an unknown id, or when a compacted entry leaves the answer unknown.
    pub fn state_before(&self, id: u64, path: &str, now: &Vfs) -> WsResult<Option<Content>> {
        let own = self.find(id)?;
        let compacted = |r: &Record| {
            WsError::history(format!(
                "entry #{} ({}) was compacted: what {} held then is no longer kept",
                r.id,
                r.op,
                display(path)
            ))
        };
        // Records after the entry in the order that leads from it towards `now`, and which
        // side of each holds the state just before the entry.
        let (later, side): (Vec<&Record>, Direction) =
            match self.done.iter().position(|r| r.id == id) {
                Some(pos) => (self.done.iter().skip(pos).collect(), Direction::Back),
                None => {
                    let pos = self.redo.iter().position(|r| r.id == id).unwrap_or(0);
                    let mut older: Vec<&Record> = self.redo.iter().skip(pos + 1).collect();
                    older.insert(0, own);
                    (older, Direction::Forward)
                }
            };
        for (i, record) in later.into_iter().enumerate() {
            let Some(changes) = &record.changes else {
                let listed_whole = record.paths.len() == record.path_count;
                if i == 0 || !listed_whole || record.paths.iter().any(|p| p == path) {
                    return Err(compacted(record));
                }
                continue;
            };
            if let Some(change) = changes.iter().find(|c| c.path == path) {
                // The entry itself, or an undone one before it, read from the other side.
                let wanted = if i == 0 { Direction::Back } else { side };
                return Ok(change.target(wanted).clone());
            }
        }
        Ok(now.content(path))
    }

    /// The newest `n` applied entries, newest first.
    pub fn entries(&self, n: usize) -> Vec<HistoryEntry> {
        self.done.iter().rev().take(n).map(Record::entry).collect()
    }

    fn find(&self, id: u64) -> WsResult<&Record> {
        self.done
            .iter()
            .chain(self.redo.iter())
            .find(|r| r.id == id)
            .ok_or_else(|| self.unknown(id))
    }

    fn unknown(&self, id: u64) -> WsError {
        match (self.done.front(), self.done.back()) {
            (Some(first), Some(last)) => WsError::history(format!(
                "no history entry #{id}; kept entries are #{} to #{}",
                first.id, last.id
            )),
            _ => WsError::history(format!("no history entry #{id}; history is empty")),
        }
    }

    /// A unified diff of the text changes made by entry `id` (applied or undone).
    /// Binary files and directories are summarized on one line each. A diff longer than
    /// [`MAX_DIFF_BYTES`] is cut at a line boundary and ends with a line saying so.
    pub fn diff(&self, id: u64) -> WsResult<String> {
        let record = self.find(id)?;
        let Some(changes) = &record.changes else {
            return Err(WsError::history(format!(
                "entry #{id} ({}) was compacted; only its metadata is kept",
                record.op
            )));
        };
        let mut out = DiffText::new(MAX_DIFF_BYTES);
        for c in changes {
            if out.is_cut() {
                break;
            }
            describe_change(c, &mut out);
        }
        let cut = out.is_cut();
        let mut text = out.into_string();
        if cut {
            text.push_str(&format!(
                "[diff cut off here: the diff of entry #{id} is longer than {MAX_DIFF_BYTES} bytes]\n"
            ));
        }
        Ok(text)
    }

    /// Undoes the newest `n` entries (fewer if fewer can be undone) and returns their ids,
    /// newest first. Fails with `HISTORY` when nothing can be undone; nothing changes on
    /// failure.
    pub fn undo(&mut self, vfs: &mut Vfs, n: usize) -> WsResult<Vec<u64>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let count = n.min(self.undo_depth());
        if count == 0 {
            return Err(match self.done.back() {
                None => WsError::history("nothing to undo"),
                Some(r) => WsError::history(format!(
                    "cannot undo entry #{} ({}): it was compacted and its contents are no longer kept",
                    r.id, r.op
                )),
            });
        }
        let ids = replay(vfs, self.done.iter().rev().take(count), Direction::Back)?;
        for _ in 0..count {
            if let Some(record) = self.done.pop_back() {
                self.redo.push(record);
            }
        }
        Ok(ids)
    }

    /// Redoes the last `n` undone entries (fewer if fewer exist) and returns their ids in
    /// the order they were redone. Fails with `HISTORY` when nothing can be redone; nothing
    /// changes on failure.
    pub fn redo(&mut self, vfs: &mut Vfs, n: usize) -> WsResult<Vec<u64>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let count = n.min(self.redo.len());
        if count == 0 {
            return Err(WsError::history("nothing to redo"));
        }
        let ids = replay(vfs, self.redo.iter().rev().take(count), Direction::Forward)?;
        for _ in 0..count {
            if let Some(record) = self.redo.pop() {
                self.done.push_back(record);
            }
        }
        self.compact();
        Ok(ids)
    }

    /// Brings `vfs` back to the state right after entry `id` (an applied or an undone
    /// entry) and records that as a new entry, whose id is returned (`None` if the tree
    /// already is in that state). Every entry between now and `id` must still keep its
    /// contents.
    pub fn restore(&mut self, vfs: &mut Vfs, id: u64, time: u64) -> WsResult<Option<u64>> {
        let mut work = vfs.clone();
        let mut touched: BTreeSet<String> = BTreeSet::new();
        if let Some(pos) = self.done.iter().position(|r| r.id == id) {
            for record in self.done.iter().skip(pos + 1).rev() {
                apply(&mut work, record, Direction::Back)
                    .map_err(|e| restore_error(id, e.into_ws(record, Direction::Back)))?;
                touched.extend(record.paths.iter().cloned());
            }
        } else if let Some(pos) = self.redo.iter().position(|r| r.id == id) {
            for record in self.redo[pos..].iter().rev() {
                apply(&mut work, record, Direction::Forward)
                    .map_err(|e| restore_error(id, e.into_ws(record, Direction::Forward)))?;
                touched.extend(record.paths.iter().cloned());
            }
        } else {
            return Err(self.unknown(id));
        }
        let changes = touched
            .into_iter()
            .map(|p| Change {
                before: vfs.content(&p),
                after: work.content(&p),
                path: p,
            })
            .collect();
        *vfs = work;
        Ok(self.record(changes, &format!("restore #{id}"), time))
    }

    /// Files that carry this history inside an archive (empty for a fresh history).
    pub fn to_files(&self) -> Vec<(String, Vec<u8>)> {
        if self.done.is_empty() && self.redo.is_empty() && self.next_id == 1 {
            return Vec::new();
        }
        let mut packer = Packer::default();
        let log = LogDto {
            format: LOG_FORMAT,
            next_id: self.next_id,
            entries: self.done.iter().map(|r| packer.record(r)).collect(),
            redo: self.redo.iter().map(|r| packer.record(r)).collect(),
        };
        let json =
            serde_json::to_vec(&log).expect("the history log holds only strings and integers");
        let mut files = vec![(LOG_FILE.to_string(), json)];
        files.extend(
            packer
                .packs
                .into_iter()
                .enumerate()
                .map(|(i, bytes)| (pack_name(i), bytes)),
        );
        files
    }

    /// Reads history back from the `.time/` files of an archive (keyed by their path inside
    /// the archive) and checks that it belongs to `tree`, the files imported with it (see
    /// [`HistoryState::check_against`]). Without a log the history is empty. A log that cannot
    /// be read (not JSON, unknown format, missing contents, invalid paths, ids out of order)
    /// is `ZIP_INVALID`; one that reads but cannot be trusted is `HISTORY_INVALID`.
    pub fn from_archive(files: &BTreeMap<String, Vec<u8>>, tree: &Vfs) -> WsResult<Self> {
        let state = HistoryState::from_files(files)?;
        state.check_against(tree)?;
        Ok(state)
    }

    /// Reads history back from the `.time/` files of an archive, without comparing it with
    /// the archive's files (see [`HistoryState::from_archive`]).
    fn from_files(files: &BTreeMap<String, Vec<u8>>) -> WsResult<Self> {
        let Some(log) = files.get(LOG_FILE) else {
            return Ok(HistoryState::new());
        };
        let log: LogDto = serde_json::from_slice(log)
            .map_err(|e| invalid_log(format!("it is not valid: {e}")))?;
        if log.format != LOG_FORMAT {
            return Err(invalid_log(format!(
                "format {} is not supported",
                log.format
            )));
        }
        let mut loader = Loader {
            files,
            blobs: HashMap::new(),
        };
        let done = log
            .entries
            .iter()
            .map(|r| loader.record(r))
            .collect::<WsResult<VecDeque<Record>>>()?;
        let redo = log
            .redo
            .iter()
            .map(|r| loader.record(r))
            .collect::<WsResult<Vec<Record>>>()?;
        if redo.iter().any(|r| r.changes.is_none()) {
            return Err(invalid_log("an undone entry has no contents"));
        }
        let ids_in_order = done
            .iter()
            .map(|r| r.id)
            .chain(redo.iter().rev().map(|r| r.id));
        let mut previous = 0;
        for id in ids_in_order {
            if id <= previous {
                return Err(invalid_log("entry ids are not in increasing order"));
            }
            previous = id;
        }
        if log.next_id <= previous {
            return Err(invalid_log("next id is not above every entry id"));
        }
        if log.next_id > MAX_NEXT_ID {
            return Err(untrusted(format!(
                "its next id {} leaves no room for new entries (the most is {MAX_NEXT_ID})",
                log.next_id
            )));
        }
        if let Some(r) = done
            .iter()
            .skip_while(|r| r.changes.is_none())
            .find(|r| r.changes.is_none())
        {
            return Err(untrusted(format!(
                "entry #{} dropped its contents while an older one kept them",
                r.id
            )));
        }
        for r in done.iter().chain(redo.iter()) {
            r.check()?;
        }
        let mut state = HistoryState {
            done,
            redo,
            next_id: log.next_id,
            config: HistoryConfig::default(),
        };
        state.compact();
        Ok(state)
    }
}

impl HistoryState {
    /// Checks that this history belongs to `tree`, the files imported with it: from `tree`,
    /// every applied entry that keeps its contents undoes (newest first) and every undone entry
    /// redoes (next first), each finding the states it expects and leaving the tree in shape
    /// (no file inside a file, nothing without its folder). `HISTORY_INVALID` otherwise.
    pub fn check_against(&self, tree: &Vfs) -> WsResult<()> {
        let back = self.done.iter().rev().take_while(|r| r.changes.is_some());
        let forward = self.redo.iter().rev();
        for (records, direction) in [
            (back.collect::<Vec<_>>(), Direction::Back),
            (forward.collect(), Direction::Forward),
        ] {
            let mut work = tree.clone();
            for record in records {
                apply(&mut work, record, direction).map_err(|e| {
                    let why = match e {
                        ApplyError::Compacted => "it keeps no contents".to_string(),
                        ApplyError::Mismatch(path) => {
                            format!("{} does not hold the state it expects", display(&path))
                        }
                        ApplyError::Shape(why) => why,
                    };
                    untrusted(format!(
                        "entry #{} ({}) cannot be {}: {why}",
                        record.id,
                        record.op,
                        direction.verb()
                    ))
                })?;
            }
        }
        Ok(())
    }
}

fn restore_error(id: u64, e: WsError) -> WsError {
    WsError::new(
        e.code,
        format!("cannot restore to entry #{id}: {}", e.message),
    )
}

/// A log that reads but cannot be trusted: `HISTORY_INVALID`.
fn untrusted(why: impl std::fmt::Display) -> WsError {
    WsError::history_invalid(format!(
        "the workspace history in {LOG_FILE} does not fit this archive: {why}; \
         import the archive without its .time/ folder to drop the history"
    ))
}

fn invalid_log(why: impl std::fmt::Display) -> WsError {
    WsError::zip_invalid(format!(
        "the workspace history in {LOG_FILE} is unusable: {why}"
    ))
}

fn text_of(content: &Option<Content>) -> Option<&str> {
    match content {
        Some(Content::File(data)) if !text::is_binary(data) => std::str::from_utf8(data).ok(),
        Some(Content::File(_)) => None,
        _ => Some(""),
    }
}

fn describe_change(c: &Change, out: &mut DiffText) {
    let shown = display(&c.path);
    match (&c.before, &c.after) {
        (Some(Content::Dir), None) => {
            out.line(&["deleted directory ", &shown]);
        }
        (None, Some(Content::Dir)) => {
            out.line(&["created directory ", &shown]);
        }
        (Some(Content::Dir), Some(Content::File(_))) => {
            out.line(&["deleted directory ", &shown]);
            describe_file(c, out);
        }
        (Some(Content::File(_)), Some(Content::Dir)) => {
            describe_file(c, out);
            out.line(&["created directory ", &shown]);
        }
        _ => describe_file(c, out),
    }
}

fn describe_file(c: &Change, out: &mut DiffText) {
    let is_file = |s: &Option<Content>| matches!(s, Some(Content::File(_)));
    let old_name = if is_file(&c.before) {
        format!("a/{}", c.path)
    } else {
        "/dev/null".to_string()
    };
    let new_name = if is_file(&c.after) {
        format!("b/{}", c.path)
    } else {
        "/dev/null".to_string()
    };
    match (text_of(&c.before), text_of(&c.after)) {
        (Some(old), Some(new)) => {
            text::write_unified_diff(out, &old_name, &new_name, old, new, 3);
        }
        _ => {
            let size = |s: &Option<Content>| match s {
                Some(Content::File(d)) => d.len(),
                _ => 0,
            };
            out.line(&[&format!(
                "binary file {} changed ({} -> {} bytes)",
                display(&c.path),
                size(&c.before),
                size(&c.after)
            )]);
        }
    }
}

#[derive(Serialize, Deserialize)]
struct LogDto {
    format: u32,
    next_id: u64,
    entries: Vec<RecordDto>,
    redo: Vec<RecordDto>,
}

#[derive(Serialize, Deserialize)]
struct RecordDto {
    id: u64,
    op: String,
    time: u64,
    path_count: usize,
    paths: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    changes: Option<Vec<ChangeDto>>,
}

#[derive(Serialize, Deserialize)]
struct ChangeDto {
    path: String,
    before: StateDto,
    after: StateDto,
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum StateDto {
    Absent,
    Dir,
    File { pack: usize, offset: u64, len: u64 },
}

/// Collects distinct contents into pack files while the log is written.
#[derive(Default)]
struct Packer<'a> {
    packs: Vec<Vec<u8>>,
    seen: HashMap<&'a [u8], StateDto>,
}

impl<'a> Packer<'a> {
    fn state(&mut self, content: &'a Option<Content>) -> StateDto {
        match content {
            None => StateDto::Absent,
            Some(Content::Dir) => StateDto::Dir,
            Some(Content::File(data)) => {
                if let Some(state) = self.seen.get(&data[..]) {
                    return *state;
                }
                let start_new = match self.packs.last() {
                    None => true,
                    Some(last) => !last.is_empty() && last.len() + data.len() > PACK_TARGET_BYTES,
                };
                if start_new {
                    self.packs.push(Vec::new());
                }
                let pack = self.packs.len() - 1;
                let bytes = &mut self.packs[pack];
                let state = StateDto::File {
                    pack,
                    offset: bytes.len() as u64,
                    len: data.len() as u64,
                };
                bytes.extend_from_slice(data);
                self.seen.insert(&data[..], state);
                state
            }
        }
    }

    fn record(&mut self, r: &'a Record) -> RecordDto {
        RecordDto {
            id: r.id,
            op: r.op.clone(),
            time: r.time,
            path_count: r.path_count,
            paths: r.paths.clone(),
            changes: r.changes.as_ref().map(|changes| {
                changes
                    .iter()
                    .map(|c| ChangeDto {
                        path: c.path.clone(),
                        before: self.state(&c.before),
                        after: self.state(&c.after),
                    })
                    .collect()
            }),
        }
    }
}

/// Resolves log entries against the pack files, sharing equal contents.
struct Loader<'a> {
    files: &'a BTreeMap<String, Vec<u8>>,
    blobs: HashMap<StateDto, Arc<[u8]>>,
}

impl Loader<'_> {
    fn state(&mut self, state: StateDto) -> WsResult<Option<Content>> {
        let (pack, offset, len) = match state {
            StateDto::Absent => return Ok(None),
            StateDto::Dir => return Ok(Some(Content::Dir)),
            StateDto::File { pack, offset, len } => (pack, offset, len),
        };
        if let Some(data) = self.blobs.get(&state) {
            return Ok(Some(Content::File(Arc::clone(data))));
        }
        let name = pack_name(pack);
        let bytes = self
            .files
            .get(&name)
            .ok_or_else(|| invalid_log(format!("{name} is missing")))?;
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(start, len)| Some(start..start.checked_add(len)?))
            .filter(|r| r.end <= bytes.len())
            .ok_or_else(|| invalid_log(format!("a content lies outside {name}")))?;
        let data: Arc<[u8]> = Arc::from(&bytes[range]);
        self.blobs.insert(state, Arc::clone(&data));
        Ok(Some(Content::File(data)))
    }

    fn record(&mut self, r: &RecordDto) -> WsResult<Record> {
        let check_path = |p: &str| -> WsResult<()> {
            match access::normalize(p) {
                Ok(n) if n == p && !n.is_empty() => Ok(()),
                _ => Err(invalid_log(format!(
                    "entry #{} names an invalid path {p:?}",
                    r.id
                ))),
            }
        };
        for p in &r.paths {
            check_path(p)?;
        }
        let changes = match &r.changes {
            None => None,
            Some(list) => {
                let mut changes = Vec::with_capacity(list.len());
                for c in list {
                    check_path(&c.path)?;
                    changes.push(Change {
                        path: c.path.clone(),
                        before: self.state(c.before)?,
                        after: self.state(c.after)?,
                    });
                }
                if changes.windows(2).any(|w| w[0].path >= w[1].path) {
                    return Err(invalid_log(format!(
                        "entry #{} lists its paths out of order",
                        r.id
                    )));
                }
                Some(changes)
            }
        };
        let (paths, path_count) = match &changes {
            Some(c) => (c.iter().map(|c| c.path.clone()).collect(), c.len()),
            None => (r.paths.clone(), r.path_count.max(r.paths.len())),
        };
        Ok(Record {
            id: r.id,
            op: r.op.clone(),
            time: r.time,
            paths,
            path_count,
            changes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::error::WsCode;

    fn file(s: &str) -> Option<Content> {
        Some(Content::File(Arc::from(s.as_bytes())))
    }

    fn clock() -> u64 {
        42
    }

    /// Writes through the vfs and records the change, like the workspace does.
    fn write(h: &mut HistoryState, v: &mut Vfs, p: &str, text: &str) -> Option<u64> {
        let before = v.content(p);
        v.set_content(p, file(text));
        let after = v.content(p);
        h.record(
            vec![Change {
                path: p.into(),
                before,
                after,
            }],
            &format!("write {p}"),
            v.now(),
        )
    }

    fn text(v: &Vfs, p: &str) -> String {
        v.read_file(p)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    }

    #[test]
    fn record_skips_no_ops_and_numbers_entries() {
        let mut h = HistoryState::new();
        let mut v = Vfs::new().with_clock(clock);
        assert_eq!(h.record(Vec::new(), "nothing", 1), None);
        let same = Change {
            path: "a".into(),
            before: file("x"),
            after: file("x"),
        };
        assert_eq!(h.record(vec![same], "same", 1), None);
        assert_eq!(write(&mut h, &mut v, "a", "1"), Some(1));
        assert_eq!(write(&mut h, &mut v, "b", "2"), Some(2));
        let e = h.entries(10);
        assert_eq!(e.iter().map(|e| e.id).collect::<Vec<_>>(), vec![2, 1]);
        assert_eq!(e[0].op, "write b");
        assert_eq!(e[0].paths, vec!["b"]);
        assert_eq!(e[0].time, 42);
        assert!(!e[0].compacted);
        assert_eq!(h.entries(1).len(), 1);
    }

    #[test]
    fn undo_redo_roundtrip() -> WsResult<()> {
        let mut h = HistoryState::new();
        let mut v = Vfs::new();
        write(&mut h, &mut v, "a", "1");
        write(&mut h, &mut v, "a", "2");
        write(&mut h, &mut v, "b", "3");
        assert_eq!(h.undo(&mut v, 2)?, vec![3, 2]);
        assert_eq!(text(&v, "a"), "1");
        assert!(!v.exists("b"));
        assert_eq!(h.redo_depth(), 2);
        assert_eq!(h.redo(&mut v, 1)?, vec![2]);
        assert_eq!(text(&v, "a"), "2");
        assert_eq!(h.redo(&mut v, 5)?, vec![3]);
        assert_eq!(text(&v, "b"), "3");
        assert_eq!(h.redo(&mut v, 1).map_err(|e| e.code), Err(WsCode::History));
        assert_eq!(h.undo(&mut v, 10)?, vec![3, 2, 1]);
        assert!(!v.exists("a"));
        assert_eq!(h.undo(&mut v, 1).map_err(|e| e.code), Err(WsCode::History));
        assert_eq!(h.undo(&mut v, 0)?, Vec::<u64>::new());
        Ok(())
    }

    #[test]
    fn new_record_clears_redo() -> WsResult<()> {
        let mut h = HistoryState::new();
        let mut v = Vfs::new();
        write(&mut h, &mut v, "a", "1");
        write(&mut h, &mut v, "a", "2");
        h.undo(&mut v, 1)?;
        write(&mut h, &mut v, "c", "x");
        assert_eq!(h.redo_depth(), 0);
        assert_eq!(h.redo(&mut v, 1).map_err(|e| e.code), Err(WsCode::History));
        assert_eq!(h.last_id(), Some(3));
        Ok(())
    }

    #[test]
    fn outside_changes_are_detected() -> WsResult<()> {
        let mut h = HistoryState::new();
        let mut v = Vfs::new();
        write(&mut h, &mut v, "a", "1");
        v.set_content("a", file("tampered"));
        let e = h.undo(&mut v, 1).map_err(|e| e.code);
        assert_eq!(e, Err(WsCode::History));
        assert_eq!(text(&v, "a"), "tampered");
        assert_eq!(h.undo_depth(), 1);
        Ok(())
    }

    #[test]
    fn compaction_by_count_and_cap() -> WsResult<()> {
        let config = HistoryConfig {
            keep_full: 3,
            max_entries: 5,
            max_full_bytes: u64::MAX,
        };
        let mut h = HistoryState::with_config(config);
        let mut v = Vfs::new();
        for i in 0..7 {
            write(&mut h, &mut v, "a", &i.to_string());
        }
        let e = h.entries(100);
        assert_eq!(e.len(), 5);
        assert_eq!(
            e.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![7, 6, 5, 4, 3]
        );
        assert_eq!(e.iter().filter(|e| e.compacted).count(), 2);
        assert_eq!(h.undo_depth(), 3);
        assert_eq!(h.undo(&mut v, 10)?, vec![7, 6, 5]);
        assert_eq!(text(&v, "a"), "3");
        let err = h.undo(&mut v, 1).map_err(|e| e.code);
        assert_eq!(err, Err(WsCode::History));
        assert_eq!(h.diff(4).map_err(|e| e.code), Err(WsCode::History));
        assert_eq!(h.diff(1).map_err(|e| e.code), Err(WsCode::History));
        Ok(())
    }

    #[test]
    fn compaction_by_bytes() {
        let config = HistoryConfig {
            keep_full: 50,
            max_entries: 200,
            max_full_bytes: 25,
        };
        let mut h = HistoryState::with_config(config);
        let mut v = Vfs::new();
        write(&mut h, &mut v, "a", "0123456789");
        write(&mut h, &mut v, "b", "0123456789");
        // Entry 1 holds 10 bytes, entry 2 10 bytes: 20 <= 25.
        assert_eq!(h.undo_depth(), 2);
        write(&mut h, &mut v, "c", "0123456789");
        assert_eq!(h.undo_depth(), 2);
        assert!(h.entries(3)[2].compacted);
    }

    #[test]
    fn compacted_entries_keep_limited_paths() {
        let config = HistoryConfig {
            keep_full: 0,
            max_entries: 10,
            max_full_bytes: u64::MAX,
        };
        let mut h = HistoryState::with_config(config);
        let changes: Vec<Change> = (0..150)
            .map(|i| Change {
                path: format!("f{i:03}"),
                before: None,
                after: file("x"),
            })
            .collect();
        h.record(changes, "batch", 1);
        let e = &h.entries(1)[0];
        assert!(e.compacted);
        assert_eq!(e.paths.len(), MAX_KEPT_PATHS);
        assert_eq!(e.path_count, 150);
    }

    #[test]
    fn diff_text_binary_and_dirs() -> WsResult<()> {
        let mut h = HistoryState::new();
        let changes = vec![
            Change {
                path: "d".into(),
                before: None,
                after: Some(Content::Dir),
            },
            Change {
                path: "d/t.txt".into(),
                before: file("a\nb\n"),
                after: file("a\nc\n"),
            },
            Change {
                path: "bin".into(),
                before: None,
                after: Some(Content::File(Arc::from(&b"\0\x01"[..]))),
            },
            Change {
                path: "new.txt".into(),
                before: None,
                after: file("hi\n"),
            },
            Change {
                path: "old".into(),
                before: Some(Content::Dir),
                after: None,
            },
        ];
        let id = h.record(changes, "batch", 1).unwrap_or_default();
        let d = h.diff(id)?;
        assert!(
            d.contains("binary file ~/bin changed (0 -> 2 bytes)"),
            "{d}"
        );
        assert!(d.contains("created directory ~/d\n"), "{d}");
        assert!(
            d.contains("--- a/d/t.txt\n+++ b/d/t.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"),
            "{d}"
        );
        assert!(
            d.contains("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"),
            "{d}"
        );
        assert!(d.contains("deleted directory ~/old\n"), "{d}");
        assert_eq!(h.diff(99).map_err(|e| e.code), Err(WsCode::History));
        Ok(())
    }

    #[test]
    fn long_diffs_are_cut_with_a_marker() -> WsResult<()> {
        let mut h = HistoryState::new();
        let mut v = Vfs::new();
        let big = "\n".repeat(16 << 20);
        let id = write(&mut h, &mut v, "big.txt", &big).unwrap_or_default();
        write(&mut h, &mut v, "small.txt", "one\n");
        let d = h.diff(id)?;
        let (body, marker) = d.trim_end().rsplit_once('\n').unwrap_or_default();
        assert!(body.len() < MAX_DIFF_BYTES, "{}", body.len());
        assert!(body.starts_with("--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,16777216 @@\n+\n"));
        assert!(body.ends_with("\n+"), "cut at a line boundary");
        assert_eq!(
            marker,
            format!("[diff cut off here: the diff of entry #{id} is longer than {MAX_DIFF_BYTES} bytes]")
        );
        // A diff that fits has no marker.
        let d = h.diff(id + 1)?;
        assert_eq!(d, "--- /dev/null\n+++ b/small.txt\n@@ -0,0 +1 @@\n+one\n");
        // An entry with many files stops at the cap too.
        let changes: Vec<Change> = (0..3000)
            .map(|i| Change {
                path: format!("f{i:04}.txt"),
                before: None,
                after: file(&"line\n".repeat(100)),
            })
            .collect();
        let id = h.record(changes, "batch", 1).unwrap_or_default();
        let d = h.diff(id)?;
        assert!(d.len() < MAX_DIFF_BYTES + 200);
        assert!(d.ends_with("bytes]\n"));
        Ok(())
    }

    #[test]
    fn restore_back_and_forward() -> WsResult<()> {
        let mut h = HistoryState::new();
        let mut v = Vfs::new();
        write(&mut h, &mut v, "a", "1");
        write(&mut h, &mut v, "a", "2");
        write(&mut h, &mut v, "b", "x");
        let r = h.restore(&mut v, 1, 5)?;
        assert_eq!(r, Some(4));
        assert_eq!(text(&v, "a"), "1");
        assert!(!v.exists("b"));
        assert_eq!(h.entries(1)[0].op, "restore #1");
        // The restore is itself undoable.
        h.undo(&mut v, 1)?;
        assert_eq!(text(&v, "a"), "2");
        assert_eq!(text(&v, "b"), "x");
        // Restoring to the current state records nothing.
        assert_eq!(h.restore(&mut v, 3, 6)?, None);
        // Restore to an undone entry.
        h.undo(&mut v, 2)?;
        assert_eq!(text(&v, "a"), "1");
        assert_eq!(h.restore(&mut v, 3, 7)?, Some(5));
        assert_eq!(text(&v, "a"), "2");
        assert_eq!(text(&v, "b"), "x");
        assert_eq!(h.redo_depth(), 0);
        assert_eq!(
            h.restore(&mut v, 77, 8).map_err(|e| e.code),
            Err(WsCode::History)
        );
        Ok(())
    }

    #[test]
    fn restore_refuses_to_cross_compacted_entries() {
        let config = HistoryConfig {
            keep_full: 1,
            max_entries: 10,
            max_full_bytes: u64::MAX,
        };
        let mut h = HistoryState::with_config(config);
        let mut v = Vfs::new();
        write(&mut h, &mut v, "a", "1");
        write(&mut h, &mut v, "a", "2");
        write(&mut h, &mut v, "a", "3");
        // Entry 2 is compacted: entry 1's state cannot be rebuilt.
        assert_eq!(
            h.restore(&mut v, 1, 0).map_err(|e| e.code),
            Err(WsCode::History)
        );
        assert_eq!(text(&v, "a"), "3");
        // Entry 2's state only needs entry 3, which is kept.
        assert!(h.restore(&mut v, 2, 0).is_ok());
        assert_eq!(text(&v, "a"), "2");
    }

    #[test]
    fn files_roundtrip_and_dedupe() -> WsResult<()> {
        let mut h = HistoryState::new();
        let mut v = Vfs::new();
        write(&mut h, &mut v, "a", "same");
        write(&mut h, &mut v, "b", "same");
        write(&mut h, &mut v, "a", "other");
        h.undo(&mut v, 1)?;
        let files = h.to_files();
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, vec![LOG_FILE, ".time/pack-00000.bin"]);
        assert_eq!(files[1].1, b"sameother", "each content is stored once");
        let map: BTreeMap<String, Vec<u8>> = files.into_iter().collect();
        let back = HistoryState::from_files(&map)?;
        assert_eq!(back, h);
        assert_eq!(back.to_files(), h.to_files());
        Ok(())
    }

    #[test]
    fn empty_history_has_no_files() -> WsResult<()> {
        assert!(HistoryState::new().to_files().is_empty());
        assert_eq!(
            HistoryState::from_files(&BTreeMap::new())?,
            HistoryState::new()
        );
        Ok(())
    }

    #[test]
    fn malformed_logs_are_refused() {
        let mut h = HistoryState::new();
        let mut v = Vfs::new();
        write(&mut h, &mut v, "a", "content");
        write(&mut h, &mut v, "b", "more");
        let good: BTreeMap<String, Vec<u8>> = h.to_files().into_iter().collect();
        assert!(HistoryState::from_files(&good).is_ok());
        let log = String::from_utf8_lossy(&good[LOG_FILE]).into_owned();
        let with_log = |from: &str, to: &str| {
            let edited = log.replace(from, to);
            assert_ne!(edited, log, "{from:?} must occur in the log");
            let mut m = good.clone();
            m.insert(LOG_FILE.to_string(), edited.into_bytes());
            m
        };
        let mut without_pack = good.clone();
        without_pack.remove(".time/pack-00000.bin");
        let mut short_pack = good.clone();
        short_pack.insert(".time/pack-00000.bin".into(), b"abc".to_vec());
        let cases: Vec<(&str, BTreeMap<String, Vec<u8>>)> = vec![
            (
                "not json",
                [(LOG_FILE.to_string(), b"not json".to_vec())].into(),
            ),
            ("format", with_log("\"format\":1", "\"format\":9")),
            ("pack missing", without_pack),
            ("pack too short", short_pack),
            ("escaping path", with_log("\"a\"", "\"../a\"")),
            ("hidden path", with_log("\"a\"", "\".time/x\"")),
            ("next id", with_log("\"next_id\":3", "\"next_id\":2")),
            ("id order", with_log("\"id\":2", "\"id\":1")),
            ("missing field", with_log("\"time\":", "\"tim\":")),
        ];
        for (label, files) in &cases {
            match HistoryState::from_files(files) {
                Ok(_) => panic!("{label}: should be refused"),
                Err(e) => assert_eq!(e.code, WsCode::ZipInvalid, "{label}: {e}"),
            }
        }
    }

    /// The files of a hand-written history: `log` as `.time/log.json` and `pack` as its
    /// one pack.
    fn crafted(log: &str, pack: &[u8]) -> BTreeMap<String, Vec<u8>> {
        [
            (LOG_FILE.to_string(), log.as_bytes().to_vec()),
            (pack_name(0), pack.to_vec()),
        ]
        .into()
    }

    /// A log of `entries` and `redo` (JSON arrays) with `next_id`.
    fn log(next_id: &str, entries: &str, redo: &str) -> String {
        format!(r#"{{"format":1,"next_id":{next_id},"entries":{entries},"redo":{redo}}}"#)
    }

    /// One entry changing `changes` (a JSON array).
    fn entry(id: u64, changes: &str) -> String {
        format!(
            r#"{{"id":{id},"op":"crafted","time":1,"path_count":0,"paths":[],"changes":{changes}}}"#
        )
    }

    const ABSENT: &str = r#"{"kind":"absent"}"#;
    const DIR: &str = r#"{"kind":"dir"}"#;
    /// The first three bytes of the pack, `abc`.
    const ABC: &str = r#"{"kind":"file","pack":0,"offset":0,"len":3}"#;

    fn change(path: &str, before: &str, after: &str) -> String {
        format!(r#"{{"path":"{path}","before":{before},"after":{after}}}"#)
    }

    fn tree(files: &[(&str, Option<&str>)]) -> Vfs {
        let mut v = Vfs::new();
        for (p, text) in files {
            match text {
                Some(t) => v.write_file(p, t.as_bytes(), true),
                None => v.mkdir(p, true),
            }
            .unwrap_or_else(|e| panic!("{p}: {e}"));
        }
        v
    }

    fn refused(files: &BTreeMap<String, Vec<u8>>, v: &Vfs) -> WsError {
        match HistoryState::from_archive(files, v) {
            Ok(h) => panic!("should be refused: {h:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn ids_without_headroom_are_refused() {
        let v = tree(&[("a", Some("abc"))]);
        let one = format!("[{}]", entry(1, &format!("[{}]", change("a", ABSENT, ABC))));
        for next in [u64::MAX, MAX_NEXT_ID + 1, MAX_EXACT] {
            let e = refused(&crafted(&log(&next.to_string(), &one, "[]"), b"abc"), &v);
            assert_eq!(e.code, WsCode::HistoryInvalid, "{next}: {e}");
            assert!(e.message.contains("leaves no room"), "{e}");
        }
        // Past u64 does not even read.
        let e = refused(
            &crafted(&log("18446744073709551616", &one, "[]"), b"abc"),
            &v,
        );
        assert_eq!(e.code, WsCode::ZipInvalid);
    }

    #[test]
    fn ids_renumber_before_they_run_out() -> WsResult<()> {
        let mut v = tree(&[("a", Some("abc"))]);
        let one = format!(
            "[{}]",
            entry(MAX_NEXT_ID - 1, &format!("[{}]", change("a", ABSENT, ABC)))
        );
        let files = crafted(&log(&MAX_NEXT_ID.to_string(), &one, "[]"), b"abc");
        let mut h = HistoryState::from_archive(&files, &v)?;
        assert_eq!(h.last_id(), Some(MAX_NEXT_ID - 1));
        assert_eq!(write(&mut h, &mut v, "b", "x"), Some(2));
        assert_eq!(write(&mut h, &mut v, "b", "y"), Some(3));
        assert_eq!(
            h.entries(5).iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![3, 2, 1]
        );
        assert_eq!(h.undo(&mut v, 3)?, vec![3, 2, 1]);
        assert!(!v.exists("a") && !v.exists("b"));
        assert_eq!(h.redo(&mut v, 1)?, vec![1]);
        // What it exports imports again.
        let back = HistoryState::from_archive(&h.to_files().into_iter().collect(), &v)?;
        assert_eq!(back, h);
        Ok(())
    }

    #[test]
    fn a_folder_undone_into_a_file_under_its_entries_is_refused() {
        // The tree has ~/d/ with ~/d/x.txt; the entry claims ~/d was a file before.
        let v = tree(&[("d/x.txt", Some("abc"))]);
        let one = format!("[{}]", entry(1, &format!("[{}]", change("d", ABC, DIR))));
        let e = refused(&crafted(&log("2", &one, "[]"), b"abc"), &v);
        assert_eq!(e.code, WsCode::HistoryInvalid);
        assert!(
            e.message
                .contains("~/d would be a file while ~/d/x.txt is inside it"),
            "{e}"
        );
        assert!(
            e.message.contains("entry #1 (crafted) cannot be undone"),
            "{e}"
        );
        // Deleting the folder under its file is refused the same way.
        let one = format!("[{}]", entry(1, &format!("[{}]", change("d", ABSENT, DIR))));
        let e = refused(&crafted(&log("2", &one, "[]"), b"abc"), &v);
        assert!(
            e.message
                .contains("~/d would be gone while ~/d/x.txt is still inside it"),
            "{e}"
        );
    }

    #[test]
    fn files_without_their_folder_are_refused() {
        // Undoing the deletion of ~/nodir/deep/f.js would bring it back without its folders.
        let v = tree(&[]);
        let one = format!(
            "[{}]",
            entry(1, &format!("[{}]", change("nodir/deep/f.js", ABC, ABSENT)))
        );
        let e = refused(&crafted(&log("2", &one, "[]"), b"abc"), &v);
        assert_eq!(e.code, WsCode::HistoryInvalid);
        assert!(
            e.message
                .contains("~/nodir/deep/f.js would exist without its folder ~/nodir/deep"),
            "{e}"
        );
        // The same entry as an undone one: redoing it is refused.
        let redo = format!(
            "[{}]",
            entry(1, &format!("[{}]", change("nodir/deep/f.js", ABSENT, ABC)))
        );
        let e = refused(&crafted(&log("2", "[]", &redo), b"abc"), &v);
        assert!(e.message.contains("cannot be redone"), "{e}");
        // Inside a file.
        let v = tree(&[("f", Some("abc"))]);
        let redo = format!(
            "[{}]",
            entry(1, &format!("[{}]", change("f/g", ABSENT, ABC)))
        );
        let e = refused(&crafted(&log("2", "[]", &redo), b"abc"), &v);
        assert!(e.message.contains("~/f/g would lie inside ~/f"), "{e}");
    }

    #[test]
    fn entries_that_do_not_fit_the_tree_are_refused() {
        let v = tree(&[("a", Some("other"))]);
        // The newest entry says ~/a holds "abc"; the tree disagrees.
        let one = format!("[{}]", entry(1, &format!("[{}]", change("a", ABSENT, ABC))));
        let e = refused(&crafted(&log("2", &one, "[]"), b"abc"), &v);
        assert_eq!(e.code, WsCode::HistoryInvalid);
        assert!(
            e.message.contains("~/a does not hold the state it expects"),
            "{e}"
        );
        // An older entry that stops fitting once the newer one is undone.
        let v = tree(&[("a", Some("abc"))]);
        let two = format!(
            "[{},{}]",
            entry(1, &format!("[{}]", change("b", ABSENT, ABC))),
            entry(2, &format!("[{}]", change("a", ABSENT, ABC)))
        );
        let e = refused(&crafted(&log("3", &two, "[]"), b"abc"), &v);
        assert!(e.message.contains("entry #1"), "{e}");
        // The cursor: the next entry to redo must start from the tree as it is.
        let redo = format!("[{}]", entry(2, &format!("[{}]", change("a", ABSENT, ABC))));
        let e = refused(&crafted(&log("3", "[]", &redo), b"abc"), &v);
        assert!(e.message.contains("cannot be redone"), "{e}");
    }

    #[test]
    fn entries_the_workspace_never_writes_are_refused() {
        let v = tree(&[("a", Some("abc"))]);
        let cases = [
            ("no change", entry(1, "[]")),
            (
                "a change to the same state",
                entry(1, &format!("[{}]", change("a", ABC, ABC))),
            ),
            (
                "a time past 2^53",
                entry(1, &format!("[{}]", change("a", ABSENT, ABC)))
                    .replace(r#""time":1"#, r#""time":18446744073709551615"#),
            ),
        ];
        for (label, e) in &cases {
            let err = refused(&crafted(&log("2", &format!("[{e}]"), "[]"), b"abc"), &v);
            assert_eq!(err.code, WsCode::HistoryInvalid, "{label}: {err}");
        }
        let compacted = |id: u64, paths: &str| {
            format!(r#"{{"id":{id},"op":"old","time":1,"path_count":3,"paths":{paths}}}"#)
        };
        let full = entry(2, &format!("[{}]", change("a", ABSENT, ABC)));
        // A compacted entry newer than one that keeps its contents.
        let e = refused(
            &crafted(
                &log("4", &format!("[{full},{}]", compacted(3, "[]")), "[]"),
                b"abc",
            ),
            &v,
        );
        assert_eq!(e.code, WsCode::HistoryInvalid, "{e}");
        assert!(e.message.contains("entry #3 dropped its contents"), "{e}");
        for paths in [r#"["b","a"]"#, r#"["a","a"]"#] {
            let e = refused(
                &crafted(
                    &log("3", &format!("[{},{full}]", compacted(1, paths)), "[]"),
                    b"abc",
                ),
                &v,
            );
            assert!(e.message.contains("out of order"), "{e}");
        }
        let many: Vec<String> = (0..=MAX_KEPT_PATHS)
            .map(|i| format!("\"p{i:04}\""))
            .collect();
        let e = refused(
            &crafted(
                &log(
                    "3",
                    &format!(
                        "[{},{full}]",
                        compacted(1, &format!("[{}]", many.join(",")))
                    ),
                    "[]",
                ),
                b"abc",
            ),
            &v,
        );
        assert!(e.message.contains("more than 100 paths"), "{e}");
        // The same log with a valid compacted entry is accepted.
        let ok = crafted(
            &log(
                "3",
                &format!("[{},{full}]", compacted(1, r#"["a","b"]"#)),
                "[]",
            ),
            b"abc",
        );
        assert!(HistoryState::from_archive(&ok, &v).is_ok());
    }

    #[test]
    fn history_never_leaves_the_tree_out_of_shape() -> WsResult<()> {
        // Entries that did not come through an import are checked when applied, too.
        let mut h = HistoryState::new();
        let mut v = tree(&[("d/x.txt", Some("x"))]);
        h.record(
            vec![Change {
                path: "d".into(),
                before: file("was a file"),
                after: Some(Content::Dir),
            }],
            "bad",
            1,
        );
        let before = v.clone();
        let e = h.undo(&mut v, 1).map_err(|e| e.code);
        assert_eq!(e, Err(WsCode::HistoryInvalid));
        assert_eq!(v, before, "nothing changed");
        assert_eq!(h.undo_depth(), 1);
        let e = h.restore(&mut v, 0, 1).map_err(|e| e.code);
        assert_eq!(e, Err(WsCode::History), "no entry #0");
        Ok(())
    }
}
