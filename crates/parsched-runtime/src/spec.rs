//! What to run and what came out: [`RunSpec`], [`JobSpec`], [`JobReport`].
//! All serde, so a TOML job file maps onto a `RunSpec` directly:
//!
//! ```toml
//! policy = "gang"
//! slot = "50ms"
//!
//! [[jobs]]
//! argv = ["./bsp", "--threads", "2"]
//! width = 2
//!
//! [[jobs]]
//! name = "b"
//! argv = ["./b.out"]
//! env = { OMP_NUM_THREADS = "2" }
//! ```

use crate::cgroup::BackendKind;
use crate::controller::policy;
pub use crate::controller::{CoschedLayout, CoschedSpec, FcsSpec, RegionsSpec};
use parsched_core::policy::classify::CoschedClass;
use parsched_core::policy::gang::MatrixOptions;
use parsched_core::policy::pools::PoolPlacementConfig;
use parsched_core::schema::{Choice, KeyInfo, Kind, Schema, Typed, U32};
use parsched_core::topology::Topology;
use parsched_core::{field, ConfigError};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How jobs share the machine: the name of one of the runtime's policies
/// (`controller::policy::POLICIES`, where each is listed once with its doc;
/// `parsched run --help` shows them). An alias (`flexible` for `fcs`) is
/// taken as the policy's own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Policy(&'static str);

impl Policy {
    /// The policy called `name` (or one of its aliases).
    pub fn named(name: &str) -> Result<Policy, ConfigError> {
        policy::entry(name.trim())
            .map(|e| Policy(e.name))
            .ok_or_else(|| {
                ConfigError::new(
                    "policy",
                    format!("unknown policy {:?}", parsched_core::clip(name, 60)),
                    policy::names(),
                )
            })
    }

    /// Its name (as the spec and the reports spell it).
    pub fn name(self) -> &'static str {
        self.0
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy(policy::DEFAULT_POLICY)
    }
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::str::FromStr for Policy {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Policy, ConfigError> {
        Policy::named(s)
    }
}

impl Serialize for Policy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Policy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Policy, D::Error> {
        let name = String::deserialize(d)?;
        Policy::named(&name).map_err(serde::de::Error::custom)
    }
}

/// One job: a process tree started from `argv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// Display name; default `job<i>`.
    #[serde(default)]
    pub name: Option<String>,
    pub argv: Vec<String>,
    /// Gang width (cells of the matrix, threads to spread) and the desired
    /// parallelism for pool placement. Default: the number of processors.
    #[serde(default)]
    pub width: Option<u32>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Redirect standard output / error to these files (created, truncated).
    /// Standard input is always `/dev/null` (jobs run in their own process
    /// groups, where reading a terminal would stop them).
    #[serde(default)]
    pub stdout: Option<PathBuf>,
    #[serde(default)]
    pub stderr: Option<PathBuf>,
    /// FCS policy: a fixed class for this job (`requires_coscheduling`,
    /// `prefers_coscheduling`, `does_not_care`); the classifier is skipped.
    /// Default: decided from observation.
    #[serde(default)]
    pub fcs_class: Option<CoschedClass>,
}

impl JobSpec {
    pub fn new<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> JobSpec {
        JobSpec {
            argv: argv.into_iter().map(Into::into).collect(),
            ..Default::default()
        }
    }

    pub fn width(mut self, w: u32) -> JobSpec {
        self.width = Some(w);
        self
    }
}

/// How processors are grouped into pools (pools policy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct PoolsSpec {
    /// Equal pools of this many processors; default one pool per
    /// cache/NUMA domain of the topology.
    pub pool_size: Option<u32>,
    /// Explicit pool sizes (taking processors in order); overrides `pool_size`.
    pub sizes: Option<Vec<u32>>,
    pub placement: PoolPlacementConfig,
}

