//! The machine's topology read from sysfs, as a `parsched_core` [`Topology`].
//!
//! Processors are the online CPUs this process may run on (the online mask
//! intersected with `sched_getaffinity`, or an explicit list), numbered
//! `ProcId(0..n)` in increasing OS CPU number; [`MachineTopology::cpus`] maps
//! them back. A *core* is a distinct `(physical_package_id, core_id)`; a
//! *domain* is a distinct (NUMA node, last-level-cache sharing set) pair, the
//! LLC being the highest-level unified or data cache in `cache/index*/`; the
//! whole machine is `NodeId(0)` (nodes are cluster machines in the core
//! vocabulary). Missing files degrade gracefully: no `topology/` → one core per
//! CPU, no cache info → one domain per NUMA node, no `node/` → NUMA node 0.
//!
//! The topology also carries the machine's data and unified caches as core
//! [`CacheDomain`]s (level, size, ways, line, the processors each serves:
//! `cache/index*/{level,type,size,ways_of_associativity,
//! coherency_line_size,shared_cpu_list}`), one per distinct (level, sharing
//! set), the sharing set restricted to the processors in use. A cache whose
//! geometry does not add up (no ways, a size not a whole number of sets) is
//! taken as fully associative; one without a size is left out.
//!
//! The reader takes a root directory so tests can build a fake tree.

use crate::error::{Result, RuntimeError};
use parsched_core::topology::{CacheDomain, ProcInfo, Topology};
use parsched_core::{CoreId, DomainId, NodeId, ProcId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// A topology plus the OS CPU number of each processor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineTopology {
    pub topology: Topology,
    /// `cpus[i]` is the OS CPU number of `ProcId(i)`.
    pub cpus: Vec<u32>,
    /// NUMA node of each processor.
    pub numa: Vec<u32>,
}

impl MachineTopology {
    /// The OS CPU of a processor.
    pub fn cpu(&self, p: ProcId) -> u32 {
        self.cpus[p.idx()]
    }

    /// An explicit topology over explicit OS CPUs (for tests and machines that
    /// misreport). `cpus.len()` must equal the number of processors.
    pub fn explicit(topology: Topology, cpus: Vec<u32>) -> Result<MachineTopology> {
        if cpus.len() != topology.num_procs() as usize {
            return Err(parsched_core::ConfigError::new(
                "cpus",
                format!(
                    "{} CPUs for a topology of {} processors",
                    cpus.len(),
                    topology.num_procs()
                ),
                "one OS CPU per processor",
            )
            .into());
        }
        let numa = vec![0; cpus.len()];
        Ok(MachineTopology {
            topology,
            cpus,
            numa,
        })
    }
}

/// Parses a kernel CPU list such as `0-3,8,10-11` (empty string → empty).
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>> {
    let bad = || {
        RuntimeError::from(parsched_core::ConfigError::new(
            "cpu list",
            format!("cannot parse {s:?}"),
            "a list like 0-3,8,10-11",
        ))
    };
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().map_err(|_| bad())?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Formats CPUs as a kernel CPU list (`0-3,8`).
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// The CPUs the calling thread may run on (`sched_getaffinity`).
pub fn allowed_cpus() -> Result<Vec<u32>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(RuntimeError::last_os("sched_getaffinity"));
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .map(|c| c as u32)
            .collect())
    }
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

fn read_int(p: &Path) -> Option<i64> {
    read_trim(p)?.parse().ok()
}

