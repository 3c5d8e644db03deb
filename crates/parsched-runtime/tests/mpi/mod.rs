//! MPI programs under the runtime with libparsched_mpi (crates/parsched-runtime/mpi,
//! built by `make mpi`): FCS classifies them from the library's statistics.
//! Needs root, a writable cgroup freezer and MPICH (Debian's `mpich`;
//! privileged.sh says "NOT RUN" without it, as the Python tests skip).

use parsched_runtime::{BackendKind, Controller, JobSpec, Policy, RunSpec};
use std::path::PathBuf;
use std::time::Duration;

use crate::common::*;

fn mpi_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/mpi/mpich");
    assert!(
        d.join("libparsched_mpi.so").exists() && d.join("mpi_bsp").exists(),
        "precondition failed: {} is not built: run `make mpi` (needs MPICH)",
        d.display()
    );
    d
}

/// `mpirun.mpich -np 2` of mpi_bsp with the library and a waiting strategy
/// (hydra passes the controller's PARSCHED_FCS_SYNC_FILE on to the ranks).
fn mpi_job(d: &std::path::Path, wait: &str, args: &[&str]) -> JobSpec {
    let lib = d.join("libparsched_mpi.so").display().to_string();
    let mut argv: Vec<String> = ["mpirun.mpich", "-np", "2", "-env", "LD_PRELOAD", &lib]
        .iter()
        .map(|s| s.to_string())
        .collect();
    argv.extend(["-env", "PARSCHED_MPI_WAIT", wait].map(String::from));
    argv.push(d.join("mpi_bsp").display().to_string());
    argv.extend(args.iter().map(|s| s.to_string()));
    JobSpec::new(argv).width(2)
}

#[test]
#[ignore = "needs root, a writable cgroup freezer and MPICH"]
fn real_fcs_classifies_mpi_jobs_from_the_library_statistics() {
    let d = mpi_dir();
    require_real(BackendKind::Auto);
    let _g = serial();
    let spec = RunSpec {
        policy: Policy::Fcs,
        slot: Duration::from_millis(50),
        jobs: vec![
            // balanced, fine-grained (1 ms between barriers), busy waiting
            mpi_job(&d, "busy", &["1500", "1000"]),
            // imbalanced: one rank computes twice as long; spin-block
            mpi_job(&d, "spin-block", &["700", "1000", "1,2"]),
            // compute-bound: a barrier every 50 ms
            mpi_job(&d, "spin-block", &["30", "50000"]),
        ],
        ..Default::default()
    };
    // A rank preempted by foreign load makes its partner wait: retried only
    // when the machine was busy.
    retry_under_foreign_load(4, || {
        let mut c = Controller::new(spec.clone()).unwrap();
        let r = c.run().unwrap();
        for j in &r {
            println!(
                "{}: {:?} {:?} wall {:.2}",
                j.name, j.classes, j.observed, j.wall_s
            );
        }
        assert!(r.iter().all(|j| j.success), "{r:?}");
        let first = |k: usize| r[k].classes.first().map(|c| c.1.clone());
        check!(
            first(0).as_deref() == Some("CS"),
            "balanced MPI job: {:?}",
            first(0)
        );
        check!(
            first(1).as_deref() == Some("F"),
            "imbalanced MPI job: {:?}",
            first(1)
        );
        check!(
            first(2).as_deref() == Some("DC"),
            "compute-bound MPI job: {:?}",
            first(2)
        );
        // classified from the library's statistics (rule 1), not /proc
        check!(
            r.iter()
                .all(|j| j.observed.as_ref().is_some_and(|o| o.sync_events.is_some())),
            "no synchronization statistics: {:?}",
            r.iter().map(|j| &j.observed).collect::<Vec<_>>()
        );
        Ok(())
    });
}
