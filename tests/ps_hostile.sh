#!/bin/bash
# ps_hostile.sh: a hostile client hammers server 0 while a real bsp job trains. It sends random
# frames, oversized lengths, wrong versions and valid-looking headers with wrong counts
# (tests/ps_attack). Asserts: the final parameters are bit-identical to a clean run, and server
# 0's rejected= counter equals the number of hostile messages sent (no message slipped through
# and none was lost uncounted). Also: the server bound loopback (the default --bind).
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
scratch
ATTACK="$TOP_BUILDDIR/tests/ps_attack"
[[ -x $ATTACK ]] || fail "$ATTACK not built"
N=${PSRING_HOSTILE_COUNT:-400}
# slow-ms stretches the run (timing does not change bsp's math) so the attack lands mid-training
C=(--topology ps --servers 1 --layers 784,32,10 --train-limit 2000 --test-limit 1000 --epochs 6 --batch 32
   --data "$DATA" --quiet --slow-rank 0 --slow-ms 25)   # ~5 s, so the attack always lands mid-training
$MPIRUN $MPIRUN_FLAGS -np 3 "$TRAIN" "${C[@]}" --dump-params "$SCRATCH/clean.bin" >"$SCRATCH/clean.out" 2>&1 \
  || { cat "$SCRATCH/clean.out"; fail "clean run failed"; }
grep -q "rejected=0 " "$SCRATCH/clean.out" || { cat "$SCRATCH/clean.out"; fail "clean run rejected messages"; }

export PSRING_PS_ENDPOINT_FILE="$SCRATCH/ep"
$MPIRUN $MPIRUN_FLAGS -x PSRING_PS_ENDPOINT_FILE -np 3 "$TRAIN" "${C[@]}" --dump-params "$SCRATCH/attacked.bin" \
  >"$SCRATCH/attacked.out" 2>&1 &
job=$!
for _ in $(seq 300); do [[ -s $SCRATCH/ep.0 ]] && break; sleep 0.05; done
[[ -s $SCRATCH/ep.0 ]] || { kill $job; fail "server 0 never wrote its endpoint"; }
ep=$(cat "$SCRATCH/ep.0")
[[ $ep == tcp://127.0.0.1:* ]] || { kill $job; fail "server bound $ep, not loopback, without --bind"; }
"$ATTACK" --endpoint "$ep" --count "$N" --params 25450 --seed $RANDOM >"$SCRATCH/attack.out" || { kill $job; fail "attacker failed"; }
wait $job || { cat "$SCRATCH/attacked.out"; fail "attacked run failed"; }
sent=$(sed -n 's/^sent \([0-9]*\) hostile.*/\1/p' "$SCRATCH/attack.out")
rej=$(sed -n 's/^ps server 0: .* rejected=\([0-9]*\) .*/\1/p' "$SCRATCH/attacked.out")
grep -q "summary:" "$SCRATCH/attacked.out" || { cat "$SCRATCH/attacked.out"; fail "no summary"; }
cmp -s "$SCRATCH/clean.bin" "$SCRATCH/attacked.bin" || fail "parameters differ from the clean run"
[[ $sent == "$N" && $rej == "$N" ]] || { cat "$SCRATCH/attacked.out"; fail "sent $sent hostile messages, server rejected $rej"; }
echo "$(cat "$SCRATCH/attack.out"); server 0 rejected=$rej; parameters identical to the clean run"
pass "hostile client: $N messages sent, $rej rejected, training unaffected"
