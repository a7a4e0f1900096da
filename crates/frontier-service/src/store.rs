//! The service's state on disk: an embedded `redb` database (the store the crawler uses)
//! holding the policy the crawls are ordered by, a checkpoint of the state and the log of
//! the changing calls made since.
//!
//! Tables:
//! - `meta`: the format version and the [`PolicySpec`] (its one stored encoding, as in the
//!   crawl state), fixed when the state is created: a replay with another policy would build
//!   other frontiers;
//! - `calls`: sequence number → encoded [`LoggedCall`], replayed in order at open
//!   (`crate::state` says why a log of calls is enough);
//! - `checkpoint`: `state` → the encoded [`StateCheckpoint`] of every call before `through`
//!   (its sequence number, little-endian), absent until the first compaction.
//!
//! - `dead_letters`: JetStream sequence → payload of each message of a cluster node's subject
//!   that did not decode (set aside and counted, never applied; crate::cluster).
//! - `outbox`: number → owner (u32, little-endian) and encoded `Forwarded` of each item a
//!   cluster node's applied calls hand to another node (the out-links of a page it reported,
//!   each with what the page passed along it), written in the same transaction as the calls
//!   and deleted once JetStream has stored it: what leaves a page (OPIC's cash) is thus never
//!   lost between the node's commit and JetStream, and is sent again after a crash until
//!   JetStream has it (its message id, the number, lets JetStream drop a copy). The next
//!   number is kept in `meta` (`cluster.outbox_next`), so numbers are never reused.
//!
//! A cluster node also keeps in `meta` (`cluster.applied`) the JetStream sequence of the last
//! forwarded item it applied, written in the same transaction as the calls that applied it, so
//! that a redelivery after a crash is recognised.
//!
//! Compaction ([`Store::write_checkpoint`]) writes the checkpoint and drops the calls it
//! covers in one transaction: a crash leaves either the old log or the checkpoint with an
//! empty log, never both nor neither. Sequence numbers go on from `through`.
//!
//! Every append is one transaction with redb's default `Durability::Immediate`, committed
//! before the call is answered, so a `kill -9` loses no answered call. The service appends
//! the calls of a whole group-commit window at once (`crate::service`): one transaction and
//! one fsync for them all.

use crate::checkpoint::StateCheckpoint;
use crate::state::LoggedCall;
use anyhow::{bail, Context, Result};
use crawlrank_frontier::PolicySpec;
use prost::Message;
use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use std::path::{Path, PathBuf};

const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
const CALLS: TableDefinition<u64, &[u8]> = TableDefinition::new("calls");
const CHECKPOINT: TableDefinition<&str, &[u8]> = TableDefinition::new("checkpoint");
const DEAD_LETTERS: TableDefinition<u64, &[u8]> = TableDefinition::new("dead_letters");
const OUTBOX: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox");
/// The `meta` key of the next outbox number.
const OUTBOX_NEXT_KEY: &str = "cluster.outbox_next";
/// The `meta` key of the last JetStream sequence applied.
const APPLIED_KEY: &str = "cluster.applied";

/// What a cluster node applied from JetStream in one transaction: the sequence of the last
/// item, and the messages that did not decode (sequence, payload).
#[derive(Debug, Default)]
pub struct Applied {
    /// The last sequence applied.
    pub through: u64,
    /// Undecodable messages, set aside.
    pub dead: Vec<(u64, Vec<u8>)>,
}

/// The state format this build writes; bump on any change of the tables or of
/// [`LoggedCall`]'s or [`StateCheckpoint`]'s meaning.
pub const FORMAT: &str = "crawlrank-frontier-service-state/3";
/// The format before a cluster node's outbox, offers and split reports: read as it is (it
/// holds none of them), and marked [`FORMAT`] at the next compaction.
const FORMAT_V2: &str = "crawlrank-frontier-service-state/2";
/// The format before checkpoints: a log of every call, which this build reads as a state
/// without a checkpoint (and marks [`FORMAT`] at its first compaction, so that an older
/// build, which would ignore the checkpoint, refuses it).
const FORMAT_V1: &str = "crawlrank-frontier-service-state/1";

/// The database's page cache in memory.
const CACHE_BYTES: usize = 64 << 20;

/// The database file inside a state directory.
pub fn db_path(dir: &Path) -> PathBuf {
    dir.join("frontier.redb")
}

