//! Provenance: what produced an output, recorded in it.
//!
//! A result file is only worth keeping if it says how to get it again. Every JSON output of
//! `simulate`, `frontier-rank`, `seeds-eval` and `seeds` (and the `orders.json` sidecar of
//! `simulate --save-orders`) carries a top-level `provenance` object built here, in one place:
//!
//! - `crawlrank`: the version, the git commit the binary was built from (`unknown` outside a
//!   git checkout), its date and whether the tree had uncommitted changes (build.rs);
//! - `argv`: the full command line; `time`: when the command started (UTC, RFC 3339);
//! - `command` and `parameters`: every option of the subcommand by its long name, as clap
//!   parsed it, defaults included (taken from clap's own matches, so no option can be
//!   forgotten), and `defaulted`: which of them were not given;
//! - `graph`: the path given, its basename and a checksum of its files ([`file_digest`]);
//! - what the command adds: seed ids (the user's ids, [`PageIds`]), an impact file's digest
//!   and column, resolved values such as simulate's batch size K.
//!
//! The writers of the library crates are not changed: [`stamp_json`] adds the object to the
//! file they wrote, leaving every byte of the rest as it was.

use anyhow::{bail, Context, Result};
use clap::parser::ValueSource;
use clap::ArgMatches;
use crawlrank_fetch::warc::warc_date;
use crawlrank_graph::{is_bvgraph, with_ext, PageIds};
use serde_json::{json, Map, Value};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::OnceLock;
use std::time::SystemTime;

/// The crate version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The short hash of the commit the binary was built from, or `unknown`.
pub const COMMIT: &str = env!("CRAWLRANK_COMMIT");
/// The commit's date (`YYYY-MM-DD`), empty when unknown.
pub const COMMIT_DATE: &str = env!("CRAWLRANK_COMMIT_DATE");
/// `true` when tracked files differed from the commit at build time, `false`, or `unknown`.
pub const DIRTY: &str = env!("CRAWLRANK_DIRTY");
/// What `crawlrank --version` prints after the name: `0.1.0 (commit 3dd6670, 2026-11-26)`.
pub const VERSION_TEXT: &str = env!("CRAWLRANK_VERSION_TEXT");

/// Files larger than this are not read whole: their digest covers the size, the first and the
/// last [`SAMPLE`] bytes (and says so).
pub const WHOLE_FILE_LIMIT: u64 = 1 << 30;
/// The bytes read at each end of a file over [`WHOLE_FILE_LIMIT`].
pub const SAMPLE: u64 = 1 << 20;

/// The invocation, recorded once by `main` before the command runs.
struct Invocation {
    argv: Vec<String>,
    time: String,
    command: String,
    parameters: Map<String, Value>,
    defaulted: Vec<String>,
}

static INVOCATION: OnceLock<Invocation> = OnceLock::new();

/// Records the command line: `cli` is the top-level command definition, `matches` what clap
/// parsed from `argv`. Called once, by `main`.
pub fn init(cli: &clap::Command, matches: &ArgMatches, argv: Vec<String>) {
    // The global options (--cache), then the subcommand's.
    let (mut parameters, mut defaulted) = parameters(cli, matches);
    let command = match matches.subcommand() {
        Some((name, sub)) => {
            if let Some(def) = cli.find_subcommand(name) {
                let (p, d) = self::parameters(def, sub);
                parameters.extend(p);
                defaulted.extend(d);
            }
            name.to_owned()
        }
        None => String::new(),
    };
    let _ = INVOCATION.set(Invocation {
        argv,
        time: warc_date(SystemTime::now()),
        command,
        parameters,
        defaulted,
    });
}

