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
