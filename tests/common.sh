# tests/common.sh: the one library the shell tests source (and tests/installcheck.sh). Finds the
# build, the data and mpirun, sets Open MPI's test environment (experiments/pslib.sh, shared with the
# helpers), and gives fail/skip/pass with automake's exit codes (77 = SKIP, 99 = hard error), time
# limits for MPI jobs, scratch folders and loss comparisons. Not a test itself.
set -u
TOP_BUILDDIR=${TOP_BUILDDIR:-$(pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
# Python in the tests reads CSVs with psringlib's results.read_rows, the reader the commands use (a byte-order
# mark, a cut-off last line, a row of the wrong width): experiments/ on its path
export PYTHONPATH="$TOP_SRCDIR/experiments${PYTHONPATH:+:$PYTHONPATH}"
TRAIN="$TOP_BUILDDIR/psring-train"
BENCH="$TOP_BUILDDIR/psring-bench-allreduce"
MPIRUN=${MPIRUN:-mpirun}
# (already sourced: installcheck takes the installed copy's, as the tree's experiments/ is hidden there)
declare -F psring_mpi_env >/dev/null || . "$TOP_SRCDIR/experiments/pslib.sh" || exit 99
psring_mpi_env
MPIRUN_FLAGS="--oversubscribe --mca pml ob1"

# messages: "FAIL: ...", or "NAME: FAIL: ..." where a script sets FAIL_PREFIX="NAME: "
fail() { echo "${FAIL_PREFIX:-}FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
pass() { echo "PASS: $*"; }

# find_mnist: prints the MNIST folder ($PSRING_MNIST_DIR, else the tree's data/mnist), or returns 1
find_mnist() { psring_mnist_dir "$TOP_SRCDIR"; }
# need_mnist: MNIST_DIR is the MNIST folder, or the test skips saying what to set or run
need_mnist() { MNIST_DIR=$(find_mnist) || skip "$PSRING_MNIST_MISSING"; }
# need_prog PATH: skip when a program was not built (e.g. CUDA-only ones)
need_prog() { [[ -x $1 ]] || skip "$1 not built"; }

# mpi LIMIT ARGS...: mpirun with a hard time limit: a hang is a failure, never a stuck 'make check'
mpi() {
  local limit=$1; shift
  timeout -k 5 "$limit" "$MPIRUN" "$@"
}

# a scratch directory removed on exit
scratch() {
  SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/psring-test.XXXXXX") || exit 99
  trap 'rm -rf "$SCRATCH"' EXIT
}

# compare two "step,loss" files: same steps, every loss within rel tolerance
compare_losses() { # a b rtol
  awk -F, -v rtol="$3" '
    NR==FNR { a[$1]=$2; n++; next }
    { if (!($1 in a)) { printf "step %s missing in first file\n", $1; bad=1; exit 1 }
      d = a[$1]-$2; if (d<0) d=-d; m = a[$1]; if (m<0) m=-m
      if (d > rtol*m + 1e-12) { printf "step %s: %.9g vs %.9g (rel %.3g)\n", $1, a[$1], $2, d/m; bad=1 }
      c++ }
    END { if (c != n) { printf "%d steps vs %d\n", n, c; bad=1 }; if (c == 0) { print "no steps"; bad=1 }; exit bad }' "$1" "$2"
}

# expect_bad NEEDLE ARGS...: psring-train ARGS must exit 2 with one line that mentions NEEDLE
expect_bad() {
  local needle=$1; shift
  local out rc
  out=$("$TRAIN" "$@" 2>&1 >/dev/null); rc=$?
  [[ $rc -eq 2 ]] || fail "psring-train $* exited $rc, expected 2 (stderr: $out)"
  [[ $out == *"$needle"* ]] || fail "psring-train $*: message '$out' does not mention '$needle'"
  [[ $(printf '%s\n' "$out" | wc -l) -eq 1 ]] || fail "psring-train $*: more than one line: $out"
}

# csv_col CSV NAME: the value of column NAME in the CSV's first row (the trainer's --csv; read as
# CSV by psringlib, since fields such as layers are quoted and hold commas); fails on a missing column
csv_col() { python3 -c 'import sys; from psringlib import results; print(results.read_rows(sys.argv[1])[0][sys.argv[2]])' "$1" "$2"; }

# ring_bytes_check CSV MODE: the ring's bytes_sent/recv_per_worker in the trainer's CSV (first row)
# against the ring's cost, 2(N-1)/N x n floats per rank and step (n = params, N = workers), within
# one element per segment (the first n % N segments are one longer). What a run counts depends on
# its path (src/ring): MODE msg, messages (the CPU ring with PSRING_RING_SHM=0 or across hosts, the
# GPU's staged or CUDA-aware ring): sent and received are each the cost; MODE shm, the load/store
# ring on one host: sent = stores into the peers' buffers, received = loads from them, (N-1) x its
# segment each, so only their sum is the cost; the GPU's IPC path (ring_path ipc) counts the same
# way. MODE auto: the CSV's ring_path says which. Prints what differs and returns 1.
ring_bytes_check() { # csv msg|shm|auto
  python3 - "$1" "$2" <<'PY'
import sys; from psringlib import results
r = results.read_rows(sys.argv[1])[0]
n, N, steps = int(r["params"]), int(r["workers"]), int(r["steps"])
sent, recv = int(r["bytes_sent_per_worker"]), int(r["bytes_recv_per_worker"])
want = 2 * (N - 1) * n / N * 4 * steps
slack = 2 * (N - 1) * 4 * steps
mode = sys.argv[2]
if mode == "auto":
    mode = "shm" if r.get("ring_path") in ("shm", "ipc") else "msg"
got = {"msg": (sent, recv), "shm": (sent + recv,)}[mode]
bad = [g for g in got if abs(g - want) > slack] or (mode == "shm" and abs(sent - recv) > slack)
if bad or steps <= 0:
    print("%s (%s): bytes sent %d recv %d over %d steps; the ring's 2(N-1)/N n x 4 B x steps = %d (N=%d, n=%d)"
          % (sys.argv[1], mode, sent, recv, steps, want, N, n))
    sys.exit(1)
PY
}

# run_ring NP OUT ARGS...: psring-train --topology ring under mpirun, strong scaling, $COMMON; the
# per-step losses into OUT (needs scratch)
run_ring() {
  local np=$1 out=$2; shift 2
  # shellcheck disable=SC2086
  mpi 180 -np "$np" "$TRAIN" --topology ring --scaling strong $COMMON --loss-log "$out" "$@" >"$SCRATCH/out.txt" 2>&1 \
    || { cat "$SCRATCH/out.txt"; fail "ring -np $np $*"; }
}

# compare_steps A B TOL WHAT: two 50-step loss logs, same steps, every loss within TOL relative
compare_steps() {
  [ "$(wc -l < "$1")" -eq 50 ] || fail "$4: $1 has $(wc -l < "$1") lines, want 50"
  [ "$(wc -l < "$2")" -eq 50 ] || fail "$4: $2 has $(wc -l < "$2") lines, want 50"
  paste -d, "$1" "$2" | awk -F, -v tol="$3" -v what="$4" '
    function abs(v) { return v < 0 ? -v : v }
    { if ($1 != $3) { printf "%s: step %s vs %s\n", what, $1, $3; bad = 1; exit }
      d = abs($2 - $4); m = abs($2) > abs($4) ? abs($2) : abs($4)
      if (!(d <= tol * m)) { printf "%s: step %d loss %s vs %s (rel %.3g > %g)\n", what, $1, $2, $4, d / m, tol; bad = 1 }
      if (d / m > worst) worst = d / m }
    END { if (!bad) printf "%s: 50 steps, worst relative difference %.3g\n", what, worst; exit bad }' \
    || fail "$4"
}

# faults_run SCENARIOS: make check's wrapper around tools/faults, where the scenarios live
# (it prints one PASS/FAIL/SKIP line each): fails on any FAIL or a non-zero exit, skips when every
# scenario skipped
faults_run() {
  local data out rc
  data=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
  out=$("$TOP_SRCDIR/tools/faults" --builddir "$TOP_BUILDDIR" --data "$data" --only "$1" 2>&1)
  rc=$?
  echo "$out"
  grep -q "^FAIL" <<<"$out" && fail "fault scenarios failed"
  (( rc == 0 )) || fail "tools/faults exited $rc"
  grep -q "^PASS" <<<"$out" || skip "every scenario skipped"
  pass "$1"
}
