# cluster-cgroups.sh: the emulated hosts' CPU, sourced by experiments/cluster (psring cluster up
# --dilation, share, dilate, quota, down): each host's CPU share as a cgroup CFS quota, the host
# kinds (a GPU host's two shares), the idle-poll holder, and the groups' removal. It reads the
# caller's DIR (the state folder) and calls its die2; it makes no namespace, link or qdisc.

CG_NAME=psring-cluster  # the cgroup holding one child group per host (with --dilation)

# ---- CPU shares (cgroups) ------------------------------------------------------------------------
# A host's share is a CFS quota: quota/period = F/D of a core. A period much longer than a step
# makes the host run in bursts, and a quota near the kernel's 1 ms minimum is not delivered on a
# busy machine: a 2 ms quota, period 2D/F ms (measured: docs/results/lab-notes-experiments.md).
# (With the hosts' priority below, 1 ms is delivered; it makes dilated compute more faithful but
# thins the demo's crossover: docs/cluster.md.) cgroup v1 (cpu controller,
# cpu.cfs_quota_us/cpu.cfs_period_us) or v2 (cpu.max).
share_fits() { # share D: the CFS period 2000 D / share us must be >= 1000 (the kernel's minimum)
  awk -v f="$1" -v d="$2" 'BEGIN { exit !(d == 1 && f == 1 || f <= 2 * d) }'
}

cg_find() { # -> "1 DIR" or "2 DIR", the parent under which the host groups go; 1 if none
  local dev mnt type opts _
  while read -r dev mnt type opts _; do
    if [[ $type == cgroup && ,$opts, == *,cpu,* && -w $mnt ]]; then echo "1 $mnt/$CG_NAME"; return 0; fi
  done </proc/mounts
  while read -r dev mnt type opts _; do
    if [[ $type == cgroup2 && -w $mnt ]] && grep -qw cpu "$mnt/cgroup.subtree_control" 2>/dev/null; then
      echo "2 $mnt/$CG_NAME"; return 0
    fi
  done </proc/mounts
  return 1
}

# A host of a whole core at D=1 (`dilate 1` with share 1) gets no quota: cluster-rsh pins it to a
# core of its own instead (host hI on the I-th of this machine's CPUs). A quota of a whole core
# still stops a host in periods (2 ms here), longer than what a 1 Gbit exchange's CPU work waits
# for on a real host; two hosts pinned to two cores at 1 Gbit measured the model's exchange.
cg_weight() { # version dir-of-hosts high|normal: the hosts' parent outweighs everything else
  # (high: each host gets its quota first, whatever else runs), or weighs as much as one task
  # (normal: while `quota off` lifts the quotas, or the hosts at full speed starve everything else,
  # `quota on` itself included: 3.2 s instead of 30 ms beside 8 hosts)
  local w
  if [[ $1 == 1 ]]; then
    [[ $3 == high ]] && w=262144 || w=1024
    echo "$w" >"$2/cpu.shares"
  else
    [[ $3 == high ]] && w=10000 || w=100
    echo "$w" >"$2/cpu.weight"
  fi
}
cg_unlimit() { # version dir-of-host: no quota
  if [[ $1 == 1 ]]; then echo -1 >"$2/cpu.cfs_quota_us"; else echo "max" >"$2/cpu.max"; fi
}

cg_set_share() { # version dir-of-host dilation share
  local v=$1 d=$2 D=$3 F=$4 period quota
  if awk -v d="$D" -v f="$F" 'BEGIN { exit !(d == 1 && f == 1) }'; then   # 1 and 1.0 alike
    cg_unlimit "$v" "$d"
    return 0
  fi
  read -r period quota < <(awk -v D="$D" -v F="$F" 'BEGIN { p = int(2000 * D / F + 0.5); if (p > 1000000) p = 1000000;
    q = int(p * F / D + 0.5); if (q < 1000) q = 1000; print p, q }')
  if [[ $v == 1 ]]; then
    # period first when it shrinks below the old quota would be refused: set quota to -1 first
    echo -1 >"$d/cpu.cfs_quota_us"
    echo "$period" >"$d/cpu.cfs_period_us"
    echo "$quota" >"$d/cpu.cfs_quota_us"
  else
    echo "$quota $period" >"$d/cpu.max"
  fi
}

