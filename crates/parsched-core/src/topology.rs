//! Machine topology (node → cache/NUMA domain → core → processor), the cache
//! domains with their geometry, and the scheduler's partition of processors
//! into pools.
//!
//! Cache domains ([`CacheDomain`]) are a separate list beside the processors:
//! each has a level (1, 2, 3), a capacity, an associativity, a line size and
//! the processors it serves (one for a private cache, several for a shared
//! one). A processor is served by at most one cache per level. The per-
//! processor `domain` stays the scheduler's grouping (last-level cache or NUMA
//! node); the machine constructors here make it the last-level cache.
//!
//! A [`Topology`] is built synthetically here (for the simulator and for tests);
//! the Linux runtime builds one from sysfs. A [`PoolLayout`] partitions the
//! processors into pools; pools may be of unequal size, and may be derived from
//! the topology (one pool per domain, say) or given explicitly.

use crate::error::ConfigError;
use crate::ids::{CacheId, CoreId, DomainId, NodeId, PoolId, ProcId};
use serde::{Deserialize, Serialize};

/// One processor (logical CPU) and where it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcInfo {
    pub id: ProcId,
    pub core: CoreId,
    pub domain: DomainId,
    pub node: NodeId,
}

/// One cache and the processors it serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheDomain {
    /// 1 for L1 (data), 2, 3, …
    pub level: u8,
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Associativity (ways per set); `size_bytes / line_bytes` for a fully
    /// associative cache.
    pub ways: u32,
    /// Line size in bytes (a power of two).
    pub line_bytes: u32,
    /// The processors this cache serves, in increasing order.
    pub procs: Vec<ProcId>,
}

impl CacheDomain {
    /// Number of lines (`size_bytes / line_bytes`).
    pub fn lines(&self) -> u64 {
        self.size_bytes / self.line_bytes as u64
    }

    /// Number of sets (`lines / ways`).
    pub fn sets(&self) -> u64 {
        self.lines() / self.ways as u64
    }

    pub fn serves(&self, proc: ProcId) -> bool {
        self.procs.contains(&proc)
    }

    fn validate(&self, i: usize, num_procs: u32) -> Result<(), ConfigError> {
        let field = format!("caches[{i}]");
        let bad = |message: String, allowed: &str| Err(ConfigError::new(&field, message, allowed));
        if self.level == 0 {
            return bad("level 0".into(), "a level >= 1");
        }
        if self.line_bytes == 0 || !self.line_bytes.is_power_of_two() {
            return bad(
                format!("line size {} bytes", self.line_bytes),
                "a power of two (64 on x86)",
            );
        }
        if self.ways == 0 {
            return bad("0 ways".into(), "an associativity >= 1");
        }
        let set_bytes = self.line_bytes as u64 * self.ways as u64;
        if self.size_bytes == 0 || !self.size_bytes.is_multiple_of(set_bytes) {
            return bad(
                format!(
                    "size {} bytes is not a positive multiple of ways × line = {set_bytes}",
                    self.size_bytes
                ),
                "size = sets × ways × line bytes, sets >= 1",
            );
        }
        if self.procs.is_empty() {
            return bad("serves no processor".into(), "at least one processor");
        }
        if !self.procs.windows(2).all(|w| w[0] < w[1]) {
            return bad(
                format!("processors {:?} not in increasing order", self.procs),
                "distinct processor ids in increasing order",
            );
        }
        if let Some(p) = self.procs.iter().find(|p| p.0 >= num_procs) {
            return bad(
                format!("processor {} does not exist", p.0),
                &format!("processors 0..{num_procs}"),
            );
        }
        Ok(())
    }
}

/// A machine as written in a configuration file (TOML or JSON): processors
/// grouped into domains of consecutive ids (or one per processor), and the
/// caches. See [`Topology::from_spec`].
///
/// ```toml
/// name = "clovertown"
/// procs = 4
/// domains = [[0, 2], [1, 3]]   # optional: the scheduler's domains
/// [[caches]]
/// level = 2
/// size_bytes = 4194304
/// ways = 16
/// line_bytes = 64
/// procs = [0, 2]
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    #[serde(default)]
    pub name: String,
    /// Number of processors (one per core, one node).
    pub procs: u32,
    /// The scheduler's domains as groups of processors (a partition). When
    /// absent: the processors of each last-level cache, or one domain.
    #[serde(default)]
    pub domains: Option<Vec<Vec<u32>>>,
    #[serde(default)]
    pub caches: Vec<CacheDomain>,
}

