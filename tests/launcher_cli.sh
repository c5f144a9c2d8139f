#!/usr/bin/env bash
# launcher_cli.sh: a bad flag given to `psring train|bench -np N` gets the program's own line once
# and exit 2: the launcher validates the options once (--describe and --check-options, no MPI)
# before mpirun starts N ranks, so there is no line per rank and no mpirun abort banner.
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
once "psring-bench-allreduce: -b: not a size of at least 4 bytes (like 4K, 16M): 'foo'" bench allreduce -np 2 -b foo
once "psring-bench-allreduce: unknown option '--bogus' (try --help)" bench allreduce -np 3 --bogus
want=$("$TOP_BUILDDIR/psring-bench-ps" --check-options --transport udp 2>&1 >/dev/null)
[[ $want == "psring-bench-ps: --transport must be tcp or ipc, got 'udp'"* ]] || fail "psring-bench-ps's own message changed: $want"
once "$want" bench ps -np 3 --transport udp
once "psring: bench ps with -np 2 and --servers 2 leaves no worker (need -np > servers)" bench ps -np 2 --servers 2
# what used to slip through: an abbreviated flag the launcher cannot see (--top ring read as
# --topology by getopt_long), a cluster of short options named by the word before it, a value
# taken from the next flag, an output path refused only after the training, a size of 0 bytes
# (an endless loop) or NaN, a count bash reads as octal, a flag without its value
once "psring-train: write --topology out in full (an abbreviation of it was given)" train -np 2 --top ring
out=$("$TRAIN" --check-options --epo 1 2>&1); rc=$?
[[ $rc -eq 2 && $out == "psring-train: write --epochs out in full (an abbreviation of it was given)" ]] || fail "--epo 1: rc $rc: $out"
once "psring-train: unknown option '-x' (see --help)" train -np 2 --topology ring --epochs 1 -xyz
once "psring-train: --csv needs a path: got '--quiet'" train -np 2 --topology ring --csv --quiet
once "psring-train: --csv /no/such/dir/r.csv: cannot write in /no/such/dir: No such file or directory" \
  train -np 2 --topology ring --data "$TOP_SRCDIR" --csv /no/such/dir/r.csv
once "psring-bench-allreduce: -b: not a size of at least 4 bytes (like 4K, 16M): '0'" bench allreduce -np 2 -b 0
once "psring-bench-allreduce: -e: not a size of at least 4 bytes (like 4K, 16M): 'nan'" bench allreduce -np 2 -e nan
once "psring: -np must be a positive integer up to 999999: got '08'" train -np 08 --topology ring
once "psring-train: option --topology needs a value (see --help)" train -np 2 --topology
# what the process count must be is the topology's rule, said by the trainer (--describe-np)
once "psring-train: --topology local runs one process: drop -np 4 or pick another topology" train -np 4 --topology local
once "psring-train: --topology ps with -np 2 and --servers 2 leaves no worker (need -np > servers)" \
  train -np 2 --topology ps --servers 2
once "psring-train: --servers applies to --topology ps only" train -np 2 --topology ring --servers 2
once "psring: bench gemm runs one process: drop -np 4" bench gemm -np 4
# a long option refused is named as typed, not by its one-letter value ('-S needs a value')
out=$("$TOP_BUILDDIR/psring-bench-ps" --check-options --servers 2>&1)
[[ $out == "psring-bench-ps: --servers needs a value"* ]] || fail "bench ps --servers without a value: $out"
# started by mpirun itself (no launcher check), a bad flag is still said once, by rank 0
out=$(timeout 60 $MPIRUN -np 2 "$TRAIN" --topology ring --epochs x 2>&1)
[[ $(grep -c "^psring-train: --epochs" <<<"$out") == 1 ]] || fail "mpirun -np 2 psring-train --epochs x: $out"
# keygen --force replaces a keyfile, never what else is at the path (as root it removed /dev/null)
d=$(mktemp -d) && mkfifo "$d/fifo" && ln -s "$d/fifo" "$d/link" || fail "cannot make a FIFO and a link"
for p in "$d/fifo" "$d/link"; do
  out=$("$PSRING" keygen "$p" --force 2>&1); rc=$?
  [[ $rc -eq 2 && $out == *"not a regular file"* && -p $d/fifo ]] || fail "keygen --force on $p: rc $rc: $out"
done
"$PSRING" keygen "$d/k" >/dev/null && cp "$d/k" "$d/k0" && "$PSRING" keygen "$d/k" --force >/dev/null || fail "keygen --force on a keyfile"
! cmp -s "$d/k" "$d/k0" && [[ $(stat -c %a "$d/k") == 600 && $(ls "$d" | wc -l) == 4 ]] || fail "keygen --force: $(ls -l "$d")"
rm -rf "$d"

# --check-options alone: good options pass silently, without MPI (no mpirun around it)
data=$(find_mnist) || data=$TOP_SRCDIR
out=$("$TRAIN" --check-options --topology ring --data "$data" 2>&1) || fail "psring-train --check-options on good options: $out"
[[ -z $out ]] || fail "psring-train --check-options printed: $out"
out=$("$TOP_BUILDDIR/psring-bench-allreduce" --check-options -b 4K -e 1M 2>&1) || fail "psring-bench-allreduce --check-options: $out"
out=$("$TOP_BUILDDIR/psring-bench-ps" --check-options --servers 2 2>&1) || fail "psring-bench-ps --check-options: $out"
rm -f "$TOP_BUILDDIR/launcher_cli.err"
pass "bad flags through psring train|bench -np N: one line, exit 2, before mpirun"
