//! The Standard Workload Format (SWF) of the Parallel Workloads Archive —
//! S. J. Chapin et al., "Benchmarks and standards for the evaluation of
//! parallel job schedulers", JSSPP 1999; field definitions from
//! <https://www.cs.huji.ac.il/labs/parallel/workload/swf.html>.
//!
//! A trace is header comments (`; Key: value`) followed by one line per job
//! with 18 whitespace-separated numeric fields; −1 means "unknown".
//!
//! * [`SwfReader`] streams records from any `BufRead` (memory independent of
//!   the trace length); [`open`] opens `.swf` or `.swf.gz` (by content: a gzip
//!   magic number selects decompression). Header comments before the first
//!   job are parsed into [`SwfHeader`]; comments between jobs are added to it.
//! * A malformed line — fewer than 18 fields, a non-numeric field, a negative
//!   value other than −1 in a time or count field — is an error naming its
//!   line number and field ([`SwfError::Malformed`]); values are echoed cut
//!   to 60 characters. Fields beyond the 18th (some conversions of real
//!   logs, e.g. ALCF's, append columns) are ignored and counted
//!   ([`ExtraFields::Ignore`], the default of [`load_jobs`]) or refused
//!   ([`ExtraFields::Error`]); a truncated or corrupt gzip stream is an
//!   I/O error naming the line being read ([`SwfError::Io`]). Blank lines are
//!   skipped.
//! * [`load_jobs`] turns records into the rigid jobs a batch machine runs,
//!   applying [`SwfRules`] — one explicit, selectable rule per quirk of real
//!   logs — and counting in a [`LoadReport`] every record dropped or repaired
//!   and why.
//! * [`SwfWriter`] writes a header and records in the archive's layout.

use flate2::read::MultiGzDecoder;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use thiserror::Error;

/// Times must stay below this (2^40 s), so that no sum of times overflows
/// and every time is exact as a float (the batch machine's bound, checked
/// where traces are read).
pub const MAX_TIME: u64 = 1 << 40;

/// Reading or interpreting a trace failed.
#[derive(Debug, Error)]
pub enum SwfError {
    /// Reading failed (including a truncated or corrupt gzip stream).
    #[error("line {line}: read error: {source}")]
    Io {
        line: u64,
        #[source]
        source: io::Error,
    },
    /// A job line that is not 18 valid fields.
    #[error("line {line}: {message}")]
    Malformed { line: u64, message: String },
    /// A rule asked for an error (for instance `unsorted=reject`).
    #[error("line {line}: {message}")]
    Rejected { line: u64, message: String },
}

/// The 18 fields of a job line, with −1 for unknown values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SwfRecord {
    /// 1: job number.
    pub job_number: i64,
    /// 2: submit time (seconds from the log's start).
    pub submit_time: i64,
    /// 3: wait time (seconds).
    pub wait_time: i64,
    /// 4: run time (seconds).
    pub run_time: i64,
    /// 5: number of allocated processors.
    pub allocated_procs: i64,
    /// 6: average CPU time used per processor (seconds; may be fractional).
    pub avg_cpu_time: f64,
    /// 7: used memory per processor (KB; may be fractional).
    pub used_memory: f64,
    /// 8: requested number of processors.
    pub requested_procs: i64,
    /// 9: requested time (user runtime estimate, seconds).
    pub requested_time: i64,
    /// 10: requested memory per processor (KB).
    pub requested_memory: f64,
    /// 11: status: 1 completed, 0 failed, 5 cancelled (2, 3, 4: partial
    /// executions of checkpointed/swapped jobs).
    pub status: i64,
    /// 12: user id.
    pub user_id: i64,
    /// 13: group id.
    pub group_id: i64,
    /// 14: executable (application) number.
    pub executable: i64,
    /// 15: queue number.
    pub queue: i64,
    /// 16: partition number.
    pub partition: i64,
    /// 17: preceding job number.
    pub preceding_job: i64,
    /// 18: think time from the preceding job (seconds).
    pub think_time: i64,
}

impl Default for SwfRecord {
    fn default() -> Self {
        SwfRecord {
            job_number: -1,
            submit_time: -1,
            wait_time: -1,
            run_time: -1,
            allocated_procs: -1,
            avg_cpu_time: -1.0,
            used_memory: -1.0,
            requested_procs: -1,
            requested_time: -1,
            requested_memory: -1.0,
            status: -1,
            user_id: -1,
            group_id: -1,
            executable: -1,
            queue: -1,
            partition: -1,
            preceding_job: -1,
            think_time: -1,
        }
    }
}