/// A run: jobs plus how to schedule them: the common keys, and each
/// policy's own table (`[fcs]`, `[cosched]`) read through its schema
/// ([`RunSpec`]'s `Deserialize`: the common keys by serde, each table key by
/// its policy's schema, errors naming `table.key`, or the flat spelling the
/// user gave).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
pub struct RunSpec {
    pub policy: Policy,
    /// Slot length (gang). Accepts `"50ms"`, `"0.05s"`, `"500us"` or a number
    /// of milliseconds.
    #[serde(
        serialize_with = "ser_duration",
        deserialize_with = "de_duration",
        alias = "slot_ms"
    )]
    pub slot: Duration,
    pub backend: BackendKind,
    /// Multiprogramming level (slots); jobs beyond it wait for room.
    pub max_slots: Option<u32>,
    pub matrix: MatrixOptions,
    /// Use only these OS CPUs (default: online ∩ allowed).
    pub cpus: Option<Vec<u32>>,
    /// An explicit topology (for tests and machines that misreport); its
    /// processors map to `cpus` (required then) in order.
    pub topology: Option<Topology>,
    pub pools: PoolsSpec,
    /// The regions policy's table `[regions]` (`controller::regions`'s
    /// schema: `cache_level`, `scan`, `place_after`, `replace_every`,
    /// `cpusets`).
    #[serde(skip)]
    pub regions: RegionsSpec,
    /// Run the controller at SCHED_FIFO where permitted.
    pub realtime: bool,
    pub rt_priority: i32,
    /// Spread the running gang's threads one per CPU at each slot.
    pub spread: bool,
    /// Wait until the kernel confirms the ending slot frozen before thawing
    /// the next (strict). With `false` (the default) the next slot is thawed
    /// as soon as the freeze is requested — no task of the old slot runs user
    /// code after that — and the confirmation is awaited afterwards. On a
    /// loaded machine confirmation takes a scheduler slice (≈3.5 ms) per
    /// switch, during which neither slot runs.
    pub confirm_freeze: bool,
    /// The FCS policy's table `[fcs]` (its keys: `controller::fcs`'s
    /// schema; the flat spellings `fcs_window_s`, `flexible_observe_s`,
    /// `dc_min_share`, ... are accepted at the top level too).
    #[serde(skip)]
    pub fcs: FcsSpec,
    /// The cosched policy's table `[cosched]` (`scheme`, `layout`,
    /// `spin_us`; also `cosched_scheme`, ... at the top level).
    #[serde(skip)]
    pub cosched: CoschedSpec,
    /// Fork a supervisor that thaws everything if the controller dies.
    pub supervisor: bool,
    /// Thaw stale groups of dead controllers before starting.
    pub recover: bool,
    pub jobs: Vec<JobSpec>,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            policy: Policy::default(),
            slot: Duration::from_millis(50),
            backend: BackendKind::Auto,
            max_slots: None,
            matrix: MatrixOptions::default(),
            cpus: None,
            topology: None,
            pools: PoolsSpec::default(),
            regions: RegionsSpec::default(),
            realtime: true,
            rt_priority: 10,
            spread: true,
            confirm_freeze: false,
            fcs: FcsSpec::default(),
            cosched: CoschedSpec::default(),
            supervisor: true,
            recover: true,
            jobs: Vec::new(),
        }
    }
}

impl RunSpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.jobs.is_empty() {
            return Err(ConfigError::new("jobs", "no job given", "at least one job"));
        }
        for (i, j) in self.jobs.iter().enumerate() {
            if j.argv.is_empty() || j.argv[0].is_empty() {
                return Err(ConfigError::new(
                    "argv",
                    format!("job {i} has no program"),
                    "a program and its arguments",
                ));
            }
            if j.width == Some(0) {
                return Err(ConfigError::new(
                    "width",
                    format!("job {i} has width 0"),
                    "width >= 1",
                ));
            }
        }
        if self.slot < Duration::from_millis(1) || self.slot > Duration::from_secs(3600) {
            return Err(ConfigError::new(
                "slot",
                format!("{:?}", self.slot),
                "1ms ..= 1h",
            ));
        }
        if !(1..=99).contains(&self.rt_priority) {
            return Err(ConfigError::new(
                "rt_priority",
                self.rt_priority.to_string(),
                "1..=99",
            ));
        }
        for f in policy::fragments() {
            (f.check)(self).map_err(|e| in_table(f.table, e))?;
        }
        self.pools.placement.validate()?;
        // Last, as when the gang matrix refused it for every policy (it is
        // built only for gang and FCS now).
        if self.max_slots == Some(0) {
            return Err(ConfigError::new(
                "max_slots",
                "a multiprogramming level of 0 admits no gang",
                "max_slots >= 1, or none for unbounded",
            ));
        }
        Ok(())
    }
}

type R = RunSpec;

