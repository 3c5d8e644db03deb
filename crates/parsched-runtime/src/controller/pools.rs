//! Pools policy: each job placed by Zhou–Brecht and confined to its pools'
//! CPUs (a cpuset group, or affinity without cpusets).

use super::Controller;
use crate::cgroup::set_affinity;
use crate::error::Result;
use crate::procfs;
use parsched_core::policy::pools::{ForkRequest, PoolPolicy, PoolState, ZhouBrecht};
use parsched_core::{JobId, PoolId};

impl Controller {
    pub(super) fn start_pools(&mut self) -> Result<()> {
        let layout = self.layout.clone().expect("pools layout");
        let mut zb = ZhouBrecht::new(self.spec.pools.placement);
        for i in 0..self.jobs.len() {
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
            let home = zb.home_pool(job, &states)?;
            let req = ForkRequest {
                job,
                home,
                desired: self.jobs[i].width,
            };
            let placement = zb.place(&req, &states)?;
            placement.check(&states, self.jobs[i].width)?;
            let mut cpus: Vec<u32> = placement
                .threads
                .iter()
                .flat_map(|&(p, _)| layout.pool(p).iter().map(|&q| self.topo.cpu(q)))
                .collect();
            cpus.sort_unstable();
            for &(p, n) in &placement.threads {
                self.pool_load[p.idx()] += n;
            }
            let group = self.jobs[i].group.clone();
            if let Some(c) = self.cpuset.as_mut() {
                c.create(&group, &cpus)?;
                self.jobs[i].cpuset = true;
            }
            {
                let j = &mut self.jobs[i];
                j.pool = Some(home.0);
                j.placement = placement.threads.clone();
                j.cpus = cpus.clone();
            }
            self.spawn(i)?;
            if self.cpuset.is_none() {
                let pid = self.jobs[i].pid.expect("spawned");
                for tid in procfs::tasks(pid) {
                    let _ = set_affinity(tid, &cpus);
                }
            }
        }
        Ok(())
    }
}
