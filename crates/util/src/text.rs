//! Reading tabular text inputs: plain or gzip files line by line, with the line number every
//! error must name, and the splitting of TSV and CSV lines into fields.
//!
//! The impact tables (crawlrank-graph's `impact_table`) and crawlrank-impact's other readers
//! (clickstream, Wikispeedia) go through here so that they all accept gzip the same way
//! (recognised by content, not by name), all number lines from 1 counting comments and blank
//! lines, and all reject non-UTF-8 input with the line that holds it.

use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

/// Reads the next line of `reader` into `buf` (cleared first) without its line ending, `\n`
/// or `\r\n`, so that files written on Windows read as Unix ones; the bytes read, ending
/// included (0 at the end of the input). The line readers of this crate share it so that they
/// all cut lines the same way.
pub fn read_line(
    reader: &mut (impl BufRead + ?Sized),
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    buf.clear();
    let n = reader.read_until(b'\n', buf)?;
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    Ok(n)
}

/// A text file read line by line, plain or gzip-compressed.
pub struct Lines {
    path: Rc<Path>,
    reader: Box<dyn BufRead>,
    buf: Vec<u8>,
    line: u64,
}

impl Lines {
    /// Opens `path`; gzip is recognised by its magic bytes.
    pub fn open(path: &Path) -> Result<Self> {
        let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut magic = [0u8; 2];
        let got = read_up_to(&mut f, &mut magic)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let reader: Box<dyn BufRead> = if got == 2 && magic == [0x1f, 0x8b] {
            Box::new(BufReader::with_capacity(
                1 << 16,
                flate2::read::MultiGzDecoder::new(f),
            ))
        } else {
            Box::new(BufReader::with_capacity(1 << 16, f))
        };
        Ok(Self {
            path: Rc::from(path),
            reader,
            buf: Vec::new(),
            line: 0,
        })
    }

    /// The next line without its terminator (`\n` or `\r\n`), with where it is (its number
    /// counts from 1); `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(At, &str)>> {
        let n = read_line(&mut self.reader, &mut self.buf)
            .with_context(|| format!("{}:{}: cannot read", self.path.display(), self.line + 1))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some((
                At {
                    path: self.path.clone(),
                    line: self.line,
                },
                s,
            ))),
            Err(_) => bail!(
                "{}:{}: the line is not valid UTF-8",
                self.path.display(),
                self.line
            ),
        }
    }
}

/// Where a line is: shown as `file:line`.
#[derive(Debug, Clone)]
pub struct At {
    path: Rc<Path>,
    /// The line number, from 1.
    pub line: u64,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)
    }
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// Whether a line carries no data: blank, or a `#` comment.
pub fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with('#')
}

/// The field separator of a delimited text file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delimiter {
    /// Tab-separated values.
    Tab,
    /// Comma-separated values (fields may be double-quoted, `""` inside quotes is a quote).
    Comma,
}

impl Delimiter {
    /// Tab if the line has a tab, else comma if it has a comma, else `None`.
    pub fn detect(line: &str) -> Option<Self> {
        if line.contains('\t') {
            Some(Delimiter::Tab)
        } else if line.contains(',') {
            Some(Delimiter::Comma)
        } else {
            None
        }
    }

    /// `"tab"` or `"comma"`.
    pub fn name(self) -> &'static str {
        match self {
            Delimiter::Tab => "tab",
            Delimiter::Comma => "comma",
        }
    }

    /// Splits `line` into fields. TSV fields are split at every tab; CSV fields may be
    /// double-quoted. A quote that is not closed is an error (the message says why).
    pub fn split(self, line: &str) -> Result<Vec<String>, String> {
        match self {
            Delimiter::Tab => Ok(line.split('\t').map(str::to_owned).collect()),
            Delimiter::Comma => split_csv(line),
        }
    }
}

fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    None => return Err("a quoted field is not closed".into()),
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => fields.push(field),
                Some(c) => {
                    return Err(format!("'{c}' after the closing quote of a field"));
                }
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field);
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some(c) => field.push(c),
                }
            }
            fields.push(field);
        }
    }
}

/// `s` cut to at most 80 characters, for messages.
pub fn shorten(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(79).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_may_be_quoted() {
        let d = Delimiter::Comma;
        assert_eq!(d.split("a,b,,c").unwrap(), ["a", "b", "", "c"]);
        assert_eq!(
            d.split("\"x,y\",\"say \"\"hi\"\"\",3").unwrap(),
            ["x,y", "say \"hi\"", "3"]
        );
        assert!(d.split("\"open,3").is_err());
        assert!(d.split("\"a\"b,3").is_err());
        assert_eq!(Delimiter::Tab.split("a\tb c").unwrap(), ["a", "b c"]);
    }

    #[test]
    fn gzip_is_recognised_by_content() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.txt");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"one\r\ntwo\n").unwrap();
        std::fs::write(&p, e.finish().unwrap()).unwrap();
        let mut l = Lines::open(&p).unwrap();
        assert_eq!(
            l.next_line().unwrap().map(|(_, s)| s.to_owned()).as_deref(),
            Some("one")
        );
        assert_eq!(
            l.next_line().unwrap().map(|(_, s)| s.to_owned()).as_deref(),
            Some("two")
        );
        assert!(l.next_line().unwrap().is_none());
    }
}
