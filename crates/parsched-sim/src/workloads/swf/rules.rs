//! From records to jobs: [`BatchJob`] (a rigid job as the batch machine
//! runs it), [`SwfRules`] (one selectable rule per quirk of real logs) and
//! the [`LoadReport`] counting what they dropped or repaired, and why.

use super::SwfRecord;
use serde::{Deserialize, Serialize};

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
