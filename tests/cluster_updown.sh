#!/bin/bash
# cluster_updown.sh: `psring cluster up 3` makes 3 namespaces on a bridge with capped links and a
# hostfile, daemons start in them through cluster-rsh, and `down` leaves no namespace, veth,
# bridge, qdisc or state behind: after a clean run, after a crash that lost the state file, and
# when run twice. Bad input and a second `up` get exit code 2; not root gets exit code 2.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/cluster_common.sh"

# bad input: one line, exit 2, nothing made
for bad in "up" "up 0" "up 3 --rate fast" "up 3 --subnet 10.99.0.0/30" "up 3 --servers 4 --server-rate 2gbit" "sideways" \
           "up 08" "up 3 --rate 0mbit" "up 3 --subnet 10.300.0.0/24" "up 3 --subnet 010.99.0.0/24" "up 3 --subnet 127.0.0.0/24" \
           "demo --workers 1,08" "demo --workers 100"; do
  "$CLUSTER" $bad >"$SCRATCH/out" 2>&1; rc=$?
  [[ $rc == 2 && $(wc -l <"$SCRATCH/out") == 1 ]] || { cat "$SCRATCH/out"; fail "'cluster $bad' gave rc $rc (want 2 and one line)"; }
done
assert_clean "bad input"
# an up that fails half-way (a link named like host 1's veth is in the way once the bridge and h0
# exist) cleans up after itself, that link too
ip link add psrv1 type bridge || fail "cannot make a link psrv1"
"$CLUSTER" up 2 >"$SCRATCH/out" 2>&1 && fail "up with psrv1 in the way succeeded"
grep -q "up failed; cleaning up" "$SCRATCH/out" || { cat "$SCRATCH/out"; fail "a failed up did not say it cleans up"; }
assert_clean "a failed up"
if command -v setpriv >/dev/null; then
  setpriv --reuid=65534 --regid=65534 --clear-groups "$CLUSTER" up 2 >"$SCRATCH/out" 2>&1; rc=$?
  [[ $rc == 2 ]] && grep -q "needs root" "$SCRATCH/out" || { cat "$SCRATCH/out"; fail "non-root up gave rc $rc"; }
fi

"$CLUSTER" up 3 --rate 100mbit --server-rate 200mbit --servers 1 >"$SCRATCH/up" 2>&1 || { cat "$SCRATCH/up"; fail "up 3 failed"; }
for i in 0 1 2; do
  ip netns exec h$i ip -4 -o addr show eth0 | grep -q "10.99.0.$((i + 1))/24" || fail "h$i has no 10.99.0.$((i + 1))"
done
[[ $(grep -c slots=1 /run/psring-cluster/hostfile) == 3 ]] || fail "hostfile does not list 3 hosts"
tc qdisc show dev psrv0 | grep -q "rate 200Mbit" || fail "server host h0 is not capped at 200mbit inbound"
ip netns exec h0 tc qdisc show dev eth0 | grep -q "rate 200Mbit" || fail "h0 is not capped at 200mbit outbound"
tc qdisc show dev psrv2 | grep -q "rate 100Mbit" || fail "h2 is not capped at 100mbit inbound"
"$CLUSTER" up 2 >"$SCRATCH/out" 2>&1; rc=$?
[[ $rc == 2 ]] && grep -q "already up" "$SCRATCH/out" || fail "a second up gave rc $rc"
# the cap holds: one stream h1 -> h2 at 100mbit measures 80..105 Mbit/s
"$CLUSTER" status >"$SCRATCH/status" 2>&1 || { cat "$SCRATCH/status"; fail "status failed"; }
mbit=$(awk '$1 == "h1" && $2 == "->" { print $4 }' "$SCRATCH/status")
[[ $mbit =~ ^[0-9]+$ ]] && (( mbit >= 80 && mbit <= 105 )) || { cat "$SCRATCH/status"; fail "h1 -> h2 measured '$mbit' Mbit/s at a 100mbit cap"; }
# Open MPI daemons start inside the namespaces, each with its own name and TMPDIR
OMPI_MCA_rmaps_base_oversubscribe=0 timeout 60 $MPIRUN --mca pml ob1 --hostfile /run/psring-cluster/hostfile \
  --mca plm_rsh_agent "$TOP_SRCDIR/experiments/cluster-rsh" --mca oob_tcp_if_include 10.99.0.0/24 -np 3 \
  sh -c 'echo "$(hostname) $TMPDIR"' >"$SCRATCH/names" 2>&1 || { cat "$SCRATCH/names"; fail "mpirun across the namespaces failed"; }
for i in 0 1 2; do grep -q "^h$i /run/psring-cluster/tmp/h$i\$" "$SCRATCH/names" || { cat "$SCRATCH/names"; fail "no rank on h$i"; }; done

"$CLUSTER" down >/dev/null || fail "down failed"
assert_clean "down"
# two ups at once: one makes the cluster, the other is refused (one line, exit 2) and removes nothing
"$CLUSTER" up 3 >"$SCRATCH/a" 2>&1 & pid=$!
"$CLUSTER" up 3 >"$SCRATCH/b" 2>&1; rb=$?
wait $pid; ra=$?
(( (ra == 0) + (rb == 0) == 1 )) || { cat "$SCRATCH/a" "$SCRATCH/b"; fail "two ups at once: rc $ra and $rb, want one 0"; }
[[ $ra == 2 || $rb == 2 ]] && [[ $(wc -l <"$SCRATCH/$( ((ra == 2)) && echo a || echo b )") == 1 ]] || { cat "$SCRATCH/a" "$SCRATCH/b"; fail "the refused up"; }
[[ $(ip netns list | grep -cE '^h[0-2]( |$)') == 3 ]] && ip link show psrbr0 >/dev/null 2>&1 || fail "the winner's cluster is not whole"
"$CLUSTER" down >/dev/null || fail "down after two ups failed"
assert_clean "two ups at once"
"$CLUSTER" down >/dev/null || fail "a second down failed"
# down removes what up made, not the folder it was told to use
mkdir "$SCRATCH/dir" && touch "$SCRATCH/dir/keep"
PSRING_CLUSTER_DIR=$SCRATCH/dir "$CLUSTER" down >/dev/null || fail "down with PSRING_CLUSTER_DIR failed"
[[ -e $SCRATCH/dir/keep ]] || fail "down removed a file it did not make"

# a crash: the state file is gone, a daemon still runs inside a namespace; down finds it all by name
"$CLUSTER" up 3 >/dev/null || fail "up 3 (again) failed"
(ip netns exec h1 sleep 300 9>&- &)
rm -rf /run/psring-cluster
"$CLUSTER" down >/dev/null || fail "down after a lost state file failed"
assert_clean "down after a crash"
pass "cluster up 3 / status / mpirun in namespaces / down: nothing left behind"