/// Reads the topology under `root` (a directory standing for `/`), restricted
/// to `allowed` if given (else all online CPUs).
pub fn read_topology(root: &Path, allowed: Option<&[u32]>) -> Result<MachineTopology> {
    let sys_cpu = root.join("sys/devices/system/cpu");
    let online = match read_trim(&sys_cpu.join("online")) {
        Some(s) => parse_cpu_list(&s)?,
        None => {
            // No online mask: every cpuN directory.
            let rd = fs::read_dir(&sys_cpu).map_err(|e| RuntimeError::path("read", &sys_cpu, e))?;
            let mut v: Vec<u32> = rd
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let n = e.file_name().into_string().ok()?;
                    n.strip_prefix("cpu")?.parse().ok()
                })
                .collect();
            v.sort_unstable();
            v
        }
    };
    let cpus: Vec<u32> = online
        .into_iter()
        .filter(|c| allowed.is_none_or(|a| a.contains(c)))
        .collect();
    if cpus.is_empty() {
        return Err(RuntimeError::Unsupported(format!(
            "no online CPU in {} is allowed for this process",
            sys_cpu.display()
        )));
    }

    // NUMA node of each CPU.
    let mut numa_of: BTreeMap<u32, u32> = BTreeMap::new();
    let node_dir = root.join("sys/devices/system/node");
    if let Ok(rd) = fs::read_dir(&node_dir) {
        for e in rd.filter_map(|e| e.ok()) {
            let Some(n) = e
                .file_name()
                .into_string()
                .ok()
                .and_then(|n| n.strip_prefix("node")?.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(list) = read_trim(&e.path().join("cpulist")) {
                for c in parse_cpu_list(&list)? {
                    numa_of.insert(c, n);
                }
            }
        }
    }

    let mut cores: Vec<(i64, i64)> = Vec::new();
    let mut domains: Vec<(u32, Vec<u32>)> = Vec::new();
    let mut procs = Vec::with_capacity(cpus.len());
    let mut numa = Vec::with_capacity(cpus.len());
    for (i, &c) in cpus.iter().enumerate() {
        let dir = sys_cpu.join(format!("cpu{c}"));
        let pkg = read_int(&dir.join("topology/physical_package_id"))
            .unwrap_or(0)
            .max(0);
        // No core id: the CPU is its own core (negative key cannot collide).
        let core_id = read_int(&dir.join("topology/core_id")).unwrap_or(-1 - c as i64);
        let core_key = (pkg, core_id);
        let core = match cores.iter().position(|k| *k == core_key) {
            Some(k) => k,
            None => {
                cores.push(core_key);
                cores.len() - 1
            }
        };
        let node = numa_of.get(&c).copied().unwrap_or(0);
        let llc = llc_shared(&dir)?.unwrap_or_default();
        let dom_key = (node, llc);
        let dom = match domains.iter().position(|k| *k == dom_key) {
            Some(k) => k,
            None => {
                domains.push(dom_key);
                domains.len() - 1
            }
        };
        procs.push(ProcInfo {
            id: ProcId(i as u32),
            core: CoreId(core as u32),
            domain: DomainId(dom as u32),
            node: NodeId(0),
        });
        numa.push(node);
    }
    let caches = read_caches(&sys_cpu, &cpus)?;
    Ok(MachineTopology {
        topology: Topology::from_procs(procs)?.with_caches(caches)?,
        cpus,
        numa,
    })
}

/// Parses a sysfs cache size (`512K`, `32768K`, `1M`, or bytes).
fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok().map(|n| n * mul)
}