/// Names of the 18 fields, in order (for messages).
pub const FIELD_NAMES: [&str; 18] = [
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_procs",
    "avg_cpu_time",
    "used_memory",
    "requested_procs",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
];

fn fmt_f(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

impl fmt::Display for SwfRecord {
    /// The archive's layout: right-aligned columns separated by spaces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>6} {:>8} {:>6} {:>6} {:>4} {:>6} {:>5} {:>4} {:>6} {:>5} {:>2} {:>3} {:>3} {:>3} {:>2} {:>2} {:>2} {:>2}",
            self.job_number,
            self.submit_time,
            self.wait_time,
            self.run_time,
            self.allocated_procs,
            fmt_f(self.avg_cpu_time),
            fmt_f(self.used_memory),
            self.requested_procs,
            self.requested_time,
            fmt_f(self.requested_memory),
            self.status,
            self.user_id,
            self.group_id,
            self.executable,
            self.queue,
            self.partition,
            self.preceding_job,
            self.think_time
        )
    }
}

/// Parses an integer field; a value with a fractional part (some
/// conversions write `12.0`) is accepted and rounded to nearest.
fn int_field(s: &str) -> Option<i64> {
    if let Ok(v) = s.parse::<i64>() {
        return Some(v);
    }
    let f: f64 = s.parse().ok()?;
    f.is_finite().then(|| f.round() as i64)
}

impl SwfRecord {
    /// Parses one job line (18 fields). `line` is used in errors.
    pub fn parse(text: &str, line: u64) -> Result<SwfRecord, SwfError> {
        Self::parse_with(text, line, ExtraFields::Error).map(|(r, _)| r)
    }

    /// Parses one job line under an extra-fields rule; also returns the
    /// number of fields beyond the 18th (0 under [`ExtraFields::Error`]).
    pub fn parse_with(
        text: &str,
        line: u64,
        extra: ExtraFields,
    ) -> Result<(SwfRecord, usize), SwfError> {
        let mut ints = [0i64; 18];
        let mut floats = [0f64; 3];
        let mut n = 0;
        for tok in text.split_ascii_whitespace() {
            if n == 18 {
                n += 1;
                break;
            }
            let bad = || SwfError::Malformed {
                line,
                message: format!(
                    "field {} ({}) is {:?}, not a number",
                    n + 1,
                    FIELD_NAMES[n],
                    parsched_core::clip(tok, parsched_core::ECHO_MAX)
                ),
            };
            match n {
                5 | 6 | 9 => {
                    let v: f64 = tok.parse().map_err(|_| bad())?;
                    if !v.is_finite() {
                        return Err(bad());
                    }
                    floats[[5, 6, 9].iter().position(|&k| k == n).unwrap_or(0)] = v;
                }
                _ => ints[n] = int_field(tok).ok_or_else(bad)?,
            }
            n += 1;
        }
        let mut extras = 0;
        if n > 18 {
            extras = text.split_ascii_whitespace().count() - 18;
            if extra == ExtraFields::Error {
                return Err(SwfError::Malformed {
                    line,
                    message: format!(
                        "{} fields; an SWF job line has 18 (rule extra_fields=error; \
                         extra_fields=ignore reads the first 18)",
                        18 + extras
                    ),
                });
            }
        } else if n != 18 {
            return Err(SwfError::Malformed {
                line,
                message: format!("{n} fields; an SWF job line has 18"),
            });
        }
        // Time and count fields: −1 (unknown) or non-negative.
        for k in [1usize, 2, 3, 4, 7, 8] {
            if ints[k] < -1 {
                return Err(SwfError::Malformed {
                    line,
                    message: format!(
                        "field {} ({}) is {}; allowed: -1 (unknown) or >= 0",
                        k + 1,
                        FIELD_NAMES[k],
                        ints[k]
                    ),
                });
            }
        }
        Ok((
            SwfRecord {
                job_number: ints[0],
                submit_time: ints[1],
                wait_time: ints[2],
                run_time: ints[3],
                allocated_procs: ints[4],
                avg_cpu_time: floats[0],
                used_memory: floats[1],
                requested_procs: ints[7],
                requested_time: ints[8],
                requested_memory: floats[2],
                status: ints[10],
                user_id: ints[11],
                group_id: ints[12],
                executable: ints[13],
                queue: ints[14],
                partition: ints[15],
                preceding_job: ints[16],
                think_time: ints[17],
            },
            extras,
        ))
    }
}

