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
mod tests;
