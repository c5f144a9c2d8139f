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
# --workers N: the topology's layout (psring-train --describe --describe-workers N) gives -np,
# the hosts and the flags N implies; over hosts the launcher deals the first H of them, rank r on
# host r mod H (--map-by node, as many slots each as that needs). Dry runs over a hostfile of 10,
# -H and an emulated cluster's state (PSRING_CLUSTER_DIR: only its hostfile and state are read)
scratch
export TMPDIR=$SCRATCH/tmp && mkdir "$TMPDIR"   # the temporary hostfiles: none may be left
for i in $(seq 0 9); do echo "10.99.0.$((i + 2)) slots=1"; done >"$SCRATCH/hosts10"
# dry PSRING_TRAIN_ARGS...: the mpirun line in $cmd, the hosts dealt in $dealt ("" = none)
dry() {
  local out
  out=$("$PSRING" train --dry-run --data "$data" "$@" 2>&1) || fail "psring train $*: $out"
  cmd=$(grep '^psring: .*mpirun' <<<"$out") dealt=$(sed -n 's/^psring: hosts: //p' <<<"$out")
  [[ -n $cmd ]] || fail "psring train --dry-run $*: no mpirun line: $out"
}
# expect_layout P H WORDS ARGS...: -np P, the first H hosts of hosts10 with ceil(P/H) slots each,
# --map-by node, WORDS ("--servers 10") after the program
expect_layout() {
  local p=$1 h=$2 words=$3; shift 3
  local want
  want=$(head -n "$h" "$SCRATCH/hosts10" | awk -v s=$(( (p + h - 1) / h )) '{ print $1 " slots=" s }' | paste -sd, | sed 's/,/, /g')
  dry --hostfile "$SCRATCH/hosts10" "$@"
  [[ $cmd == *" --map-by node "* && $cmd == *" -np $p "* && $dealt == "$want" ]] ||
    fail "psring train $*: want -np $p on $want with --map-by node: $cmd (hosts: $dealt)"
  [[ -z $words || $cmd == *"/psring-train "*" $words"* ]] || fail "psring train $*: no '$words' for the ranks: $cmd"
  [[ $cmd != *" --servers "*" --servers "* ]] || fail "psring train $*: --servers twice: $cmd"
}
for n in 2 4 8; do
  expect_layout "$n" "$n" "" --topology ring --workers "$n"
  expect_layout $(( n + 2 )) $(( n + 2 )) "" --topology ps --servers 2 --workers "$n"   # ps-lite: hosts of their own
  for k in 0 1 2; do   # BytePS: N+K servers, one per host, worker i beside server i
    expect_layout $(( 2 * n + k )) $(( n + k )) "--servers $(( n + k ))" --topology ps --byteps "$k" --workers "$n"
  done
done
expect_layout 18 10 "--servers 10" --topology ps --byteps 2 --servers 10 --workers 8   # given as implied
# without hosts only -np is derived; -H is dealt like a hostfile (its slots replaced)
dry --topology ps --byteps 1 --workers 4
[[ $cmd == *" -np 9 "*"--servers 5"* && $cmd != *--map-by* && -z $dealt ]] || fail "--workers 4 --byteps 1 on this host: $cmd"
dry -H a:4,b,c,b,d --topology ring --workers 3
[[ $cmd == *" -np 3 "* && $dealt == "a slots=1, b slots=1, c slots=1" ]] || fail "-H a:4,b,c,b,d --workers 3: $cmd (hosts: $dealt)"
head -n 9 "$SCRATCH/hosts10" >"$SCRATCH/hosts9"
once "psring: --workers 8 needs 10 hosts (8 workers beside 8 servers, 2 more on hosts of their own); --hostfile $SCRATCH/hosts9 has 9" \
  train --hostfile "$SCRATCH/hosts9" --topology ps --byteps 2 --workers 8
once "psring: --workers 4 needs 6 hosts (2 servers and 4 workers, each on a host of its own); -H names 5" \
  train -H a,b,c,d,e --topology ps --servers 2 --workers 4
# the emulated cluster (--cluster needs root: the ranks enter its hosts' namespaces)
if [[ $(id -u) -eq 0 ]]; then
  mkdir "$SCRATCH/c9" && cp "$SCRATCH/hosts9" "$SCRATCH/c9/hostfile" && printf 'hosts=9\nsubnet=10.99.0.0/24\n' >"$SCRATCH/c9/state"
  PSRING_CLUSTER_DIR=$SCRATCH/c9 once "psring: --workers 8 needs 10 hosts (8 workers beside 8 servers, 2 more on hosts of their own); the emulated cluster has 9: psring cluster up 10" \
    train --cluster --topology ps --byteps 2 --workers 8 --data "$data"
  PSRING_CLUSTER_DIR=$SCRATCH/c9 dry --cluster --topology ps --byteps 1 --workers 4
  [[ $cmd == *" --map-by node "*" -np 9 "*"--servers 5 --bind 10.99.0.0/24"* &&
     $dealt == "10.99.0.2 slots=2, 10.99.0.3 slots=2, 10.99.0.4 slots=2, 10.99.0.5 slots=2, 10.99.0.6 slots=2" ]] ||
    fail "--cluster --workers 4 --byteps 1: $cmd (hosts: $dealt)"
fi
# what --workers refuses: one line, exit 2, nothing started
for bad in 0 -1 2.5 08 x ""; do
  once "psring: --workers must be a positive integer up to 999999: got '$bad'" train --topology ring --workers "$bad"
done
once "psring: give --workers or -np, not both (--workers derives -np)" train --topology ring --workers 2 -np 2
once "psring: --workers goes with psring train (a benchmark takes -np)" bench allreduce --workers 2
once "psring-train: --topology local runs one worker: drop --workers 2 or pick another topology" train --workers 2
once "psring-train: --servers 9 contradicts --byteps 2 with --workers 8: the placement needs --servers 10 (or leave --servers out)" \
  train --topology ps --byteps 2 --servers 9 --workers 8
once "psring-train: --byteps 2 needs --servers N+2 for N workers (psring train --workers N implies it)" \
  train -np 12 --topology ps --byteps 2
[[ -z $(ls "$TMPDIR") ]] || fail "temporary hostfiles left behind: $(ls "$TMPDIR")"
# and for real: 2 workers with --byteps 1 start 5 ranks, every one told --servers 3
if real=$(find_mnist); then
  out=$(timeout 120 "$PSRING" train --topology ps --byteps 1 --workers 2 --data "$real" --layers 784,16,10 --steps 3 \
        --train-limit 640 --quiet --csv "$SCRATCH/w.csv" 2>&1) || fail "psring train --workers 2 --byteps 1: $out"
  [[ $(csv_col "$SCRATCH/w.csv" servers) == 3 && $(csv_col "$SCRATCH/w.csv" workers) == 2 ]] ||
    fail "--workers 2 --byteps 1: servers $(csv_col "$SCRATCH/w.csv" servers), workers $(csv_col "$SCRATCH/w.csv" workers)"
fi
rm -f "$TOP_BUILDDIR/launcher_cli.err"
pass "bad flags through psring train|bench -np N: one line, exit 2, before mpirun; --workers N derives -np and the hosts"