/// Every option of `cmd` (help and version aside) by its long name: its value(s) as parsed,
/// defaults included, `null` when neither given nor defaulted; and the names taken from a
/// default.
fn parameters(cmd: &clap::Command, m: &ArgMatches) -> (Map<String, Value>, Vec<String>) {
    let mut params = Map::new();
    let mut defaulted = Vec::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if matches!(id, "help" | "version") {
            continue;
        }
        let name = arg.get_long().unwrap_or(id).to_owned();
        let values: Vec<String> = match m.try_get_raw(id) {
            Ok(Some(raw)) => raw.map(|v| v.to_string_lossy().into_owned()).collect(),
            _ => Vec::new(),
        };
        let is_flag = matches!(
            arg.get_action(),
            clap::ArgAction::SetTrue | clap::ArgAction::SetFalse
        );
        let value = match values.as_slice() {
            [] => Value::Null,
            [one] if is_flag => Value::Bool(one == "true"),
            [one] => Value::String(one.clone()),
            many => many.iter().cloned().map(Value::String).collect(),
        };
        if m.value_source(id) == Some(ValueSource::DefaultValue) {
            defaulted.push(name.clone());
        }
        params.insert(name, value);
    }
    (params, defaulted)
}

/// The provenance of one output, built up by the command and written with [`stamp_json`] or
/// [`write_sidecar`].
#[derive(Debug, Clone)]
pub struct Provenance(Map<String, Value>);

impl Provenance {
    /// The record of this process's command on the graph `graph` (the path as given): the
    /// version, the command line, the parameters, the graph's checksum.
    pub fn new(graph: &Path) -> Result<Self> {
        let mut map = Map::new();
        map.insert("crawlrank".into(), build());
        if let Some(inv) = INVOCATION.get() {
            map.insert("command".into(), inv.command.clone().into());
            map.insert("argv".into(), json!(inv.argv));
            map.insert("time".into(), inv.time.clone().into());
            map.insert("parameters".into(), Value::Object(inv.parameters.clone()));
            map.insert("defaulted".into(), json!(inv.defaulted));
        }
        map.insert("graph".into(), graph_digest(graph)?);
        Ok(Self(map))
    }

    /// Adds (or replaces) the field `key`.
    pub fn set(&mut self, key: &str, value: Value) -> &mut Self {
        self.0.insert(key.to_owned(), value);
        self
    }

    /// Records the seed pages `seeds` (node indices) by their ids in `ids`.
    pub fn seeds(&mut self, seeds: &[u32], ids: &PageIds) -> &mut Self {
        let named: Vec<u64> = ids.ids_of(seeds).collect();
        self.set("seed_ids", json!(named))
    }