# ---- host kinds ----------------------------------------------------------------------------------
# A CPU host's compute and everything that communicates or sums compete for its one share. A GPU
# host computes on the GPU while idle cores move and sum data: its group hI holds no quota and two
# children of one size F/D, hI/host (the daemon and all it starts: PS servers, ZeroMQ I/O, MPI, the
# ring's communication) and hI/accel (the GPU: the trainer's compute thread moves itself there,
# src/train/accel_share.c). In cgroup v2 the children are threaded, so that the threads of one
# process may sit in both.
parse_kinds() { # spec N -> "G C"; a bad spec: one line, exit 2 (call it as $(...) || exit 2)
  local spec=$1 n=$2 item k c g="" cc="" items
  [[ $spec =~ ^[a-z]+:[0-9]+(,[a-z]+:[0-9]+)*$ ]] || die2 "--kinds must be like gpu:2,cpu:3: got '$spec'"
  IFS=, read -r -a items <<<"$spec"
  for item in "${items[@]}"; do
    k=${item%%:*}; c=${item#*:}
    [[ $c =~ ^(0|[1-9][0-9]*)$ ]] || die2 "--kinds: '$item' needs a count without leading zeros"
    case $k in
      gpu) [[ -z $g ]] || die2 "--kinds names gpu twice: '$spec'"; g=$c ;;
      cpu) [[ -z $cc ]] || die2 "--kinds names cpu twice: '$spec'"; cc=$c ;;
      *) die2 "--kinds: unknown kind '$k' in '$spec' (gpu or cpu)" ;;
    esac
  done
  g=${g:-0}; cc=${cc:-0}
  (( g <= n )) || die2 "--kinds $spec: $g GPU hosts, but the cluster has $n"
  (( g + cc == n )) || die2 "--kinds $spec: $g GPU + $cc CPU hosts are not the $n hosts of the cluster"
  echo "$g $cc"
}

host_kind() { # host -> gpu or cpu (its kind= line in the state; none: cpu)
  awk -v h="$1" '$1 == "kind=" h { k = $2 } END { print k == "" ? "cpu" : k }' "$DIR/state"
}

host_groups() { # dir-of-cgroups host -> the groups holding the host's quota: hI, or hI/host and hI/accel
  if [[ $(host_kind "$2") == gpu ]]; then echo "$1/$2/host" "$1/$2/accel"; else echo "$1/$2"; fi
}

host_set_share() { # version dir-of-cgroups host dilation share: every share of the host at F/D
  local g
  for g in $(host_groups "$2" "$3"); do cg_set_share "$1" "$g" "$4" "$5"; done
}

host_unlimit() { # version dir-of-cgroups host
  local g
  for g in $(host_groups "$2" "$3"); do cg_unlimit "$1" "$g"; done
}

cg_make_host() { # version dir-of-host kind
  local c
  mkdir "$2"
  [[ $3 == gpu ]] || return 0
  if [[ $1 == 2 ]]; then echo +cpu >"$2/cgroup.subtree_control"; fi
  for c in host accel; do
    mkdir "$2/$c"
    if [[ $1 == 2 ]]; then echo threaded >"$2/$c/cgroup.type"; fi
  done
}

# Idle CPUs poll while a dilated cluster is up. A host at 1/D of a core sits throttled most of
# every period, and this machine's CPUs then halt (a KVM guest: the vCPU goes back to the
# hypervisor), which spreads the compute per step as a real 1-core host's is not spread
# (measured: docs/results/lab-notes-experiments.md). The PM QoS request (/dev/cpu_dma_latency 0,
# as tuned's latency profiles hold it) lasts as long as the file is open: a sleeper in the
# cluster's cgroup holds it, and `down` (cg_remove) kills it with the hosts' processes.
close_fds() { # every descriptor above 2 of this (sub)shell
  local f
  for f in /proc/$BASHPID/fd/*; do
    f=${f##*/}
    (( f > 2 )) && eval "exec $f>&-" 2>/dev/null
  done
  return 0
}

idle_poll_start() { # cgroup-parent
  [[ -w /dev/cpu_dma_latency ]] || return 0
  mkdir "$1/poll"
  # it closes what it inherited first: a lock or pipe of the caller's (a test's flock on fd 9)
  # would otherwise stay held for as long as the cluster is up
  ( echo "$BASHPID" >"$1/poll/cgroup.procs" && close_fds && exec 3>/dev/cpu_dma_latency && echo 0 >&3 && exec sleep infinity ) \
    </dev/null >/dev/null 2>&1 &
  echo "idle_poll=$!" >>"$DIR/state"
}

cg_remove_group() { # dir: its children first (a GPU host's two shares), then what is left inside is
  # killed (a v2 threaded group lists threads, not processes) and the group removed
  local d=$1 c p tries
  for c in "$d"/*/; do
    [[ -d $c ]] && cg_remove_group "${c%/}"
  done
  for tries in 1 2 3 4 5 6 7 8 9 10; do
    p=$(cat "$d/cgroup.procs" 2>/dev/null || cat "$d/cgroup.threads" 2>/dev/null || true)
    [[ -z $p ]] && break
    kill -9 $p 2>/dev/null || true
    sleep 0.1
  done
  rmdir "$d" 2>/dev/null || true
}

cg_remove() { # version parent: every host group (killing what is left inside), then the parent
  local v=$1 parent=$2 d
  [[ -d $parent ]] || return 0
  for d in "$parent"/*/; do
    [[ -d $d ]] && cg_remove_group "${d%/}"
  done
  rmdir "$parent" 2>/dev/null || true
}
