//! Reading text inputs line by line, with line numbers for error messages.

use anyhow::{Context, Result};
use std::fmt::Display;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// A line reader over a plain or gzip-compressed file that strips `\n`/`\r\n` and a leading
/// UTF-8 byte-order mark, and counts lines and bytes.
pub(crate) struct LineReader {
    path: PathBuf,
    inner: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    range: (usize, usize),
    line: u64,
    bytes: u64,
    total_bytes: Option<u64>,
}

impl LineReader {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let meta =
            std::fs::metadata(path).with_context(|| format!("cannot open {}", path.display()))?;
        if meta.is_dir() {
            anyhow::bail!("{} is a directory, not an input file", path.display());
        }
        let (inner, gz) = crate::urls::open_input(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            inner,
            buf: Vec::with_capacity(256),
            range: (0, 0),
            line: 0,
            bytes: 0,
            total_bytes: (!gz).then_some(meta.len()),
        })
    }

    /// Reads the next line (see [`current`](Self::current)); `false` at the end of the input.
    #[inline]
    pub(crate) fn advance(&mut self) -> Result<bool> {
        self.buf.clear();
        let n = self
            .inner
            .read_until(b'\n', &mut self.buf)
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        if n == 0 {
            self.range = (0, 0);
            return Ok(false);
        }
        self.line += 1;
        self.bytes += n as u64;
        let mut end = self.buf.len();
        if end > 0 && self.buf[end - 1] == b'\n' {
            end -= 1;
        }
        if end > 0 && self.buf[end - 1] == b'\r' {
            end -= 1;
        }
        let start = if self.line == 1 && self.buf.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        self.range = (start, end.max(start));
        Ok(true)
    }

    /// The current line without its terminator.
    #[inline]
    pub(crate) fn current(&self) -> &[u8] {
        &self.buf[self.range.0..self.range.1]
    }

    /// The number of the last line returned (1-based).
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// Bytes read so far (decompressed).
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The size of the input when it is not compressed.
    pub(crate) fn total_bytes(&self) -> Option<u64> {
        self.total_bytes
    }

    /// An error about the last line returned: `FILE: line N: msg`.
    pub(crate) fn err(&self, msg: impl Display) -> anyhow::Error {
        line_error(&self.path, self.line, msg)
    }
}

/// `FILE: line N: msg`.
pub(crate) fn line_error(path: &Path, line: u64, msg: impl Display) -> anyhow::Error {
    anyhow::anyhow!("{}: line {line}: {msg}", path.display())
}

/// Sorts a node table of `(id, line, value)` entries by id and fails on an id given twice, at
/// the later of its two lines, with `duplicate(id, earlier line)` as the message: the importers
/// that read a node table (id-URL tables, GML) share it so that they report a repeated id alike.
pub(crate) fn sort_unique_ids<T>(
    entries: &mut [(u64, u64, T)],
    path: &Path,
    duplicate: impl FnOnce(u64, u64) -> String,
) -> Result<()> {
    entries.sort_unstable_by_key(|e| e.0);
    if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
        let (a, b) = (w[0].1.min(w[1].1), w[0].1.max(w[1].1));
        return Err(line_error(path, b, duplicate(w[0].0, a)));
    }
    Ok(())
}

/// Whether a line carries no data: blank, or a comment starting with `#` or `%` (after
/// optional blanks).
#[inline]
pub(crate) fn is_skippable(line: &[u8]) -> bool {
    match line.iter().position(|&b| !is_blank(b)) {
        None => true,
        Some(i) => matches!(line[i], b'#' | b'%'),
    }
}

#[inline]
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\x0b' | b'\x0c')
}

/// The fields of a line separated by spaces or tabs.
#[inline]
pub(crate) fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| is_blank(b)).filter(|t| !t.is_empty())
}

/// A line for an error message: lossy UTF-8, trimmed, shortened.
pub(crate) fn show(line: &[u8]) -> String {
    crate::urls::shorten(String::from_utf8_lossy(line).trim())
}

/// Why a field is not a node id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdError {
    NotInteger,
    Negative,
    TooLarge,
}

/// Largest original id accepted (ids are signed 64-bit integers elsewhere, e.g. in Java).
pub(crate) const MAX_ORIGINAL_ID: u64 = i64::MAX as u64;

/// Parses a non-negative decimal id in `0..=i64::MAX`.
#[inline]
pub(crate) fn parse_id(t: &[u8]) -> Result<u64, IdError> {
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(IdError::NotInteger);
    }
    if neg && digits.iter().any(|&b| b != b'0') {
        return Err(IdError::Negative);
    }
    let mut v: u64 = 0;
    for &b in digits {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add((b - b'0') as u64))
            .ok_or(IdError::TooLarge)?;
    }
    if v > MAX_ORIGINAL_ID {
        return Err(IdError::TooLarge);
    }
    Ok(v)
}

/// An error message for a field that failed [`parse_id`].
pub(crate) fn id_error_message(e: IdError, field: &[u8], line: &[u8], what: &str) -> String {
    let f = show(field);
    match e {
        IdError::NotInteger => format!("expected {what}, found '{}'", show(line)),
        IdError::Negative => format!("negative id {f} (ids must be integers in 0..=2^63-1)"),
        IdError::TooLarge => format!("id {f} is out of range (ids must be integers in 0..=2^63-1)"),
    }
}

/// Whether a field looks like a word of a header line rather than a number.
pub(crate) fn is_word(t: &[u8]) -> bool {
    t.first()
        .is_some_and(|&b| !(b.is_ascii_digit() || b == b'-' || b == b'+' || b == b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert_eq!(parse_id(b"0"), Ok(0));
        assert_eq!(parse_id(b"+17"), Ok(17));
        assert_eq!(parse_id(b"-0"), Ok(0));
        assert_eq!(parse_id(b"9223372036854775807"), Ok(i64::MAX as u64));
        assert_eq!(parse_id(b"9223372036854775808"), Err(IdError::TooLarge));
        assert_eq!(parse_id(b"99999999999999999999999"), Err(IdError::TooLarge));
        assert_eq!(parse_id(b"-3"), Err(IdError::Negative));
        assert_eq!(parse_id(b"1.5"), Err(IdError::NotInteger));
        assert_eq!(parse_id(b"x"), Err(IdError::NotInteger));
        assert_eq!(parse_id(b""), Err(IdError::NotInteger));
        assert!(is_skippable(b"  # c"));
        assert!(is_skippable(b"%c"));
        assert!(is_skippable(b" \t "));
        assert!(!is_skippable(b"1 2"));
        assert_eq!(fields(b" 1\t 2 ").collect::<Vec<_>>(), [b"1", b"2"]);
    }
}
