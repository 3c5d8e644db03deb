//! Loading a whole trace: [`load_jobs`] reads every record, applies the
//! [`SwfRules`] and checks the times' bound; [`load_file`] opens and loads.

use super::{
    open, BatchJob, LoadReport, SwfError, SwfHeader, SwfReader, SwfRules, Unsorted, MAX_TIME,
};
use std::io::BufRead;
use std::path::Path;

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

/// Opens and loads a trace file. A line that does not parse in a gzip file
/// whose stream is corrupt (a bad CRC or deflate data further on) is
/// reported as the corrupt archive it comes from, not as the garbage line
/// the corruption decoded to.
pub fn load_file(path: impl AsRef<Path>, rules: &SwfRules) -> Result<Trace, SwfError> {
    let path = path.as_ref();
    match load_jobs(open(path)?, rules) {
        Err(e @ (SwfError::Malformed { .. } | SwfError::Rejected { .. })) => {
            Err(gzip_corruption(path, &e).unwrap_or(e))
        }
        r => r,
    }
}

/// The gzip stream's own error, if `path` is a gzip file that does not
/// decompress cleanly to its end (`bad` is the error it produced first).
fn gzip_corruption(path: &Path, bad: &SwfError) -> Option<SwfError> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut magic = [0u8; 2];
    f.read_exact(&mut magic).ok()?;
    if magic != [0x1f, 0x8b] {
        return None;
    }
    let f = std::fs::File::open(path).ok()?;
    let mut gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(f));
    let e = std::io::copy(&mut gz, &mut std::io::sink()).err()?;
    let line = match bad {
        SwfError::Malformed { line, .. } | SwfError::Rejected { line, .. } => *line,
        SwfError::Io { line, .. } => *line,
    };
    Some(SwfError::Io {
        line,
        source: std::io::Error::new(
            e.kind(),
            format!("the gzip archive is corrupt ({e}); line {line} is its damaged data"),
        ),
    })
}
