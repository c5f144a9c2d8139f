#!/bin/bash
# fault_kill.sh: kill -9 of a worker or server (ring, ps bsp, ps async) mid-training: job ends in time naming the rank, exit status reflects lost work, resume from the last checkpoint is bit-exact (ring, bsp) or as accurate (async).
# A wrapper for make check around tools/faults (which prints one PASS/FAIL/SKIP line per
# scenario and is where the scenarios live).
. "$(dirname "$0")/common.sh"
faults_run kill-ring-worker,kill-ring-rank0,kill-ps-bsp-worker,kill-ps-bsp-server,kill-ps-async-worker,kill-ps-async-server
