#!/bin/bash
# ring_deadrank.sh: a rank killed with SIGKILL in the middle of a ring run must end the job, with
# a non-zero status and the dead rank named, instead of leaving the others waiting for it
# forever. Open MPI's mpirun does this (it watches its children); the test makes sure nothing in
# the ring defeats it. Once with the allreduce benchmark (always runs), once with the trainer
# (needs MNIST), and where a GPU is usable once with the device ring's IPC path, which must end
# within 10 s of the kill (no kernel waits on a peer). Each job runs under a timeout: a hang is a
# failure.
. "$(dirname "$0")/common.sh"
scratch
need_prog "$BENCH"

# kill_rank_of JOBPID RANK: SIGKILL the process of that MPI rank among JOBPID's descendants
kill_rank_of() {
    for i in $(seq 1 100); do
        for p in $(pgrep -P "$(pgrep -P "$1" | head -1)" 2>/dev/null); do
            if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
                kill -9 "$p"
                return 0
            fi
        done
        sleep 0.1
    done
    return 1
}

# dead JOB-NAME SLEEP COMMAND...: start the job, kill rank 1 after SLEEP s, check how it ended
dead() {
    local what=$1 wait=$2; shift 2
    local t0
    timeout -k 5 60 "$MPIRUN" "$@" > "$SCRATCH/out.txt" 2>&1 &
    local job=$!
    sleep "$wait"
    kill_rank_of "$job" 1 || { kill $job; fail "$what: could not find rank 1 to kill"; }
    t0=$(date +%s)
    wait $job
    local rc=$? t1=$(date +%s)
    tail -15 "$SCRATCH/out.txt"
    # mpirun itself exits 137 (128 + SIGKILL) for a killed rank; a hang shows as the time limit
    [ $rc -ne 124 ] && [ $((t1 - t0)) -le "${DEAD_WITHIN:-50}" ] || fail "$what: the job took $((t1 - t0)) s to end after rank 1 died (status $rc)"
    [ $rc -ne 0 ] || fail "$what: exit status 0 after rank 1 was killed"
    grep -q "rank 1" "$SCRATCH/out.txt" || fail "$what: the dead rank is not named"
    echo "$what: ended with status $rc, rank 1 named"
}

dead "bench" 1.5 -np 3 "$BENCH" -b 16M -e 16M -n 100000 -w 1 -c 0 --impl ring
if MNIST_DIR=$(find_mnist); then
    dead "train" 2 -np 3 "$TRAIN" --topology ring --data "$MNIST_DIR" --layers 784,256,10 --epochs 1000 --quiet
else
    echo "$PSRING_MNIST_MISSING: trainer case skipped"
fi
PROBE=$TOP_BUILDDIR/tests/test_ring_cuda
if [ -x "$PROBE" ] && "$PROBE" --probe; then
    DEAD_WITHIN=10 dead "bench --device cuda (ipc)" 4 -np 2 "$BENCH" --device cuda --impl ring -b 64M -e 64M -n 1000000 -w 1 -c 0
else
    echo "no usable GPU: the device ring's case skipped"
fi
echo "ring_deadrank: ok"
