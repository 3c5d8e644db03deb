//! Scheduling policies. A policy observes a view of the machine and returns a
//! decision; the simulator and the Linux runtime apply it.
//!
//! | policy | paper | file |
//! |---|---|---|
//! | processor pools (Zhou & Brecht) | seed 000, section 3 | [`pools`] |
//! | gang scheduling matrix (Ousterhout; Feitelson & Rudolph) | seed 001, section 3.2 | [`gang`] |
//! | gang-scheduling state machine: admission, rotation, early switch, alternates | seed 001, section 3.2 | [`gang_sched`] |
//! | batch FCFS, EASY and conservative backfilling (Lifka; Mu'alem & Feitelson) | issue 4 | [`batch`] |

pub mod batch;
pub mod gang;
pub mod gang_sched;
pub mod pools;
