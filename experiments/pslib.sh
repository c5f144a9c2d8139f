# pslib.sh: what psring's shell helpers and its tests share (the shell side of psringlib), sourced,
# never run: Open MPI's environment for jobs on small shared machines, and where MNIST is. POSIX sh,
# because make check's AM_TESTS_ENVIRONMENT sources it too. Installed beside the helpers (faults
# and valgrind-check source it from their own folder); it defines two functions and one message.

# psring_mpi_env: Open MPI may run as root (containers, CI) and put more ranks than cores on one
# host (the 2-core machines the tests run on); ob1 keeps point-to-point on the shared-memory and
# TCP transports every machine has, unless the caller chose another pml.
psring_mpi_env() {
    OMPI_ALLOW_RUN_AS_ROOT=1; export OMPI_ALLOW_RUN_AS_ROOT
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
    OMPI_MCA_rmaps_base_oversubscribe=1; export OMPI_MCA_rmaps_base_oversubscribe
    OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}; export OMPI_MCA_pml
}

# psring_mnist_dir ROOT: the MNIST folder, found the one way every tool and test finds it:
# $PSRING_MNIST_DIR, else ROOT/data/mnist, the source tree's (an installed helper, told so by the
# launcher's PSRING_DATADIR, looks in ./data/mnist instead: psring-train's default --data and where
# psring get-mnist puts it). Prints it and returns 0, or returns 1 when neither holds
# train-images-idx3-ubyte(.gz); PSRING_MNIST_MISSING is then the one line to tell the user.
PSRING_MNIST_MISSING="no MNIST (set PSRING_MNIST_DIR, or run experiments/get-mnist)"
psring_mnist_dir() {
    _r=$1
    [ -z "${PSRING_DATADIR:-}" ] || _r=.
    for _d in "${PSRING_MNIST_DIR:-}" "$_r/data/mnist"; do
        if [ -n "$_d" ] && { [ -e "$_d/train-images-idx3-ubyte.gz" ] || [ -e "$_d/train-images-idx3-ubyte" ]; }; then
            (CDPATH= cd -- "$_d" && pwd)   # (CDPATH set: cd would print the folder too)
            return 0
        fi
    done
    return 1
}
