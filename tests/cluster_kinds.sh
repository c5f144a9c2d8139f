#!/bin/bash
# cluster_kinds.sh: `psring cluster up N --dilation D --kinds gpu:G,cpu:C` makes G GPU hosts with
# two CPU shares of one size (hI/host, hI/accel, each F/D of a core, hI itself without a quota) and C
# CPU hosts with one; status names each host's kind; share, dilate and quota change both shares;
# dilate 1 is refused (a GPU host's shares need quotas). In training on the GPU hosts, the trainer's
# compute thread sits on the accel share while it computes and every other thread on the host share
# (PSRING_ACCEL_SHARE_REPORT lists them), a CPU host's worker moves nothing, and a PS server on a
# GPU host never enters the accel share. Bad --kinds: one line, exit 2, nothing made; down leaves
# nothing.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/cluster_common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
cg="" v=1
while read -r _ mnt type opts _; do
  [[ $type == cgroup && ,$opts, == *,cpu,* ]] && cg=$mnt/psring-cluster
done </proc/mounts
if [[ -z $cg ]] && [[ -r /sys/fs/cgroup/cgroup.controllers ]] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
  cg=/sys/fs/cgroup/psring-cluster v=2
fi
[[ -n $cg ]] || skip "no cgroup cpu controller"
PSRING="$TOP_SRCDIR/psring"

for bad in "up 3 --dilation 4 --kinds tpu:1,cpu:2" "up 3 --dilation 4 --kinds gpu:1,cpu:1" "up 2 --dilation 4 --kinds gpu:3,cpu:0" \
           "up 3 --dilation 4 --kinds gpu2" "up 3 --dilation 4 --kinds gpu:1;cpu:2" "up 3 --dilation 4 --kinds gpu:01,cpu:2" \
           "up 3 --dilation 4 --kinds gpu:1,gpu:2" "up 3 --kinds gpu:1,cpu:2" "up 3 --dilation 4 --kinds"; do
  "$CLUSTER" $bad >"$SCRATCH/out" 2>&1; rc=$?
  [[ $rc == 2 && $(wc -l <"$SCRATCH/out") == 1 ]] && grep -q -- "--kinds" "$SCRATCH/out" \
    || { cat "$SCRATCH/out"; fail "'cluster $bad' gave rc $rc (want 2 and one line naming --kinds)"; }
done
assert_clean "bad --kinds"

quota() { # group -> "QUOTA PERIOD" in us (-1 or max: none)
  if [[ $v == 1 ]]; then echo "$(cat "$cg/$1/cpu.cfs_quota_us") $(cat "$cg/$1/cpu.cfs_period_us")"
  else read -r q p <"$cg/$1/cpu.max"; [[ $q == max ]] && q=-1; echo "$q $p"; fi
}
want_quota() { # what-for want group...
  local what=$1 want=$2 g; shift 2
  for g in "$@"; do [[ $(quota "$g") == "$want" ]] || fail "$what: $g has quota '$(quota "$g")', want '$want'"; done
}

"$CLUSTER" up 3 --rate 1gbit --dilation 4 --kinds gpu:2,cpu:1 >"$SCRATCH/up" 2>&1 || { cat "$SCRATCH/up"; fail "up 3 --kinds gpu:2,cpu:1 failed"; }
grep -q "^kinds=gpu:2,cpu:1$" /run/psring-cluster/state || fail "the state does not record the kinds"
# 1/4 of a core: a 2 ms quota per 8 ms; a GPU host's own group has none (its shares add up)
want_quota "up" "2000 8000" h0/host h0/accel h1/host h1/accel h2
[[ $(quota h0 | cut -d' ' -f1) == -1 && $(quota h1 | cut -d' ' -f1) == -1 ]] || fail "a GPU host's own group has a quota: $(quota h0)"
[[ ! -e $cg/h2/accel ]] || fail "CPU host h2 has an accel share"
"$CLUSTER" status --no-measure >"$SCRATCH/status" 2>&1 || { cat "$SCRATCH/status"; fail "status failed"; }
grep -Eq '^  h0 .*gpu host' "$SCRATCH/status" && grep -Eq '^  h1 .*gpu host' "$SCRATCH/status" \
  && grep -Eq '^  h2 .*cpu host' "$SCRATCH/status" && grep -q "host kinds: gpu:2,cpu:1" "$SCRATCH/status" \
  || { cat "$SCRATCH/status"; fail "status does not name each host's kind"; }