/// The header comments. Known keys are parsed; every `Key: value` line is
/// also kept in `fields` (in order) and free text in `notes`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SwfHeader {
    pub version: Option<String>,
    pub computer: Option<String>,
    pub installation: Option<String>,
    pub max_jobs: Option<u64>,
    pub max_records: Option<u64>,
    pub preemption: Option<String>,
    pub unix_start_time: Option<i64>,
    pub time_zone: Option<i64>,
    pub time_zone_string: Option<String>,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub max_nodes: Option<u64>,
    pub max_procs: Option<u64>,
    pub max_runtime: Option<u64>,
    pub max_memory: Option<u64>,
    pub allow_overuse: Option<String>,
    pub max_queues: Option<u64>,
    pub max_partitions: Option<u64>,
    /// Every `Key: value` comment, in order (continuation lines are appended
    /// to the previous value after a newline).
    pub fields: Vec<(String, String)>,
    /// Comment lines that are not `Key: value`.
    pub notes: Vec<String>,
}

/// The leading integer of a header value (`400 (48 interactive, ...)` → 400).
fn leading_int(v: &str) -> Option<i64> {
    let v = v.trim();
    let end = v
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
        .map_or(v.len(), |(i, _)| i);
    v[..end].parse().ok()
}

impl SwfHeader {
    /// The machine size: `MaxProcs`, else `MaxNodes`.
    pub fn machine_procs(&self) -> Option<u64> {
        self.max_procs.or(self.max_nodes).filter(|&p| p > 0)
    }

