//! Streaming SWF input: [`SwfReader`] over any `BufRead`, [`open`] for
//! files (`.swf` or gzip, by magic number), [`from_bytes`], [`read_all`].

use super::{ExtraFields, SwfError, SwfHeader, SwfRecord};
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Streams the records of an SWF trace.
pub struct SwfReader<R> {
    input: R,
    buf: String,
    line: u64,
    header: SwfHeader,
    pending: Option<Result<SwfRecord, SwfError>>,
    done: bool,
    extra: ExtraFields,
    extra_lines: u64,
}

/// Opens a trace file, decompressing it if it is gzip (by magic number, so
/// `.swf.gz` and `.swf` both work whatever their name).
pub fn open(path: impl AsRef<Path>) -> Result<SwfReader<Box<dyn BufRead>>, SwfError> {
    let path = path.as_ref();
    let io = |source| SwfError::Io { line: 0, source };
    let mut f = BufReader::with_capacity(1 << 16, File::open(path).map_err(io)?);
    let gz = f.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
    let input: Box<dyn BufRead> = if gz {
        Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(f)))
    } else {
        Box::new(f)
    };
    SwfReader::new(input)
}

/// Reads a whole trace from bytes (gzip or plain).
pub fn from_bytes(bytes: &[u8]) -> Result<SwfReader<Box<dyn BufRead + '_>>, SwfError> {
    let input: Box<dyn BufRead> = if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(BufReader::new(MultiGzDecoder::new(bytes)))
    } else {
        Box::new(bytes)
    };
    SwfReader::new(input)
}

impl<R: BufRead> SwfReader<R> {
    /// Reads the header (the comments before the first job line).
    pub fn new(input: R) -> Result<SwfReader<R>, SwfError> {
        let mut r = SwfReader {
            input,
            buf: String::with_capacity(256),
            line: 0,
            header: SwfHeader::default(),
            pending: None,
            done: false,
            extra: ExtraFields::Error,
            extra_lines: 0,
        };
        r.pending = r.next_record();
        if let Some(Err(e)) = &r.pending {
            if matches!(e, SwfError::Io { .. }) && r.line <= 1 {
                // Unreadable from the start: report now.
                return Err(r.pending.take().and_then(|x| x.err()).expect("error"));
            }
        }
        Ok(r)
    }

    /// The header comments read so far (all of them before the first job;
    /// comments between jobs are added as they are read).
    pub fn header(&self) -> &SwfHeader {
        &self.header
    }

    /// The number of the last line read (1-based).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Sets the rule for job lines with more than 18 fields (default
    /// [`ExtraFields::Error`] for a bare reader). The first job line, read
    /// ahead by [`SwfReader::new`], is parsed again under the new rule.
    pub fn set_extra_fields(&mut self, extra: ExtraFields) {
        self.extra = extra;
        if extra == ExtraFields::Ignore {
            if let Some(Err(SwfError::Malformed { line, .. })) = &self.pending {
                if *line == self.line {
                    // Re-parse the line just read (still in the buffer).
                    let t = self.buf.trim_start();
                    self.done = false;
                    self.pending = Some(SwfRecord::parse_with(t, self.line, extra).map(
                        |(r, extras)| {
                            if extras > 0 {
                                self.extra_lines += 1;
                            }
                            r
                        },
                    ));
                    if matches!(self.pending, Some(Err(_))) {
                        self.done = true;
                    }
                }
            }
        }
    }

    /// Job lines read so far that had fields beyond the 18th (ignored).
    pub fn extra_field_lines(&self) -> u64 {
        self.extra_lines
    }

    fn next_record(&mut self) -> Option<Result<SwfRecord, SwfError>> {
        if self.done {
            return None;
        }
        loop {
            self.buf.clear();
            let line = self.line + 1;
            match self.input.read_line(&mut self.buf) {
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(_) => self.line = line,
                Err(source) => {
                    self.done = true;
                    return Some(Err(SwfError::Io { line, source }));
                }
            }
            let t = self.buf.trim_start();
            if let Some(body) = t.strip_prefix(';') {
                let body = body.trim_end_matches(['\n', '\r']).to_string();
                self.header.add_comment(&body);
                continue;
            }
            if t.trim().is_empty() {
                continue;
            }
            let r = SwfRecord::parse_with(t, line, self.extra).map(|(r, extras)| {
                if extras > 0 {
                    self.extra_lines += 1;
                }
                r
            });
            if r.is_err() {
                self.done = true;
            }
            return Some(r);
        }
    }
}

impl<R: BufRead> SwfReader<R> {
    /// The next record (what the iterator yields); afterwards [`SwfReader::line`]
    /// is its line number.
    pub fn read_record(&mut self) -> Option<Result<SwfRecord, SwfError>> {
        if let Some(p) = self.pending.take() {
            return Some(p);
        }
        self.next_record()
    }
}

impl<R: BufRead> Iterator for SwfReader<R> {
    type Item = Result<SwfRecord, SwfError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.read_record()
    }
}

/// Reads the records of any reader into a vector (for small inputs).
pub fn read_all<R: Read>(input: R) -> Result<(SwfHeader, Vec<SwfRecord>), SwfError> {
    let mut r = SwfReader::new(BufReader::new(input))?;
    let recs = r.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((r.header().clone(), recs))
}
