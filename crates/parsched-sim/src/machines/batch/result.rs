//! What a batch run produces: per-job [`Outcome`]s, the [`BatchSummary`]
//! metrics, the [`BatchResult`] and its exports (Batsim's jobs CSV, SWF).

use super::BatchConfig;
use crate::workloads::swf::{BatchJob, LoadReport, SwfHeader, SwfRecord, SwfWriter};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::time::Instant;

/// What happened to one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub start: u64,
    pub end: u64,
    /// Killed at its requested time (`kill_on_overrun`).
    pub killed: bool,
    /// Gang: the matrix slot the job ran in, from admission to its end (0
    /// under space sharing).
    pub slot: u32,
}

/// Aggregate metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct BatchSummary {
    pub jobs: u64,
    pub procs: u32,
    pub avg_wait: f64,
    pub max_wait: u64,
    pub avg_response: f64,
    pub avg_slowdown: f64,
    pub avg_bounded_slowdown: f64,
    pub utilization: f64,
    pub makespan: u64,
    pub first_submit: u64,
    pub last_end: u64,
    pub killed: u64,
    pub max_queue: u32,
    /// Time-averaged queue length over the makespan.
    pub avg_queue: f64,
    /// Gang: slot switches.
    pub slot_switches: u64,
    pub wall_seconds: f64,
    /// Gang: engine events (what `max_events` bounds; 0 under space
    /// sharing). Not exported.
    #[serde(skip)]
    pub events: u64,
}

/// The schedule and its metrics.
#[derive(Debug, Clone)]
pub struct BatchResult {
    pub policy: &'static str,
    pub procs: u32,
    pub bsld_tau: f64,
    /// The jobs as run, sorted by submit time.
    pub jobs: Vec<BatchJob>,
    /// `outcomes[i]` is `jobs[i]`'s.
    pub outcomes: Vec<Outcome>,
    /// `(time, queue length)` at every change, starting at the first submit.
    pub queue_length: Vec<(u64, u32)>,
    pub summary: BatchSummary,
    /// Loading counts (empty for a job list given directly).
    pub report: LoadReport,
    /// The trace's header (default for a job list given directly).
    pub header: SwfHeader,
    /// A full-control policy's violations, dropped in repair mode (empty
    /// otherwise; `machines::batch::select`).
    pub violations: Vec<parsched_core::policy::batch::select::Violation>,
    /// Processor intervals per job: `resources[res_index[i]..res_index[i+1]]`
    /// (empty when not tracked).
    resources: Vec<(u32, u32)>,
    res_index: Vec<u32>,
}

/// Column names of the jobs CSV: Batsim's `_jobs.csv` (read by evalys).
pub const JOBS_CSV_COLUMNS: &[&str] = &[
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
];

/// One row of the jobs CSV.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRow {
    pub job_id: i64,
    pub submission_time: u64,
    pub requested_number_of_resources: u32,
    pub requested_time: u64,
    pub success: bool,
    /// `COMPLETED_SUCCESSFULLY` or `COMPLETED_WALLTIME_REACHED` (killed).
    pub final_state: &'static str,
    pub starting_time: u64,
    pub execution_time: u64,
    pub finish_time: u64,
    pub waiting_time: u64,
    pub turnaround_time: u64,
    /// turnaround / execution (Batsim's definition; infinite for an
    /// execution time of 0 with a positive turnaround, 1 if both are 0).
    pub stretch: f64,
    pub bounded_slowdown: f64,
    /// Batsim interval set, e.g. `0-3 8 10-11` (empty if not tracked).
    pub allocated_resources: String,
}

impl BatchResult {
    /// The processors given to job `i` as intervals (inclusive).
    pub fn resources(&self, i: usize) -> &[(u32, u32)] {
        if self.res_index.len() <= i + 1 {
            return &[];
        }
        &self.resources[self.res_index[i] as usize..self.res_index[i + 1] as usize]
    }

    /// Executed time of job `i` (its run time, or requested time if killed).
    pub fn run_time(&self, i: usize) -> u64 {
        let j = &self.jobs[i];
        if self.outcomes[i].killed {
            j.requested
        } else {
            j.runtime
        }
    }

    /// The jobs CSV rows, in job order.
    pub fn job_rows(&self) -> impl Iterator<Item = JobRow> + '_ {
        (0..self.jobs.len()).map(move |i| {
            let j = &self.jobs[i];
            let o = &self.outcomes[i];
            let exec = o.end - o.start;
            let turn = o.end - j.submit;
            let stretch = if exec > 0 {
                turn as f64 / exec as f64
            } else if turn > 0 {
                f64::INFINITY
            } else {
                1.0
            };
            let run = self.run_time(i);
            let bsld = (turn as f64 / (run as f64).max(self.bsld_tau)).max(1.0);
            let res = self
                .resources(i)
                .iter()
                .map(|&(a, b)| {
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            JobRow {
                job_id: j.id,
                submission_time: j.submit,
                requested_number_of_resources: j.procs,
                requested_time: j.requested,
                success: !o.killed,
                final_state: if o.killed {
                    "COMPLETED_WALLTIME_REACHED"
                } else {
                    "COMPLETED_SUCCESSFULLY"
                },
                starting_time: o.start,
                execution_time: exec,
                finish_time: o.end,
                waiting_time: o.start - j.submit,
                turnaround_time: turn,
                stretch,
                bounded_slowdown: bsld,
                allocated_resources: res,
            }
        })
    }

    /// Writes the jobs CSV (Batsim's columns, in its order).
    pub fn write_jobs_csv<W: Write>(&self, mut w: W) -> io::Result<()> {
        writeln!(w, "{}", JOBS_CSV_COLUMNS.join(","))?;
        for r in self.job_rows() {
            let stretch = if r.stretch.is_infinite() {
                "inf".to_string()
            } else {
                format!("{}", r.stretch)
            };
            writeln!(
                w,
                "{},w0,{},{},{},{},{},{},{},{},{},{},{},{},{},-1,",
                r.job_id,
                if r.success { "delay" } else { "delay_killed" },
                r.submission_time,
                r.requested_number_of_resources,
                r.requested_time,
                r.success as u8,
                r.final_state,
                r.starting_time,
                r.execution_time,
                r.finish_time,
                r.waiting_time,
                r.turnaround_time,
                stretch,
                r.allocated_resources
            )?;
        }
        w.flush()
    }

    /// The schedule as SWF records: wait time and run time as simulated,
    /// status 1 (completed) or 0 (killed at the requested time).
    pub fn records(&self) -> impl Iterator<Item = SwfRecord> + '_ {
        (0..self.jobs.len()).map(move |i| {
            let j = &self.jobs[i];
            let o = &self.outcomes[i];
            SwfRecord {
                wait_time: (o.start - j.submit) as i64,
                run_time: (o.end - o.start) as i64,
                status: if o.killed { 0 } else { 1 },
                ..j.to_record()
            }
        })
    }