/// The processors of a machine (or cluster), their grouping and their caches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    procs: Vec<ProcInfo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    caches: Vec<CacheDomain>,
}

/// Bytes in a mebibyte (the papers' "MB" of cache).
pub const MIB: u64 = 1 << 20;
/// Bytes in a kibibyte.
pub const KIB: u64 = 1 << 10;

impl Topology {
    /// `nodes` machines, each with `domains_per_node` cache/NUMA domains of
    /// `cores_per_domain` cores with `threads_per_core` processors each.
    pub fn uniform(
        nodes: u32,
        domains_per_node: u32,
        cores_per_domain: u32,
        threads_per_core: u32,
    ) -> Result<Topology, ConfigError> {
        for (field, v) in [
            ("nodes", nodes),
            ("domains_per_node", domains_per_node),
            ("cores_per_domain", cores_per_domain),
            ("threads_per_core", threads_per_core),
        ] {
            if v == 0 {
                return Err(ConfigError::new(
                    field,
                    "must be positive",
                    "an integer >= 1",
                ));
            }
        }
        let mut procs = Vec::new();
        let (mut core, mut dom) = (0u32, 0u32);
        for n in 0..nodes {
            for _ in 0..domains_per_node {
                for _ in 0..cores_per_domain {
                    for _ in 0..threads_per_core {
                        procs.push(ProcInfo {
                            id: ProcId(procs.len() as u32),
                            core: CoreId(core),
                            domain: DomainId(dom),
                            node: NodeId(n),
                        });
                    }
                    core += 1;
                }
                dom += 1;
            }
        }
        Ok(Topology {
            procs,
            caches: Vec::new(),
        })
    }

    /// A flat shared-memory machine of `p` processors in one domain.
    pub fn flat(p: u32) -> Result<Topology, ConfigError> {
        if p == 0 {
            return Err(ConfigError::new("P", "must be positive", "an integer >= 1"));
        }
        Topology::uniform(1, 1, p, 1)
    }

    /// Builds a topology from explicit processor records (for example read from
    /// sysfs). Processor ids must be 0..n in order.
    pub fn from_procs(procs: Vec<ProcInfo>) -> Result<Topology, ConfigError> {
        if procs.is_empty() {
            return Err(ConfigError::new(
                "procs",
                "no processors",
                "at least one processor",
            ));
        }
        for (i, p) in procs.iter().enumerate() {
            if p.id.idx() != i {
                return Err(ConfigError::new(
                    "procs",
                    format!("processor {} listed at position {i}", p.id.0),
                    "processor ids 0..n in order",
                ));
            }
        }
        Ok(Topology {
            procs,
            caches: Vec::new(),
        })
    }

    /// This topology with the given caches (replacing any it had). Each cache
    /// must be well formed (see [`CacheDomain`]) and a processor may be served
    /// by at most one cache of each level.
    pub fn with_caches(mut self, caches: Vec<CacheDomain>) -> Result<Topology, ConfigError> {
        let n = self.num_procs();
        for (i, c) in caches.iter().enumerate() {
            c.validate(i, n)?;
            for (j, other) in caches[..i].iter().enumerate() {
                if other.level == c.level {
                    if let Some(p) = c.procs.iter().find(|p| other.procs.contains(p)) {
                        return Err(ConfigError::new(
                            format!("caches[{i}]"),
                            format!(
                                "processor {} is served by caches {j} and {i}, both level {}",
                                p.0, c.level
                            ),
                            "at most one cache per level for each processor",
                        ));
                    }
                }
            }
        }
        self.caches = caches;
        Ok(self)
    }