/// The common keys of a run spec with a value of one kind (the policies'
/// tables are theirs; `matrix`, `cpus`, `topology`, `pools`, `regions` and
/// `jobs` are tables and lists: docs/runtime.md): described for
/// `parsched run --help` and Python (`run_keys`); read by serde.
pub(crate) static RUN_SCHEMA: Schema<RunSpec> = Schema {
    model: "run",
    fields: &[
        field!(
            R,
            "policy",
            custom(|r: &R| Typed::Choice(r.policy.name()), optional = false),
            Kind::Text,
            "",
            "",
            "",
            "how jobs share the machine: one of the runtime's policies"
        ),
        field!(
            R,
            "slot",
            custom(|r: &R| Typed::Text(show_duration(r.slot)), optional = false),
            Kind::Text,
            "",
            "",
            "",
            "slot length (gang, fcs) with its unit: 50ms, 0.05s, 500us \
             (also slot_ms, a number of ms)"
        ),
        field!(R, "backend", backend: choice, Kind::choice::<BackendKind>(), "", "", "",
            "how jobs are frozen: auto (cgroup v2, else v1, else signals), cgroup2, cgroup1, \
             signal (SIGSTOP/SIGCONT); mock only programmatically"),
        field!(R, "max_slots", max_slots: opt_u32, Kind::int_min(1, U32), "slots", "", "",
            "multiprogramming level: jobs beyond it wait for room; unset: unbounded"),
        field!(R, "realtime", realtime: bool, Kind::Bool, "", "", "",
            "run the controller at SCHED_FIFO where permitted"),
        field!(
            R,
            "rt_priority",
            custom(
                |r: &R| Typed::Int(r.rt_priority.max(0) as u64),
                optional = false
            ),
            Kind::Int { min: 1, max: 99 },
            "",
            "",
            "",
            "the controller's SCHED_FIFO priority"
        ),
        field!(R, "spread", spread: bool, Kind::Bool, "", "", "",
            "spread the running gang's threads one per CPU at each slot"),
        field!(R, "confirm_freeze", confirm_freeze: bool, Kind::Bool, "", "", "",
            "wait until the kernel confirms the ending slot frozen before thawing the next"),
        field!(R, "supervisor", supervisor: bool, Kind::Bool, "", "", "",
            "fork a supervisor that thaws everything if the controller dies"),
        field!(R, "recover", recover: bool, Kind::Bool, "", "", "",
            "thaw stale groups of dead controllers before starting"),
    ],
};