/// An open state directory.
pub struct Store {
    db: Database,
    path: PathBuf,
    next_call: u64,
    /// The first call the log holds (the checkpoint covers those before).
    first_call: u64,
    /// The next outbox number.
    next_outbox: u64,
}

impl Store {
    /// Opens (or creates) the state in `dir`. A new state records `spec`; an existing one
    /// returns its own, which must equal `spec` when `spec` is given.
    pub fn open(
        dir: &Path,
        spec: Option<&PolicySpec>,
        default: &PolicySpec,
    ) -> Result<(Self, PolicySpec)> {
        let path = db_path(dir);
        let exists = path.is_file();
        if !exists {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the state directory {}", dir.display()))?;
        }
        let mut builder = Database::builder();
        builder.set_cache_size(CACHE_BYTES);
        let db = if exists {
            builder.open(&path)
        } else {
            builder.create(&path)
        }
        .with_context(|| {
            format!(
                "cannot open the frontier state {}; if another service uses this directory, stop it first",
                path.display()
            )
        })?;
        let mut store = Self {
            db,
            path,
            next_call: 0,
            first_call: 0,
            next_outbox: 0,
        };
        let stored = if exists { store.read_meta()? } else { None };
        let spec = match (stored, spec) {
            (Some(stored), Some(asked)) if stored != *asked => bail!(
                "the frontier state {} orders its crawls with policy {} ({}); it cannot be \
                 served with {} ({}): give the same options, or another --state",
                store.path.display(),
                stored.kind,
                stored.encode().trim_end().replace('\n', " "),
                asked.kind,
                asked.encode().trim_end().replace('\n', " ")
            ),
            (Some(stored), _) => stored,
            (None, asked) => {
                let spec = asked.unwrap_or(default).clone();
                store.init(&spec)?;
                spec
            }
        };
        store.first_call = store.read_through()?;
        store.next_call = store.count_calls()?.max(store.first_call);
        store.next_outbox = store.read_u64(OUTBOX_NEXT_KEY)?;
        Ok((store, spec))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read_meta(&self) -> Result<Option<PolicySpec>> {
        let txn = self.db.begin_read()?;
        let meta = match txn.open_table(META) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let Some(format) = meta.get("format")? else {
            return Ok(None);
        };
        let format = String::from_utf8_lossy(format.value()).into_owned();
        if ![FORMAT, FORMAT_V2, FORMAT_V1].contains(&format.as_str()) {
            bail!(
                "{} holds a state of format '{format}', this build reads '{FORMAT}'; it was not modified",
                self.path.display()
            );
        }
        let spec = meta
            .get("policy")?
            .with_context(|| format!("{} names no policy", self.path.display()))?;
        let text = std::str::from_utf8(spec.value()).context("the stored policy is not UTF-8")?;
        Ok(Some(PolicySpec::decode(text).with_context(|| {
            format!("the policy stored in {} is unreadable", self.path.display())
        })?))
    }

    fn init(&mut self, spec: &PolicySpec) -> Result<()> {
        let txn = self.db.begin_write()?;
        {
            let mut meta = txn.open_table(META)?;
            meta.insert("format", FORMAT.as_bytes())?;
            meta.insert("policy", spec.encode().as_bytes())?;
            txn.open_table(CALLS)?;
        }
        txn.commit()
            .with_context(|| format!("cannot initialise {}", self.path.display()))
    }

    fn count_calls(&self) -> Result<u64> {
        let txn = self.db.begin_read()?;
        let calls = txn.open_table(CALLS)?;
        let next = calls.last()?.map_or(0, |(k, _)| k.value() + 1);
        Ok(next)
    }

    fn read_through(&self) -> Result<u64> {
        let txn = self.db.begin_read()?;
        let table = match txn.open_table(CHECKPOINT) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(0),
            Err(e) => return Err(e.into()),
        };
        let Some(v) = table.get("through")? else {
            return Ok(0);
        };
        let bytes: [u8; 8] = v
            .value()
            .try_into()
            .with_context(|| format!("the checkpoint of {} is unreadable", self.path.display()))?;
        Ok(u64::from_le_bytes(bytes))
    }

    /// Calls logged since the checkpoint (all of them if there is none).
    pub fn calls_since_checkpoint(&self) -> u64 {
        self.next_call - self.first_call
    }