    /// Builds a single-node topology from a [`TopologySpec`] (as read from
    /// TOML or JSON).
    pub fn from_spec(spec: &TopologySpec) -> Result<Topology, ConfigError> {
        let n = spec.procs;
        if n == 0 {
            return Err(ConfigError::new(
                "procs",
                "must be positive",
                "an integer >= 1",
            ));
        }
        let bare = Topology::flat(n)?.with_caches(spec.caches.clone())?;
        let groups: Vec<Vec<u32>> = match &spec.domains {
            Some(g) => g.clone(),
            None => match bare.last_level() {
                Some(level) => {
                    let mut g: Vec<Vec<u32>> = bare
                        .caches
                        .iter()
                        .filter(|c| c.level == level)
                        .map(|c| c.procs.iter().map(|p| p.0).collect())
                        .collect();
                    // processors no last-level cache serves get one domain each
                    for p in 0..n {
                        if !g.iter().any(|v| v.contains(&p)) {
                            g.push(vec![p]);
                        }
                    }
                    g
                }
                None => vec![(0..n).collect()],
            },
        };
        let mut domain_of = vec![u32::MAX; n as usize];
        for (d, group) in groups.iter().enumerate() {
            for &p in group {
                if p >= n || domain_of[p as usize] != u32::MAX {
                    return Err(ConfigError::new(
                        "domains",
                        format!("processor {p} is out of range or in two domains"),
                        format!("each of processors 0..{n} in exactly one domain"),
                    ));
                }
                domain_of[p as usize] = d as u32;
            }
        }
        if let Some(p) = domain_of.iter().position(|d| *d == u32::MAX) {
            return Err(ConfigError::new(
                "domains",
                format!("processor {p} is in no domain"),
                format!("each of processors 0..{n} in exactly one domain"),
            ));
        }
        let procs = (0..n)
            .map(|p| ProcInfo {
                id: ProcId(p),
                core: CoreId(p),
                domain: DomainId(domain_of[p as usize]),
                node: NodeId(0),
            })
            .collect();
        Topology::from_procs(procs)?.with_caches(bare.caches)
    }

    /// Seed 004's Clovertown (Xeon X5365, §5): 4 cores; a private 32 KB 8-way
    /// L1 data cache each; two 4 MB 16-way L2s, cache 0 serving processors
    /// {0, 2} and cache 1 serving {1, 3} (§2.2.2); 64-byte lines. The
    /// scheduler's domains are the two L2s.
    pub fn clovertown() -> Topology {
        let l2 = [vec![0u32, 2], vec![1, 3]];
        let mut caches: Vec<CacheDomain> = (0..4)
            .map(|p| CacheDomain {
                level: 1,
                size_bytes: 32 * KIB,
                ways: 8,
                line_bytes: 64,
                procs: vec![ProcId(p)],
            })
            .collect();
        caches.extend(l2.iter().map(|g| CacheDomain {
            level: 2,
            size_bytes: 4 * MIB,
            ways: 16,
            line_bytes: 64,
            procs: g.iter().map(|&p| ProcId(p)).collect(),
        }));
        Topology::from_spec(&TopologySpec {
            name: "clovertown".into(),
            procs: 4,
            domains: None,
            caches,
        })
        .expect("the Clovertown topology is well formed")
    }

    /// Seed 004's Westmere (2 × Xeon X5660, §5): 2 sockets × 6 cores; per core
    /// a private 32 KB 8-way L1 data cache and a private 256 KB 8-way L2; per
    /// socket a shared 12 MB (12288 KB) 16-way L3 (the paper says "presumably
    /// one per socket"); 64-byte lines. Processors 0–5 are socket 0, 6–11
    /// socket 1; the scheduler's domains are the two L3s. Region scheduling
    /// works on the L3s; the private L2s are kept so that a model can charge
    /// them (they are small beside the paper's MB-sized regions).
    pub fn westmere() -> Topology {
        let mut caches = Vec::new();
        for (level, size, ways) in [(1u8, 32 * KIB, 8u32), (2, 256 * KIB, 8)] {
            caches.extend((0..12).map(|p| CacheDomain {
                level,
                size_bytes: size,
                ways,
                line_bytes: 64,
                procs: vec![ProcId(p)],
            }));
        }
        caches.extend((0..2).map(|s| CacheDomain {
            level: 3,
            size_bytes: 12 * MIB,
            ways: 16,
            line_bytes: 64,
            procs: (6 * s..6 * s + 6).map(ProcId).collect(),
        }));
        Topology::from_spec(&TopologySpec {
            name: "westmere".into(),
            procs: 12,
            domains: None,
            caches,
        })
        .expect("the Westmere topology is well formed")
    }