/// `50ms`, `1.5s`: a duration as a spec may give it.
pub(crate) fn show_duration(d: Duration) -> String {
    let us = d.as_micros();
    if us.is_multiple_of(1000) {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// The common keys of a run spec, described with their defaults (the
/// shape of the models' schemas): `policy` as a choice of every policy's
/// name and alias, `backend` of the backends a user may name.
pub fn run_keys() -> Vec<KeyInfo> {
    static POLICY_NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    static BACKENDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    let mut keys = RUN_SCHEMA.describe(&RunSpec::default());
    for k in &mut keys {
        match k.key {
            "policy" => {
                let names = POLICY_NAMES.get_or_init(|| {
                    policy::POLICIES
                        .iter()
                        .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
                        .collect()
                });
                k.kind = Kind::Choice { choices: names };
            }
            "backend" => {
                let mock = BackendKind::Mock.name();
                let names = BACKENDS.get_or_init(|| {
                    BackendKind::NAMES
                        .iter()
                        .copied()
                        .filter(|n| *n != mock)
                        .collect()
                });
                k.kind = Kind::Choice { choices: names };
            }
            _ => {}
        }
    }
    keys
}

/// `e` of a key of `[table]`, named `table.key`.
fn in_table(table: &str, mut e: ConfigError) -> ConfigError {
    e.field = format!("{table}.{}", e.field);
    e
}

/// A JSON (TOML, Python) value as the schemas take it.
fn user_value(field: &str, v: &serde_json::Value) -> Result<parsched_core::Value, ConfigError> {
    use parsched_core::Value;
    Ok(match v {
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(t) => Value::Str(t.clone()),
        serde_json::Value::Array(xs) => Value::List(
            xs.iter()
                .map(|x| x.as_f64())
                .collect::<Option<Vec<f64>>>()
                .ok_or_else(|| ConfigError::new(field, "not a list of numbers", "a value"))?,
        ),
        other => {
            return Err(ConfigError::new(
                field,
                format!("{other} is not a single value"),
                "a number, a boolean or text",
            ))
        }
    })
}

/// Takes each policy's table, and the flat spellings of its keys, out of
/// `map`: `(fragment, [(key, spelling the user gave, value)])`.
type Tables = Vec<(
    &'static policy::Fragment,
    Vec<(String, String, serde_json::Value)>,
)>;

fn take_tables(
    map: &mut serde_json::Map<String, serde_json::Value>,
) -> Result<Tables, ConfigError> {
    let mut out = Vec::new();
    for f in policy::fragments() {
        let mut keys = Vec::new();
        match map.remove(f.table) {
            None => {}
            Some(serde_json::Value::Object(t)) => {
                for (k, v) in t {
                    keys.push((k.clone(), format!("{}.{k}", f.table), v));
                }
            }
            Some(_) => {
                return Err(ConfigError::new(
                    f.table,
                    "not a table",
                    format!("a [{}] table of keys", f.table),
                ))
            }
        }
        for &(flat, key) in f.flat {
            if let Some(v) = map.remove(flat) {
                if keys.iter().any(|(k, _, _)| k == key) {
                    return Err(ConfigError::new(
                        flat,
                        format!("given twice, also as {}.{key}", f.table),
                        format!("one of {flat} and [{}] {key}", f.table),
                    ));
                }
                keys.push((key.to_string(), flat.to_string(), v));
            }
        }
        out.push((f, keys));
    }
    Ok(out)
}

impl<'de> Deserialize<'de> for RunSpec {
    /// The common keys by serde; each policy's table (and the flat
    /// spellings of its keys) through the policy's schema, errors naming
    /// the key as given (`fcs.window_s`, or `fcs_window_s`).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RunSpec, D::Error> {
        use serde::de::Error;
        let mut map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let tables = take_tables(&mut map).map_err(D::Error::custom)?;
        let mut spec =
            RunSpec::deserialize(serde_json::Value::Object(map)).map_err(D::Error::custom)?;
        for (f, keys) in tables {
            for (key, given, v) in keys {
                let named = |mut e: ConfigError| {
                    if e.field == key || e.message == "unknown key" {
                        e.field = given.clone();
                    }
                    e
                };
                let v = user_value(&given, &v).map_err(D::Error::custom)?;
                (f.set)(&mut spec, &key, &v)
                    .map_err(named)
                    .map_err(D::Error::custom)?;
            }
        }
        Ok(spec)
    }
}

impl Serialize for RunSpec {
    /// The common keys by serde, each policy's table by its schema.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let mut v =
            RunSpec::serialize(self, serde_json::value::Serializer).map_err(S::Error::custom)?;
        if let Some(map) = v.as_object_mut() {
            for f in policy::fragments() {
                map.insert(f.table.to_string(), (f.values)(self).into());
            }
        }
        v.serialize(s)
    }
}

/// Parses `50ms`, `0.05s`, `500us`, `2m`, or a bare number of milliseconds.
pub fn parse_duration(s: &str) -> Result<Duration, ConfigError> {
    let t = s.trim();
    let bad = || {
        ConfigError::new(
            "slot",
            format!("cannot parse {s:?}"),
            "e.g. 50ms, 0.05s, 500us",
        )
    };
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit.trim() {
        "" | "ms" => x / 1e3,
        "s" => x,
        "us" | "µs" => x / 1e6,
        "ns" => x / 1e9,
        "m" | "min" => x * 60.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

fn ser_duration<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{}us", d.as_micros()))
}

fn de_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Num(f64),
        Str(String),
    }
    match Raw::deserialize(d)? {
        Raw::Num(ms) if ms >= 0.0 && ms.is_finite() => Ok(Duration::from_secs_f64(ms / 1e3)),
        Raw::Num(ms) => Err(serde::de::Error::custom(format!("bad slot {ms}"))),
        Raw::Str(s) => parse_duration(&s).map_err(serde::de::Error::custom),
    }
}

/// How a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitStatus {
    /// Exit code if it exited.
    pub code: Option<i32>,
    /// Signal number if it was killed by a signal.
    pub signal: Option<i32>,
}

