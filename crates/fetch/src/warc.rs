//! WARC output (ISO 28500, WARC/1.1): what the crawler fetched, in the archive format every
//! web-archive tool reads.
//!
//! Each fetch gives a `request` and a `response` record; each file opens with a `warcinfo`
//! record. Every record is its own gzip member, so tools can seek to any record, and a file
//! cut after any whole member is still a valid `.warc.gz` — which is what makes the crawl's
//! crash recovery simple: the state stores the write position at each commit, and on resume
//! the last file is truncated there, dropping the records of fetches that were not committed
//! (they will be fetched again). Files rotate once they pass a size, named
//! `crawl-00000.warc.gz`, `crawl-00001.warc.gz`, … in the state directory's `warc/` folder.
//!
//! A position is only committed once the bytes before it are on the disk
//! ([`WarcWriter::sync`]: the file's data, and the directory when the file is new), so a
//! power cut cannot leave a state that vouches for records the disk lost. A file found
//! shorter than its committed position all the same (a disk that lied, a copy cut short) is
//! never padded: [`WarcWriter::resume`] cuts it back to its last whole record and reports
//! which pages' records are gone, for the crawl to fetch them again. Files past the committed
//! one (a rotation the state never recorded) are removed.
//!
//! Records are built and compressed by the fetch tasks ([`fetch_records`]), off the engine
//! thread; the engine only appends bytes ([`WarcWriter::append`]).

use anyhow::{Context, Result};
use flate2::{Compress, Compression, Crc, FlushCompress, Status};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where the WARC writer was at the last commit: records past it belong to pages whose
/// fetch was not committed, and are cut on resume. The state stores it with every commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WarcPosition {
    /// Number of the file being written ([`warc_path`]).
    pub file: u32,
    /// Its length in bytes: where the next record goes.
    pub offset: u64,
}

