#!/usr/bin/env bash
# train_csv_columns.sh: each exchange fills its own CSV columns (exchange.h report) and only those:
# the ring its allreduce/op/hierarchical, the PS its sync/servers/transport/bytes_per_server/
# lost_workers, both fp16 and overlap, the local topology none of them; the shared columns always.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
[[ -x $TRAIN ]] || fail "no $TRAIN"
scratch
C=(--data "$DATA" --train-limit 640 --test-limit 200 --steps 3 --layers 784,32,10 --quiet --csv "$SCRATCH/r.csv")
"$TRAIN" --topology local "${C[@]}" >"$SCRATCH/out" 2>&1 || { cat "$SCRATCH/out"; fail "local run failed"; }
timeout -k 5 120 "$MPIRUN" $MPIRUN_FLAGS -np 2 "$TRAIN" --topology ring --op sum "${C[@]}" >"$SCRATCH/out" 2>&1 \
  || { cat "$SCRATCH/out"; fail "ring run failed"; }
timeout -k 5 120 "$MPIRUN" $MPIRUN_FLAGS -np 3 "$TRAIN" --topology ps --servers 1 --sync ssp --staleness 3 \
  --transport ipc "${C[@]}" >"$SCRATCH/out" 2>&1 || { cat "$SCRATCH/out"; fail "ps run failed"; }
python3 - "$SCRATCH/r.csv" <<'PY' || fail "CSV columns not as each exchange reports them"
import sys; from psringlib import results
rows = {r["topology"]: r for r in results.read_rows(sys.argv[1])}
assert sorted(rows) == ["local", "ps", "ring"], sorted(rows)
ring_cols = {"allreduce": "ring", "op": "sum", "hierarchical": "0"}
ps_cols = {"sync": "ssp", "staleness": "3", "servers": "1", "transport": "ipc", "lost_workers": "0"}
for topo, r in rows.items():
    for c in ["workers", "device", "steps", "step_ms", "exchange_ms", "test_accuracy"]:
        assert r[c] != "", (topo, c)
    for c, v in ring_cols.items():
        assert r[c] == (v if topo == "ring" else ""), (topo, c, r[c])
    for c, v in ps_cols.items():
        assert r[c] == (v if topo == "ps" else ""), (topo, c, r[c])
    for c in ("fp16", "overlap"):   # both topologies' flags, one column each
        assert r[c] == ("" if topo == "local" else "0"), (topo, c, r[c])
    # an epoch of the 640 samples in steps of the global batch (the cost model's SSP needs it)
    assert int(r["steps_per_epoch"]) == -(-640 // int(r["global_batch"])), (topo, r["steps_per_epoch"], r["global_batch"])
assert int(rows["ps"]["bytes_per_server"]) > 0 and rows["ring"]["bytes_per_server"] == ""
assert rows["ps"]["staleness_mean"] != "" and rows["ps"]["staleness_max"] != ""
PY
pass "local, ring and ps rows carry exactly their exchange's columns"