impl ExitStatus {
    pub fn from_wait(status: i32) -> ExitStatus {
        if libc::WIFEXITED(status) {
            ExitStatus {
                code: Some(libc::WEXITSTATUS(status)),
                signal: None,
            }
        } else if libc::WIFSIGNALED(status) {
            ExitStatus {
                code: None,
                signal: Some(libc::WTERMSIG(status)),
            }
        } else {
            ExitStatus {
                code: None,
                signal: None,
            }
        }
    }

    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// What happened to one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobReport {
    pub name: String,
    pub argv: Vec<String>,
    pub pid: i32,
    pub status: ExitStatus,
    pub success: bool,
    /// From start to exit, seconds.
    pub wall_s: f64,
    /// User and system CPU time of the job's process tree, seconds: the
    /// `wait4` rusage of the leader (which includes its reaped descendants),
    /// or the cgroup v2 group's `cpu.stat` when that saw more (descendants
    /// never reaped by the leader).
    pub user_s: f64,
    pub sys_s: f64,
    /// Time spent frozen, seconds.
    pub suspended_s: f64,
    /// Gang width used (cells).
    pub width: u32,
    /// Slots this job held (gang) and the times it was thawed.
    pub slots_run: u64,
    /// OS CPUs the job was allowed (pools) or last spread over (gang).
    pub cpus: Vec<u32>,
    /// Home pool (pools policy).
    pub pool: Option<u32>,
    /// Regions policy: the job's last working-set estimate, bytes (the core
    /// crate's `WssEstimator` over /proc scans).
    #[serde(default)]
    pub wss_bytes: Option<u64>,
    /// Regions policy: why `wss_bytes` is unreliable, when it is — another
    /// user of the page accessed bits (a kernel DAMON monitor, named) cleared
    /// them during the job's scans, so the estimate can be low
    /// (`crate::damon`). `None`: every scan was clean (or no estimate).
    #[serde(default)]
    pub wss_unreliable: Option<String>,
    /// FCS policy: whether the job's last class keeps it gang scheduled
    /// (`true`: CS or F) or released to fill idle time (`false`: DC); `None`
    /// otherwise or if it ended before it was classified.
    #[serde(default)]
    pub coscheduled: Option<bool>,
    /// FCS policy: the job's classes over time, `(t_s, class)` with `t_s`
    /// seconds since the run started and `class` FCS's short name (`CS`,
    /// `F`, `DC`); the first entry is the decision after discovery. Empty
    /// otherwise.
    #[serde(default)]
    pub classes: Vec<(f64, String)>,
    /// FCS policy: what the classifier was given, summed over all observed
    /// periods — voluntary and involuntary context switches, CPU seconds,
    /// blocked thread-seconds, observed seconds and thread-seconds.
    #[serde(default)]
    pub observed: Option<parsched_core::policy::classify::Observation>,
    /// Cosched policy: `(MPI rank, CPU)` for each rank the controller pinned
    /// (layout `workstations`), in rank order. Empty otherwise.
    #[serde(default)]
    pub ranks: Vec<(u32, u32)>,
}

impl JobReport {
    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parsched_core::policy::classify::ClassifierConfig;

    fn parse(text: &str) -> Result<RunSpec, String> {
        toml::from_str::<RunSpec>(text).map_err(|e| e.to_string())
    }

