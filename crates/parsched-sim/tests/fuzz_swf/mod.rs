//! A mutation fuzzer for the SWF reader and the batch machine, on stable Rust
//! (proptest): job lines of the shared real traces (or a built-in sample when
//! they are absent) are mutated — fields replaced by edge values (−2, 2^40,
//! 1e308, NaN, 5,000 characters, non-ASCII), fields dropped or added, lines
//! duplicated, cut or shuffled, bytes flipped, comments and headers mangled,
//! the whole gzip-compressed and cut — then loaded under random rules and run
//! under a random policy. Nothing may panic; every error is one line naming
//! the line (for a malformed job line) and echoing at most 60 characters of
//! a value; a run that ends gives a schedule consistent with its jobs.
//!
//! `cargo test --release -p parsched-sim --test integration fuzz_swf` runs a few hundred
//! cases (seconds, part of `make test`); `make fuzz` runs
//! `PARSCHED_FUZZ_CASES` (default 20000) cases, several minutes. A failure is
//! shrunk by proptest and its seed saved in `tests/fuzz_swf/mod.proptest-regressions`
//! (committed, replayed first by every later run); the crash itself becomes a
//! named case in `regressions` below.

use parsched_core::Value;
use parsched_sim::machines::batch::{self, BatchConfig, BatchError};
use parsched_sim::workloads::swf::{self, SwfError};
use proptest::prelude::*;
use std::io::{Read, Write};

const SAMPLE: &str = "; Version: 2.2\n; Computer: sample\n; MaxProcs: 64\n; MaxNodes: 64\n\
1 0 3 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n\
2 10 -1 50 -1 -1 -1 8 -1 -1 1 2 1 -1 1 -1 -1 -1\n\
3 5 -1 -1 2 -1 -1 2 60 -1 1 2 1 -1 1 -1 -1 -1\n\
4 20 -1 30 2 12.5 100.5 2 60 -1 5 2 1 -1 1 -1 -1 -1\n\
5 30 -1 0 -1 -1 -1 -1 60 -1 1 2 1 -1 1 -1 -1 -1\n\
6 31 -1 7200 64 -1 -1 64 7200 -1 1 3 1 -1 1 -1 -1 -1\n\
7 40 -1 90 16 -1 -1 16 80 -1 0 3 1 -1 1 -1 -1 -1\n";

/// Header and the first job lines of every shared trace, plus the sample
/// (read once).
fn corpus() -> &'static [String] {
    static CORPUS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(read_corpus)
}

fn read_corpus() -> Vec<String> {
    let mut out = vec![SAMPLE.to_string()];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().contains(".swf"))
        .collect();
    paths.sort();
    for p in paths {
        let Ok(bytes) = std::fs::read(&p) else {
            continue;
        };
        let mut text = String::new();
        let ok = if bytes.starts_with(&[0x1f, 0x8b]) {
            // The first ~2 MB of the stream is plenty for 150 job lines.
            let mut d = flate2::read::MultiGzDecoder::new(&bytes[..]).take(2 << 20);
            d.read_to_string(&mut text).is_ok()
        } else {
            String::from_utf8(bytes).map(|t| text = t).is_ok()
        };
        if !ok {
            continue;
        }
        let mut kept = String::new();
        let mut jobs = 0;
        for line in text.lines() {
            if !line.trim_start().starts_with(';') {
                jobs += 1;
            }
            kept.push_str(line);
            kept.push('\n');
            if jobs >= 150 {
                break;
            }
        }
        out.push(kept);
    }
    out
}

const EDGE: &[&str] = &[
    "-1",
    "-2",
    "0",
    "1",
    "-0",
    "1e308",
    "-1e308",
    "NaN",
    "inf",
    "1099511627776",
    "1099511627775",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "4294967296",
    "12.5",
    "0.4999",
    "1e5",
    "0x10",
    "é",
    "+3",
    "",
    ";",
    "1;2",
];

