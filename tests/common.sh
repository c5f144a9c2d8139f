# tests/common.sh: sourced by the shell tests. Finds the build, the data and mpirun; gives
# fail/skip helpers with automake's exit codes (77 = SKIP, 99 = hard error).
set -u
TOP_BUILDDIR=${TOP_BUILDDIR:-$(pwd)}
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
TRAIN="$TOP_BUILDDIR/psring-train"
MPIRUN=${MPIRUN:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_pml=ob1
MPIRUN_FLAGS="--oversubscribe --mca pml ob1"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
pass() { echo "PASS: $*"; }

# MNIST: the repo's data/mnist (./quickstart fetches it), else $MNIST_DIR, else skip
find_mnist() {
  for d in "${MNIST_DIR:-}" "$TOP_SRCDIR/data/mnist" "${PSRING_MNIST_DIR:-}"; do
    if [[ -n $d ]] && ls "$d"/train-images-idx3-ubyte* >/dev/null 2>&1; then echo "$d"; return 0; fi
  done
  return 1
}

# a scratch directory removed on exit
scratch() {
  SCRATCH=$(mktemp -d /tmp/psring-test.XXXXXX)
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
# CSV, since fields such as layers are quoted and hold commas); fails on a missing column
csv_col() { python3 -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))[sys.argv[2]])' "$1" "$2"; }

# ring_bytes_check CSV MODE: the ring's bytes_sent/recv_per_worker in the trainer's CSV (first row)
# against the ring's cost, 2(N-1)/N x n floats per rank and step (n = params, N = workers), within
# one element per segment (the first n % N segments are one longer). What a run counts depends on
# its path (src/ring): MODE msg, messages (the CPU ring with PSRING_RING_SHM=0 or across hosts, the
# GPU's staged or CUDA-aware ring): sent and received are each the cost; MODE shm, the load/store
# ring on one host: sent = stores into the peers' buffers, received = loads from them, (N-1) x its
# segment each, so only their sum is the cost. Prints what differs and returns 1.
ring_bytes_check() { # csv msg|shm
  python3 - "$1" "$2" <<'PY'
import csv, sys
r = next(csv.DictReader(open(sys.argv[1])))
n, N, steps = int(r["params"]), int(r["workers"]), int(r["steps"])
sent, recv = int(r["bytes_sent_per_worker"]), int(r["bytes_recv_per_worker"])
want = 2 * (N - 1) * n / N * 4 * steps
slack = 2 * (N - 1) * 4 * steps
got = {"msg": (sent, recv), "shm": (sent + recv,)}[sys.argv[2]]
bad = [g for g in got if abs(g - want) > slack] or (sys.argv[2] == "shm" and abs(sent - recv) > slack)
if bad or steps <= 0:
    print("%s (%s): bytes sent %d recv %d over %d steps; the ring's 2(N-1)/N n x 4 B x steps = %d (N=%d, n=%d)"
          % (sys.argv[1], sys.argv[2], sent, recv, steps, want, N, n))
    sys.exit(1)
PY
}
