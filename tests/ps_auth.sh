#!/bin/bash
# ps_auth.sh: --ps-auth KEYFILE (CurveZMQ). Asserts: psring keygen writes a 0600 keyfile; a run
# with auth gives bit-identical parameters to one without; a rogue client without the key
# (plain), and one with the server's public key but its own client key, both get refused
# (server logs it, auth=curve refused>0, rejected=0: nothing reached the server's code) and the
# parameters are unchanged; a world-readable keyfile and a garbled one are refused with exit 2.
. "$(dirname "$0")/common.sh"
DATA=$(find_mnist) || skip "MNIST not found (set PSRING_MNIST_DIR)"
scratch
ATTACK="$TOP_BUILDDIR/tests/ps_attack"
KEYGEN="$TOP_BUILDDIR/psring-keygen"
[[ -x $ATTACK && -x $KEYGEN ]] || fail "tests/ps_attack or psring-keygen not built"
"$KEYGEN" --help >/dev/null || fail "keygen --help"
PSRING_BUILDDIR="$TOP_BUILDDIR" "$TOP_SRCDIR/psring" keygen "$SCRATCH/key" >/dev/null || fail "psring keygen failed"
[[ $(stat -c %a "$SCRATCH/key") == 600 ]] || fail "keyfile mode is $(stat -c %a "$SCRATCH/key"), not 600"
"$KEYGEN" "$SCRATCH/key" 2>/dev/null && fail "keygen overwrote an existing keyfile without --force"
C=(--topology ps --servers 1 --layers 784,32,10 --train-limit 2000 --test-limit 1000 --epochs 6 --batch 32
   --data "$DATA" --quiet --slow-rank 0 --slow-ms 25)   # ~5 s: the attackers must find the job alive
$MPIRUN $MPIRUN_FLAGS -np 3 "$TRAIN" "${C[@]}" --dump-params "$SCRATCH/plain.bin" >"$SCRATCH/plain.out" 2>&1 \
  || { cat "$SCRATCH/plain.out"; fail "run without auth failed"; }

export PSRING_PS_ENDPOINT_FILE="$SCRATCH/ep"
$MPIRUN $MPIRUN_FLAGS -x PSRING_PS_ENDPOINT_FILE -np 3 "$TRAIN" "${C[@]}" --ps-auth "$SCRATCH/key" \
  --dump-params "$SCRATCH/auth.bin" >"$SCRATCH/auth.out" 2>&1 &
job=$!
for _ in $(seq 300); do [[ -s $SCRATCH/ep.0 ]] && break; sleep 0.05; done
[[ -s $SCRATCH/ep.0 ]] || { kill $job; fail "server 0 never wrote its endpoint"; }
ep=$(cat "$SCRATCH/ep.0")
# both attackers at once: each lingers up to 2 s on its refused connection, and one after the
# other they could outlast the training run they are meant to attack
"$ATTACK" --mode noauth --endpoint "$ep" --count 50 --params 25450 >/dev/null & atk1=$!
"$ATTACK" --mode noauth --keyfile "$SCRATCH/key" --endpoint "$ep" --count 50 --params 25450 >/dev/null & atk2=$!
wait $atk1 || { kill $job; fail "plain attacker failed"; }
wait $atk2 || { kill $job; fail "wrong-key attacker failed"; }
wait $job || { cat "$SCRATCH/auth.out"; fail "authenticated run failed"; }
grep -q "summary:" "$SCRATCH/auth.out" || { cat "$SCRATCH/auth.out"; fail "no summary with auth"; }
cmp -s "$SCRATCH/plain.bin" "$SCRATCH/auth.bin" || fail "parameters with auth (and rogue clients) differ from the plain run"
refused=$(sed -n 's/^ps server 0: auth=curve refused=\([0-9]*\).*/\1/p' "$SCRATCH/auth.out")
[[ -n $refused && $refused -ge 2 ]] || { cat "$SCRATCH/auth.out"; fail "rogue clients not refused (refused=$refused)"; }
grep -q "refused a peer" "$SCRATCH/auth.out" || fail "no refusal logged"
grep -q "rejected=0 " "$SCRATCH/auth.out" || { cat "$SCRATCH/auth.out"; fail "a rogue message reached the server's handler"; }
echo "auth run identical to plain run; rogue clients: refused=$refused handshakes, rejected=0"

# bad keyfiles: one clear line, exit 2, on every rank
cp "$SCRATCH/key" "$SCRATCH/open"; chmod 644 "$SCRATCH/open"
$MPIRUN $MPIRUN_FLAGS -np 2 "$TRAIN" "${C[@]}" --ps-auth "$SCRATCH/open" >"$SCRATCH/o.out" 2>&1; rc=$?
(( rc != 0 )) && grep -q "readable by others" "$SCRATCH/o.out" || { cat "$SCRATCH/o.out"; fail "world-readable keyfile accepted (rc $rc)"; }
printf 'server-public abc\n' >"$SCRATCH/bad"; chmod 600 "$SCRATCH/bad"
$MPIRUN $MPIRUN_FLAGS -np 2 "$TRAIN" "${C[@]}" --ps-auth "$SCRATCH/bad" >"$SCRATCH/b.out" 2>&1; rc=$?
(( rc != 0 )) && grep -q "40-character Z85" "$SCRATCH/b.out" || { cat "$SCRATCH/b.out"; fail "garbled keyfile accepted (rc $rc)"; }
"$TRAIN" --topology local --ps-auth "$SCRATCH/key" --data "$DATA" >"$SCRATCH/l.out" 2>&1; rc=$?
(( rc == 2 )) && grep -q "applies to --topology ps only" "$SCRATCH/l.out" || fail "--ps-auth with local: rc $rc"
"$TRAIN" --topology ps --ps-auth "$SCRATCH/nokey" --data "$DATA" >"$SCRATCH/n.out" 2>&1; rc=$?
(( rc == 2 )) && grep -q "psring keygen" "$SCRATCH/n.out" || fail "--ps-auth with a missing file: rc $rc"
pass "--ps-auth: authenticated run matches, rogue clients refused, bad keyfiles rejected"
