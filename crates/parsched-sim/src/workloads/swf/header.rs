//! SWF header comments (`; Key: value`): the known keys parsed, every
//! field and note kept, and written back as comments.

use serde::{Deserialize, Serialize};

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