# share, dilate, quota: both shares of a GPU host
"$CLUSTER" share h0 0.5 >/dev/null || fail "share h0 0.5 failed"
want_quota "share h0 0.5" "2000 16000" h0/host h0/accel
"$CLUSTER" dilate 8 >/dev/null || fail "dilate 8 failed"
want_quota "dilate 8" "2000 16000" h1/host h1/accel h2
want_quota "dilate 8, h0 at 0.5" "2000 32000" h0/host h0/accel
"$CLUSTER" dilate 1 >"$SCRATCH/out" 2>&1; rc=$?
[[ $rc == 2 && $(wc -l <"$SCRATCH/out") == 1 ]] || { cat "$SCRATCH/out"; fail "dilate 1 with GPU hosts gave rc $rc (want 2, one line)"; }
want_quota "a refused dilate 1" "2000 16000" h1/host h1/accel
"$CLUSTER" quota off >/dev/null || fail "quota off failed"
[[ $(quota h1/accel) == "-1 "* && $(quota h1/host) == "-1 "* && $(quota h2) == "-1 "* ]] || fail "quota off left a quota on h1: $(quota h1/accel)"
"$CLUSTER" quota on >/dev/null || fail "quota on failed"
"$CLUSTER" share h0 1 >/dev/null && "$CLUSTER" dilate 4 >/dev/null || fail "share h0 1, dilate 4 failed"
want_quota "back at dilation 4" "2000 8000" h0/host h0/accel h1/host h1/accel h2

# threads' groups in training: lines "accel share: pid P tid T (NAME) cgroup G [compute]"
check_report() { # what out want-pids: every reporting process on a GPU host, compute thread on accel, the rest on host
  local what=$1 out=$2 want=$3 pids bad
  pids=$(awk '/^accel share: pid / { print $4 }' "$out" | sort -u | wc -l)
  [[ $pids == "$want" ]] || { cat "$out"; fail "$what: $pids processes reported their threads, want $want"; }
  bad=$(awk '/^accel share: pid / { accel = $NF == "compute" ? $(NF-1) : $NF
           if ($NF == "compute" && accel !~ /\/h[01]\/accel$/ || $NF != "compute" && accel !~ /\/h[01]\/host$/) print }' "$out")
  [[ -z $bad ]] || { cat "$out"; fail "$what: threads in the wrong share: $bad"; }
  [[ $(grep -c '^accel share: .* compute$' "$out") == "$want" ]] || fail "$what: not one compute thread per process"
}
common=(--data "$DATA" --steps 12 --train-limit 768 --test-limit 200 --batch 32 --seed 5)
# ring on all three hosts: the two GPU hosts' workers report, the CPU host's moves nothing
PSRING_ACCEL_SHARE_REPORT=1 timeout 300 "$PSRING" train --cluster -np 3 --topology ring "${common[@]}" \
  >"$SCRATCH/ring.out" 2>&1 || { cat "$SCRATCH/ring.out"; fail "ring on 2 GPU hosts and a CPU host failed"; }
check_report "ring" "$SCRATCH/ring.out" 2

# PS, its server on GPU host h0 beside worker 0: the server never enters h0's accel share; what the
# accel shares ever hold (sampled while it runs; batches big enough that compute is tens of ms) is
# the workers' compute threads
rm -f "$SCRATCH/accel_tids"
( while :; do cat "$cg/h0/accel/tasks" "$cg/h1/accel/tasks" 2>/dev/null || cat "$cg/h0/accel/cgroup.threads" "$cg/h1/accel/cgroup.threads" 2>/dev/null
              sleep 0.01; done >>"$SCRATCH/accel_tids" ) &
sampler=$!
PSRING_ACCEL_SHARE_REPORT=1 timeout 300 "$PSRING" train --cluster -np 3 --topology ps --servers 1 --cluster-hosts 2 \
  --data "$DATA" --steps 8 --train-limit 2048 --test-limit 200 --batch 256 --seed 5 >"$SCRATCH/ps.out" 2>&1; rc=$?
kill "$sampler"; wait "$sampler" 2>/dev/null
[[ $rc == 0 ]] || { cat "$SCRATCH/ps.out"; fail "ps with its server on a GPU host failed"; }
check_report "ps" "$SCRATCH/ps.out" 2
compute=$(awk '/^accel share: .* compute$/ { print $6 }' "$SCRATCH/ps.out" | sort -u)
seen=$(sort -u "$SCRATCH/accel_tids")
[[ -n $seen ]] || fail "ps: the accel shares never held a thread while it ran"
others=$(comm -23 <(echo "$seen") <(echo "$compute"))
[[ -z $others ]] || fail "ps: threads other than the workers' compute threads entered an accel share: $others (compute: $compute)"

"$CLUSTER" down >/dev/null || fail "down failed"
assert_clean "down of a cluster with GPU hosts"
pass "kinds gpu:2,cpu:1: two shares of 1/4 core per GPU host, one per CPU host; share/dilate/quota on both; ring and ps: compute thread on accel, the rest (and the PS server) on host; down left nothing"
