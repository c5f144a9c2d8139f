#!/bin/bash
# demo_interrupt.sh: Ctrl-C while `psring demo` trains on the emulated hosts stops the job in
# flight, undoes the run's changes to the hosts, takes them down and exits 130 at once, saying so in
# one line (no cluster command after the hosts are down); no training process,
# namespace, veth, qdisc or cgroup is left behind.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/cluster_common.sh"
start_quick_demo
# the third run of the plan trains on the hosts (the first is the step alone, off the cluster)
for _ in $(seq 600); do grep -q '\[3/' "$SCRATCH/out" && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done
grep -q '\[3/' "$SCRATCH/out" || { cat "$SCRATCH/out"; fail "the demo never reached its third run"; }
sleep 1
[[ -e /run/psring-cluster/state ]] || { cat "$SCRATCH/out"; fail "no emulated cluster was up during the demo"; }
t0=$(date +%s%N)
kill -INT -- -"$pid"   # what Ctrl-C sends: the whole foreground process group
for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill -0 "$pid" 2>/dev/null && { cat "$SCRATCH/out"; fail "the interrupted demo was still running after $ms ms"; }
wait "$pid"; rc=$?
[[ $rc == 130 ]] || { cat "$SCRATCH/out"; fail "the interrupted demo exited $rc, want 130"; }
n=$(grep -c "interrupted" "$SCRATCH/out")
[[ $n == 1 ]] || { cat "$SCRATCH/out"; fail "'interrupted' printed $n times, want once"; }
# nothing the run undoes on the hosts runs after they are down (exp_demo plants a straggler's run)
grep -q "no cluster is up" "$SCRATCH/out" && { cat "$SCRATCH/out"; fail "a cluster command ran after the hosts were down"; }
# the job's processes end with it: everything that ran on this demo's files (a zombie waiting for
# its parent's wait holds nothing: not counted; the daemons in the hosts go with `down`, below)
live() { ps -eo pid=,stat=,args= | awk -v d="$SCRATCH/r" '$2 !~ /^Z/ && index($0, d) && !/awk/'; }
for _ in $(seq 100); do [[ -z $(live) ]] && break; sleep 0.1; done
[[ -z $(live) ]] || fail "processes of the demo left 10 s after it: $(live | head -3)"
assert_clean "an interrupted demo"
pass "Ctrl-C at the third run: exit 130 after $ms ms, one line, nothing left"