    /// The checkpoint, if the log was ever compacted, and every call logged after it, in
    /// order (read in one snapshot; an undecodable record is an error naming it).
    pub fn load(&self) -> Result<(Option<StateCheckpoint>, Vec<LoggedCall>)> {
        let read = || -> Result<(Option<StateCheckpoint>, Vec<LoggedCall>)> {
            let txn = self.db.begin_read()?;
            let checkpoint = match txn.open_table(CHECKPOINT) {
                Ok(t) => match t.get("state")? {
                    Some(v) => Some(
                        StateCheckpoint::decode(v.value())
                            .context("the checkpoint is undecodable")?,
                    ),
                    None => None,
                },
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(e.into()),
            };
            let calls = txn.open_table(CALLS)?;
            let mut out = Vec::new();
            for (i, row) in calls.iter()?.enumerate() {
                let (k, v) = row?;
                let seq = self.first_call + i as u64;
                if k.value() != seq {
                    bail!("call {seq} is missing from the log");
                }
                out.push(
                    LoggedCall::decode(v.value())
                        .with_context(|| format!("call {seq} of the log is undecodable"))?,
                );
            }
            Ok((checkpoint, out))
        };
        read().with_context(|| format!("cannot read the state in {}", self.path.display()))
    }

    /// Compacts the log: stores `checkpoint`, the state after every call logged so far, and
    /// drops those calls, in one durable transaction.
    pub fn write_checkpoint(&mut self, checkpoint: &StateCheckpoint) -> Result<()> {
        let write = || -> Result<()> {
            let bytes = checkpoint.encode_to_vec();
            let txn = self.db.begin_write()?;
            {
                let mut table = txn.open_table(CHECKPOINT)?;
                table.insert("state", bytes.as_slice())?;
                table.insert("through", self.next_call.to_le_bytes().as_slice())?;
                let mut meta = txn.open_table(META)?;
                meta.insert("format", FORMAT.as_bytes())?;
            }
            txn.delete_table(CALLS)?;
            txn.open_table(CALLS)?;
            txn.commit()?;
            Ok(())
        };
        write()
            .with_context(|| format!("cannot write the checkpoint of {}", self.path.display()))?;
        self.first_call = self.next_call;
        Ok(())
    }

    /// The JetStream sequence of the last forwarded item applied (0: none).
    pub fn applied(&self) -> Result<u64> {
        self.read_u64(APPLIED_KEY)
    }

