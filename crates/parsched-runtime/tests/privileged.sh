#!/bin/sh
# Runs the runtime's privileged tests (the `#[ignore]`d `real_*` tests of
# tests/integration.rs) where they can run: as root with a writable cgroup
# hierarchy. Elsewhere it prints one line saying they were not run and why.
# Tests whose further needs this machine lacks (a cgroup v1 freezer, 2 CPUs,
# RT group scheduling, ...) are skipped by name, each with a line saying why;
# everything else must pass. Extra arguments go to cargo (e.g. --release).
#
# Usage: sh crates/parsched-runtime/tests/privileged.sh [--release]
set -eu

if [ "$(id -u)" != 0 ]; then
    echo "privileged runtime tests NOT RUN: not root (they need root and a writable cgroup hierarchy; run 'sudo make rust-test')"
    exit 0
fi
if [ ! -w /sys/fs/cgroup ]; then
    echo "privileged runtime tests NOT RUN: /sys/fs/cgroup is not writable (they need a writable cgroup hierarchy)"
    exit 0
fi

mi=/proc/self/mountinfo
skip=""
not_run() {
    echo "privileged runtime test $1 NOT RUN: $2"
    skip="$skip --skip $1"
}
# Mount points of v1 hierarchies carrying controller $1.
v1_mounts() {
    awk -v c="$1" '/ - cgroup cgroup / { n = split($NF, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) print $5 }' "$mi"
}
v2_mounts() {
    awk '/ - cgroup2 / { print $5 }' "$mi"
}

have_v2=""
[ -n "$(v2_mounts)" ] && have_v2=yes
have_v1_freezer=""
[ -n "$(v1_mounts freezer)" ] && have_v1_freezer=yes
have_cpuset=""
[ -n "$(v1_mounts cpuset)" ] && have_cpuset=yes
for m in $(v2_mounts); do
    grep -qw cpuset "$m/cgroup.controllers" 2>/dev/null && have_cpuset=yes
done
rt_cpu=""
for m in $(v1_mounts cpu); do
    [ -e "$m/cpu.rt_runtime_us" ] && rt_cpu=yes
done

if ! command -v cc >/dev/null 2>&1; then
    for t in real_frozen_job_uses_no_cpu real_cgroup2_cpu_time real_job_exiting_mid_slot \
        real_sigkill_of_controller real_recovery_thaws real_fcs_classifies real_fcs_takes_back \
        real_pooled_threads real_signal_backend; do
        not_run "$t" "no C compiler (cc) to build bench/bsp.c"
    done
    not_run real_regions_confines_jobs_to_their_caches_with_cpusets "no C compiler (cc) to build bench/memlat.c"
fi
if [ -z "$have_v2" ]; then
    not_run real_frozen_job_uses_no_cpu_cgroup2 "no cgroup2 mount"
    not_run real_cgroup2_cpu_time_covers_unreaped_descendants "no cgroup2 mount"
fi
[ -n "$have_v1_freezer" ] || not_run real_frozen_job_uses_no_cpu_cgroup1 "no cgroup v1 freezer hierarchy"
if [ -z "$have_v2" ] && [ -z "$have_v1_freezer" ]; then
    for t in real_job_exiting_mid_slot_frees_its_slot real_sigkill_of_controller_leaves_nothing_frozen \
        real_recovery_thaws_groups_of_a_dead_controller real_fcs_classifies_spinners_cs_imbalanced_f_coarse_blockers_dc \
        real_fcs_takes_back_a_job_that_starts_to_spin; do
        not_run "$t" "no cgroup freezer"
    done
fi
if ! command -v mpirun.mpich >/dev/null 2>&1; then
    not_run real_fcs_classifies_mpi_jobs_from_the_library_statistics "no MPICH (make mpi installs it as root on Debian)"
    not_run real_cosched_pins_each_rank_to_its_workstation_and_sets_the_waiting "no MPICH (make mpi installs it as root on Debian)"
fi
[ -n "$have_cpuset" ] || not_run real_pooled_threads_stay_in_their_cpuset "no cpuset controller"
[ -n "$have_cpuset" ] || not_run real_regions_confines_jobs_to_their_caches_with_cpusets "no cpuset controller"
if [ "$(nproc)" -lt 2 ]; then
    not_run real_pooled_threads_stay_in_their_cpuset "needs 2 CPUs, this machine has $(nproc)"
    not_run real_regions_confines_jobs_to_their_caches_with_cpusets "needs 2 CPUs, this machine has $(nproc)"
fi
[ -n "$rt_cpu" ] || not_run real_realtime_gets_rt_runtime_in_a_v1_cpu_cgroup \
    "no cgroup v1 cpu hierarchy with RT group scheduling (cpu.rt_runtime_us)"

# shellcheck disable=SC2086 # $skip is a list of arguments
exec cargo test "$@" -p parsched-runtime --test integration -- --ignored $skip