    /// Adds one comment line (without the leading `;`).
    pub fn add_comment(&mut self, body: &str) {
        let trimmed = body.trim();
        if trimmed.is_empty() {
            return;
        }
        let kv = body.split_once(':').filter(|(k, _)| {
            let k = k.trim();
            !k.is_empty()
                && !body.starts_with("    ")
                && !body.starts_with('\t')
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        let Some((k, v)) = kv else {
            // Indented continuation of the previous key, or free text.
            if body.starts_with(' ') && body.len() - body.trim_start().len() >= 3 {
                if let Some(last) = self.fields.last_mut() {
                    last.1.push('\n');
                    last.1.push_str(trimmed);
                    return;
                }
            }
            self.notes.push(trimmed.to_string());
            return;
        };
        let key = k.trim().to_string();
        let val = v.trim().to_string();
        let u = |v: &str| leading_int(v).and_then(|x| u64::try_from(x).ok());
        match key.to_ascii_lowercase().as_str() {
            "version" => self.version = Some(val.clone()),
            "computer" => self.computer = Some(val.clone()),
            "installation" => self.installation = Some(val.clone()),
            "maxjobs" => self.max_jobs = u(&val),
            "maxrecords" => self.max_records = u(&val),
            "preemption" => self.preemption = Some(val.clone()),
            "unixstarttime" => self.unix_start_time = leading_int(&val),
            "timezone" => self.time_zone = leading_int(&val),
            "timezonestring" => self.time_zone_string = Some(val.clone()),
            "starttime" => self.start_time = Some(val.clone()),
            "endtime" => self.end_time = Some(val.clone()),
            "maxnodes" => self.max_nodes = u(&val),
            "maxprocs" => self.max_procs = u(&val),
            "maxruntime" => self.max_runtime = u(&val),
            "maxmemory" => self.max_memory = u(&val),
            "allowoveruse" => self.allow_overuse = Some(val.clone()),
            "maxqueues" => self.max_queues = u(&val),
            "maxpartitions" => self.max_partitions = u(&val),
            _ => {}
        }
        self.fields.push((key, val));
    }

    /// The header as comment lines: every kept field and note.
    pub fn to_comments(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.fields {
            let mut lines = v.split('\n');
            s.push_str(&format!("; {k}: {}\n", lines.next().unwrap_or("")));
            for l in lines {
                s.push_str(&format!(";{:width$}{l}\n", "", width = k.len() + 3));
            }
        }
        for n in &self.notes {
            s.push_str(&format!("; {n}\n"));
        }
        s
    }
}

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

/// Writes an SWF trace: the header comments, then one line per record.
pub struct SwfWriter<W: Write> {
    out: W,
}

impl<W: Write> SwfWriter<W> {
    pub fn new(mut out: W, header: &SwfHeader) -> io::Result<SwfWriter<W>> {
        out.write_all(header.to_comments().as_bytes())?;
        Ok(SwfWriter { out })
    }

    pub fn write(&mut self, r: &SwfRecord) -> io::Result<()> {
        writeln!(self.out, "{r}")
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A rigid job as the batch machine runs it. Times in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchJob {
    /// The trace's job number.
    pub id: i64,
    pub submit: u64,
    /// The real run time.
    pub runtime: u64,
    /// Processors (after the `procs` rule).
    pub procs: u32,
    /// Requested time (after the `requested_time` rule).
    pub requested: u64,
    pub user: i32,
    pub group: i32,
    pub queue: i32,
    pub partition: i32,
    /// The trace line the job came from (0: not from a file; saturates at
    /// 2^32 − 1), for error messages.
    pub line: u32,
}

impl BatchJob {
    /// A job with unknown user, group, queue and partition.
    pub fn new(id: i64, submit: u64, runtime: u64, procs: u32, requested: u64) -> BatchJob {
        BatchJob {
            id,
            submit,
            runtime,
            procs,
            requested,
            user: -1,
            group: -1,
            queue: -1,
            partition: -1,
            line: 0,
        }
    }

    /// The job as an SWF record (no schedule: wait −1, status −1).
    pub fn to_record(&self) -> SwfRecord {
        SwfRecord {
            job_number: self.id,
            submit_time: self.submit as i64,
            run_time: self.runtime as i64,
            allocated_procs: self.procs as i64,
            requested_procs: self.procs as i64,
            requested_time: self.requested as i64,
            user_id: self.user as i64,
            group_id: self.group as i64,
            queue: self.queue as i64,
            partition: self.partition as i64,
            ..SwfRecord::default()
        }
    }
}

/// Which processor count a job uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ProcsRule {
    /// Allocated processors (field 5); if unknown, requested (field 8).
    #[default]
    Allocated,
    /// Requested processors (field 8); if unknown, allocated (field 5).
    Requested,
}

/// What to do when the requested time (field 9) is unknown (or 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MissingRequested {
    /// Use the real run time (perfect estimates).
    #[default]
    Runtime,
    /// Use `ceil(runtime × requested_time_factor)`.
    Factor,
    /// Drop the job.
    Drop,
}

/// What to do with jobs whose run time is unknown (−1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MissingRuntime {
    #[default]
    Drop,
    /// Use the requested time as run time (dropped if that is unknown too).
    Requested,
}

/// Keep or drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum KeepDrop {
    #[default]
    Keep,
    Drop,
}

/// What to do when submit times are not in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Unsorted {
    /// Stable sort by submit time (trace order among equal times).
    #[default]
    Sort,
    /// Error naming the first line out of order.
    Reject,
}

/// What to do with job lines of more than 18 fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ExtraFields {
    /// Read the first 18 fields, ignore the rest, count the line
    /// ([`LoadReport::extra_fields`]).
    #[default]
    Ignore,
    /// Refuse the line (an error naming it).
    Error,
}

/// One rule per quirk of real logs. Defaults: allocated processors,
/// requested time = run time when unknown, drop unknown run times, keep zero
/// run times, drop cancelled jobs (status 5), sort by submit time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SwfRules {
    pub procs: ProcsRule,
    pub missing_requested_time: MissingRequested,
    /// Factor for [`MissingRequested::Factor`] (>= 1 typically).
    pub requested_time_factor: f64,
    pub missing_runtime: MissingRuntime,
    pub zero_runtime: KeepDrop,
    /// Jobs with status 5. Default: drop (most were cancelled before they
    /// started; those that ran are kept by `keep` if their run time is known).
    pub cancelled: KeepDrop,
    pub unsorted: Unsorted,
    /// Job lines with more than 18 fields.
    pub extra_fields: ExtraFields,
}

