#!/bin/sh
# Two BSP jobs under default Linux and under parsched's gang scheduling, per
# freezer backend, against each job alone. Needs root, cargo and cc.
#   bench/gang_vs_default.sh [REPS] [bsp args...]
# Default bsp args: --threads 2 --iters 1000 --grain-us 1000 --wait spin
set -e
cd "$(dirname "$0")/.."
REPS=${1:-3}; [ $# -gt 0 ] && shift
ARGS=${*:-"--threads 2 --iters 1000 --grain-us 1000 --wait spin"}
make -s -C bench bsp
cargo build -q --release -p parsched-runtime --example parsched_run
R=target/release/examples/parsched_run
J="bench/bsp $ARGS"
walls() { python3 -c 'import json,sys
d=json.loads(sys.stdin.read().strip().splitlines()[-1])
print(" ".join("%.2f" % r["wall_s"] for r in d["reports"]), "| controller CPU %.3f s, %d switches, %d wakeups" % (d["stats"]["cpu_s"], d["stats"]["switches"], d["stats"]["wakeups"]))'; }
echo "bsp $ARGS, $REPS repetitions; seconds per job"
for rep in $(seq "$REPS"); do
  echo "rep $rep (load $(cut -d' ' -f1 /proc/loadavg))"
  echo "  solo:            $($J | python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["runtime_s"])')"
  echo "  default Linux:   $($R --policy default -- $J : $J 2>/dev/null | walls)"
  for b in cgroup2 cgroup1 signal; do
    echo "  gang $b: $($R --slot 50ms --width 2 --backend $b -- $J : $J 2>/dev/null | walls)"
  done
done
