# ring_common.sh: sourced by tests/ring_*.sh. Finds the programs, mpirun and MNIST, runs MPI jobs
# under a timeout, and gives each test a scratch folder that is removed on exit. Not a test itself.
TOP_BUILDDIR=${TOP_BUILDDIR:-.}
MPIRUN=${MPIRUN:-mpirun}
MNIST_DIR=${MNIST_DIR:-/work/shared/data/mnist}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
TRAIN=$TOP_BUILDDIR/psring-train
BENCH=$TOP_BUILDDIR/psring-bench-allreduce
TMP=$(mktemp -d "${TMPDIR:-/tmp}/psring-ring-test.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

need_mnist() {
    if [ ! -e "$MNIST_DIR/train-images-idx3-ubyte.gz" ] && [ ! -e "$MNIST_DIR/train-images-idx3-ubyte" ]; then
        echo "SKIP: no MNIST in $MNIST_DIR" >&2
        exit 77
    fi
}

need_prog() {
    [ -x "$1" ] || { echo "SKIP: $1 not built" >&2; exit 77; }
}

# mpirun with a hard time limit: a hang is a failure, never a stuck 'make check'
mpi() {
    local limit=$1; shift
    timeout -k 5 "$limit" "$MPIRUN" "$@"
}

# run_ring NP OUT ARGS...: psring-train --topology ring under mpirun, strong scaling, $COMMON
run_ring() {
    local np=$1 out=$2; shift 2
    mpi 180 -np "$np" "$TRAIN" --topology ring --scaling strong $COMMON --loss-log "$out" "$@" > "$TMP/out.txt" 2>&1 \
        || { cat "$TMP/out.txt"; fail "ring -np $np $*"; }
}

# compare A B TOL WHAT: 50 lines each, same steps, every loss within TOL relative
compare() {
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