    /// The record as JSON.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

/// The build: version, commit, commit date, whether the tree was modified.
pub fn build() -> Value {
    json!({
        "version": VERSION,
        "commit": COMMIT,
        "commit_date": (!COMMIT_DATE.is_empty()).then_some(COMMIT_DATE),
        "dirty": match DIRTY {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::Null,
        },
    })
}

/// The graph `graph` (as given to `--graph`): its path, basename and the digests of its files —
/// a BVGraph's `.graph` and `.properties` (and `.ids`, the user's ids, when present), or the
/// arc-list file itself.
pub fn graph_digest(graph: &Path) -> Result<Value> {
    let files: Vec<std::path::PathBuf> = if is_bvgraph(graph) {
        ["graph", "properties", "ids"]
            .iter()
            .map(|e| with_ext(graph, e))
            .filter(|p| *p == with_ext(graph, "graph") || p.exists())
            .collect()
    } else {
        vec![graph.to_path_buf()]
    };
    let digests = files
        .iter()
        .map(|f| file_digest(f))
        .collect::<Result<Vec<_>>>()?;
    let basename = graph.file_name().map_or_else(
        || graph.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    Ok(json!({
        "path": graph.display().to_string(),
        "basename": basename,
        "files": digests,
    }))
}

/// The digest of the file `path`: `{"file", "bytes", "xxh3_64", "sampled"}`. `xxh3_64` is the
/// XXH3 64-bit hash (hex; `xxhsum -H3` prints the same) of the whole file; for a file over
/// [`WHOLE_FILE_LIMIT`] it is the hash of its size (8 bytes, little-endian), its first and its
/// last [`SAMPLE`] bytes, and `sampled` is true.
pub fn file_digest(path: &Path) -> Result<Value> {
    let mut file = std::fs::File::open(path)
        .with_context(|| format!("cannot open {} to compute its digest", path.display()))?;
    let bytes = file
        .metadata()
        .with_context(|| format!("cannot stat {}", path.display()))?
        .len();
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let sampled = bytes > WHOLE_FILE_LIMIT;
    let context = || format!("cannot read {} to compute its digest", path.display());
    if sampled {
        use std::io::{Seek, SeekFrom};
        hasher.update(&bytes.to_le_bytes());
        let mut buf = vec![0u8; SAMPLE as usize];
        file.read_exact(&mut buf).with_context(context)?;
        hasher.update(&buf);
        file.seek(SeekFrom::Start(bytes - SAMPLE))
            .with_context(context)?;
        file.read_exact(&mut buf).with_context(context)?;
        hasher.update(&buf);
    } else {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buf).with_context(context)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
    }
    Ok(json!({
        "file": path.display().to_string(),
        "bytes": bytes,
        "xxh3_64": format!("{:016x}", hasher.digest()),
        "sampled": sampled,
    }))
}

/// Adds `"provenance": record` to the JSON object in the file `path`, first, without
/// rewriting the rest: every other byte stays as the writer left it (numbers are not parsed
/// and printed again). The file must hold one JSON object without a `provenance` field.
pub fn stamp_json(path: &Path, record: &Provenance) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {} to add its provenance", path.display()))?;
    let doc: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", path.display()))?;
    let Some(object) = doc.as_object() else {
        bail!("{} does not hold a JSON object", path.display());
    };
    if object.contains_key("provenance") {
        bail!("{} already has a provenance field", path.display());
    }
    let open = text.find('{').expect("a JSON object has a '{'");
    let pretty = serde_json::to_string_pretty(&record.to_value())?.replace('\n', "\n  ");
    let separator = if object.is_empty() { "\n" } else { "," };
    let stamped = format!(
        "{}{{\n  \"provenance\": {pretty}{separator}{}",
        &text[..open],
        &text[open + 1..]
    );
    write_text(path, &stamped)
}

/// Writes `text` to `path` atomically (the file appears whole or not at all).
fn write_text(path: &Path, text: &str) -> Result<()> {
    crawlrank_graph::atomic::write_file(path, |w| {
        w.write_all(text.as_bytes())?;
        Ok(())
    })
    .with_context(|| format!("cannot write {}", path.display()))
}

/// Writes `{"provenance": record, extra…}` to `path` (a sidecar of files whose own format has
/// no room for it, e.g. `.order` files).
pub fn write_sidecar(path: &Path, record: &Provenance, extra: Map<String, Value>) -> Result<()> {
    let mut doc = Map::new();
    doc.insert("provenance".into(), record.to_value());
    doc.extend(extra);
    let text = serde_json::to_string_pretty(&Value::Object(doc))? + "\n";
    write_text(path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_utc() {
        let at = |s: u64| warc_date(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_795_669_323), "2026-11-26T05:02:03Z");
    }

    #[test]
    fn stamping_keeps_every_other_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let original = "{\n  \"a\": 0.30000000000000004,\n  \"b\": [1e-7, 2]\n}\n";
        std::fs::write(&path, original).unwrap();
        let mut p = Provenance(Map::new());
        p.set("x", json!(1));
        stamp_json(&path, &p).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with(&original[1..]), "{text}");
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["provenance"]["x"], 1);
        assert_eq!(doc["b"][0], json!(1e-7));
        // Twice is an error, as is a file that is not an object.
        assert!(stamp_json(&path, &p).is_err());
        std::fs::write(&path, "[1]").unwrap();
        assert!(stamp_json(&path, &p).is_err());
        std::fs::write(&path, "{}").unwrap();
        stamp_json(&path, &p).unwrap();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["provenance"]["x"], 1);
    }

    #[test]
    fn small_files_are_hashed_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"hello").unwrap();
        let d = file_digest(&path).unwrap();
        assert_eq!(d["bytes"], 5);
        assert_eq!(d["sampled"], false);
        let expected = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(b"hello"));
        assert_eq!(d["xxh3_64"], expected);
    }
}