/// `YYYY-MM-DDThh:mm:ssZ` (the WARC-Date form) of a time.
pub fn warc_date(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil-from-days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn record_id() -> String {
    format!("<urn:uuid:{}>", uuid::Uuid::new_v4())
}

/// One record, gzip-compressed as its own member, appended to `out`.
fn push_record(out: &mut Vec<u8>, headers: &[(&str, &str)], block: &[&[u8]]) {
    let len: usize = block.iter().map(|b| b.len()).sum();
    let mut head = String::from("WARC/1.1\r\n");
    for (k, v) in headers {
        // Header values come from URLs and servers: keep them on one line.
        let v: String = v
            .chars()
            .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
            .collect();
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {len}\r\n\r\n"));
    let mut parts: Vec<&[u8]> = Vec::with_capacity(block.len() + 2);
    parts.push(head.as_bytes());
    parts.extend_from_slice(block);
    parts.push(b"\r\n\r\n");
    gzip_member(out, &parts);
}

thread_local! {
    /// Each fetch thread's deflate state, reset for every record: a new encoder per record
    /// would allocate and zero its tables (hundreds of KB) every time, which the profile of
    /// `scripts/bench-crawl.sh` showed costing more than the compression itself.
    static DEFLATE: std::cell::RefCell<Compress> =
        std::cell::RefCell::new(Compress::new(Compression::fast(), false));
}

/// Records shorter than this are stored in their gzip member, not compressed: a request
/// record (about 200 bytes) would shrink by little, and resetting the deflate state costs
/// more than writing it as it is.
const STORE_BELOW: usize = 1024;

/// `parts`, concatenated, as one gzip member (RFC 1952: header, deflate data, CRC-32 and
/// length) appended to `out`: compressed, or in stored blocks when shorter than
/// [`STORE_BELOW`].
fn gzip_member(out: &mut Vec<u8>, parts: &[&[u8]]) {
    // No name, no time (0), unknown OS: the same bytes for the same record.
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    let mut crc = Crc::new();
    for part in parts {
        crc.update(part);
    }
    let total: usize = parts.iter().map(|p| p.len()).sum();
    if total < STORE_BELOW {
        // One final stored block (RFC 1951 §3.2.4): BFINAL=1, BTYPE=00, then LEN and NLEN.
        let len = total as u16;
        out.push(1);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        for part in parts {
            out.extend_from_slice(part);
        }
    } else {
        deflate_into(out, parts);
    }
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&crc.amount().to_le_bytes());
}

/// `parts`, concatenated, as raw deflate data appended to `out`, by this thread's reused
/// compressor.
fn deflate_into(out: &mut Vec<u8>, parts: &[&[u8]]) {
    DEFLATE.with_borrow_mut(|z| {
        z.reset();
        for (i, part) in parts.iter().enumerate() {
            let flush = if i + 1 == parts.len() {
                FlushCompress::Finish
            } else {
                FlushCompress::None
            };
            let mut rest: &[u8] = part;
            loop {
                out.reserve(rest.len() / 2 + 64);
                let before = z.total_in();
                // Compressing into a Vec's spare room cannot fail.
                let status = z.compress_vec(rest, out, flush);
                rest = &rest[(z.total_in() - before) as usize..];
                match (status, flush) {
                    (Ok(Status::StreamEnd), _) | (Err(_), _) => break,
                    (Ok(_), FlushCompress::None) if rest.is_empty() => break,
                    _ => {}
                }
            }
        }
    });
}

/// The `request` and `response` records of one fetch, compressed. `request` is the HTTP
/// request as sent (head only), `response_head` the status line and headers, `body` the
/// payload as received; `truncated`: the size cap cut the body short, and the response
/// record says `WARC-Truncated: length` (WARC 1.1 §5.13), as archive readers expect.
pub fn fetch_records(
    url: &str,
    date: SystemTime,
    request: &[u8],
    response_head: &[u8],
    body: &[u8],
    truncated: bool,
) -> Vec<u8> {
    use sha1::Digest;
    let date = warc_date(date);
    let (req_id, resp_id) = (record_id(), record_id());
    let digest = format!(
        "sha1:{}",
        data_encoding::BASE32.encode(&sha1::Sha1::digest(body))
    );
    let mut out = Vec::new();
    let mut headers = vec![
        ("WARC-Type", "response"),
        ("WARC-Record-ID", resp_id.as_str()),
        ("WARC-Date", date.as_str()),
        ("WARC-Target-URI", url),
        ("WARC-Payload-Digest", digest.as_str()),
        ("Content-Type", "application/http;msgtype=response"),
    ];
    if truncated {
        headers.push(("WARC-Truncated", "length"));
    }
    push_record(&mut out, &headers, &[response_head, body]);
    push_record(
        &mut out,
        &[
            ("WARC-Type", "request"),
            ("WARC-Record-ID", &req_id),
            ("WARC-Date", &date),
            ("WARC-Target-URI", url),
            ("WARC-Concurrent-To", &resp_id),
            ("Content-Type", "application/http;msgtype=request"),
        ],
        &[request],
    );
    out
}

/// Appends pre-compressed records to rotating WARC files.
pub struct WarcWriter {
    dir: PathBuf,
    file: File,
    /// Records appended but not yet written to `file` ([`WarcWriter::flush`]): one write per
    /// engine step instead of one per page.
    pending: Vec<u8>,
    /// The position after the last record appended, `pending` included.
    pos: WarcPosition,
    max_size: u64,
    user_agent: String,
    /// Rotation happens in [`append`](Self::append) (a worker, which commits nothing), or
    /// only when asked between commits ([`rotate_if_full`](Self::rotate_if_full): the
    /// crawl), so that the records of one commit are all in one file.
    rotate_in_append: bool,
    /// The file was created (or cut back) since the last sync: its directory entry, or its
    /// new length, must reach the disk too.
    dir_dirty: bool,
}

/// What [`WarcWriter::resume`] found and repaired.
#[derive(Debug, Default)]
pub struct Recovery {
    /// Files past the committed one, removed (written by a run that was stopped before it
    /// committed their first record).
    pub removed: Vec<PathBuf>,
    /// The committed file was shorter than its committed position.
    pub damage: Option<Damage>,
}

/// A WARC file found shorter than the position the crawl state committed for it.
#[derive(Debug)]
pub struct Damage {
    /// The file.
    pub path: PathBuf,
    /// The position the state committed.
    pub committed: u64,
    /// The file's length as found.
    pub found: u64,
    /// The end of its last whole record, where it was cut and where writing goes on.
    pub kept: u64,
    /// The target URIs of the `response` records kept: a page crawled into this file whose
    /// URI is not here lost its records.
    pub responses: HashSet<String>,
}

/// What a [`WarcWriter`] holds up to [`position`](Self::position), to be put on the disk by
/// [`sync`](Self::sync) off the writer's lock ([`WarcWriter::flush_for_sync`]).
#[derive(Debug)]
pub struct SyncPoint {
    file: File,
    path: PathBuf,
    /// The directory, when the file is new since the last sync.
    dir: Option<PathBuf>,
    /// Where the writer was: every record before it is on the disk once synced.
    pub position: WarcPosition,
}

impl SyncPoint {
    /// Puts the file's data, and its directory entry when new, on the disk.
    pub fn sync(self) -> Result<WarcPosition> {
        self.file
            .sync_data()
            .with_context(|| format!("cannot sync {} to the disk", self.path.display()))?;
        if let Some(dir) = &self.dir {
            crawlrank_util::atomic::sync_dir(dir)?;
        }
        Ok(self.position)
    }
}

/// Cuts the WARC file at `path` back to its last whole record (a write a `kill -9` or a power
/// cut interrupted leaves a part of a record behind it), synced; a file without a whole
/// record is removed. For files no state vouches for (a crawl worker's, whose run ended
/// without closing them). Returns the length found and the length kept when it cut.
pub fn repair_tail(path: &Path) -> Result<Option<(u64, u64)>> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let (found, kept, _) = read_whole(&file, path)?;
    if kept == found {
        return Ok(None);
    }
    if kept == 0 {
        drop(file);
        std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
    } else {
        file.set_len(kept)
            .and_then(|()| file.sync_data())
            .with_context(|| format!("cannot cut {} back", path.display()))?;
    }
    Ok(Some((found, kept)))
}