impl Default for SwfRules {
    fn default() -> Self {
        SwfRules {
            procs: ProcsRule::Allocated,
            missing_requested_time: MissingRequested::Runtime,
            requested_time_factor: 1.0,
            missing_runtime: MissingRuntime::Drop,
            zero_runtime: KeepDrop::Keep,
            cancelled: KeepDrop::Drop,
            unsorted: Unsorted::Sort,
            extra_fields: ExtraFields::Ignore,
        }
    }
}

/// What loading did: counts of records read, kept, dropped and repaired, by
/// reason.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadReport {
    pub records: u64,
    pub kept: u64,
    pub dropped_cancelled: u64,
    pub dropped_missing_runtime: u64,
    pub dropped_zero_runtime: u64,
    pub dropped_missing_procs: u64,
    pub dropped_missing_submit: u64,
    pub dropped_missing_requested_time: u64,
    /// Jobs wider than the machine (counted by the batch machine's
    /// `too_wide=drop` rule).
    pub dropped_too_wide: u64,
    pub repaired_runtime_from_requested: u64,
    pub repaired_procs_fallback: u64,
    pub repaired_requested_time: u64,
    /// Jobs clamped to the machine width (`too_wide=clamp`).
    pub repaired_too_wide: u64,
    /// Records whose submit time was earlier than the previous record's
    /// (reordered by `unsorted=sort`).
    pub out_of_order: u64,
    /// Job lines with fields beyond the 18th, read as their first 18
    /// (`extra_fields=ignore`).
    pub extra_fields: u64,
}

impl LoadReport {
    /// Non-zero counts as `(reason, count)`, for printing.
    pub fn reasons(&self) -> Vec<(&'static str, u64)> {
        [
            (
                "dropped: cancelled (status 5; rule cancelled=drop)",
                self.dropped_cancelled,
            ),
            (
                "dropped: run time unknown (rule missing_runtime=drop)",
                self.dropped_missing_runtime,
            ),
            (
                "dropped: run time 0 (rule zero_runtime=drop)",
                self.dropped_zero_runtime,
            ),
            (
                "dropped: processor count unknown or 0 in fields 5 and 8",
                self.dropped_missing_procs,
            ),
            ("dropped: submit time unknown", self.dropped_missing_submit),
            (
                "dropped: requested time unknown (rule missing_requested_time=drop)",
                self.dropped_missing_requested_time,
            ),
            (
                "dropped: wider than the machine (rule too_wide=drop)",
                self.dropped_too_wide,
            ),
            (
                "repaired: run time taken from the requested time (rule missing_runtime=requested)",
                self.repaired_runtime_from_requested,
            ),
            (
                "repaired: processor count from the other field (rule procs)",
                self.repaired_procs_fallback,
            ),
            (
                "repaired: requested time unknown, set by rule missing_requested_time",
                self.repaired_requested_time,
            ),
            (
                "repaired: clamped to the machine width (rule too_wide=clamp)",
                self.repaired_too_wide,
            ),
            (
                "reordered: submit time earlier than the previous job's (rule unsorted=sort)",
                self.out_of_order,
            ),
            (
                "ignored: fields beyond the 18th (rule extra_fields=ignore)",
                self.extra_fields,
            ),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect()
    }

    pub fn dropped(&self) -> u64 {
        self.dropped_cancelled
            + self.dropped_missing_runtime
            + self.dropped_zero_runtime
            + self.dropped_missing_procs
            + self.dropped_missing_submit
            + self.dropped_missing_requested_time
            + self.dropped_too_wide
    }
}

impl SwfRules {
    /// Applies the rules to one record: `Some(job)` if kept. The rules are
    /// checked in this order and a dropped record is counted once, under the
    /// first reason: cancelled, submit time unknown, run time unknown, run
    /// time 0, processor count, requested time.
    pub fn apply(&self, r: &SwfRecord, report: &mut LoadReport) -> Option<BatchJob> {
        report.records += 1;
        if r.status == 5 && self.cancelled == KeepDrop::Drop {
            report.dropped_cancelled += 1;
            return None;
        }
        if r.submit_time < 0 {
            report.dropped_missing_submit += 1;
            return None;
        }
        let mut runtime = r.run_time;
        if runtime < 0 {
            if self.missing_runtime == MissingRuntime::Requested && r.requested_time > 0 {
                runtime = r.requested_time;
                report.repaired_runtime_from_requested += 1;
            } else {
                report.dropped_missing_runtime += 1;
                return None;
            }
        }
        if runtime == 0 && self.zero_runtime == KeepDrop::Drop {
            report.dropped_zero_runtime += 1;
            return None;
        }
        let (first, second) = match self.procs {
            ProcsRule::Allocated => (r.allocated_procs, r.requested_procs),
            ProcsRule::Requested => (r.requested_procs, r.allocated_procs),
        };
        let procs = if first > 0 {
            first
        } else if second > 0 {
            report.repaired_procs_fallback += 1;
            second
        } else {
            report.dropped_missing_procs += 1;
            return None;
        };
        let requested = if r.requested_time > 0 {
            r.requested_time as u64
        } else {
            match self.missing_requested_time {
                MissingRequested::Drop => {
                    report.dropped_missing_requested_time += 1;
                    return None;
                }
                MissingRequested::Runtime => {
                    report.repaired_requested_time += 1;
                    runtime as u64
                }
                MissingRequested::Factor => {
                    report.repaired_requested_time += 1;
                    (runtime as f64 * self.requested_time_factor).ceil() as u64
                }
            }
        };
        report.kept += 1;
        Some(BatchJob {
            id: r.job_number,
            submit: r.submit_time as u64,
            runtime: runtime as u64,
            procs: procs.min(u32::MAX as i64) as u32,
            requested,
            user: r.user_id.clamp(-1, i32::MAX as i64) as i32,
            group: r.group_id.clamp(-1, i32::MAX as i64) as i32,
            queue: r.queue.clamp(-1, i32::MAX as i64) as i32,
            partition: r.partition.clamp(-1, i32::MAX as i64) as i32,
            line: 0,
        })
    }
}

/// A loaded trace: its header, the kept jobs sorted by submit time, and what
/// the rules did.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub header: SwfHeader,
    pub jobs: Vec<BatchJob>,
    pub report: LoadReport,
}

