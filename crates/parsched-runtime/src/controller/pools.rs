//! Pools policy: each job placed by Zhou–Brecht (the core crate's
//! [`ZhouBrecht`]: home pool = least loaded; threads over candidate pools)
//! into pools from the topology ([`PoolLayout`]) and confined to its pools'
//! CPUs (a cpuset group, or affinity without cpusets). Its state: the layout,
//! each pool's load and each job's placement.

use super::mechanism::{Decision, Mechanism};
use super::policy::{Needs, PolicyEntry, RuntimePolicy};
use crate::error::Result;
use crate::spec::{JobReport, RunSpec};
use crate::topology::MachineTopology;
use parsched_core::policy::pools::{
    ForkRequest, PoolPlacementConfig, PoolPolicy, PoolState, ZhouBrecht,
};
use parsched_core::topology::PoolLayout;
use parsched_core::{JobId, PoolId};

/// The pools policy's state.
pub(crate) struct PoolsPolicy {
    layout: PoolLayout,
    placement_policy: PoolPlacementConfig,
    /// Threads placed in each pool by live jobs.
    pool_load: Vec<u32>,
    /// Each job's home pool and threads per pool.
    home: Vec<Option<u32>>,
    placement: Vec<Vec<(PoolId, u32)>>,
}

impl PoolsPolicy {
    /// The layout the spec asks for (sizes, an equal size, or one pool per
    /// NUMA domain).
    pub(crate) fn new(spec: &RunSpec, topo: &MachineTopology) -> Result<PoolsPolicy> {
        let layout = if let Some(s) = &spec.pools.sizes {
            PoolLayout::from_sizes(&topo.topology, s)?
        } else if let Some(k) = spec.pools.pool_size {
            PoolLayout::equal(&topo.topology, k)?
        } else {
            PoolLayout::per_domain(&topo.topology)
        };
        let n = spec.jobs.len();
        Ok(PoolsPolicy {
            pool_load: vec![0; layout.num_pools()],
            layout,
            placement_policy: spec.pools.placement,
            home: vec![None; n],
            placement: vec![Vec::new(); n],
        })
    }
}

/// `pools`, as [`super::policy::POLICIES`] lists it.
pub(crate) const ENTRY: PolicyEntry = PolicyEntry {
    name: "pools",
    aliases: &[],
    doc: "space sharing: pools as cpusets from the topology, jobs placed by Zhou-Brecht \
          ([pools] table: pool_size, sizes, placement)",
    fragment: None,
    build: |spec, topo| Ok(Box::new(PoolsPolicy::new(spec, topo)?)),
};

impl RuntimePolicy for PoolsPolicy {
    fn name(&self) -> &'static str {
        "pools"
    }

    fn needs(&self) -> Needs {
        Needs {
            freezer: false,
            cpusets: Some("pools"),
        }
    }

    fn start(&mut self, m: &mut Mechanism) -> Result<()> {
        let layout = &self.layout;
        let mut zb = ZhouBrecht::new(self.placement_policy);
        for i in 0..m.jobs().len() {
            let states: Vec<PoolState> = (0..layout.num_pools())
                .map(|k| {
                    let size = layout.pool(PoolId(k as u32)).len() as u32;
                    let load = self.pool_load[k];
                    PoolState {
                        size,
                        idle: size.saturating_sub(load),
                        load,
                    }
                })
                .collect();
            let job = JobId(i as u64);
            let width = m.job(i).width();
            let home = zb.home_pool(job, &states)?;
            let req = ForkRequest {
                job,
                home,
                desired: width,
            };
            let placement = zb.place(&req, &states)?;
            placement.check(&states, width)?;
            let mut cpus: Vec<u32> = placement
                .threads
                .iter()
                .flat_map(|&(p, _)| layout.pool(p).iter().map(|&q| m.topology().cpu(q)))
                .collect();
            cpus.sort_unstable();
            for &(p, n) in &placement.threads {
                self.pool_load[p.idx()] += n;
            }
            self.home[i] = Some(home.0);
            self.placement[i] = placement.threads.clone();
            // Its cpuset group, made before it starts (or its CPUs noted).
            m.apply(Decision::Confine {
                job: i,
                cpus: cpus.clone(),
            })?;
            m.apply(Decision::spawn(i))?;
            if !m.has_cpusets() {
                m.apply(Decision::Confine { job: i, cpus })?;
            }
        }
        Ok(())
    }

    fn on_job_exit(&mut self, _m: &mut Mechanism, i: usize) -> Result<()> {
        for &(p, n) in &self.placement[i] {
            self.pool_load[p.idx()] = self.pool_load[p.idx()].saturating_sub(n);
        }
        Ok(())
    }

    fn annotate(&self, i: usize, r: &mut JobReport) {
        r.pool = self.home[i];
    }
}