/// The target URIs of the `response` records of the WARC file at `path`, read up to its
/// first part of a record that is not whole, and whether the whole file was read (every
/// record in it whole).
pub fn responses(path: &Path) -> Result<(HashSet<String>, bool)> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let (len, kept, uris) = read_whole(&file, path)?;
    Ok((uris, kept == len))
}

/// The length of `file` (at `path`), and what [`whole_records`] reads of it: the length of its
/// whole records and their responses' target URIs.
fn read_whole(file: &File, path: &Path) -> Result<(u64, u64, HashSet<String>)> {
    let len = file
        .metadata()
        .with_context(|| format!("cannot read the size of {}", path.display()))?
        .len();
    let (kept, uris) =
        whole_records(file).with_context(|| format!("cannot read {}", path.display()))?;
    Ok((len, kept, uris))
}

/// The WARC files of `dir`, in their order (by number).
pub fn warc_files(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(numbered_files(dir)?.into_iter().map(|(_, p)| p).collect())
}

/// The WARC files of `dir` with their numbers, in their order.
fn numbered_files(dir: &Path) -> Result<Vec<(u32, PathBuf)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry
            .with_context(|| format!("cannot list {}", dir.display()))?
            .path();
        if let Some(n) = warc_number(&path) {
            files.push((n, path));
        }
    }
    files.sort();
    Ok(files)
}

/// The path of WARC file number `n`.
pub fn warc_path(dir: &Path, n: u32) -> PathBuf {
    dir.join(format!("crawl-{n:05}.warc.gz"))
}

impl WarcWriter {
    /// Opens the writer at the last committed position `pos`: that file is cut there (records
    /// past it were not committed), or started with a `warcinfo` record if new. Files rotate
    /// in [`append`](Self::append). For a writer with no state behind it (a worker's run in a
    /// directory of its own); the crawl resumes with [`resume`](Self::resume).
    pub fn open(dir: &Path, pos: WarcPosition, max_size: u64, user_agent: &str) -> Result<Self> {
        let (mut w, _) = Self::open_at(dir, pos, max_size, user_agent, false)?;
        w.rotate_in_append = true;
        Ok(w)
    }

