# shellcheck shell=bash
# tests/cluster_common.sh: sourced by the cluster tests after common.sh. Skips (77) where emulated
# hosts cannot be made (not root, no network namespaces, a user's cluster already up), takes a
# lock so that cluster tests running in parallel (make -j check) take turns, makes $SCRATCH, and
# always tears the cluster down on exit, also on failure. Tests must not call scratch() after it.
CLUSTER="$TOP_SRCDIR/experiments/cluster"
export PSRING_BUILDDIR="$TOP_BUILDDIR"
[[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces)"
command -v ip >/dev/null && command -v tc >/dev/null || skip "needs ip and tc (iproute2)"
command -v flock >/dev/null || skip "needs flock (util-linux)"
exec 9>/run/psring-cluster-test.lock || skip "cannot create /run/psring-cluster-test.lock"
flock -w 300 9 || fail "another cluster test held the lock for 300 s"
ip netns add psring-test-probe.$$ 2>/dev/null || skip "network namespaces are not permitted here"
ip netns del psring-test-probe.$$
# a cluster left by a test that was killed (SIGKILL skips traps) is ours to remove; any other
# cluster belongs to a user
owner=$(awk -F= '$1 == "owner" { print $2 }' /run/psring-cluster/state 2>/dev/null || true)
if [[ $owner =~ ^test:([0-9]+)$ ]] && ! kill -0 "${BASH_REMATCH[1]}" 2>/dev/null; then
  "$CLUSTER" down >/dev/null 2>&1 || true
fi
if [[ -e /run/psring-cluster/state ]] || ip link show psrbr0 >/dev/null 2>&1; then
  skip "an emulated cluster is already up (psring cluster down first); not touching it"
fi
export PSRING_CLUSTER_OWNER="test:$$"
# one EXIT trap for both the scratch directory and the cluster (scratch() would replace it)
SCRATCH=$(mktemp -d /tmp/psring-test.XXXXXX)
trap '"$CLUSTER" down >/dev/null 2>&1 || true; rm -rf "$SCRATCH"' EXIT

# what must be gone after `down`: namespaces, veths, the bridge, their qdiscs, the CPU-share cgroups
assert_clean() { # what-for
  local left=""
  ip netns list | awk '{ print $1 }' | grep -Eq '^h[0-9]+$' && left+=" namespaces: $(ip netns list | awk '{ print $1 }' | grep -E '^h[0-9]+$' | paste -sd,)"
  ip -o link show | grep -Eq ': (psrv|psrp)[0-9]+[@:]' && left+=" veths"
  ip link show psrbr0 >/dev/null 2>&1 && left+=" bridge psrbr0"
  tc qdisc show | grep -Eq 'dev (psrv|psrbr)' && left+=" qdiscs"
  [[ -e /run/psring-cluster ]] && left+=" /run/psring-cluster"
  local cg
  for cg in /sys/fs/cgroup/cpu/psring-cluster /sys/fs/cgroup/unified/psring-cluster /sys/fs/cgroup/psring-cluster; do
    [[ -e $cg ]] && left+=" cgroup $cg"
  done
  [[ -z $left ]] || fail "$1 left behind:$left"
}

# `psring demo --quick` into $SCRATCH/r (its output in $SCRATCH/out) in a process group of its
# own, $pid; without the cluster tests' lock (fd 9): a demo a test leaves behind must not hold it.
# When the test exits the group is killed and the hosts are taken down.
start_quick_demo() {
  local mnist
  mnist=$(find_mnist) || skip "no MNIST (./quickstart fetches it into data/mnist)"
  command -v setsid >/dev/null || skip "needs setsid (util-linux)"
  PSRING_MNIST_DIR=$mnist setsid "$TOP_SRCDIR/psring" demo --quick -o "$SCRATCH/r" >"$SCRATCH/out" 2>&1 9>&- &
  pid=$!
  trap 'kill -KILL -- -"$pid" 2>/dev/null; "$CLUSTER" down >/dev/null 2>&1 || true; rm -rf "$SCRATCH"' EXIT
}
