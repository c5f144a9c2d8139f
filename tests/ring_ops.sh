#!/bin/bash
# ring_ops.sh: the trainer's --op, --autotune and --hierarchical against references, and their bad
# values. References: local --batch 64 (per-step losses within 1e-5 relative, as
# ring_equivalence.sh): --hierarchical on the real host split (one host: reduce + broadcast only)
# and on fake hosts of 2 ranks (PSRING_HIER_LOCAL_SIZE=2: reduce, ring between 2 roots,
# broadcast); --overlap --autotune, which switches bucket and chunk sizes during the 50 steps and
# must not change the math; --op sum with --lr 0.02/4 on 4 workers == average with --lr 0.02.
# --op adasum: -np 1 is the identity (== local bit for bit); -np 2 and 4 must differ from the
# average and still learn (the exact math is tests/test_ring's Adasum reference); -np 3 exits 2.
# The autotune CSV: header, >= 2 trials, exactly one chosen, positive times. The bench: --impl
# hierarchical checked on 4 ranks as 2 fake hosts. Bad flags: one line, exit 2.
. "$(dirname "$0")/common.sh"
scratch
need_prog "$TRAIN"
need_prog "$BENCH"
need_mnist
COMMON="--data $MNIST_DIR --layers 784,256,10 --train-limit 3200 --steps 50 --seed 11 --quiet --test-limit 500"


timeout 120 "$TRAIN" $COMMON --batch 64 --loss-log "$SCRATCH/local.csv" > "$SCRATCH/out.txt" 2>&1 || { cat "$SCRATCH/out.txt"; fail "local"; }

# --hierarchical
run_ring 4 "$SCRATCH/h.csv" --batch 64 --hierarchical
compare_steps "$SCRATCH/local.csv" "$SCRATCH/h.csv" 1e-5 "ring -np 4 --hierarchical (one host) vs local 64"
PSRING_HIER_LOCAL_SIZE=2 run_ring 4 "$SCRATCH/h2.csv" --batch 64 --hierarchical
compare_steps "$SCRATCH/local.csv" "$SCRATCH/h2.csv" 1e-5 "ring -np 4 --hierarchical (2 fake hosts x 2) vs local 64"
PSRING_HIER_LOCAL_SIZE=2 mpi 60 -np 3 "$TRAIN" --topology ring $COMMON --hierarchical --steps 3 > "$SCRATCH/out.txt" 2>&1 \
    || { cat "$SCRATCH/out.txt"; fail "--hierarchical -np 3 (hosts of 2 and 1)"; }

# --autotune: settings change during the run, the losses do not
run_ring 4 "$SCRATCH/at.csv" --batch 64 --overlap --autotune --autotune-log "$SCRATCH/trials.csv" --quiet
compare_steps "$SCRATCH/local.csv" "$SCRATCH/at.csv" 1e-5 "ring -np 4 --overlap --autotune vs local 64"
[ "$(head -1 "$SCRATCH/trials.csv")" = "trial,bucket_mb,chunk_kb,step_ms,chosen" ] || { cat "$SCRATCH/trials.csv"; fail "autotune CSV header"; }
awk -F, 'NR > 1 { n++; c += $5; if (!($4 > 0)) bad = 1; if (NR == 2) { b0 = $2; k0 = $3 } else if ($2 != b0 || $3 != k0) moved = 1 }
         END { if (n < 2 || c != 1 || bad || !moved) { print "trials " n ", chosen " c ", bad " bad ", moved " moved; exit 1 } }' \
    "$SCRATCH/trials.csv" || { cat "$SCRATCH/trials.csv"; fail "autotune CSV rows"; }
mpi 180 -np 2 "$TRAIN" --topology ring $(echo "$COMMON" | sed 's/--quiet//') --overlap --autotune > "$SCRATCH/out.txt" 2>&1 || { cat "$SCRATCH/out.txt"; fail "autotune -np 2 (log)"; }
grep -q "^autotune: trial 1: bucket 4 MB, chunk 256 KiB" "$SCRATCH/out.txt" || { cat "$SCRATCH/out.txt"; fail "no autotune trial line"; }
grep -q "^autotune: chose bucket" "$SCRATCH/out.txt" || { cat "$SCRATCH/out.txt"; fail "no autotune choice line"; }