    /// Opens the crawl's writer at its committed position `pos`, after a stop at any moment:
    /// files numbered past `pos.file` are removed; the file `pos.file` is cut back to
    /// `pos.offset`, or, found shorter (damaged: the state vouches for bytes the disk does
    /// not hold), cut back to its last whole record and reported in [`Recovery::damage`] —
    /// never padded. The caller commits [`position`](Self::position) (then the kept length)
    /// once it has dealt with the damage. Files rotate only in
    /// [`rotate_if_full`](Self::rotate_if_full).
    pub fn resume(
        dir: &Path,
        pos: WarcPosition,
        max_size: u64,
        user_agent: &str,
    ) -> Result<(Self, Recovery)> {
        if !dir.is_dir() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            // The directory's own entry, in the state directory, must outlive a power cut
            // too, or the files in it are lost with it.
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                crawlrank_util::atomic::sync_dir(parent)?;
            }
        }
        let mut removed = Vec::new();
        for (n, path) in numbered_files(dir)? {
            if n > pos.file {
                std::fs::remove_file(&path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
                removed.push(path);
            }
        }
        if !removed.is_empty() {
            crawlrank_util::atomic::sync_dir(dir)?;
        }
        let (w, damage) = Self::open_at(dir, pos, max_size, user_agent, true)?;
        Ok((w, Recovery { removed, damage }))
    }

    fn open_at(
        dir: &Path,
        mut pos: WarcPosition,
        max_size: u64,
        user_agent: &str,
        check: bool,
    ) -> Result<(Self, Option<Damage>)> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = warc_path(dir, pos.file);
        let existed = path.exists();
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let found = file
            .metadata()
            .with_context(|| format!("cannot read the size of {}", path.display()))?
            .len();
        let mut damage = None;
        if check && found < pos.offset {
            let (kept, responses) = whole_records(&file)
                .with_context(|| format!("cannot read the damaged {}", path.display()))?;
            damage = Some(Damage {
                path: path.clone(),
                committed: pos.offset,
                found,
                kept,
                responses,
            });
            pos.offset = kept;
        }
        if found != pos.offset {
            file.set_len(pos.offset)
                .with_context(|| format!("cannot truncate {}", path.display()))?;
        }
        let mut w = Self {
            dir: dir.to_path_buf(),
            file,
            pending: Vec::new(),
            pos,
            max_size: max_size.max(1),
            user_agent: user_agent.to_string(),
            rotate_in_append: false,
            dir_dirty: !existed || found != pos.offset,
        };
        w.file.seek(SeekFrom::Start(pos.offset))?;
        if pos.offset == 0 {
            w.write_info()?;
        }
        Ok((w, damage))
    }

    fn write_info(&mut self) -> Result<()> {
        let name = warc_path(Path::new(""), self.pos.file)
            .display()
            .to_string();
        let body = format!(
            "software: crawlrank/{}\r\nformat: WARC File Format 1.1\r\nhttp-header-user-agent: {}\r\n",
            env!("CARGO_PKG_VERSION"),
            self.user_agent
        );
        let mut out = Vec::new();
        push_record(
            &mut out,
            &[
                ("WARC-Type", "warcinfo"),
                ("WARC-Record-ID", &record_id()),
                ("WARC-Date", &warc_date(SystemTime::now())),
                ("WARC-Filename", &name),
                ("Content-Type", "application/warc-fields"),
            ],
            &[body.as_bytes()],
        );
        self.write_raw(&out);
        self.flush()
    }

    fn write_raw(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        self.pos.offset += bytes.len() as u64;
    }

    /// Writes the records appended since the last flush to the file (the operating system's
    /// page cache: [`sync`](Self::sync) puts them on the disk).
    pub fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.file.write_all(&self.pending).with_context(|| {
            format!(
                "cannot write {} (is the disk full?)",
                warc_path(&self.dir, self.pos.file).display()
            )
        })?;
        self.pending.clear();
        Ok(())
    }

    /// Writes what is pending and puts the file on the disk — its data, and its directory
    /// entry when the file is new — so that [`position`](Self::position) may be committed:
    /// after a power cut the file holds at least that much.
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        let path = warc_path(&self.dir, self.pos.file);
        self.file
            .sync_data()
            .with_context(|| format!("cannot sync {} to the disk", path.display()))?;
        if self.dir_dirty {
            crawlrank_util::atomic::sync_dir(&self.dir)?;
            self.dir_dirty = false;
        }
        Ok(())
    }

    /// Writes what is pending, and hands out what [`sync`](Self::sync) would put on the disk —
    /// the file, its directory when the file is new, and the position they hold — to be synced
    /// with the writer free for other records meanwhile ([`SyncPoint::sync`]): a crawl worker's
    /// fetch tasks append while one of them syncs for all (a group commit).
    pub fn flush_for_sync(&mut self) -> Result<SyncPoint> {
        self.flush()?;
        let path = warc_path(&self.dir, self.pos.file);
        let file = self
            .file
            .try_clone()
            .with_context(|| format!("cannot sync {} to the disk", path.display()))?;
        let dir = std::mem::take(&mut self.dir_dirty).then(|| self.dir.clone());
        Ok(SyncPoint {
            file,
            path,
            dir,
            position: self.pos,
        })
    }

    /// Starts the next file when this one has passed the size limit (a writer made by
    /// [`resume`](Self::resume) rotates only here, between commits, so that each commit's
    /// records are in one file); `Ok(true)` when it did. When the next file cannot be created
    /// for want of file descriptors, writing goes on in this one and rotation is tried again
    /// later: a shortage never loses a record nor stops the crawl.
    pub fn rotate_if_full(&mut self) -> Result<bool> {
        if self.pos.offset < self.max_size {
            return Ok(false);
        }
        let next = self.pos.file + 1;
        let path = warc_path(&self.dir, next);
        match File::create(&path) {
            Ok(file) => {
                // The file left is on the disk whole before the next is begun, so that a
                // sync of the next (a SyncPoint's) vouches for every record before it.
                self.sync()?;
                self.file = file;
                self.pos = WarcPosition {
                    file: next,
                    offset: 0,
                };
                self.dir_dirty = true;
                self.write_info()?;
                Ok(true)
            }
            Err(e) if crate::fds::is_exhausted_io(&e) => Ok(false),
            Err(e) => Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }

    /// Appends compressed records; a writer made by [`open`](Self::open) first rotates to a
    /// new file past the size limit ([`rotate_if_full`](Self::rotate_if_full)).
    pub fn append(&mut self, records: &[u8]) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        if self.rotate_in_append {
            self.rotate_if_full()?;
        }
        self.write_raw(records);
        Ok(())
    }

    /// The position after the last record appended (what a commit records, after a
    /// [`sync`](Self::sync)).
    pub fn position(&self) -> WarcPosition {
        self.pos
    }
}

