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
//!
//! Modules: `record` (job lines), `header` (comments), `reader` (streaming
//! input), `writer`, `rules` (quirk rules, jobs, load report), `load` (whole
//! traces); every item is re-exported here, as `workloads::swf::X`.

mod header;
mod load;
mod reader;
mod record;
mod rules;
mod writer;

pub use header::SwfHeader;
pub use load::{load_file, load_jobs, Trace};
pub use reader::{from_bytes, open, read_all, SwfReader};
pub use record::{SwfRecord, FIELD_NAMES};
pub use rules::{
    BatchJob, ExtraFields, KeepDrop, LoadReport, MissingRequested, MissingRuntime, ProcsRule,
    SwfRules, Unsorted,
};
pub use writer::SwfWriter;

use std::io;
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

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

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
