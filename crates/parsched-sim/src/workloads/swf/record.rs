//! SWF job records: the 18 fields of a job line ([`SwfRecord`]), their
//! parsing (errors naming the line and field) and the archive's layout.

use super::{ExtraFields, SwfError};
use serde::{Deserialize, Serialize};
use std::fmt;

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