/// The number `n` of a file named like [`warc_path`]'s `crawl-NNNNN.warc.gz`.
fn warc_number(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let n = name.strip_prefix("crawl-")?.strip_suffix(".warc.gz")?;
    (n.len() >= 5 && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok())
        .flatten()
}

/// Reads `file` from its start as gzip members, each a whole WARC record, until one is cut
/// short, corrupt or not a record: the length of the whole ones, and the target URIs of their
/// `response` records.
fn whole_records(file: &File) -> Result<(u64, HashSet<String>)> {
    let mut reader = BufReader::new(file.try_clone()?);
    reader.seek(SeekFrom::Start(0))?;
    let mut kept = 0u64;
    let mut responses = HashSet::new();
    let mut record = Vec::new();
    loop {
        if reader.fill_buf()?.is_empty() {
            break;
        }
        record.clear();
        let mut member = flate2::bufread::GzDecoder::new(&mut reader);
        if member.read_to_end(&mut record).is_err() || !record.starts_with(b"WARC/1.1\r\n") {
            break;
        }
        drop(member);
        kept = reader.stream_position()?;
        let head_end = record
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or(record.len());
        let head = String::from_utf8_lossy(&record[..head_end]);
        let header = |name: &str| {
            head.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
                .map(str::trim)
        };
        if header("WARC-Type") == Some("response") {
            if let Some(uri) = header("WARC-Target-URI") {
                responses.insert(uri.to_string());
            }
        }
    }
    Ok((kept, responses))
}

