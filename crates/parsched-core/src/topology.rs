//! Machine topology (node → cache/NUMA domain → core → processor) and the
//! scheduler's partition of processors into pools.
//!
//! A [`Topology`] is built synthetically here (for the simulator and for tests);
//! the Linux runtime builds one from sysfs. A [`PoolLayout`] partitions the
//! processors into pools; pools may be of unequal size, and may be derived from
//! the topology (one pool per domain, say) or given explicitly.

use crate::error::ConfigError;
use crate::ids::{CoreId, DomainId, NodeId, PoolId, ProcId};
use serde::{Deserialize, Serialize};

/// One processor (logical CPU) and where it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcInfo {
    pub id: ProcId,
    pub core: CoreId,
    pub domain: DomainId,
    pub node: NodeId,
}

/// The processors of a machine (or cluster) and their grouping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    procs: Vec<ProcInfo>,
}

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
        Ok(Topology { procs })
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
        Ok(Topology { procs })
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
}
