#!/bin/bash
# cluster_losses.sh: training across emulated hosts is the same training as on one host. A 2-host
# ring (psring train --cluster) and a 1 server + 2 worker PS started the way real hosts are
# (psring train --hostfile F --mpirun-args "--mca plm_rsh_agent ..." --bind SUBNET, with
# cluster-rsh standing in for ssh) give the same per-step losses (--loss-log) as the same runs
# on loopback, and every PS server bound its own host's cluster address.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/cluster_common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
PSRING="$TOP_SRCDIR/psring"
common=(--data "$DATA" --steps 20 --train-limit 1280 --test-limit 500 --batch 32 --seed 5)

"$CLUSTER" up 3 --rate 10gbit >"$SCRATCH/up" 2>&1 || { cat "$SCRATCH/up"; fail "cluster up 3 failed"; }

# ring: 2 hosts vs loopback
timeout 120 "$PSRING" train --cluster -np 2 --topology ring "${common[@]}" --loss-log "$SCRATCH/ring_cl.log" \
  >"$SCRATCH/ring_cl.out" 2>&1 || { cat "$SCRATCH/ring_cl.out"; fail "ring across 2 emulated hosts failed"; }
timeout 120 "$PSRING" train -np 2 --topology ring "${common[@]}" --loss-log "$SCRATCH/ring_lo.log" \
  >"$SCRATCH/ring_lo.out" 2>&1 || { cat "$SCRATCH/ring_lo.out"; fail "ring on loopback failed"; }
[[ $(wc -l <"$SCRATCH/ring_cl.log") -ge 20 ]] || fail "ring loss log across hosts has fewer than 20 steps"
compare_losses "$SCRATCH/ring_lo.log" "$SCRATCH/ring_cl.log" 1e-6 || fail "ring across hosts differs from loopback"

# ps 1+2, launched as on real hosts: a hostfile, a remote-shell agent, the subnet for every transport
net=10.99.0.0/24
timeout 120 "$PSRING" train --hostfile /run/psring-cluster/hostfile -np 3 --topology ps --servers 1 --bind $net \
  --mpirun-args "--mca plm_rsh_agent $TOP_SRCDIR/experiments/cluster-rsh --mca btl self,tcp --mca btl_tcp_if_include $net --mca oob_tcp_if_include $net" \
  "${common[@]}" --loss-log "$SCRATCH/ps_cl.log" --verbose >"$SCRATCH/ps_cl.out" 2>&1 \
  || { cat "$SCRATCH/ps_cl.out"; fail "ps 1+2 across emulated hosts failed"; }
timeout 120 "$PSRING" train -np 3 --topology ps --servers 1 "${common[@]}" --loss-log "$SCRATCH/ps_lo.log" \
  >"$SCRATCH/ps_lo.out" 2>&1 || { cat "$SCRATCH/ps_lo.out"; fail "ps on loopback failed"; }
[[ $(wc -l <"$SCRATCH/ps_cl.log") -ge 20 ]] || fail "ps loss log across hosts has fewer than 20 steps"
compare_losses "$SCRATCH/ps_lo.log" "$SCRATCH/ps_cl.log" 1e-6 || fail "ps across hosts differs from loopback"
# and a --bind that matches nothing on the server's host is one clear line, not a hang
timeout 60 "$PSRING" train --cluster -np 3 --topology ps --servers 1 --bind 192.0.2.0/24 "${common[@]}" \
  >"$SCRATCH/bad.out" 2>&1 && fail "--bind 192.0.2.0/24 should have failed"
grep -q "ps server 0: --bind 192.0.2.0/24: h0 has no IPv4 address in that subnet" "$SCRATCH/bad.out" \
  || { cat "$SCRATCH/bad.out"; fail "no clear line for a --bind outside the host's subnets"; }
pass "ring 2 hosts and ps 1+2 hosts: the same losses as on loopback for 20 steps"