/// Reads every record of `reader` and applies `rules`. Memory is
/// proportional to the jobs kept.
pub fn load_jobs<R: BufRead>(
    mut reader: SwfReader<R>,
    rules: &SwfRules,
) -> Result<Trace, SwfError> {
    let mut report = LoadReport::default();
    let mut jobs = Vec::new();
    let mut last_submit = i64::MIN;
    reader.set_extra_fields(rules.extra_fields);
    while let Some(rec) = reader.read_record() {
        let rec = rec?;
        let line = reader.line();
        if rec.submit_time >= 0 {
            if rec.submit_time < last_submit {
                report.out_of_order += 1;
                if rules.unsorted == Unsorted::Reject {
                    return Err(SwfError::Rejected {
                        line,
                        message: format!(
                            "job {} submitted at {} after a job submitted at {} (rule unsorted=reject)",
                            rec.job_number, rec.submit_time, last_submit
                        ),
                    });
                }
            }
            last_submit = last_submit.max(rec.submit_time);
        }
        if let Some(mut j) = rules.apply(&rec, &mut report) {
            if let Some((field, v)) = [
                ("field 2 (submit_time)", j.submit),
                ("field 4 (run_time)", j.runtime),
                ("the requested time", j.requested),
            ]
            .into_iter()
            .find(|&(_, v)| v >= MAX_TIME)
            {
                return Err(SwfError::Malformed {
                    line,
                    message: format!(
                        "job {}: {field} is {v} s; allowed: below 2^40 s (about 35,000 years)",
                        j.id
                    ),
                });
            }
            j.line = u32::try_from(line).unwrap_or(u32::MAX);
            jobs.push(j);
        }
    }
    report.extra_fields = reader.extra_field_lines();
    if report.out_of_order > 0 {
        jobs.sort_by_key(|j| j.submit); // stable: trace order among equals
    }
    Ok(Trace {
        header: reader.header().clone(),
        jobs,
        report,
    })
}

/// Opens and loads a trace file.
pub fn load_file(path: impl AsRef<Path>, rules: &SwfRules) -> Result<Trace, SwfError> {
    load_jobs(open(path)?, rules)
}

