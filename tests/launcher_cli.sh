#!/usr/bin/env bash
# launcher_cli.sh: a bad flag given to `psring train|bench -np N` gets the program's own line once
# and exit 2: the launcher validates the options once (--check-options, no MPI) before mpirun
# starts N ranks, so there is no line per rank and no mpirun abort banner.
source "$(dirname "$0")/common.sh"
export PSRING_BUILDDIR=$TOP_BUILDDIR
PSRING=$TOP_SRCDIR/psring

# once PSRING_ARGS...: exit 2 and exactly the one line WANT on stderr, nothing on stdout
once() {
  local want=$1; shift
  local out err rc=0
  out=$("$PSRING" "$@" 2>"$TOP_BUILDDIR/launcher_cli.err") || rc=$?
  err=$(cat "$TOP_BUILDDIR/launcher_cli.err")
  [[ $rc -eq 2 ]] || fail "psring $*: exit $rc, expected 2 (stderr: $err)"
  [[ -z $out ]] || fail "psring $*: printed on stdout: $out"
  [[ $err == "$want" ]] || fail "psring $*: stderr is not the one line '$want': $err"
}

# the trainer's own line, as it prints it alone
want=$("$TRAIN" --topology ring --allreduce foo 2>&1 >/dev/null)
[[ $want == "psring-train: --allreduce must be ring, mpi or nccl: got 'foo'" ]] || fail "psring-train's own message changed: $want"
once "$want" train -np 4 --topology ring --allreduce foo
once "psring-train: --sync must be bsp, async or ssp: got 'x'" train -np 3 --topology ps --sync x
once "psring-train: --data /no/such/dir: no such directory (fetch MNIST with experiments/get-mnist)" \
  train -np 2 --topology ring --data /no/such/dir
once "psring-bench-allreduce: -b: not a size (like 4K, 16M): 'foo'" bench allreduce -np 2 -b foo
once "psring-bench-allreduce: unknown option '--bogus' (try --help)" bench allreduce -np 3 --bogus
want=$("$TOP_BUILDDIR/psring-bench-ps" --check-options --transport udp 2>&1 >/dev/null)
[[ $want == "psring-bench-ps: --transport must be tcp or ipc, got 'udp'"* ]] || fail "psring-bench-ps's own message changed: $want"
once "$want" bench ps -np 3 --transport udp
once "psring: bench ps with -np 2 and --servers 2 leaves no worker (need -np > servers)" bench ps -np 2 --servers 2

# --check-options alone: good options pass silently, without MPI (no mpirun around it)
data=$(find_mnist) || data=$TOP_SRCDIR
out=$("$TRAIN" --check-options --topology ring --data "$data" 2>&1) || fail "psring-train --check-options on good options: $out"
[[ -z $out ]] || fail "psring-train --check-options printed: $out"
out=$("$TOP_BUILDDIR/psring-bench-allreduce" --check-options -b 4K -e 1M 2>&1) || fail "psring-bench-allreduce --check-options: $out"
out=$("$TOP_BUILDDIR/psring-bench-ps" --check-options --servers 2 2>&1) || fail "psring-bench-ps --check-options: $out"
rm -f "$TOP_BUILDDIR/launcher_cli.err"
pass "bad flags through psring train|bench -np N: one line, exit 2, before mpirun"