    #[test]
    fn cosched_takes_the_ten_schemes_by_name_and_refuses_the_references() {
        let spec = parse(
            "policy = \"cosched\"\ncosched_scheme = \"SB\"\ncosched_layout = \"free\"\n\
             cosched_spin_us = 30\n[[jobs]]\nargv = [\"true\"]\n",
        )
        .unwrap();
        assert_eq!(spec.policy.name(), "cosched");
        assert_eq!(spec.cosched.layout, CoschedLayout::Free);
        assert_eq!(spec.cosched.spin_us, 30);
        spec.validate().unwrap();
        // the same keys in the policy's table
        let table = parse(
            "policy = \"cosched\"\n[cosched]\nscheme = \"sb\"\nlayout = \"free\"\n\
             spin_us = 30\n[[jobs]]\nargv = [\"true\"]\n",
        )
        .unwrap();
        assert_eq!(table, spec);
        for name in ["DCS", "DCS-SB", "DCS-SY", "SY", "Local"] {
            let mut s = spec.clone();
            s.cosched.scheme = name.parse().unwrap();
            s.validate().unwrap();
        }
        for name in ["gang", "FCFS"] {
            // a reference schedule: refused when read, naming the key as given
            let e = parse(&format!("cosched_scheme = \"{name}\"")).unwrap_err();
            assert!(e.starts_with("cosched_scheme: "), "{e}");
            assert!(
                e.contains("DCS, DCS-SB, PB, PBT, PB-SB, SY, DCS-SY, PB-SY"),
                "{e}"
            );
            let e = parse(&format!("[cosched]\nscheme = \"{name}\"")).unwrap_err();
            assert!(e.starts_with("cosched.scheme: "), "{e}");
            // and by validate, when set in Rust
            let mut s = spec.clone();
            s.cosched.scheme = name.parse().unwrap();
            assert_eq!(s.validate().unwrap_err().field, "cosched.scheme", "{name}");
        }
        // a periodic boost acts per CPU: only with the ranks pinned
        let mut pb = spec.clone();
        pb.cosched.scheme = "PB".parse().unwrap();
        assert_eq!(pb.validate().unwrap_err().field, "cosched.layout");
        pb.cosched.layout = CoschedLayout::Workstations;
        pb.validate().unwrap();
    }

    #[test]
    fn an_unknown_key_of_a_policys_table_is_named_with_its_table_in_one_line() {
        let e = parse("policy = \"fcs\"\n[fcs]\nwindow_sz = 2.0\n").unwrap_err();
        let first = e.lines().next().unwrap();
        assert!(
            first.starts_with("fcs.window_sz: unknown key; allowed: "),
            "{e}"
        );
        for key in ["blocking_rate", "window_s", "dc_min_share", "sync_stats"] {
            assert!(first.contains(key), "{e}");
        }
        let e = parse("[cosched]\nspin_us = -1\n").unwrap_err();
        assert!(e.starts_with("cosched.spin_us: "), "{e}");
        // ranges: checked by validate, naming the table's key
        for (text, field) in [
            ("place_after = 0", "regions.place_after"),
            ("cache_level = 0", "regions.cache_level"),
            ("scan = \"10us\"", "regions.scan"),
        ] {
            let s = parse(&format!("[regions]\n{text}\n[[jobs]]\nargv = [\"true\"]\n")).unwrap();
            assert_eq!(s.validate().unwrap_err().field, field);
        }
        let e = parse("[regions]\nscan = \"fast\"\n").unwrap_err();
        assert!(e.starts_with("regions.scan: "), "{e}");
        let r = parse("[regions]\ncache_level = 2\nscan_ms = 5\ncpusets = false\n").unwrap();
        assert_eq!(r.regions.cache_level, Some(2));
        assert_eq!(r.regions.scan, Duration::from_millis(5));
        assert!(!r.regions.cpusets);
        let back: RunSpec = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
        let e = parse("fcs = 3\n").unwrap_err();
        assert!(e.starts_with("fcs: not a table"), "{e}");
        let e = parse("fcs_window_s = 2.0\n[fcs]\nwindow_s = 1.0\n").unwrap_err();
        assert!(e.starts_with("fcs_window_s: given twice"), "{e}");
        let e = parse("policy = \"fifo\"\n").unwrap_err();
        assert!(e.contains("policy: unknown policy"), "{e}");
        assert!(
            e.contains("gang, pools, fcs, flexible (= fcs), regions"),
            "{e}"
        );
    }

    #[test]
    fn old_flat_keys_parse_to_the_same_spec_as_the_tables() {
        let flat = parse(
            "policy = \"fcs\"\nflexible_blocking_rate = 7.0\nfcs_observe_s = 0.5\n\
             fcs_window_s = 2.0\nfcs_revise_after = 3\nfcs_coarse_grain_s = 0.02\n\
             fcs_frustrated_wait_ratio = 0.5\ndc_min_share = 0.25\nfcs_fill_idle = true\n\
             fcs_discovery_fill = true\nfcs_sync_stats = false\ncosched_spin_us = 7\n",
        )
        .unwrap();
        let table = parse(
            "policy = \"fcs\"\n[fcs]\nblocking_rate = 7\nobserve_s = 0.5\nwindow_s = 2\n\
             revise_after = 3\ncoarse_grain_s = 0.02\nfrustrated_wait_ratio = 0.5\n\
             dc_min_share = 0.25\nfill_idle = true\ndiscovery_fill = true\n\
             sync_stats = false\n[cosched]\nspin_us = 7\n",
        )
        .unwrap();
        assert_eq!(flat, table);
        assert_ne!(flat.fcs, FcsSpec::default());
        // every flat spelling of every table is one of its keys
        for f in policy::fragments() {
            let keys: Vec<&str> = (f.describe)().iter().map(|k| k.key).collect();
            for (flat, key) in f.flat {
                assert!(keys.contains(key), "{flat} -> {key}");
            }
        }
    }