impl Drop for WarcWriter {
    /// Writes what is pending; a failure is for the next run to meet (it cuts the file back
    /// to the committed position anyway).
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn dates() {
        assert_eq!(warc_date(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_709_210_096);
        assert_eq!(warc_date(t), "2024-02-29T12:34:56Z");
    }

    #[test]
    fn records_are_gzip_members_and_resume_truncates() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(dir.path(), WarcPosition::default(), 1 << 20, "ua").unwrap();
        let rec = fetch_records(
            "http://a.test/",
            SystemTime::now(),
            b"GET / HTTP/1.1\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n\r\n",
            b"hello",
            false,
        );
        w.append(&rec).unwrap();
        let committed = w.position();
        w.append(&rec).unwrap();
        drop(w);
        // Resume at the committed position: the second copy is cut.
        let w = WarcWriter::open(dir.path(), committed, 1 << 20, "ua").unwrap();
        drop(w);
        let bytes = std::fs::read(warc_path(dir.path(), 0)).unwrap();
        assert_eq!(bytes.len() as u64, committed.offset);
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text.matches("WARC/1.1\r\n").count(), 3);
        assert!(text.contains("WARC-Type: warcinfo") && text.contains("WARC-Type: request"));
        assert!(text.contains("WARC-Target-URI: http://a.test/"));
        assert!(text.contains("Content-Length: 24\r\n\r\nHTTP/1.1 200 OK\r\n\r\nhello\r\n\r\n"));
    }

    #[test]
    fn rotates_by_size() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(dir.path(), WarcPosition::default(), 10, "ua").unwrap();
        let rec = fetch_records("http://a.test/", SystemTime::now(), b"", b"", b"x", false);
        w.append(&rec).unwrap();
        w.append(&rec).unwrap();
        assert_eq!(w.position().file, 2);
        assert!(warc_path(dir.path(), 1).is_file());
    }

    fn record(url: &str) -> Vec<u8> {
        let body = format!("<html>{}</html>", "x".repeat(3000));
        fetch_records(
            url,
            SystemTime::now(),
            b"GET",
            b"HTTP/1.1 200 OK\r\n\r\n",
            body.as_bytes(),
            false,
        )
    }

    #[test]
    fn resume_removes_the_files_past_the_committed_one() {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, _) = WarcWriter::resume(dir.path(), WarcPosition::default(), 10, "ua").unwrap();
        w.append(&record("http://a.test/1")).unwrap();
        w.sync().unwrap();
        let committed = w.position();
        // Rotated after the commit, and written to, but never committed.
        assert!(w.rotate_if_full().unwrap());
        w.append(&record("http://a.test/2")).unwrap();
        drop(w);
        assert!(warc_path(dir.path(), 1).is_file());
        let (w, rec) = WarcWriter::resume(dir.path(), committed, 10, "ua").unwrap();
        assert_eq!(rec.removed, vec![warc_path(dir.path(), 1)]);
        assert!(rec.damage.is_none());
        assert_eq!(w.position(), committed);
        assert!(!warc_path(dir.path(), 1).exists());
    }

    #[test]
    fn a_torn_tail_is_cut_back_and_a_file_without_a_whole_record_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(dir.path(), WarcPosition::default(), 1 << 30, "t").unwrap();
        w.append(&record("http://a.test/1")).unwrap();
        w.sync().unwrap();
        let path = warc_path(dir.path(), 0);
        let whole = std::fs::metadata(&path).unwrap().len();
        assert_eq!(repair_tail(&path).unwrap(), None);
        let torn = record("http://a.test/2");
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        // Cut inside the first of its records (a response, then a request).
        f.write_all(&torn[..10]).unwrap();
        let found = whole + 10;
        assert_eq!(repair_tail(&path).unwrap(), Some((found, whole)));
        let (uris, all) = responses(&path).unwrap();
        assert!(all);
        assert_eq!(uris, HashSet::from(["http://a.test/1".to_string()]));
        // Only a part of a record: nothing worth keeping.
        let other = warc_path(dir.path(), 1);
        std::fs::write(&other, &torn[..10]).unwrap();
        assert_eq!(repair_tail(&other).unwrap(), Some((10, 0)));
        assert!(!other.exists());
        assert_eq!(warc_files(dir.path()).unwrap(), [path]);
    }

    #[test]
    fn a_file_shorter_than_committed_is_cut_to_its_last_whole_record_never_padded() {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, _) =
            WarcWriter::resume(dir.path(), WarcPosition::default(), 1 << 20, "ua").unwrap();
        w.append(&record("http://a.test/1")).unwrap();
        let first = w.position().offset;
        w.append(&record("http://a.test/2")).unwrap();
        w.sync().unwrap();
        let committed = w.position();
        drop(w);
        // The disk lost the tail: the second fetch's records but their first few bytes. (Cut
        // half-way through them, the cut could fall between its response and request records,
        // which are often of one size: the response then survives whole.)
        let path = warc_path(dir.path(), 0);
        let cut = first + 10;
        OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(cut)
            .unwrap();
        let (w, rec) = WarcWriter::resume(dir.path(), committed, 1 << 20, "ua").unwrap();
        let d = rec.damage.expect("the damage is reported");
        assert_eq!((d.committed, d.found), (committed.offset, cut));
        assert!(d.kept >= first && d.kept < cut, "{d:?}");
        assert!(d.responses.contains("http://a.test/1"), "{d:?}");
        assert!(!d.responses.contains("http://a.test/2"), "{d:?}");
        assert_eq!(w.position().offset, d.kept);
        drop(w);
        // Cut, not padded: what is left decodes whole.
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() as u64, d.kept);
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut text)
            .unwrap();
        assert_eq!(text.windows(8).filter(|w| w == b"WARC/1.1").count(), 3);
    }
}
