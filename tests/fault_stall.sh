#!/bin/bash
# fault_stall.sh: --stall-warn names a slow rank (ring: rank 0, ps: server 0).
# A wrapper for make check around tools/faults (which prints one PASS/FAIL/SKIP line per
# scenario and is where the scenarios live).
. "$(dirname "$0")/common.sh"
faults_run stall-ring,stall-ps