    #[test]
    fn the_common_keys_are_described_from_their_tables() {
        let keys = run_keys();
        let key = |k: &str| keys.iter().find(|i| i.key == k).unwrap().clone();
        let Kind::Choice { choices } = key("policy").kind else {
            panic!("policy is a choice")
        };
        for e in policy::POLICIES {
            assert!(choices.contains(&e.name), "{}", e.name);
        }
        assert!(choices.contains(&"flexible"));
        assert_eq!(key("policy").default, Typed::Choice("gang"));
        assert_eq!(key("slot").default, Typed::Text("50ms".into()));
        let Kind::Choice { choices } = key("backend").kind else {
            panic!("backend is a choice")
        };
        assert_eq!(choices, ["auto", "cgroup2", "cgroup1", "signal"]);
        // the backend's names are the ones serde reads and writes
        let s: RunSpec = toml::from_str("backend = \"cgroup1\"").unwrap();
        assert_eq!(s.backend, BackendKind::Cgroup1);
        assert!(serde_json::to_string(&s)
            .unwrap()
            .contains("\"backend\":\"cgroup1\""));
        let e = toml::from_str::<RunSpec>("backend = \"cgroup3\"").unwrap_err();
        assert!(e.to_string().contains("backend: unknown backend"), "{e}");
        assert_eq!(key("rt_priority").default, Typed::Int(10));
        assert_eq!(key("max_slots").default, Typed::None);
    }

