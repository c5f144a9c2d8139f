#!/bin/bash
# cluster_dilation.sh: `psring cluster up N --dilation D` is a time-dilated scale model: every host
# gets 1/D of a core (a cgroup CPU quota, period D ms) and links of --rate/D. A busy loop started
# in a host (through cluster-rsh, as Open MPI starts its daemons) gets its share within 10%; a
# straggler (`share h1 0.5`) gets half of it; `quota off` lifts the quotas and `quota on` puts
# each back at its share; `dilate 1` gives each host a core of its own (pinned, no quota); idle CPUs poll while it is up (cpu_dma_latency held at 0); `down`
# removes the cgroups with everything else and releases that request,
# also with a process still inside; bad values get one line and exit 2.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/cluster_common.sh"
cg=""
while read -r _ mnt type opts _; do
  [[ $type == cgroup && ,$opts, == *,cpu,* ]] && cg=$mnt/psring-cluster
done </proc/mounts
[[ -n $cg ]] || { [[ -r /sys/fs/cgroup/cgroup.controllers ]] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers && cg=/sys/fs/cgroup/psring-cluster; }
[[ -n $cg ]] || skip "no cgroup cpu controller"

# also what the kernel and tc would refuse halfway: a share above 2D (a CFS period under 1 ms), a
# link under 8 kbit/s after dividing by D, an octal-looking count
for bad in "up 2 --dilation 0" "up 2 --dilation x" "up 2 --cpu-share 0.5" "up 2 --dilation 4 --cpu-share 0" "share h0 0.5" \
           "up 2 --dilation 2 --cpu-share 8" "up 2 --rate 1kbit --dilation 200" "up 2 --dilation 08"; do
  "$CLUSTER" $bad >"$SCRATCH/out" 2>&1; rc=$?
  [[ $rc == 2 && $(wc -l <"$SCRATCH/out") == 1 ]] || { cat "$SCRATCH/out"; fail "'cluster $bad' gave rc $rc (want 2 and one line)"; }
done
assert_clean "bad input"

"$CLUSTER" up 2 --rate 800mbit --dilation 4 >"$SCRATCH/up" 2>&1 || { cat "$SCRATCH/up"; fail "up 2 --dilation 4 failed"; }
tc qdisc show dev psrv1 | grep -q "rate 200Mbit" || fail "h1's link is not 800mbit / 4 = 200mbit"
"$CLUSTER" status --no-measure | grep -q "time dilation: 4" || fail "status does not show the dilation"
# idle CPUs poll while the cluster is up: a PM QoS request of 0 us held by a sleeper in its cgroup
poll=""
if [[ -w /dev/cpu_dma_latency ]]; then
  poll=$(awk -F= '$1 == "idle_poll" { print $2 }' /run/psring-cluster/state)
  [[ -n $poll && $(readlink "/proc/$poll/fd/3") == /dev/cpu_dma_latency ]] || fail "no process holds /dev/cpu_dma_latency (state: '$poll')"
  [[ $(od -An -td4 /dev/cpu_dma_latency | tr -d ' ') == 0 ]] || fail "the CPU latency request is $(od -An -td4 /dev/cpu_dma_latency), want 0"
  "$CLUSTER" status --no-measure | grep -q "idle CPUs poll" || fail "status does not say that idle CPUs poll"
  # the holder keeps no descriptor of its caller's: this test's lock is fd 9
  [[ $(ls "/proc/$poll/fd" | sort -n | paste -sd,) == 0,1,2,3 ]] || fail "the holder keeps descriptors: $(ls -l "/proc/$poll/fd")"
fi
"$CLUSTER" share h1 9 >"$SCRATCH/out" 2>&1 && fail "share 9 at D=4 (a period under 1 ms) succeeded"
grep -q "kernel's 1 ms" "$SCRATCH/out" || fail "share 9: $(cat "$SCRATCH/out")"
"$CLUSTER" dilate 2000 >/dev/null 2>&1 && fail "dilate 2000 succeeded"
"$CLUSTER" status --no-measure | grep -q "time dilation: 4" || fail "a refused share or dilate changed the cluster"
"$CLUSTER" share h7 0.5 >/dev/null 2>&1 && fail "share of a host that does not exist succeeded"
"$CLUSTER" share h1 2x >/dev/null 2>&1 && fail "share '2x' succeeded"

# CPU seconds a busy loop inside host H gets in 2 s of wall clock, as a fraction of a core
busy_share() { # host
  "$TOP_SRCDIR/experiments/cluster-rsh" "$1" python3 -c "'
import os, time
t = time.monotonic(); c = time.process_time()
while time.monotonic() - t < 2.0: pass
print((time.process_time() - c) / (time.monotonic() - t))
'"
}
s0=$(busy_share h0) || fail "a busy loop could not run in h0"
awk -v s="$s0" 'BEGIN { exit !(s > 0.225 && s < 0.275) }' || fail "h0 got $s0 of a core, want 1/4 within 10%"
"$CLUSTER" share h1 0.5 >/dev/null || fail "share h1 0.5 failed"
s1=$(busy_share h1) || fail "a busy loop could not run in h1"
awk -v s="$s1" 'BEGIN { exit !(s > 0.1125 && s < 0.1375) }' || fail "straggler h1 got $s1 of a core, want 1/8 within 10%"

