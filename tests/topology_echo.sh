#!/usr/bin/env bash
# topology_echo.sh: a topology is its folder plus one line in the list. The test-only topology
# (tests/echo: a descriptor and a local.mk, listed through PSRING_MORE_TOPOLOGIES) built into
# tests/psring-train-echo, and nothing else changed: its flag is parsed, checked and refused
# elsewhere, its --help section printed, --describe lists it, its exchange trains (the local one
# under its name: the same losses as --topology local, step by step) and its CSV column is written.
source "$(dirname "$0")/common.sh"
ECHO=$TOP_BUILDDIR/tests/psring-train-echo
need_prog "$ECHO"
need_mnist
scratch
run=(--data "$MNIST_DIR" --layers 784,32,10 --batch 32 --train-limit 960 --test-limit 200 --epochs 1 --quiet)

"$ECHO" --help >"$SCRATCH/help" || fail "--help"
grep -q '^Echo (--topology echo: the tests'"'"' own)$' "$SCRATCH/help" || fail "--help lacks echo's section"
grep -q '^  --echo-note WORD  *written to the CSV' "$SCRATCH/help" || fail "--help lacks --echo-note"
grep -q '^  --topology local|ring|ps|echo ' "$SCRATCH/help" || fail "--help's --topology does not list echo"
"$TRAIN" --help | grep -q 'echo' && fail "the product's psring-train knows the test-only topology"

desc=$("$ECHO" --describe --topology echo) || fail "--describe --topology echo"
grep -qx 'topologies=local ring ps echo' <<<"$desc" || fail "--describe: $desc"
grep -qx 'direct=1' <<<"$desc" || fail "--describe: echo runs one process: $desc"

expect_bad_echo() { # NEEDLE ARGS...
  local needle=$1 out rc=0; shift
  out=$("$ECHO" "$@" 2>&1 >/dev/null) || rc=$?
  [[ $rc -eq 2 && $out == *"$needle"* && $(wc -l <<<"$out") -eq 1 ]] || fail "$*: rc $rc: $out"
}
expect_bad_echo "--echo-note applies to --topology echo only" "${run[@]}" --echo-note hi
expect_bad_echo "--echo-note takes one word: no commas" "${run[@]}" --topology echo --echo-note a,b
expect_bad_echo "--echo-note needs a word" "${run[@]}" --topology echo --echo-note=
expect_bad_echo "--topology echo runs one process: got -np 3" --describe --describe-np 3 --topology echo
expect_bad "--topology must be local, ring or ps: got 'echo'" "${run[@]}" --topology echo

"$ECHO" "${run[@]}" --topology echo --echo-note hello --loss-log "$SCRATCH/echo.loss" --csv "$SCRATCH/r.csv" \
  >"$SCRATCH/echo.out" || fail "training with --topology echo: $(cat "$SCRATCH/echo.out")"
"$ECHO" "${run[@]}" --topology local --loss-log "$SCRATCH/local.loss" --csv "$SCRATCH/r.csv" >/dev/null ||
  fail "training with --topology local"
grep -q '^summary: echo, 1 workers' "$SCRATCH/echo.out" || fail "the summary does not name echo: $(cat "$SCRATCH/echo.out")"
cmp -s "$SCRATCH/echo.loss" "$SCRATCH/local.loss" || fail "echo's losses differ from local's"
[[ $(wc -l <"$SCRATCH/echo.loss") -eq 30 ]] || fail "expected 30 steps: $(wc -l <"$SCRATCH/echo.loss")"
# the CSV's echo_note column: "hello" in echo's row, empty in local's (one header for both), read
# by the one CSV reader
notes=$(python3 -c 'import sys; from psringlib import results
print(" ".join(r["topology"] + ":" + r["echo_note"] for r in results.read_rows(sys.argv[1])))' "$SCRATCH/r.csv")
[[ $notes == "echo:hello local:" ]] || fail "the CSV's topology and echo_note columns: $notes"
pass "a test-only topology: its folder and one line in the list"