    /// Writes the schedule as an SWF trace (the input's header plus a note).
    pub fn write_swf<W: Write>(&self, w: W) -> io::Result<()> {
        let mut h = self.header.clone();
        h.notes.push(format!(
            "schedule simulated by parsched: policy={} procs={}",
            self.policy, self.procs
        ));
        if h.max_procs.is_none() {
            h.fields.push(("MaxProcs".into(), self.procs.to_string()));
            h.max_procs = Some(self.procs as u64);
        }
        let mut sw = SwfWriter::new(w, &h)?;
        for r in self.records() {
            sw.write(&r)?;
        }
        sw.finish().map(|_| ())
    }

    /// Everything but the wall-clock time, for determinism checks.
    pub fn same_schedule(&self, other: &BatchResult) -> bool {
        let mut a = self.summary.clone();
        let mut b = other.summary.clone();
        a.wall_seconds = 0.0;
        b.wall_seconds = 0.0;
        a == b
            && self.outcomes == other.outcomes
            && self.queue_length == other.queue_length
            && self.resources == other.resources
    }
}

/// The queue length as a step series: one point per change.
pub(super) struct Series {
    pub(super) points: Vec<(u64, u32)>,
}

impl Series {
    pub(super) fn record(&mut self, t: u64, len: u32) {
        match self.points.last_mut() {
            Some(last) if last.1 == len => {}
            Some(last) if last.0 == t => {
                last.1 = len;
                // Merge with the previous point if equal again.
                let n = self.points.len();
                if n >= 2 && self.points[n - 2].1 == len {
                    self.points.pop();
                }
            }
            _ => self.points.push((t, len)),
        }
    }
}

/// The result of a run: per-job outcomes plus the metrics computed from them.
#[allow(clippy::too_many_arguments)]
pub(super) fn finish(
    policy: &'static str,
    procs: u32,
    cfg: &BatchConfig,
    jobs: Vec<BatchJob>,
    outcomes: Vec<Outcome>,
    queue_length: Vec<(u64, u32)>,
    slot_switches: u64,
    resources: Vec<(u32, u32)>,
    res_index: Vec<u32>,
    wall: Instant,
) -> BatchResult {
    let n = jobs.len();
    let tau = cfg.bsld_tau;
    let mut s = BatchSummary {
        jobs: n as u64,
        procs,
        slot_switches,
        ..BatchSummary::default()
    };
    let (mut wait, mut resp, mut sld, mut bsld, mut work) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let first = jobs.first().map_or(0, |j| j.submit);
    let mut last = first;
    for (j, o) in jobs.iter().zip(&outcomes) {
        let run = if o.killed { j.requested } else { j.runtime } as f64;
        let w = o.start - j.submit;
        let r = (o.end - j.submit) as f64;
        wait += w as f64;
        s.max_wait = s.max_wait.max(w);
        resp += r;
        sld += r / run.max(1.0);
        bsld += (r / run.max(tau)).max(1.0);
        work += j.procs as f64 * run;
        last = last.max(o.end);
        s.killed += o.killed as u64;
    }
    if n > 0 {
        let nf = n as f64;
        s.avg_wait = wait / nf;
        s.avg_response = resp / nf;
        s.avg_slowdown = sld / nf;
        s.avg_bounded_slowdown = bsld / nf;
    }
    s.first_submit = first;
    s.last_end = last;
    s.makespan = last - first;
    if s.makespan > 0 {
        s.utilization = work / (procs as f64 * s.makespan as f64);
        let mut area = 0.0;
        for w in queue_length.windows(2) {
            area += w[0].1 as f64 * (w[1].0 - w[0].0) as f64;
        }
        if let Some(&(t, q)) = queue_length.last() {
            area += q as f64 * last.saturating_sub(t) as f64;
        }
        s.avg_queue = area / s.makespan as f64;
    }
    s.max_queue = queue_length.iter().map(|p| p.1).max().unwrap_or(0);
    s.wall_seconds = wall.elapsed().as_secs_f64();
    BatchResult {
        policy,
        procs,
        bsld_tau: tau,
        jobs,
        outcomes,
        queue_length,
        summary: s,
        report: LoadReport::default(),
        header: SwfHeader::default(),
        violations: Vec::new(),
        resources,
        res_index,
    }
}