# quota off: a job's start-up at full speed; on: every host back at its share (h1 still half)
# the hosts' parent outweighs everything else only while the quotas hold: with them off, hosts at
# full speed would starve the `quota on` that ends the start-up (3.2 s instead of 30 ms)
weight() { if [[ -r $cg/cpu.shares ]]; then cat "$cg/cpu.shares"; else cat "$cg/cpu.weight"; fi; }
w_on=$(weight)
"$CLUSTER" quota off >/dev/null || fail "quota off failed"
w_off=$(weight)
[[ $w_off == 1024 || $w_off == 100 ]] || fail "with the quota off the hosts' parent weighs $w_off, want the default (1024 shares, weight 100)"
s2=$(busy_share h0) || fail "a busy loop could not run in h0 with the quota off"
awk -v s="$s2" 'BEGIN { exit !(s > 0.5) }' || fail "with the quota off h0 got $s2 of a core, want more than 0.5"
"$CLUSTER" quota on >/dev/null || fail "quota on failed"
[[ $(weight) == "$w_on" && $w_on != "$w_off" ]] || fail "quota on left the hosts' parent at weight $(weight), want $w_on as at up"
s3=$(busy_share h1) || fail "a busy loop could not run in h1 after quota on"
awk -v s="$s3" 'BEGIN { exit !(s > 0.1125 && s < 0.1375) }' || fail "after quota on straggler h1 got $s3 of a core, want 1/8 within 10%"
"$CLUSTER" quota >"$SCRATCH/out" 2>&1; rc=$?
[[ $rc == 2 && $(wc -l <"$SCRATCH/out") == 1 ]] || { cat "$SCRATCH/out"; fail "'cluster quota' gave rc $rc (want 2 and one line)"; }

# dilate 1: hosts of a whole core get no quota and a core each (cluster-rsh pins hI to the I-th
# CPU), links at the nominal rate; dilate 4 puts the quotas and the scaled links back
"$CLUSTER" share h1 1 >/dev/null || fail "share h1 1 failed"
"$CLUSTER" dilate 1 >/dev/null || fail "dilate 1 failed"
tc qdisc show dev psrv1 | grep -q "rate 800Mbit" || fail "after dilate 1 h1's link is not at the nominal 800mbit"
cpus() { "$TOP_SRCDIR/experiments/cluster-rsh" "$1" "awk '/^Cpus_allowed_list:/ { print \$2 }' /proc/self/status"; }
c0=$(cpus h0) c1=$(cpus h1)
[[ $c0 =~ ^[0-9]+$ && $c1 =~ ^[0-9]+$ ]] || fail "after dilate 1 hosts are not pinned to one CPU each (h0: '$c0', h1: '$c1')"
(( $(nproc) < 2 )) || [[ $c0 != "$c1" ]] || fail "after dilate 1 h0 and h1 share CPU $c0"
s4=$(busy_share h1) || fail "a busy loop could not run in h1 at dilation 1"
awk -v s="$s4" 'BEGIN { exit !(s > 0.9) }' || fail "at dilation 1 h1 got $s4 of a core, want a whole core"
"$CLUSTER" dilate 4 >/dev/null || fail "dilate 4 failed"
tc qdisc show dev psrv1 | grep -q "rate 200Mbit" || fail "after dilate 4 h1's link is not back at 200mbit"
[[ $(cpus h1) == "$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)" ]] || fail "after dilate 4 h1 is still pinned"
s5=$(busy_share h0) || fail "a busy loop could not run in h0 after dilate 4"
awk -v s="$s5" 'BEGIN { exit !(s > 0.225 && s < 0.275) }' || fail "after dilate 4 h0 got $s5 of a core, want 1/4 within 10%"

# down with a process still inside a host's cgroup
"$TOP_SRCDIR/experiments/cluster-rsh" h0 sleep 300 &
sleep 0.5
"$CLUSTER" down >/dev/null || fail "down failed"
wait 2>/dev/null
assert_clean "down of a dilated cluster"
[[ -z $poll || $(readlink "/proc/$poll/fd/3" 2>/dev/null) != /dev/cpu_dma_latency ]] || fail "down left the CPU latency request held (pid $poll)"
pass "dilation 4: h0 ran at $s0 of a core (1/4), straggler h1 at $s1 (1/8); quota off $s2, on again $s3; dilation 1: h1 pinned to CPU $c1 at $s4, back at 4: h0 $s5; down left nothing"