    /// All cache domains; a [`CacheId`] indexes this slice.
    pub fn caches(&self) -> &[CacheDomain] {
        &self.caches
    }

    pub fn cache(&self, id: CacheId) -> &CacheDomain {
        &self.caches[id.idx()]
    }

    /// The highest cache level present, if any cache is.
    pub fn last_level(&self) -> Option<u8> {
        self.caches.iter().map(|c| c.level).max()
    }

    /// The caches of one level, with their ids, in order.
    pub fn caches_at(&self, level: u8) -> Vec<CacheId> {
        (0..self.caches.len())
            .filter(|&i| self.caches[i].level == level)
            .map(|i| CacheId(i as u32))
            .collect()
    }

    /// The last-level caches (the caches region scheduling maps regions to).
    pub fn last_level_caches(&self) -> Vec<CacheId> {
        self.last_level()
            .map(|l| self.caches_at(l))
            .unwrap_or_default()
    }

    /// The cache of `level` that serves `proc`, if any.
    pub fn cache_of(&self, proc: ProcId, level: u8) -> Option<CacheId> {
        self.caches
            .iter()
            .position(|c| c.level == level && c.serves(proc))
            .map(|i| CacheId(i as u32))
    }

    pub fn num_procs(&self) -> u32 {
        self.procs.len() as u32
    }

    pub fn procs(&self) -> &[ProcInfo] {
        &self.procs
    }

    /// The distinct domains, in order of first appearance, with their processors.
    pub fn domains(&self) -> Vec<(DomainId, Vec<ProcId>)> {
        let mut out: Vec<(DomainId, Vec<ProcId>)> = Vec::new();
        for p in &self.procs {
            match out.iter_mut().find(|(d, _)| *d == p.domain) {
                Some((_, v)) => v.push(p.id),
                None => out.push((p.domain, vec![p.id])),
            }
        }
        out
    }
}

/// A partition of the processors into pools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolLayout {
    pools: Vec<Vec<ProcId>>,
    pool_of: Vec<PoolId>,
}

impl PoolLayout {
    /// Pools of `pool_size` consecutive processors. `pool_size` must divide the
    /// number of processors.
    pub fn equal(topology: &Topology, pool_size: u32) -> Result<PoolLayout, ConfigError> {
        let p = topology.num_procs();
        if pool_size == 0 || pool_size > p || !p.is_multiple_of(pool_size) {
            return Err(ConfigError::new(
                "pool_size",
                format!("{pool_size} does not divide P = {p}"),
                format!("a divisor of {p}: {}", divisors(p)),
            ));
        }
        let sizes = vec![pool_size; (p / pool_size) as usize];
        PoolLayout::from_sizes(topology, &sizes)
    }

    /// Pools of the given sizes, taking processors in order.
    pub fn from_sizes(topology: &Topology, sizes: &[u32]) -> Result<PoolLayout, ConfigError> {
        let p = topology.num_procs();
        let total: u64 = sizes.iter().map(|&s| s as u64).sum();
        if sizes.is_empty() || sizes.contains(&0) || total != p as u64 {
            return Err(ConfigError::new(
                "pool_sizes",
                format!("sizes {sizes:?} do not partition {p} processors"),
                format!("positive sizes summing to {p}"),
            ));
        }
        let mut pools = Vec::with_capacity(sizes.len());
        let mut next = 0u32;
        for &s in sizes {
            pools.push((next..next + s).map(ProcId).collect());
            next += s;
        }
        PoolLayout::from_groups(topology, pools)
    }

    /// One pool per cache/NUMA domain of the topology.
    pub fn per_domain(topology: &Topology) -> PoolLayout {
        let pools = topology.domains().into_iter().map(|(_, v)| v).collect();
        PoolLayout::from_groups(topology, pools).expect("domains partition the processors")
    }