    #[test]
    fn max_slots_zero_is_refused_under_every_policy() {
        for e in policy::POLICIES {
            let policy = Policy::named(e.name).unwrap();
            let mut s = RunSpec {
                policy,
                max_slots: Some(0),
                jobs: vec![JobSpec::new(["true"])],
                ..Default::default()
            };
            assert_eq!(s.validate().unwrap_err().field, "max_slots", "{policy:?}");
            s.max_slots = Some(1);
            assert!(s.validate().is_ok(), "{policy:?}");
        }
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("50ms").unwrap(), Duration::from_millis(50));
        assert_eq!(parse_duration("0.05s").unwrap(), Duration::from_millis(50));
        assert_eq!(parse_duration("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("20").unwrap(), Duration::from_millis(20));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn toml_job_file_maps_onto_run_spec() {
        let text = r#"
            policy = "gang"
            slot = "20ms"
            backend = "cgroup1"
            max_slots = 3

            [matrix]
            slot_allocation = "best_fit"

            [[jobs]]
            argv = ["./bsp", "--threads", "2"]
            width = 2

            [[jobs]]
            name = "b"
            argv = ["./b.out", "x"]
            env = { OMP_NUM_THREADS = "2" }
            stdout = "b.log"
        "#;
        let s: RunSpec = toml::from_str(text).unwrap();
        assert_eq!(s.policy.name(), "gang");
        assert_eq!(s.slot, Duration::from_millis(20));
        assert_eq!(s.backend, BackendKind::Cgroup1);
        assert_eq!(s.max_slots, Some(3));
        assert_eq!(
            s.matrix.slot_allocation,
            parsched_core::policy::gang::SlotAllocation::BestFit
        );
        assert_eq!(s.jobs.len(), 2);
        assert_eq!(s.jobs[0].width, Some(2));
        assert_eq!(s.jobs[1].env["OMP_NUM_THREADS"], "2");
        assert_eq!(s.jobs[1].stdout, Some(PathBuf::from("b.log")));
        assert!(s.realtime && s.supervisor);
        s.validate().unwrap();
        // Round trip through JSON (what the bindings use).
        let j = serde_json::to_string(&s).unwrap();
        let back: RunSpec = serde_json::from_str(&j).unwrap();
        assert_eq!(back, s);
        // Pools options.
        let p: RunSpec = toml::from_str(
            "policy = \"pools\"\nslot_ms = 10\n[pools]\npool_size = 1\n[pools.placement]\nspanning = { kind = \"none\" }\nparallelism = { kind = \"unrestricted\" }\nf_rounding = \"nearest\"\ng_rounding = \"nearest\"\ntie_break = \"lowest_index\"\n[[jobs]]\nargv = [\"true\"]\n",
        )
        .unwrap();
        assert_eq!(p.slot, Duration::from_millis(10));
        assert_eq!(p.pools.pool_size, Some(1));
    }

    #[test]
    fn validation_names_the_field() {
        let mut s = RunSpec::default();
        assert_eq!(s.validate().unwrap_err().field, "jobs");
        s.jobs.push(JobSpec::new(["x"]).width(0));
        assert_eq!(s.validate().unwrap_err().field, "width");
        s.jobs[0].width = Some(1);
        s.slot = Duration::from_micros(10);
        assert_eq!(s.validate().unwrap_err().field, "slot");
        assert!(toml::from_str::<RunSpec>("polcy = \"gang\"").is_err());
        s.slot = Duration::from_millis(50);
        s.validate().unwrap();
        s.fcs.blocking_rate = -1.0;
        assert_eq!(s.validate().unwrap_err().field, "fcs.blocking_rate");
        s.fcs.blocking_rate = 25.0;
        s.fcs.observe_s = f64::NAN;
        assert_eq!(s.validate().unwrap_err().field, "fcs.observe_s");
        s.fcs.observe_s = 0.2;
        s.fcs.revise_after = 0;
        assert_eq!(s.validate().unwrap_err().field, "fcs.revise_after");
        s.fcs.revise_after = 2;
        s.fcs.window_s = -1.0;
        assert_eq!(s.validate().unwrap_err().field, "fcs.window_s");
        s.fcs.window_s = 1.0;
        s.fcs.dc_min_share = 1.5;
        assert_eq!(s.validate().unwrap_err().field, "fcs.dc_min_share");
        s.fcs.dc_min_share = 0.1;
        s.validate().unwrap();
    }

    #[test]
    fn flexible_is_an_alias_of_fcs() {
        let s: RunSpec = toml::from_str(
            "policy = \"flexible\"\nfcs_window_s = 2.0\nfcs_revise_after = 3\ndc_min_share = 0.25\n[[jobs]]\nargv = [\"true\"]\nfcs_class = \"does_not_care\"\n",
        )
        .unwrap();
        assert_eq!(s.policy.name(), "fcs");
        let c = s.fcs.classifier_config();
        assert_eq!((c.window_s, c.revise_after), (2.0, 3));
        assert_eq!(s.fcs.dc_min_share, 0.25);
        assert_eq!(s.jobs[0].fcs_class, Some(CoschedClass::DoesNotCare));
        let f: RunSpec =
            serde_json::from_str(r#"{"policy": "fcs", "fcs_blocking_rate": 7}"#).unwrap();
        assert_eq!(f.policy.name(), "fcs");
        assert_eq!(f.fcs.blocking_rate, 7.0);
        assert_eq!(serde_json::to_string(&f.policy).unwrap(), "\"fcs\"");
    }

    #[test]
    fn flexible_keys_map_onto_the_classifier() {
        // The defaults are the classifier's and the keys keep their names.
        let d = RunSpec::default();
        assert_eq!(d.fcs.blocking_rate, 25.0);
        assert_eq!(d.fcs.observe_s, 0.2);
        let c = d.fcs.classifier_config();
        assert_eq!(c.blocking_rate, ClassifierConfig::default().blocking_rate);
        assert_eq!(c.discovery_s, ClassifierConfig::default().discovery_s);
        let s: RunSpec = toml::from_str(
            "policy = \"fcs\"\nflexible_blocking_rate = 40.0\nflexible_observe_s = 0.5\n[[jobs]]\nargv = [\"true\"]\n",
        )
        .unwrap();
        assert_eq!(s.fcs.classifier_config().blocking_rate, 40.0);
        assert_eq!(s.fcs.classifier_config().discovery_s, 0.5);
        let j: RunSpec =
            serde_json::from_str(r#"{"policy": "flexible", "flexible_blocking_rate": 10}"#)
                .unwrap();
        assert_eq!(j.fcs.classifier_config().blocking_rate, 10.0);
    }
}
