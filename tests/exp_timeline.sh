#!/usr/bin/env bash
# exp_timeline.sh: --timeline on real runs. ring -np 2 (the load/store path on one host, and the
# message path with PSRING_RING_SHM=0) and ps -np 3 --servers 1 each produce one JSON file that
# python3's json module parses, with every process present and the phases each role must show,
# the PS workers named with local ranks 0 and 1 (the server on their host not counted); no part
# file is left behind.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
data=$(find_mnist) || skip "no MNIST (run ./quickstart build)"
[[ -x $TRAIN ]] || fail "no $TRAIN"
scratch
common=(--data "$data" --train-limit 640 --steps 6 --test-limit 200 --quiet)
$MPIRUN $MPIRUN_FLAGS -np 2 "$TRAIN" --topology ring "${common[@]}" --timeline "$SCRATCH/ring.json" >/dev/null \
  || fail "ring run with --timeline failed"
$MPIRUN $MPIRUN_FLAGS -np 2 -x PSRING_RING_SHM=0 "$TRAIN" --topology ring "${common[@]}" --timeline "$SCRATCH/ring-msg.json" \
  >/dev/null || fail "ring run with --timeline and PSRING_RING_SHM=0 failed"
$MPIRUN $MPIRUN_FLAGS -np 3 "$TRAIN" --topology ps --servers 1 "${common[@]}" --timeline "$SCRATCH/ps.json" >/dev/null \
  || fail "ps run with --timeline failed"
ls "$SCRATCH"/*.part* >/dev/null 2>&1 && fail "part files left behind: $(ls "$SCRATCH")"
python3 - "$SCRATCH/ring.json" "$SCRATCH/ps.json" "$SCRATCH/ring-msg.json" <<'PY' || fail "timeline content"
import json, sys, collections
def phases(path):
    d = json.load(open(path))
    names = collections.defaultdict(collections.Counter)
    for e in d["traceEvents"]:
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] > 0, e
            names[e["pid"]][e["name"]] += 1
    return names
ring = phases(sys.argv[1])
assert set(ring) == {0, 1}, dict(ring)
for r in (0, 1):
    # one host: the gradients sit in a shared window and the ring loads and stores (ring_shm.c);
    # PSRING_RING_SHM=0 or several hosts: messages, reduce-scatter then allgather
    shm = ring[r]["reduce+store"] > 0
    allreduce = ("shm-entry", "reduce+store", "shm-exit") if shm else ("reduce-scatter", "allgather")
    for p in ("data", "forward", "backward", "exchange", "optimizer") + allreduce:
        assert ring[r][p] >= 6, (r, p, dict(ring[r]))
msg = phases(sys.argv[3])
for r in (0, 1):
    assert msg[r]["reduce-scatter"] >= 6 and msg[r]["allgather"] >= 6 and msg[r]["reduce+store"] == 0, (r, dict(msg[r]))
ps = phases(sys.argv[2])
assert set(ps) == {0, 1, 2}, dict(ps)
# local ranks count the workers on the host only: a server sharing it must not shift their GPUs
pname = {e["pid"]: e["args"]["name"] for e in json.load(open(sys.argv[2]))["traceEvents"] if e["name"] == "process_name"}
assert pname[1].endswith("worker 0, local rank 0") and pname[2].endswith("worker 1, local rank 1"), pname
assert ps[0]["server-apply"] >= 6 and ps[0]["forward"] == 0, dict(ps[0])
for r in (1, 2):
    for p in ("forward", "backward", "exchange", "push", "wait", "pull"):
        assert ps[r][p] >= 6, (r, p, dict(ps[r]))
PY
pass "timeline"