/// The data and unified caches serving `cpus` (OS CPU numbers; processor i
/// is `cpus[i]`), one per distinct (level, sharing set), ordered by level
/// then by their first processor.
fn read_caches(sys_cpu: &Path, cpus: &[u32]) -> Result<Vec<CacheDomain>> {
    let mut out: Vec<CacheDomain> = Vec::new();
    for &c in cpus {
        let cache = sys_cpu.join(format!("cpu{c}/cache"));
        let Ok(rd) = fs::read_dir(&cache) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
            .map(|e| e.path())
            .collect();
        dirs.sort();
        for p in dirs {
            if read_trim(&p.join("type")).as_deref() == Some("Instruction") {
                continue;
            }
            let (Some(level), Some(size)) = (
                read_int(&p.join("level")),
                read_trim(&p.join("size")).and_then(|s| parse_cache_size(&s)),
            ) else {
                continue;
            };
            let Ok(level) = u8::try_from(level) else {
                continue;
            };
            if level == 0 || size == 0 {
                continue;
            }
            let shared = match read_trim(&p.join("shared_cpu_list")) {
                Some(s) => parse_cpu_list(&s)?,
                None => vec![c],
            };
            let procs: Vec<ProcId> = cpus
                .iter()
                .enumerate()
                .filter(|(_, x)| **x == c || shared.contains(x))
                .map(|(i, _)| ProcId(i as u32))
                .collect();
            if out.iter().any(|d| d.level == level && d.procs == procs) {
                continue;
            }
            let line = read_int(&p.join("coherency_line_size"))
                .filter(|&l| l > 0 && (l as u64).is_power_of_two())
                .unwrap_or(64) as u32;
            let mut ways = read_int(&p.join("ways_of_associativity")).unwrap_or(0);
            let set_bytes = line as u64 * ways.max(0) as u64;
            if ways <= 0 || set_bytes == 0 || !size.is_multiple_of(set_bytes) {
                ways = (size / line as u64) as i64; // fully associative
            }
            if ways <= 0 || size < line as u64 {
                continue;
            }
            let size = size / line as u64 * line as u64;
            out.push(CacheDomain {
                level,
                size_bytes: size,
                ways: ways as u32,
                line_bytes: line,
                procs,
            });
        }
    }
    out.sort_by(|a, b| (a.level, &a.procs).cmp(&(b.level, &b.procs)));
    Ok(out)
}

/// The sharing set of a CPU's last-level cache: the highest `level` among its
/// unified or data caches.
fn llc_shared(cpu_dir: &Path) -> Result<Option<Vec<u32>>> {
    let cache = cpu_dir.join("cache");
    let Ok(rd) = fs::read_dir(&cache) else {
        return Ok(None);
    };
    let mut best: Option<(i64, PathBuf)> = None;
    for e in rd.filter_map(|e| e.ok()) {
        let name = e.file_name();
        if !name.to_string_lossy().starts_with("index") {
            continue;
        }
        let p = e.path();
        let ty = read_trim(&p.join("type")).unwrap_or_default();
        if ty == "Instruction" {
            continue;
        }
        let Some(level) = read_int(&p.join("level")) else {
            continue;
        };
        if best.as_ref().is_none_or(|(l, _)| level > *l) {
            best = Some((level, p));
        }
    }
    match best {
        Some((_, p)) => match read_trim(&p.join("shared_cpu_list")) {
            Some(s) => Ok(Some(parse_cpu_list(&s)?)),
            None => Ok(None),
        },
        None => Ok(None),
    }
}