#[derive(Debug, Clone)]
enum Mutation {
    /// Replace field `field` of line `line` by an edge value.
    Field {
        line: usize,
        field: usize,
        edge: usize,
    },
    /// A very long token in a field.
    Long {
        line: usize,
        field: usize,
    },
    /// Drop a field / add `n` fields.
    DropField {
        line: usize,
        field: usize,
    },
    AddFields {
        line: usize,
        n: usize,
    },
    /// Duplicate, delete or swap lines.
    Duplicate {
        line: usize,
    },
    Delete {
        line: usize,
    },
    Swap {
        a: usize,
        b: usize,
    },
    /// Flip a byte of the text.
    Byte {
        at: usize,
        value: u8,
    },
    /// A header line with a bad value.
    Header {
        edge: usize,
        key: usize,
    },
    /// Cut the text.
    Truncate {
        at: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let line = 0usize..200;
    let field = 0usize..20;
    prop_oneof![
        4 => (line.clone(), field.clone(), 0..EDGE.len())
            .prop_map(|(line, field, edge)| Mutation::Field { line, field, edge }),
        1 => (line.clone(), field.clone()).prop_map(|(line, field)| Mutation::Long { line, field }),
        1 => (line.clone(), field.clone())
            .prop_map(|(line, field)| Mutation::DropField { line, field }),
        1 => (line.clone(), 1usize..4).prop_map(|(line, n)| Mutation::AddFields { line, n }),
        1 => line.clone().prop_map(|line| Mutation::Duplicate { line }),
        1 => line.clone().prop_map(|line| Mutation::Delete { line }),
        1 => (line.clone(), line).prop_map(|(a, b)| Mutation::Swap { a, b }),
        1 => (0usize..20000, any::<u8>()).prop_map(|(at, value)| Mutation::Byte { at, value }),
        1 => (0..EDGE.len(), 0usize..4).prop_map(|(edge, key)| Mutation::Header { edge, key }),
        1 => (0usize..20000).prop_map(|at| Mutation::Truncate { at }),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> Vec<u8> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut bytes_muts = Vec::new();
    for m in muts {
        let n = lines.len().max(1);
        let edit = |lines: &mut Vec<String>, line: usize, f: &dyn Fn(&mut Vec<String>)| {
            if lines.is_empty() {
                return;
            }
            let i = line % lines.len();
            let mut toks: Vec<String> = lines[i].split_whitespace().map(str::to_string).collect();
            f(&mut toks);
            lines[i] = toks.join(" ");
        };
        match m {
            Mutation::Field { line, field, edge } => edit(&mut lines, *line, &|t| {
                if !t.is_empty() {
                    let k = field % t.len();
                    t[k] = EDGE[*edge].to_string();
                }
            }),
            Mutation::Long { line, field } => edit(&mut lines, *line, &|t| {
                if !t.is_empty() {
                    let k = field % t.len();
                    t[k] = "7".repeat(5000);
                }
            }),
            Mutation::DropField { line, field } => edit(&mut lines, *line, &|t| {
                if !t.is_empty() {
                    let k = field % t.len();
                    t.remove(k);
                }
            }),
            Mutation::AddFields { line, n } => edit(&mut lines, *line, &|t| {
                for j in 0..*n {
                    t.push((3600 * (j + 1)).to_string());
                }
            }),
            Mutation::Duplicate { line } => {
                if !lines.is_empty() {
                    let l = lines[line % n].clone();
                    lines.insert(line % n, l);
                }
            }
            Mutation::Delete { line } => {
                if !lines.is_empty() {
                    lines.remove(line % n);
                }
            }
            Mutation::Swap { a, b } => {
                if !lines.is_empty() {
                    lines.swap(a % n, b % n);
                }
            }
            Mutation::Header { edge, key } => {
                let k = ["MaxProcs", "MaxNodes", "UnixStartTime", "MaxJobs"][*key];
                lines.insert(0, format!("; {k}: {}", EDGE[*edge]));
            }
            Mutation::Byte { .. } | Mutation::Truncate { .. } => bytes_muts.push(m.clone()),
        }
    }
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    for m in bytes_muts {
        match m {
            Mutation::Byte { at, value } if !bytes.is_empty() => {
                let i = at % bytes.len();
                bytes[i] = value;
            }
            Mutation::Truncate { at } if !bytes.is_empty() => {
                let i = at % bytes.len();
                bytes.truncate(i);
            }
            _ => {}
        }
    }
    bytes
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[derive(Debug, Clone)]
struct Setup {
    policy: &'static str,
    procs: Option<i64>,
    keys: Vec<(&'static str, &'static str)>,
}

fn setup() -> impl Strategy<Value = Setup> {
    let rule = prop_oneof![
        Just(("procs_rule", "requested")),
        Just(("missing_requested_time", "factor")),
        Just(("missing_requested_time", "drop")),
        Just(("requested_time_factor", "1e308")),
        Just(("requested_time_factor", "0.001")),
        Just(("missing_runtime", "requested")),
        Just(("zero_runtime", "drop")),
        Just(("cancelled", "keep")),
        Just(("unsorted", "reject")),
        Just(("extra_fields", "error")),
        Just(("too_wide", "clamp")),
        Just(("too_wide", "error")),
        Just(("kill_on_overrun", "true")),
        Just(("load_factor", "1e6")),
        Just(("load_factor", "1e-6")),
        Just(("mpl", "1")),
        Just(("quantum", "1")),
        Just(("gang_backfill", "false")),
        Just(("slot_allocation", "best_fit")),
        Just(("track_resources", "false")),
    ];
    (
        prop_oneof![
            Just("fcfs"),
            Just("easy"),
            Just("conservative"),
            Just("gang")
        ],
        prop_oneof![Just(None), (1i64..300).prop_map(Some)],
        proptest::collection::vec(rule, 0..4),
    )
        .prop_map(|(policy, procs, keys)| Setup {
            policy,
            procs,
            keys,
        })
}

/// Loads and runs `bytes`; panics (the failure proptest reports) on any
/// broken promise.
fn check(bytes: &[u8], s: &Setup) {
    let mut cfg = BatchConfig::default();
    cfg.set("policy", &Value::Str(s.policy.into())).unwrap();
    if let Some(p) = s.procs {
        cfg.set("procs", &Value::Int(p)).unwrap();
    }
    for (k, v) in &s.keys {
        cfg.set(k, &Value::Str((*v).into())).unwrap();
    }
    let one_line = |e: &str| {
        assert!(!e.contains('\n'), "a multi-line error: {e:?}");
        assert!(
            !e.contains(&"7".repeat(61)),
            "a long value echoed in full: {e}"
        );
        assert!(e.len() < 600, "a long error: {e}");
    };
    let trace = match swf::from_bytes(bytes).and_then(|r| swf::load_jobs(r, &cfg.rules)) {
        Ok(t) => t,
        Err(e) => {
            let text = e.to_string();
            one_line(&text);
            match e {
                SwfError::Malformed { line, .. } | SwfError::Rejected { line, .. } => {
                    assert!(line >= 1, "{text}");
                    assert!(text.starts_with(&format!("line {line}: ")), "{text}");
                }
                SwfError::Io { .. } => assert!(text.starts_with("line "), "{text}"),
            }
            return;
        }
    };
    assert_eq!(trace.report.kept as usize, trace.jobs.len());
    assert!(trace.jobs.windows(2).all(|w| w[0].submit <= w[1].submit));
    assert!(trace.jobs.iter().all(|j| j.line >= 1));
    let jobs = trace.jobs.clone();
    match batch::run_loaded(trace, &cfg) {
        Ok(r) => {
            assert!(!r.jobs.is_empty(), "an empty run is an error");
            assert_eq!(r.jobs.len(), r.outcomes.len());
            for (j, o) in r.jobs.iter().zip(&r.outcomes) {
                assert!(o.start >= j.submit && o.end >= o.start, "{j:?} {o:?}");
            }
            assert!(r.jobs.len() <= jobs.len());
        }
        Err(e) => {
            let text = e.to_string();
            one_line(&text);
            match &e {
                BatchError::Config(c) => {
                    assert!(batch::keys().contains(&c.field.as_str()), "{text}")
                }
                BatchError::Input(m) => assert!(
                    m.starts_with("line ") || m.starts_with("nothing to simulate"),
                    "a trace error without its line: {text}"
                ),
                BatchError::Swf(_) | BatchError::Policy(_) => {}
                BatchError::Interrupted => panic!("interrupted without a flag"),
            }
        }
    }
}

fn cases() -> u32 {
    std::env::var("PARSCHED_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_traces_never_panic_and_errors_name_their_line(
        which in any::<proptest::sample::Index>(),
        muts in proptest::collection::vec(mutation(), 0..6),
        s in setup(),
        compress in any::<bool>(),
        cut in any::<proptest::sample::Index>(),
    ) {
        let corpus = corpus();
        let text = &corpus[which.index(corpus.len())];
        let mut bytes = apply(text, &muts);
        if compress {
            bytes = gz(&bytes);
            // sometimes a truncated stream
            if cut.index(4) == 0 && bytes.len() > 20 {
                let at = 10 + cut.index(bytes.len() - 10);
                bytes.truncate(at);
            }
        }
        check(&bytes, &s);
    }
}

/// Crashes and broken promises the fuzzer found, kept as named cases.
mod regressions {
    use super::*;

    fn run(text: &str, keys: &[(&'static str, &'static str)]) {
        check(
            text.as_bytes(),
            &Setup {
                policy: "easy",
                procs: None,
                keys: keys.to_vec(),
            },
        );
    }

    #[test]
    fn huge_requested_time_factor_is_a_line_error() {
        // ceil(run time × 1e308) saturated to u64::MAX: refused at load,
        // naming the line, instead of at run time by job number.
        run(
            "; MaxProcs: 8\n1 0 -1 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
            &[
                ("missing_requested_time", "factor"),
                ("requested_time_factor", "1e308"),
            ],
        );
    }

    #[test]
    fn a_maxprocs_header_of_zero_or_garbage() {
        run(
            "; MaxProcs: 0\n1 0 -1 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
            &[],
        );
        run(
            "; MaxProcs: 18446744073709551616\n1 0 -1 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
            &[],
        );
    }

    #[test]
    fn an_extra_field_on_the_first_job_line() {
        // The first job line is read ahead when the reader opens: the rule
        // set afterwards must apply to it too.
        run(
            "; MaxProcs: 8\n1 0 -1 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1 3600\n",
            &[],
        );
    }

    #[test]
    fn huge_load_factor_and_times_near_the_limit() {
        run(
            "; MaxProcs: 8\n1 0 -1 1099511627775 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
             2 1099511627775 -1 1 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
            &[("load_factor", "1e-6"), ("kill_on_overrun", "true")],
        );
    }
}
