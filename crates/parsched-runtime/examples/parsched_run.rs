//! A minimal command-line front end to the runtime (the Python CLI will be
//! the real one). Used by the integration tests as the controller process to
//! SIGKILL, and for measurements.
//!
//! ```text
//! parsched_run [--policy gang|pools|default|fcs|flexible] [--slot 50ms] [--backend auto|cgroup2|cgroup1|signal]
//!              [--width W] [--no-rt] [--confirm] [--no-supervisor] [--spec FILE.json] -- PROG ARGS [: PROG ARGS]...
//! ```
//! Prints `{"reports": [...], "stats": {...}}` as JSON on stdout; exit code 1
//! if a job failed, 2 on a runtime error.

use parsched_runtime::spec::parse_duration;
use parsched_runtime::{BackendKind, Controller, JobSpec, Policy, RunSpec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut spec = RunSpec::default();
    let mut width = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let val = || args.get(i + 1).cloned().unwrap_or_default();
        match a {
            "--" => {
                i += 1;
                break;
            }
            "--policy" => {
                spec.policy = Policy::named(&val()).unwrap_or_else(|e| fail(&e.to_string()));
                i += 1;
            }
            "--backend" => {
                spec.backend = match val().as_str() {
                    "auto" => BackendKind::Auto,
                    "cgroup2" => BackendKind::Cgroup2,
                    "cgroup1" => BackendKind::Cgroup1,
                    "signal" => BackendKind::Signal,
                    b => fail(&format!("unknown backend {b}")),
                };
                i += 1;
            }
            "--slot" => {
                spec.slot = parse_duration(&val()).unwrap_or_else(|e| fail(&e.to_string()));
                i += 1;
            }
            "--width" => {
                width = Some(val().parse().unwrap_or_else(|_| fail("bad width")));
                i += 1;
            }
            "--pool-size" => {
                spec.pools.pool_size = Some(val().parse().unwrap_or_else(|_| fail("bad size")));
                i += 1;
            }
            "--no-rt" => spec.realtime = false,
            "--confirm" => spec.confirm_freeze = true,
            "--no-supervisor" => spec.supervisor = false,
            "--spec" => {
                let text = std::fs::read_to_string(val()).unwrap_or_else(|e| fail(&e.to_string()));
                spec = serde_json::from_str(&text).unwrap_or_else(|e| fail(&e.to_string()));
                i += 1;
            }
            _ => fail(&format!("unknown option {a}")),
        }
        i += 1;
    }
    for cmd in args[i.min(args.len())..].split(|a| a == ":") {
        if !cmd.is_empty() {
            let mut j = JobSpec::new(cmd.iter().cloned());
            j.width = width;
            spec.jobs.push(j);
        }
    }
    let mut c = Controller::new(spec).unwrap_or_else(|e| fail(&e.to_string()));
    let reports = c.run().unwrap_or_else(|e| fail(&e.to_string()));
    let out = serde_json::json!({ "reports": reports, "stats": c.stats() });
    println!("{out}");
    if reports.iter().any(|r| !r.success) {
        std::process::exit(1);
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("parsched_run: {msg}");
    std::process::exit(2)
}
