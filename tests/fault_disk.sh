#!/bin/bash
# fault_disk.sh: checkpoints on a full or read-only file system: clear error, previous checkpoint intact (SKIP without mount rights).
# A wrapper for make check around tools/faults (which prints one PASS/FAIL/SKIP line per
# scenario and is where the scenarios live).
. "$(dirname "$0")/common.sh"
faults_run disk-full,read-only
