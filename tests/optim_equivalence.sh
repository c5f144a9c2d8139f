#!/usr/bin/env bash
# optim_equivalence.sh: --optimizer adam and lars follow the same math on every topology:
# local --batch 64 == ring -np 2 and -np 4 (strong scaling) == ps bsp with 2 servers x 2 workers,
# every one of the first 50 per-step losses within 1e-5 relative (sgd: ring_equivalence.sh,
# ps_bsp_equiv.sh). LARS on the PS puts whole layers on each server, so its trust ratios see
# full-layer norms; --servers 3 with 784,256,10 (4 tensors) still fits, 5 does not (exit 2).
# Then: resume is bit-exact for each optimizer (local, and ps bsp with adam), a checkpoint of
# another optimizer is refused by name, and every bad value of the new flags exits 2 in one line.
source "$(dirname "$0")/common.sh"
scratch
data=$(find_mnist) || skip "MNIST not found (run experiments/get-mnist)"
common=(--data "$data" --layers 784,256,10 --train-limit 3200 --steps 50 --seed 11 --quiet --test-limit 500 --batch 64)
mpi() { timeout 180 $MPIRUN $MPIRUN_FLAGS "$@"; }

for opt in adam lars; do
  case $opt in adam) extra=(--lr 0.001 --weight-decay 1e-4) ;; lars) extra=(--lr 0.5 --weight-decay 1e-4) ;; esac
  args=("${common[@]}" --optimizer "$opt" "${extra[@]}")
  timeout 120 "$TRAIN" "${args[@]}" --loss-log "$SCRATCH/l.log" >"$SCRATCH/out" 2>&1 || { cat "$SCRATCH/out"; fail "local $opt"; }
  [[ $(wc -l <"$SCRATCH/l.log") -eq 50 ]] || fail "local $opt: loss log has not 50 steps"
  for np in 2 4; do
    mpi -np $np "$TRAIN" --topology ring --scaling strong "${args[@]}" --loss-log "$SCRATCH/r$np.log" >"$SCRATCH/out" 2>&1 \
      || { cat "$SCRATCH/out"; fail "ring -np $np $opt"; }
    compare_losses "$SCRATCH/l.log" "$SCRATCH/r$np.log" 1e-5 || fail "$opt: ring -np $np diverges from local"
  done
  for S in 2 3; do
    mpi -np $((S + 2)) "$TRAIN" --topology ps --servers $S --sync bsp --scaling strong "${args[@]}" --loss-log "$SCRATCH/p.log" \
      >"$SCRATCH/out" 2>&1 || { cat "$SCRATCH/out"; fail "ps --servers $S $opt"; }
    compare_losses "$SCRATCH/l.log" "$SCRATCH/p.log" 1e-5 || fail "$opt: ps bsp --servers $S diverges from local"
  done
  # the optimizer really changes the run (else the flag never reached the math)
  timeout 120 "$TRAIN" "${common[@]}" "${extra[@]}" --loss-log "$SCRATCH/sgd.log" >/dev/null 2>&1 || fail "local sgd"
  cmp -s "$SCRATCH/l.log" "$SCRATCH/sgd.log" && fail "--optimizer $opt gave the same losses as sgd"
  echo "  $opt: local == ring -np 2, -np 4 == ps bsp --servers 2, 3 (50 steps, 1e-5)"
done
out=$(mpi -np 7 "$TRAIN" --topology ps --servers 5 "${common[@]}" --optimizer lars 2>&1 >/dev/null); rc=$?
[[ $rc -eq 2 && $out == *"whole layers"* ]] || fail "lars with 5 servers for 4 tensors: rc $rc, '$out'"

# resume, bit for bit, mid-epoch (2000/64 = 32 steps per epoch)
rc_args=(--data "$data" --layers 784,64,10 --train-limit 2000 --epochs 2 --batch 64 --weight-decay 1e-4 --quiet)
for opt in sgd adam lars; do
  a=("${rc_args[@]}" --optimizer "$opt")
  "$TRAIN" "${a[@]}" --dump-params "$SCRATCH/full.bin" >/dev/null || fail "$opt: uninterrupted run failed"
  rm -f "$SCRATCH/ck"
  "$TRAIN" "${a[@]}" --steps 40 --checkpoint "$SCRATCH/ck" >/dev/null || fail "$opt: run to step 40 failed"
  "$TRAIN" "${a[@]}" --resume "$SCRATCH/ck" --dump-params "$SCRATCH/res.bin" >/dev/null || fail "$opt: resume failed"
  cmp -s "$SCRATCH/full.bin" "$SCRATCH/res.bin" || fail "$opt: resumed parameters differ from the uninterrupted run"
done
# adam's moments and step count live on the servers: they must come back through the checkpoint
a=("${rc_args[@]}" --optimizer adam --lr 0.001)
p=(-np 4 "$TRAIN" --topology ps --servers 2 --scaling strong)
mpi "${p[@]}" "${a[@]}" --dump-params "$SCRATCH/pfull.bin" >"$SCRATCH/out" 2>&1 || { cat "$SCRATCH/out"; fail "ps adam run"; }
rm -f "$SCRATCH/pck"
mpi "${p[@]}" "${a[@]}" --steps 40 --checkpoint "$SCRATCH/pck" >"$SCRATCH/out" 2>&1 || { cat "$SCRATCH/out"; fail "ps adam to 40"; }
mpi "${p[@]}" "${a[@]}" --resume "$SCRATCH/pck" --dump-params "$SCRATCH/pres.bin" >"$SCRATCH/out" 2>&1 || { cat "$SCRATCH/out"; fail "ps adam resume"; }
cmp -s "$SCRATCH/pfull.bin" "$SCRATCH/pres.bin" || fail "ps adam: resumed parameters differ from the uninterrupted run"
echo "  resume bit-exact: local sgd, adam, lars; ps bsp adam"

# a checkpoint of another optimizer is refused by name (lars and sgd state have the same size)
expect_bad "written with --optimizer lars, this run uses sgd" "${rc_args[@]}" --resume "$SCRATCH/ck"
"$TRAIN" "${rc_args[@]}" --optimizer adam --steps 3 --checkpoint "$SCRATCH/cka" >/dev/null || fail "adam checkpoint"
expect_bad "written with --optimizer adam, this run uses lars" "${rc_args[@]}" --optimizer lars --resume "$SCRATCH/cka"
d=(--data "$data")
expect_bad "--optimizer must be sgd, adam or lars" "${d[@]}" --optimizer rmsprop
expect_bad "--beta1 must be in [0, 1)" "${d[@]}" --optimizer adam --beta1 1
expect_bad "--beta2 must be in [0, 1)" "${d[@]}" --optimizer adam --beta2 -0.1
expect_bad "--eps must be a number" "${d[@]}" --optimizer adam --eps 0
expect_bad "--lars-eta must be a number" "${d[@]}" --optimizer lars --lars-eta 0
expect_bad "apply to --optimizer adam only" "${d[@]}" --beta1 0.8
expect_bad "applies to --optimizer lars only" "${d[@]}" --optimizer adam --lars-eta 0.01
expect_bad "--sampler must be distributed" "${d[@]}" --sampler random
pass "adam and lars: local == ring == ps-bsp, resume bit-exact, mismatches and bad values refused"
