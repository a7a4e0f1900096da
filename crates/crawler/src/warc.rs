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
//! Records are built and compressed by the fetch tasks ([`fetch_records`]), off the engine
//! thread; the engine only appends bytes ([`WarcWriter::append`]).

use anyhow::{Context, Result};
use flate2::{write::GzEncoder, Compression};
use std::fs::{File, OpenOptions};
use std::io::Write;
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
    let mut gz = GzEncoder::new(Vec::with_capacity(len / 3 + 256), Compression::fast());
    // Writing into a Vec cannot fail.
    let _ = gz.write_all(head.as_bytes());
    for b in block {
        let _ = gz.write_all(b);
    }
    let _ = gz.write_all(b"\r\n\r\n");
    if let Ok(v) = gz.finish() {
        out.extend_from_slice(&v);
    }
}

/// The `request` and `response` records of one fetch, compressed. `request` is the HTTP
/// request as sent (head only), `response_head` the status line and headers, `body` the
/// payload as received.
pub fn fetch_records(
    url: &str,
    date: SystemTime,
    request: &[u8],
    response_head: &[u8],
    body: &[u8],
) -> Vec<u8> {
    fetch_records_truncated(url, date, request, response_head, body, false)
}

/// [`fetch_records`] for a body the size cap cut short (`truncated`): the response record
/// says `WARC-Truncated: length` (WARC 1.1 §5.13), as archive readers expect.
pub fn fetch_records_truncated(
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
    pos: WarcPosition,
    max_size: u64,
    user_agent: String,
}

/// The path of WARC file number `n`.
pub fn warc_path(dir: &Path, n: u32) -> PathBuf {
    dir.join(format!("crawl-{n:05}.warc.gz"))
}

impl WarcWriter {
    /// Opens the writer at the last committed position `pos`: that file is cut there (records
    /// past it were not committed), or started with a `warcinfo` record if new.
    pub fn open(dir: &Path, pos: WarcPosition, max_size: u64, user_agent: &str) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = warc_path(dir, pos.file);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        file.set_len(pos.offset)
            .with_context(|| format!("cannot truncate {}", path.display()))?;
        let mut w = Self {
            dir: dir.to_path_buf(),
            file,
            pos,
            max_size: max_size.max(1),
            user_agent: user_agent.to_string(),
        };
        use std::io::Seek;
        w.file.seek(std::io::SeekFrom::Start(pos.offset))?;
        if pos.offset == 0 {
            w.write_info()?;
        }
        Ok(w)
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
        self.write_raw(&out)
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.file.write_all(bytes).with_context(|| {
            format!(
                "cannot write {} (is the disk full?)",
                warc_path(&self.dir, self.pos.file).display()
            )
        })?;
        self.pos.offset += bytes.len() as u64;
        Ok(())
    }

    /// Appends compressed records, rotating to a new file past the size limit. When the
    /// next file cannot be created for want of file descriptors, the records go to the
    /// current file and rotation is tried again at the next append: a shortage never loses a
    /// record nor stops the crawl.
    pub fn append(&mut self, records: &[u8]) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        if self.pos.offset >= self.max_size {
            let next = self.pos.file + 1;
            let path = warc_path(&self.dir, next);
            match File::create(&path) {
                Ok(file) => {
                    self.file = file;
                    self.pos = WarcPosition {
                        file: next,
                        offset: 0,
                    };
                    self.write_info()?;
                }
                Err(e) if crate::fds::is_exhausted_io(&e) => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", path.display()))
                }
            }
        }
        self.write_raw(records)
    }

    /// The position after the last record written (what a commit records).
    pub fn position(&self) -> WarcPosition {
        self.pos
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
        let rec = fetch_records("http://a.test/", SystemTime::now(), b"", b"", b"x");
        w.append(&rec).unwrap();
        w.append(&rec).unwrap();
        assert_eq!(w.position().file, 2);
        assert!(warc_path(dir.path(), 1).is_file());
    }
}