    /// A little-endian `u64` of `meta` (0 when absent).
    fn read_u64(&self, key: &str) -> Result<u64> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        let Some(v) = meta.get(key)? else {
            return Ok(0);
        };
        let bytes: [u8; 8] = v
            .value()
            .try_into()
            .with_context(|| format!("{} holds an unreadable {key}", self.path.display()))?;
        Ok(u64::from_le_bytes(bytes))
    }

    /// The oldest items of the outbox, at most `limit`: (number, owner, encoded item).
    pub fn outbox(&self, limit: usize) -> Result<Vec<(u64, u32, Vec<u8>)>> {
        let read = || -> Result<Vec<(u64, u32, Vec<u8>)>> {
            let txn = self.db.begin_read()?;
            let table = match txn.open_table(OUTBOX) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
                Err(e) => return Err(e.into()),
            };
            let mut out = Vec::new();
            for row in table.iter()?.take(limit) {
                let (k, v) = row?;
                let v = v.value();
                anyhow::ensure!(v.len() >= 4, "outbox item {} is cut", k.value());
                let owner = u32::from_le_bytes(v[..4].try_into().expect("4 bytes"));
                out.push((k.value(), owner, v[4..].to_vec()));
            }
            Ok(out)
        };
        read().with_context(|| format!("cannot read the outbox of {}", self.path.display()))
    }

    /// Drops outbox items JetStream has stored.
    pub fn outbox_done(&mut self, numbers: &[u64]) -> Result<()> {
        let write = || -> Result<()> {
            let txn = self.db.begin_write()?;
            {
                let mut table = txn.open_table(OUTBOX)?;
                for n in numbers {
                    table.remove(*n)?;
                }
            }
            txn.commit()?;
            Ok(())
        };
        write().with_context(|| format!("cannot update the outbox of {}", self.path.display()))
    }

    /// How many forwarded messages were set aside as undecodable.
    pub fn dead_letters(&self) -> Result<u64> {
        let txn = self.db.begin_read()?;
        match txn.open_table(DEAD_LETTERS) {
            Ok(t) => Ok(t.len()?),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(0),
            Err(e) => Err(e.into()),
        }
    }

    /// Appends calls to the log in one durable transaction, with what a cluster node applied
    /// from JetStream by them, if anything, and the items they hand to other nodes (owner,
    /// encoded item) into the outbox.
    pub fn append(
        &mut self,
        calls: &[LoggedCall],
        applied: Option<&Applied>,
        outbox: &[(u32, Vec<u8>)],
    ) -> Result<()> {
        if calls.is_empty() && applied.is_none() && outbox.is_empty() {
            return Ok(());
        }
        let write = || -> Result<()> {
            let txn = self.db.begin_write()?;
            {
                let mut table = txn.open_table(CALLS)?;
                for (i, call) in calls.iter().enumerate() {
                    table.insert(self.next_call + i as u64, call.encode_to_vec().as_slice())?;
                }
                if !outbox.is_empty() {
                    let mut table = txn.open_table(OUTBOX)?;
                    for (i, (owner, item)) in outbox.iter().enumerate() {
                        let mut row = owner.to_le_bytes().to_vec();
                        row.extend_from_slice(item);
                        table.insert(self.next_outbox + i as u64, row.as_slice())?;
                    }
                    let next = self.next_outbox + outbox.len() as u64;
                    txn.open_table(META)?
                        .insert(OUTBOX_NEXT_KEY, next.to_le_bytes().as_slice())?;
                }
                if let Some(applied) = applied {
                    let mut meta = txn.open_table(META)?;
                    meta.insert(APPLIED_KEY, applied.through.to_le_bytes().as_slice())?;
                    if !applied.dead.is_empty() {
                        let mut dead = txn.open_table(DEAD_LETTERS)?;
                        for (seq, payload) in &applied.dead {
                            dead.insert(*seq, payload.as_slice())?;
                        }
                    }
                }
            }
            txn.commit()?;
            Ok(())
        };
        write()
            .with_context(|| format!("cannot append to the call log of {}", self.path.display()))?;
        self.next_call += calls.len() as u64;
        self.next_outbox += outbox.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Call;

    #[test]
    fn the_applied_sequence_and_dead_letters_are_committed_with_the_calls() {
        let dir = tempfile::tempdir().unwrap();
        let spec = crate::policy_spec("bfs", Some(10), None, 0).unwrap();
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        assert_eq!(
            (store.applied().unwrap(), store.dead_letters().unwrap()),
            (0, 0)
        );
        let call = LoggedCall {
            now: 1,
            call: Some(Call::Active(crate::proto::Active {
                state: true,
                local: false,
            })),
            max_waiting: 1,
        };
        store
            .append(std::slice::from_ref(&call), None, &[])
            .unwrap();
        assert_eq!(store.applied().unwrap(), 0);
        let applied = Applied {
            through: 7,
            dead: vec![(5, vec![0xff])],
        };
        store.append(&[call], Some(&applied), &[]).unwrap();
        // Nothing but the sequence moves (items that were all skipped) is committed too.
        store
            .append(
                &[],
                Some(&Applied {
                    through: 9,
                    dead: Vec::new(),
                }),
                &[(2, vec![1, 2, 3])],
            )
            .unwrap();
        drop(store);
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        assert_eq!(
            (store.applied().unwrap(), store.dead_letters().unwrap()),
            (9, 1)
        );
        assert_eq!(store.load().unwrap().1.len(), 2);
        // The outbox item survived the restart; once sent and dropped, its number is never
        // given again (JetStream drops a message whose id it has seen).
        assert_eq!(store.outbox(10).unwrap(), vec![(0, 2, vec![1, 2, 3])]);
        store.outbox_done(&[0]).unwrap();
        drop(store);
        let (mut store, _) = Store::open(dir.path(), None, &spec).unwrap();
        assert!(store.outbox(10).unwrap().is_empty());
        store.append(&[], None, &[(1, vec![4])]).unwrap();
        assert_eq!(store.outbox(10).unwrap(), vec![(1, 1, vec![4])]);
    }
}