    /// Explicit groups of processors; every processor must appear exactly once.
    pub fn from_groups(
        topology: &Topology,
        pools: Vec<Vec<ProcId>>,
    ) -> Result<PoolLayout, ConfigError> {
        let n = topology.num_procs() as usize;
        let mut pool_of = vec![PoolId(u32::MAX); n];
        for (i, group) in pools.iter().enumerate() {
            if group.is_empty() {
                return Err(ConfigError::new(
                    "pools",
                    format!("pool {i} is empty"),
                    "non-empty pools",
                ));
            }
            for &proc in group {
                if proc.idx() >= n || pool_of[proc.idx()].0 != u32::MAX {
                    return Err(ConfigError::new(
                        "pools",
                        format!("processor {} is out of range or in two pools", proc.0),
                        format!("each of processors 0..{n} in exactly one pool"),
                    ));
                }
                pool_of[proc.idx()] = PoolId(i as u32);
            }
        }
        if let Some(missing) = pool_of.iter().position(|p| p.0 == u32::MAX) {
            return Err(ConfigError::new(
                "pools",
                format!("processor {missing} is in no pool"),
                format!("each of processors 0..{n} in exactly one pool"),
            ));
        }
        Ok(PoolLayout { pools, pool_of })
    }

    pub fn num_pools(&self) -> usize {
        self.pools.len()
    }

    pub fn pool(&self, id: PoolId) -> &[ProcId] {
        &self.pools[id.idx()]
    }

    pub fn pool_of(&self, proc: ProcId) -> PoolId {
        self.pool_of[proc.idx()]
    }

    pub fn sizes(&self) -> Vec<u32> {
        self.pools.iter().map(|p| p.len() as u32).collect()
    }
}

