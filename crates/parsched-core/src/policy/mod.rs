//! Scheduling policies. A policy observes a view of the machine and returns a
//! decision; the simulator and the Linux runtime apply it.
//!
//! | policy | paper | file |
//! |---|---|---|
//! | processor pools (Zhou & Brecht) | seed 000, section 3 | [`pools`] |
//! | gang scheduling matrix (Ousterhout; Feitelson & Rudolph) | seed 001, section 3.2 | [`gang`] |
//! | gang-scheduling state machine: admission, rotation, early switch, alternates | seed 001, section 3.2 | [`gang_sched`] |
//! | gang admission's slot choice as a policy (`SlotChooser`; first fit, or Python) | seed 001, section 3.2 | [`gang_place`] |
//! | local schedulers: per-processor / per-pool round robin | seed 001 §3.1, seed 000 §3.1 | [`local`] |
//! | Solaris time-sharing dispatch table (priority levels, ageing, boost) | seed 003 §2–3 | [`ts`] |
//! | waiting strategies: busy, block, two-phase, yield | seed 001 §2–3 | [`wait`] |
//! | coscheduling classifier of flexible coscheduling (Frachtenberg et al.) | seed 002, section 4.2 | [`classify`] |
//! | region scheduling: region map, page touch, WSS estimator, balancing, regioning, fallback (Lee & Schwan) | seed 004, §2–4 | [`regions`] |
//! | batch FCFS, EASY and conservative backfilling (Lifka; Mu'alem & Feitelson) | Lifka 1995; Mu'alem & Feitelson, TPDS 2001 | [`batch`] |

pub mod batch;
pub mod classify;
pub mod cosched;
pub mod fair;
pub mod fcs;
pub mod gang;
pub mod gang_place;
pub mod gang_sched;
pub mod local;
pub mod o1;
pub mod pools;
pub mod regions;
pub mod ts;
pub mod wait;