/// This machine's topology: online CPUs this process may use.
pub fn machine_topology() -> Result<MachineTopology> {
    let allowed = allowed_cpus()?;
    read_topology(Path::new("/"), Some(&allowed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(root: &Path, rel: &str, s: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    }

    /// 2 NUMA nodes × 2 L3 domains × 2 cores × 2 SMT threads = 16 CPUs, with
    /// SMT siblings numbered c and c+8 as on real x86 machines.
    fn fake16(root: &Path) {
        w(root, "sys/devices/system/cpu/online", "0-15\n");
        for c in 0..16u32 {
            let phys = c % 8; // physical core number 0..7
            let d = format!("sys/devices/system/cpu/cpu{c}");
            w(
                root,
                &format!("{d}/topology/core_id"),
                &format!("{}\n", phys % 4),
            );
            w(
                root,
                &format!("{d}/topology/physical_package_id"),
                &format!("{}\n", phys / 4),
            );
            w(root, &format!("{d}/cache/index0/level"), "1\n");
            w(root, &format!("{d}/cache/index0/type"), "Data\n");
            w(root, &format!("{d}/cache/index0/size"), "32K\n");
            w(
                root,
                &format!("{d}/cache/index0/ways_of_associativity"),
                "8\n",
            );
            w(
                root,
                &format!("{d}/cache/index0/coherency_line_size"),
                "64\n",
            );
            w(
                root,
                &format!("{d}/cache/index0/shared_cpu_list"),
                &format!("{c},{}\n", (c + 8) % 16),
            );
            w(root, &format!("{d}/cache/index1/level"), "1\n");
            w(root, &format!("{d}/cache/index1/type"), "Instruction\n");
            w(root, &format!("{d}/cache/index1/shared_cpu_list"), "0-15\n");
            let l3 = phys / 2; // 2 cores per L3
            let sib: Vec<u32> = (0..16).filter(|x| (x % 8) / 2 == l3).collect();
            w(root, &format!("{d}/cache/index3/level"), "3\n");
            w(root, &format!("{d}/cache/index3/type"), "Unified\n");
            w(root, &format!("{d}/cache/index3/size"), "12288K\n");
            w(
                root,
                &format!("{d}/cache/index3/ways_of_associativity"),
                "16\n",
            );
            w(
                root,
                &format!("{d}/cache/index3/coherency_line_size"),
                "64\n",
            );
            w(
                root,
                &format!("{d}/cache/index3/shared_cpu_list"),
                &format_cpu_list(&sib),
            );
        }
        w(root, "sys/devices/system/node/node0/cpulist", "0-3,8-11\n");
        w(root, "sys/devices/system/node/node1/cpulist", "4-7,12-15\n");
    }

    #[test]
    fn cpu_lists_round_trip() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<u32>::new());
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
        assert_eq!(format_cpu_list(&[8, 0, 1, 2, 3, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn fake_sysfs_gives_cores_llc_domains_and_numa() {
        let t = tempfile::tempdir().unwrap();
        fake16(t.path());
        let m = read_topology(t.path(), None).unwrap();
        assert_eq!(m.topology.num_procs(), 16);
        assert_eq!(m.cpus, (0..16).collect::<Vec<_>>());
        let p = m.topology.procs();
        // SMT siblings share a core.
        assert_eq!(p[0].core, p[8].core);
        assert_ne!(p[0].core, p[1].core);
        // Two cores per L3: cpus 0,1,8,9 form a domain.
        let doms = m.topology.domains();
        assert_eq!(doms.len(), 4);
        let d0: Vec<u32> = doms[0].1.iter().map(|q| m.cpu(*q)).collect();
        assert_eq!(d0, vec![0, 1, 8, 9]);
        assert_eq!(m.numa[4], 1);
        assert_eq!(m.numa[8], 0);
        assert!(p.iter().all(|q| q.node == NodeId(0)));
    }

    #[test]
    fn fake_sysfs_gives_cache_domains() {
        let t = tempfile::tempdir().unwrap();
        fake16(t.path());
        let m = read_topology(t.path(), None).unwrap();
        let topo = &m.topology;
        // 8 L1d (one per physical core, shared by its SMT pair), 4 L3s.
        assert_eq!(topo.caches_at(1).len(), 8);
        let l3 = topo.last_level_caches();
        assert_eq!(l3.len(), 4);
        let c = topo.cache(l3[0]);
        assert_eq!(
            (c.level, c.size_bytes, c.ways, c.line_bytes),
            (3, 12 << 20, 16, 64)
        );
        let cpus: Vec<u32> = c.procs.iter().map(|q| m.cpu(*q)).collect();
        assert_eq!(cpus, vec![0, 1, 8, 9]);
        // Every processor is served by exactly one L3, the one of its domain.
        for p in topo.procs() {
            let id = topo.cache_of(p.id, 3).unwrap();
            assert!(topo.cache(id).serves(p.id));
        }
        let l1 = topo.cache(topo.cache_of(ProcId(8), 1).unwrap());
        assert_eq!(l1.size_bytes, 32 * 1024);
        assert_eq!(l1.procs, vec![ProcId(0), ProcId(8)]);
        // Restricted to some CPUs: the sharing sets shrink to them.
        let m = read_topology(t.path(), Some(&[1, 2, 9])).unwrap();
        let l3: Vec<Vec<ProcId>> = m
            .topology
            .last_level_caches()
            .iter()
            .map(|&k| m.topology.cache(k).procs.clone())
            .collect();
        assert_eq!(l3, vec![vec![ProcId(0), ProcId(2)], vec![ProcId(1)]]);
    }

    #[test]
    fn odd_cache_geometry_is_taken_as_fully_associative() {
        let t = tempfile::tempdir().unwrap();
        for c in 0..2 {
            let d = format!("sys/devices/system/cpu/cpu{c}/cache/index2");
            w(t.path(), &format!("{d}/level"), "2\n");
            w(t.path(), &format!("{d}/type"), "Unified\n");
            w(t.path(), &format!("{d}/size"), "1000K\n"); // not 12 × 64 × sets
            w(t.path(), &format!("{d}/ways_of_associativity"), "12\n");
            w(t.path(), &format!("{d}/shared_cpu_list"), &format!("{c}\n"));
            // No size: left out.
            let d = format!("sys/devices/system/cpu/cpu{c}/cache/index3");
            w(t.path(), &format!("{d}/level"), "3\n");
            w(t.path(), &format!("{d}/type"), "Unified\n");
        }
        let m = read_topology(t.path(), None).unwrap();
        let caches = m.topology.caches();
        assert_eq!(caches.len(), 2);
        assert!(caches
            .iter()
            .all(|c| c.level == 2 && c.ways as u64 == c.lines()));
        assert_eq!(caches[1].procs, vec![ProcId(1)]);
        assert_eq!(parse_cache_size("32768K"), Some(32 << 20));
        assert_eq!(parse_cache_size("1M"), Some(1 << 20));
        assert_eq!(parse_cache_size("x"), None);
    }

    #[test]
    fn offline_and_disallowed_cpus_are_left_out() {
        let t = tempfile::tempdir().unwrap();
        fake16(t.path());
        w(t.path(), "sys/devices/system/cpu/online", "0-7,9-15\n");
        let m = read_topology(t.path(), Some(&[1, 2, 8, 9, 12])).unwrap();
        assert_eq!(m.cpus, vec![1, 2, 9, 12]);
        assert_eq!(m.topology.num_procs(), 4);
        // cpu1 and cpu9 are SMT siblings; cpu2's L3 is another domain.
        let p = m.topology.procs();
        assert_eq!(p[0].core, p[2].core);
        assert_eq!(p[0].domain, p[2].domain);
        assert_ne!(p[0].domain, p[1].domain);
        assert!(read_topology(t.path(), Some(&[8])).is_err());
    }

    #[test]
    fn missing_files_degrade_to_flat() {
        let t = tempfile::tempdir().unwrap();
        for c in 0..3 {
            fs::create_dir_all(t.path().join(format!("sys/devices/system/cpu/cpu{c}"))).unwrap();
        }
        let m = read_topology(t.path(), None).unwrap();
        assert_eq!(m.cpus, vec![0, 1, 2]);
        assert_eq!(m.topology.domains().len(), 1);
        let cores: std::collections::BTreeSet<_> =
            m.topology.procs().iter().map(|p| p.core).collect();
        assert_eq!(cores.len(), 3);
    }

    #[test]
    fn real_machine_topology_matches_affinity() {
        let m = machine_topology().unwrap();
        let allowed = allowed_cpus().unwrap();
        assert!(!m.cpus.is_empty());
        assert!(m.cpus.iter().all(|c| allowed.contains(c)));
        assert_eq!(m.topology.num_procs() as usize, m.cpus.len());
    }
}