fn divisors(p: u32) -> String {
    (1..=p)
        .filter(|d| p.is_multiple_of(*d))
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_topology_numbers_everything_in_order() {
        let t = Topology::uniform(2, 2, 3, 2).unwrap();
        assert_eq!(t.num_procs(), 24);
        let last = t.procs()[23];
        assert_eq!((last.core.0, last.domain.0, last.node.0), (11, 3, 1));
        assert_eq!(t.domains().len(), 4);
    }

    #[test]
    fn equal_pools_partition_processors() {
        let t = Topology::flat(60).unwrap();
        let l = PoolLayout::equal(&t, 15).unwrap();
        assert_eq!(l.num_pools(), 4);
        assert_eq!(l.pool_of(ProcId(31)), PoolId(2));
        assert_eq!(l.sizes(), vec![15; 4]);
    }

    #[test]
    fn pool_size_must_divide() {
        let t = Topology::flat(60).unwrap();
        let e = PoolLayout::equal(&t, 7).unwrap_err();
        assert_eq!(e.field, "pool_size");
        assert!(e.allowed.contains("30"));
    }

    #[test]
    fn unequal_and_domain_pools() {
        let t = Topology::uniform(1, 3, 2, 1).unwrap();
        assert_eq!(PoolLayout::per_domain(&t).sizes(), vec![2, 2, 2]);
        assert_eq!(
            PoolLayout::from_sizes(&t, &[1, 5]).unwrap().sizes(),
            vec![1, 5]
        );
        assert!(PoolLayout::from_sizes(&t, &[1, 4]).is_err());
        assert!(PoolLayout::from_groups(&t, vec![vec![ProcId(0)], vec![ProcId(0)]]).is_err());
    }

    #[test]
    fn clovertown_pairs_share_an_l2() {
        let t = Topology::clovertown();
        assert_eq!(t.num_procs(), 4);
        assert_eq!(t.last_level(), Some(2));
        let l2 = t.last_level_caches();
        assert_eq!(l2.len(), 2);
        let c0 = t.cache(l2[0]);
        assert_eq!((c0.size_bytes, c0.ways, c0.line_bytes), (4 * MIB, 16, 64));
        assert_eq!(c0.procs, vec![ProcId(0), ProcId(2)]);
        assert_eq!(t.cache(l2[1]).procs, vec![ProcId(1), ProcId(3)]);
        assert_eq!(c0.lines(), 65536);
        assert_eq!(c0.sets(), 4096);
        assert_eq!(t.cache_of(ProcId(3), 2), Some(l2[1]));
        assert_eq!(t.cache_of(ProcId(3), 3), None);
        // the scheduler's domains follow the L2s
        let doms = t.domains();
        assert_eq!(doms[0].1, vec![ProcId(0), ProcId(2)]);
        assert_eq!(doms[1].1, vec![ProcId(1), ProcId(3)]);
        assert_eq!(PoolLayout::per_domain(&t).sizes(), vec![2, 2]);
    }

    #[test]
    fn westmere_has_private_l2s_and_a_shared_l3_per_socket() {
        let t = Topology::westmere();
        assert_eq!(t.num_procs(), 12);
        assert_eq!(t.last_level(), Some(3));
        assert_eq!(t.caches_at(2).len(), 12);
        let l3 = t.last_level_caches();
        assert_eq!(l3.len(), 2);
        let c = t.cache(l3[1]);
        assert_eq!((c.size_bytes, c.ways), (12 * MIB, 16));
        assert_eq!(c.sets(), 12288); // not a power of two: sets are indexed modulo
        assert_eq!(c.procs, (6..12).map(ProcId).collect::<Vec<_>>());
        let l2 = t.cache(t.cache_of(ProcId(7), 2).unwrap());
        assert_eq!(
            (l2.size_bytes, l2.procs.clone()),
            (256 * KIB, vec![ProcId(7)])
        );
        assert_eq!(t.domains().len(), 2);
    }

    #[test]
    fn topology_from_toml() {
        let text = r#"
            name = "clovertown"
            procs = 4
            [[caches]]
            level = 2
            size_bytes = 4194304
            ways = 16
            line_bytes = 64
            procs = [0, 2]
            [[caches]]
            level = 2
            size_bytes = 4194304
            ways = 16
            line_bytes = 64
            procs = [1, 3]
        "#;
        let spec: TopologySpec = toml::from_str(text).unwrap();
        let t = Topology::from_spec(&spec).unwrap();
        let c = Topology::clovertown();
        assert_eq!(t.caches(), &c.caches()[4..]);
        assert_eq!(t.domains(), c.domains());
        // serde round trip keeps the caches
        let json = toml::to_string(&t).unwrap();
        assert_eq!(toml::from_str::<Topology>(&json).unwrap(), t);
        // explicit domains override the cache grouping
        let mut s2 = spec.clone();
        s2.domains = Some(vec![vec![0, 1, 2, 3]]);
        assert_eq!(Topology::from_spec(&s2).unwrap().domains().len(), 1);
    }

    #[test]
    fn bad_caches_are_rejected_with_the_field() {
        let cache = |level, size, ways, line, procs: &[u32]| CacheDomain {
            level,
            size_bytes: size,
            ways,
            line_bytes: line,
            procs: procs.iter().map(|&p| ProcId(p)).collect(),
        };
        let t = || Topology::flat(4).unwrap();
        let err = |c: Vec<CacheDomain>| t().with_caches(c).unwrap_err();
        assert_eq!(err(vec![cache(2, MIB, 16, 48, &[0])]).field, "caches[0]");
        assert!(err(vec![cache(2, MIB + 64, 16, 64, &[0])])
            .message
            .contains("multiple"));
        assert!(err(vec![cache(2, MIB, 16, 64, &[4])])
            .message
            .contains("does not exist"));
        assert!(err(vec![cache(2, MIB, 16, 64, &[])])
            .message
            .contains("no processor"));
        let e = err(vec![
            cache(2, MIB, 16, 64, &[0, 1]),
            cache(2, MIB, 16, 64, &[1, 2]),
        ]);
        assert_eq!(e.field, "caches[1]");
        assert!(e.message.contains("processor 1"));
        // the same processors at two levels are fine
        assert!(t()
            .with_caches(vec![
                cache(1, MIB, 16, 64, &[0]),
                cache(2, MIB, 16, 64, &[0])
            ])
            .is_ok());
        let spec: Result<TopologySpec, _> = toml::from_str("procs = 4\nbogus = 1");
        assert!(spec.is_err());
        let bad_dom = TopologySpec {
            name: String::new(),
            procs: 2,
            domains: Some(vec![vec![0]]),
            caches: vec![],
        };
        assert_eq!(Topology::from_spec(&bad_dom).unwrap_err().field, "domains");
    }
}