# --op sum: no 1/N, so lr / N gives the averaged run back (SGD is linear in the gradient)
run_ring 4 "$SCRATCH/sum.csv" --batch 64 --op sum --lr 0.005
compare_steps "$SCRATCH/local.csv" "$SCRATCH/sum.csv" 1e-5 "ring -np 4 --op sum --lr 0.005 vs local 64 --lr 0.02"
run_ring 1 "$SCRATCH/a1.csv" --batch 64 --op adasum
cmp -s "$SCRATCH/local.csv" "$SCRATCH/a1.csv" || fail "--op adasum -np 1 is not the identity"
for np in 2 4; do
    run_ring $np "$SCRATCH/a$np.csv" --batch 64 --op adasum
    run_ring $np "$SCRATCH/avg$np.csv" --batch 64
    cmp -s "$SCRATCH/a$np.csv" "$SCRATCH/avg$np.csv" && fail "--op adasum -np $np gave the same losses as average"
    awk -F, 'NR <= 5 { a += $2 } NR > 45 { b += $2 } END { if (!(b < 0.8 * a) || b != b) { print "first " a / 5 ", last " b / 5; exit 1 } }' \
        "$SCRATCH/a$np.csv" || fail "--op adasum -np $np did not learn"
done
mpi 60 -np 3 "$TRAIN" --topology ring $COMMON --op adasum > "$SCRATCH/out.txt" 2>&1
rc=$?
[ $rc -eq 2 ] || { cat "$SCRATCH/out.txt"; fail "--op adasum -np 3: status $rc, want 2"; }
grep -q "needs a power-of-two number of workers" "$SCRATCH/out.txt" || { cat "$SCRATCH/out.txt"; fail "--op adasum -np 3: no reason given"; }

# the bench's hierarchical allreduce: exact sums on 2 fake hosts of 2
PSRING_HIER_LOCAL_SIZE=2 mpi 120 -np 4 "$BENCH" -b 4 -e 1M -f 7 -n 2 -w 1 --impl all --chunk-kb 4 --csv "$SCRATCH/b.csv" > "$SCRATCH/out.txt" 2>&1 \
    || { cat "$SCRATCH/out.txt"; fail "bench --impl all"; }
[ "$(grep -c ',hier,' "$SCRATCH/b.csv")" -eq 7 ] || { cat "$SCRATCH/b.csv"; fail "bench: want 7 hier rows"; }
awk -F, 'NR > 1 && $7 != 0 { bad = 1 } END { exit bad }' "$SCRATCH/b.csv" || fail "bench: wrong elements"

# bad values: one line, exit 2 (a singleton, so only the program speaks)
for bad in "--op mean" "--op" "--topology local --op sum" "--topology ps --op adasum" "--topology ring --autotune" \
           "--topology ring --autotune-log $SCRATCH/x.csv" "--topology ring --overlap --autotune --allreduce mpi" \
           "--topology ps --hierarchical" "--topology ring --hierarchical --overlap" "--topology ring --hierarchical --fp16" \
           "--topology ring --op adasum --fp16" "--topology ring --op adasum --overlap" "--topology ring --op adasum --hierarchical" \
           "--topology local --autotune --overlap"; do
    timeout 30 "$TRAIN" --data "$MNIST_DIR" $bad > "$SCRATCH/out.txt" 2>&1
    rc=$?
    [ $rc -eq 2 ] || { cat "$SCRATCH/out.txt"; fail "$bad: status $rc, want 2"; }
    [ "$(wc -l < "$SCRATCH/out.txt")" -eq 1 ] || { cat "$SCRATCH/out.txt"; fail "$bad: want one line of error"; }
done
PSRING_HIER_LOCAL_SIZE=x timeout 30 "$TRAIN" --topology ring $COMMON --hierarchical > "$SCRATCH/out.txt" 2>&1
[ $? -eq 2 ] || { cat "$SCRATCH/out.txt"; fail "PSRING_HIER_LOCAL_SIZE=x: want status 2"; }
echo "ring_ops: ok"