/// Reads the records of any reader into a vector (for small inputs).
pub fn read_all<R: Read>(input: R) -> Result<(SwfHeader, Vec<SwfRecord>), SwfError> {
    let mut r = SwfReader::new(BufReader::new(input))?;
    let recs = r.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((r.header().clone(), recs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;

    const SMALL: &str = "; Version: 2.2\n; Computer: Test box\n; MaxNodes: 400 (48 interactive, 352 batch)\n; MaxProcs: 64\n; UnixStartTime: 843480031\n; Note: first line\n;       continued\n;\n1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n\n   \n2 10 -1 50 -1 -1 -1 8 -1 -1 1 2 1 -1 1 -1 -1 -1\n3 5 -1 -1 2 -1 -1 2 60 -1 1 2 1 -1 1 -1 -1 -1\n4 20 -1 30 2 12.5 100.5 2 60 -1 5 2 1 -1 1 -1 -1 -1\n5 30 -1 0 -1 -1 -1 -1 60 -1 1 2 1 -1 1 -1 -1 -1\n";

    #[test]
    fn header_and_records() {
        let (h, recs) = read_all(SMALL.as_bytes()).unwrap();
        assert_eq!(h.version.as_deref(), Some("2.2"));
        assert_eq!(h.computer.as_deref(), Some("Test box"));
        assert_eq!(h.max_nodes, Some(400));
        assert_eq!(h.max_procs, Some(64));
        assert_eq!(h.machine_procs(), Some(64));
        assert_eq!(h.unix_start_time, Some(843480031));
        assert_eq!(h.fields.last().unwrap().1, "first line\ncontinued");
        assert_eq!(recs.len(), 5);
        assert_eq!(recs[0].wait_time, 5);
        assert_eq!(recs[3].avg_cpu_time, 12.5);
        assert_eq!(recs[3].used_memory, 100.5);
        assert_eq!(recs[3].status, 5);
    }

    #[test]
    fn rules_and_report() {
        let t = load_jobs(
            SwfReader::new(SMALL.as_bytes()).unwrap(),
            &SwfRules::default(),
        )
        .unwrap();
        let r = &t.report;
        assert_eq!(r.records, 5);
        assert_eq!(r.dropped_missing_runtime, 1); // job 3
        assert_eq!(r.dropped_cancelled, 1); // job 4
        assert_eq!(r.dropped_missing_procs, 1); // job 5
        assert_eq!(r.repaired_procs_fallback, 1); // job 2: allocated −1 → requested 8
        assert_eq!(r.repaired_requested_time, 1); // job 2: requested = runtime
        assert_eq!(r.out_of_order, 1); // job 3 (5 after 10)
        assert_eq!(r.kept, 2);
        assert_eq!(r.kept + r.dropped(), r.records);
        assert_eq!(
            t.jobs[0],
            BatchJob {
                user: 1,
                group: 1,
                queue: 1,
                line: 9,
                ..BatchJob::new(1, 0, 100, 4, 200)
            }
        );
        assert_eq!(t.jobs[1].procs, 8);
        assert_eq!(t.jobs[1].requested, 50);
        // Other rules.
        let rules = SwfRules {
            procs: ProcsRule::Requested,
            missing_requested_time: MissingRequested::Factor,
            requested_time_factor: 1.5,
            missing_runtime: MissingRuntime::Requested,
            zero_runtime: KeepDrop::Drop,
            cancelled: KeepDrop::Keep,
            unsorted: Unsorted::Sort,
            extra_fields: ExtraFields::Error,
        };
        let t = load_jobs(SwfReader::new(SMALL.as_bytes()).unwrap(), &rules).unwrap();
        let ids: Vec<i64> = t.jobs.iter().map(|j| j.id).collect();
        assert_eq!(ids, vec![1, 3, 2, 4]); // sorted by submit 0, 5, 10, 20
        assert_eq!(t.jobs[1].runtime, 60);
        assert_eq!(t.jobs[2].requested, 75);
        // Job 5 has run time 0 and no processor count: the run-time rules
        // come first, so it counts once, as a zero run time.
        assert_eq!(t.report.dropped_zero_runtime, 1);
        assert_eq!(t.report.dropped_missing_procs, 0);
        // Reject.
        let rules = SwfRules {
            unsorted: Unsorted::Reject,
            ..SwfRules::default()
        };
        let e = load_jobs(SwfReader::new(SMALL.as_bytes()).unwrap(), &rules).unwrap_err();
        assert!(e.to_string().contains("unsorted=reject"), "{e}");
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let bad12 = "; MaxProcs: 4\n1 0 5 100 4 -1 -1 4 200 -1 1 1\n";
        let e = read_all(bad12.as_bytes()).unwrap_err();
        assert_eq!(e.to_string(), "line 2: 12 fields; an SWF job line has 18");
        let neg = "1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n2 0 5 -7 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n";
        let e = read_all(neg.as_bytes()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 2: field 4 (run_time) is -7"),
            "{e}"
        );
        let txt = "1 0 5 x 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n";
        let e = read_all(txt.as_bytes()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 1: field 4 (run_time) is \"x\""),
            "{e}"
        );
        let long = "1 0 5 1 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1 7 8\n";
        let e = read_all(long.as_bytes()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 1: 20 fields; an SWF job line has 18 (rule extra_fields=error"),
            "{e}"
        );
    }

    #[test]
    fn extra_fields_are_ignored_and_counted_or_refused() {
        // ALCF-style lines: 19 fields (a walltime column appended).
        let text = "; MaxProcs: 8\n1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1 3600\n\
                    2 1 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n\
                    3 2 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1 3600 7\n";
        let t = load_jobs(
            SwfReader::new(text.as_bytes()).unwrap(),
            &SwfRules::default(),
        )
        .unwrap();
        assert_eq!(t.jobs.len(), 3);
        assert_eq!(t.report.extra_fields, 2);
        assert_eq!(t.jobs[2].runtime, 100);
        assert!(t
            .report
            .reasons()
            .iter()
            .any(|(r, n)| r.contains("extra_fields=ignore") && *n == 2));
        let rules = SwfRules {
            extra_fields: ExtraFields::Error,
            ..SwfRules::default()
        };
        let e = load_jobs(SwfReader::new(text.as_bytes()).unwrap(), &rules).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 2: 19 fields; an SWF job line has 18"),
            "{e}"
        );
        // Too few fields stay an error under either rule.
        let short = "1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1\n";
        let e = load_jobs(
            SwfReader::new(short.as_bytes()).unwrap(),
            &SwfRules::default(),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "line 1: 17 fields; an SWF job line has 18");
    }

    #[test]
    fn huge_times_and_long_values_name_the_line_and_are_cut() {
        let text = "; MaxProcs: 8\n1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n\
                    1 1 5 1099511627776 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n";
        let e = load_jobs(
            SwfReader::new(text.as_bytes()).unwrap(),
            &SwfRules::default(),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 3: job 1: field 4 (run_time) is 1099511627776 s"),
            "{e}"
        );
        let long = format!(
            "1 0 5 {} 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n",
            "x".repeat(5000)
        );
        let e = read_all(long.as_bytes()).unwrap_err().to_string();
        assert!(e.len() < 200, "{e}");
        assert!(e.contains(&format!("{}…", "x".repeat(60))), "{e}");
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_and_truncated_gzip() {
        let mut text = String::from("; MaxProcs: 8\n");
        for i in 0..2000 {
            text.push_str(&format!(
                "{} {} -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n",
                i + 1,
                i
            ));
        }
        let z = gz(text.as_bytes());
        let recs: Vec<_> = from_bytes(&z).unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(recs.len(), 2000);
        let cut = &z[..z.len() / 2];
        let r: Result<Vec<_>, _> = from_bytes(cut).unwrap().collect();
        match r {
            Err(SwfError::Io { line, .. }) => assert!(line > 2 && line < 2001, "{line}"),
            Err(SwfError::Malformed { line, .. }) => assert!(line > 2, "{line}"),
            other => panic!("truncated gzip accepted: {:?}", other.map(|v| v.len())),
        }
    }

    #[test]
    fn writer_round_trip() {
        let (h, recs) = read_all(SMALL.as_bytes()).unwrap();
        let mut w = SwfWriter::new(Vec::new(), &h).unwrap();
        for r in &recs {
            w.write(r).unwrap();
        }
        let out = w.finish().unwrap();
        let (h2, recs2) = read_all(&out[..]).unwrap();
        assert_eq!(recs, recs2);
        assert_eq!(h.fields, h2.fields);
        assert_eq!(h.max_procs, h2.max_procs);
    }
}
