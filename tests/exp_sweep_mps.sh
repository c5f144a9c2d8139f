#!/usr/bin/env bash
# exp_sweep_mps.sh: psring sweep --mps, the sweep's own MPS daemon, without a GPU. Stand-ins on
# PATH play nvidia-cuda-mps-control (-d: a control file and a pid file in $CUDA_MPS_PIPE_DIRECTORY
# and a sleeping "nvidia-cuda-mps-server"; quit on stdin: the server gone, the control file left,
# as the real daemon leaves its socket) and psring-train (PSRING_BUILDDIR: each rank notes the MPS
# variables it was given and whether the daemon's control file was there, rank 0 writes the row).
# Checked: each refusal (MPS missing, no --device cuda, -d failing, -d exiting 0 with no daemon, a
# daemon's processes running, a control socket that answers) is one line and exit 2 with nothing
# started or left, and a socket left behind is no refusal; the launcher names the folders to
# mpirun; a sweep's runs, started by the launcher through mpirun, see the daemon's pipe and log
# folders while it is up, and it is stopped and its folders removed after a sweep that passed,
# one with a failed run, a daemon that stays after quit, Ctrl-C and SIGTERM; mps is part of the
# resume key. psring mps -- CMD runs the same daemon around one command: CMD sees it, its exit
# status passes through, and the daemon stops after it, also after SIGTERM.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
command -v "$MPIRUN" >/dev/null || skip "mpirun missing"
alive() { [[ -e /proc/$1 ]] && ! grep -q '^[0-9]* (.*) [ZX] ' "/proc/$1/stat" 2>/dev/null; }   # not a zombie
for p in $(pgrep nvidia-cuda-mps || true); do
  alive "$p" && skip "an MPS daemon runs on this machine (pid $p): the sweep would rightly refuse to start its own"
done
if [[ -S /tmp/nvidia-mps/control ]] && python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' \
     /tmp/nvidia-mps/control 2>/dev/null; then
  skip "an MPS daemon runs on this machine (/tmp/nvidia-mps/control answers)"
fi
scratch
S=$SCRATCH
# on the way out, also after a failure: no stand-in left running
trap 'kill $(pgrep -f "$S/(bin|build)/") 2>/dev/null; rm -rf "$S"' EXIT
mkdir -p "$S/bin" "$S/build" "$S/tmp"
export TMPDIR=$S/tmp FAKE_MPS_LOG=$S/mps.log FAKE_TRAIN_LOG=$S/train.log FAKE_MPS_BIN=$S/bin
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
ln -s "$(command -v sleep)" "$S/bin/nvidia-cuda-mps-server"   # its name as the kernel shows it: nvidia-cuda-mps
cat >"$S/bin/nvidia-cuda-mps-control" <<'EOF'
#!/usr/bin/env bash
# stand-in for MPS's control program: -d starts the "daemon", a line on stdin is a command
pipe=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
if [[ ${1:-} == -d ]]; then
  case ${FAKE_MPS_MODE:-ok} in
    fail) echo "start failed pipe=$pipe" >>"$FAKE_MPS_LOG"
          echo "nvidia-cuda-mps-control: cannot open /dev/nvidiactl: Permission denied" >&2; exit 1 ;;
    mute) echo "start mute pipe=$pipe" >>"$FAKE_MPS_LOG"; exit 0 ;;
  esac
  "$FAKE_MPS_BIN/nvidia-cuda-mps-server" 1000 </dev/null >/dev/null 2>&1 &
  echo "$!" >"$pipe/nvidia-cuda-mps-control.pid"
  : >"$pipe/control"
  echo "start pipe=$pipe log=${CUDA_MPS_LOG_DIRECTORY:-} pid=$!" >>"$FAKE_MPS_LOG"
  exit 0
fi
read -r cmd
echo "$cmd pipe=$pipe" >>"$FAKE_MPS_LOG"
[[ -e $pipe/nvidia-cuda-mps-control.pid ]] || { echo "Cannot find MPS control daemon process"; exit 1; }
if [[ $cmd == quit ]]; then
  [[ -n ${FAKE_MPS_NOQUIT:-} ]] && exit 0   # answers, but stays (the sweep then ends it)
  kill "$(cat "$pipe/nvidia-cuda-mps-control.pid")"
  rm -f "$pipe/nvidia-cuda-mps-control.pid"   # the control socket stays, as the real daemon leaves it
fi
EOF
cat >"$S/build/psring-train" <<'EOF'
#!/usr/bin/env bash
# stand-in for psring-train: notes what each rank was given, rank 0 writes the row; answers the
# launcher's --describe as the local topology and the others do (one process without mpirun or not)
csv="" np=${OMPI_COMM_WORLD_SIZE:-1} rank=${OMPI_COMM_WORLD_RANK:-0} topo=local describe=0
while (($#)); do
  case $1 in
    --check-options) ((describe)) || exit 0 ;;
    --describe) describe=1 ;;
    --csv) csv=$2; shift ;;
    --topology) topo=$2; shift ;;
  esac
  shift
done
if ((describe)); then
  printf 'topology=%s\ndirect=%d\nservers=0\ncluster_bind=0\npeer_timeout=0\nrecovery=0\n' "$topo" "$([[ $topo == local ]] && echo 1 || echo 0)"
  exit 0
fi
pipe=${CUDA_MPS_PIPE_DIRECTORY:-}
control=no; [[ -n $pipe && -e $pipe/control ]] && control=yes
echo "np=$np rank=$rank pipe=$pipe log=${CUDA_MPS_LOG_DIRECTORY:-} control=$control" >>"$FAKE_TRAIN_LOG"
if [[ -n ${FAKE_TRAIN_HANG:-} ]]; then echo $$ >>"$FAKE_TRAIN_HANG"; exec sleep 60; fi
[[ ${FAKE_TRAIN_FAIL_NP:-} == "$np" ]] && { echo "psring: a failing run (stand-in)" >&2; exit 1; }
if [[ $rank == 0 ]]; then
  { echo "topology,allreduce,workers,device,gpus,ranks_per_gpu,ring_path,samples_per_s,step_ms,exchange_ms"
    echo "$topo,ring,$np,cuda,1,$np,ipc,$((1000 * np)),1.0,0.5"; } >"$csv"
fi
EOF
chmod +x "$S/bin/nvidia-cuda-mps-control" "$S/build/psring-train"
export PSRING_BUILDDIR=$S/build
: >"$FAKE_MPS_LOG"
PATH_NO_MPS=$PATH   # this machine's PATH, without the stand-in (checked below: no MPS on it)
export PATH=$S/bin:$PATH

# (--csv: r.csv, where a refused sweep must write nothing; the sweeps that run give their own)
sweep=("$TOP_SRCDIR/psring" sweep --topologies ring --workers 1,2 --repeats 1 --sweep-id m --timeout 60 --csv "$S/r.csv")
# nothing_left WHAT: no stand-in daemon or trainer process (but $THEIRS), no MPS folder of the sweep's
THEIRS=""
nothing_left() {
  local p
  for p in $(pgrep -f "$S/(bin|build)/" || true); do
    [[ $p != "$THEIRS" ]] && alive "$p" && fail "$1: left running: $(tr '\0' ' ' </proc/"$p"/cmdline)"
  done
  [[ -z $(ls -A "$S/tmp") ]] || fail "$1: left in TMPDIR: $(ls -A "$S/tmp")"
}
# refused WHAT NEEDLE CMD...: exit 2, one line on stderr naming it, no CSV, nothing left
refused() {
  local what=$1 needle=$2 rc=0; shift 2
  rm -f "$S/r.csv"
  "$@" >"$S/out" 2>"$S/err" || rc=$?
  [[ $rc == 2 ]] || { cat "$S/out" "$S/err"; fail "$what: exit $rc, want 2"; }
  [[ $(wc -l <"$S/err") == 1 && $(cat "$S/err") == "psring sweep: --mps: "*"$needle"* ]] \
    || fail "$what: want one line 'psring sweep: --mps: ...$needle...', got: $(cat "$S/err")"
  [[ ! -e $S/r.csv ]] || fail "$what: a CSV was written"
  nothing_left "$what"
  echo "ok: $what: $(cat "$S/err")"
}
started() { grep -c "^start" "$FAKE_MPS_LOG" 2>/dev/null || true; }

# ---- refusals ---------------------------------------------------------------------------------
if ! PATH=$PATH_NO_MPS command -v nvidia-cuda-mps-control >/dev/null; then
  refused "MPS missing" "MPS is missing" env PATH="$PATH_NO_MPS" "${sweep[@]}" --mps --device cuda
else
  echo "not checked: MPS missing (this machine has nvidia-cuda-mps-control on its PATH)"
fi
refused "no --device cuda" "need --device cuda" "${sweep[@]}" --mps
refused "--device cpu" "got --device cpu" "${sweep[@]}" --mps -- --device cpu
[[ $(started) == 0 ]] || fail "the daemon was started for a refused sweep"
refused "-d fails" "-d failed (exit 1): nvidia-cuda-mps-control: cannot open /dev/nvidiactl: Permission denied" \
  env FAKE_MPS_MODE=fail "${sweep[@]}" --mps --device cuda
refused "-d says 0, no daemon" "no daemon came up" env FAKE_MPS_MODE=mute "${sweep[@]}" --mps --device cuda
[[ ! -s $FAKE_TRAIN_LOG ]] || fail "a run was started by a refused sweep"
# a daemon of someone else's: its processes, or the control socket in the pipe folder clients use
mkdir -p "$S/theirs"
CUDA_MPS_PIPE_DIRECTORY=$S/theirs nvidia-cuda-mps-control -d || fail "stand-in daemon did not start"
THEIRS=$(sed -n 's/^start pipe=.*theirs .* pid=//p' "$FAKE_MPS_LOG")
alive "$THEIRS" || fail "the stand-in daemon is not running"
refused "a daemon running" "already running here (process $THEIRS, nvidia-cuda-mps-server)" \
  "${sweep[@]}" --mps --device cuda
rc=0; echo quit | CUDA_MPS_PIPE_DIRECTORY=$S/theirs nvidia-cuda-mps-control || rc=$?
[[ $rc == 0 ]] && ! alive "$THEIRS" || fail "the stand-in daemon did not quit"
THEIRS=""
# a control socket that answers, in the folder CUDA_MPS_PIPE_DIRECTORY names (whoever's; its
# processes unseen, as another user's can be); once nothing listens, the socket left behind is no
# daemon (the real one leaves it when it quits)
mkdir -p "$S/pipe"
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); print(flush=True); time.sleep(300)' "$S/pipe/control" >"$S/listening" &
listener=$!
for _ in $(seq 100); do [[ -s $S/listening ]] && break; sleep 0.1; done
refused "their pipe folder" "$S/pipe/control answers" env CUDA_MPS_PIPE_DIRECTORY="$S/pipe" "${sweep[@]}" --mps --device cuda
kill $listener; wait $listener 2>/dev/null
[[ -S $S/pipe/control ]] || fail "the listener's socket is gone"
CUDA_MPS_PIPE_DIRECTORY=$S/pipe "${sweep[@]}" --mps --device cuda --dry-run >"$S/out" 2>&1 \
  || fail "a control socket left behind was taken for a daemon: $(cat "$S/out")"
: >"$FAKE_MPS_LOG"

# the launcher names the daemon's folders to mpirun (-x: its launchers other than the local one
# pass only those), for local ranks only
out=$(CUDA_MPS_PIPE_DIRECTORY=/p CUDA_MPS_LOG_DIRECTORY=/l "$TOP_SRCDIR/psring" train -np 2 --topology ring --dry-run 2>&1)
[[ $out == *" -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY "* ]] || fail "launcher: the MPS folders not passed: $out"
out=$(CUDA_MPS_PIPE_DIRECTORY=/p "$TOP_SRCDIR/psring" train -np 2 -H h1:2 --topology ring --dry-run 2>&1)
[[ $out != *CUDA_MPS* ]] || fail "launcher: the MPS folders passed to other hosts: $out"

# ---- the daemon's life --------------------------------------------------------------------------
# check_stopped WHAT N: the Nth daemon started was asked to quit and is gone, and nothing is left
check_stopped() {
  local start pipe pid
  start=$(grep "^start pipe=" "$FAKE_MPS_LOG" | sed -n "${2}p")
  [[ -n $start ]] || fail "$1: no daemon started (log: $(cat "$FAKE_MPS_LOG"))"
  pipe=$(sed 's/^start pipe=\([^ ]*\) .*/\1/' <<<"$start") pid=${start##* pid=}
  grep -q "^quit pipe=$pipe$" "$FAKE_MPS_LOG" || fail "$1: the daemon was not asked to quit (log: $(cat "$FAKE_MPS_LOG"))"
  ! alive "$pid" || fail "$1: the daemon (pid $pid) still runs"
  [[ ! -e $pipe ]] || fail "$1: its pipe folder $pipe is still there"
  nothing_left "$1"
  PIPE=$pipe
}
# without --mps: no MPS variable reaches the runs, mps is 0
"${sweep[@]}" --csv "$S/b.csv" -- --device cuda >"$S/out" 2>&1 || { cat "$S/out"; fail "the sweep without --mps failed"; }
[[ $(grep -c "pipe= log= control=no" "$FAKE_TRAIN_LOG") == 3 ]] || fail "without --mps: $(cat "$FAKE_TRAIN_LOG")"
: >"$FAKE_TRAIN_LOG"
# with it, into the same CSV: not the same runs (mps is in the resume key), each rank sees the daemon
"${sweep[@]}" --mps --csv "$S/b.csv" -- --device cuda >"$S/out" 2>&1 || { cat "$S/out"; fail "the sweep with --mps failed"; }
grep -q "0 already done" "$S/out" || fail "runs without MPS were taken for runs under it: $(cat "$S/out")"
grep -q "^sweep: MPS daemon up" "$S/out" && grep -q "^sweep: MPS daemon stopped" "$S/out" || fail "no word of the daemon: $(cat "$S/out")"
check_stopped "after a sweep that passed" 1
log=$(grep "^start pipe=" "$FAKE_MPS_LOG" | sed 's/.* log=\([^ ]*\) .*/\1/')
[[ $log == "$S/tmp/"* && $PIPE == "$S/tmp/"* && $log != "$PIPE" ]] || fail "pipe $PIPE and log $log: not private folders"
for r in "np=1 rank=0" "np=2 rank=0" "np=2 rank=1"; do
  grep -qx "$r pipe=$PIPE log=$log control=yes" "$FAKE_TRAIN_LOG" \
    || fail "rank '$r' did not run with the daemon's folders while it was up: $(cat "$FAKE_TRAIN_LOG")"
done
python3 - "$S/b.csv" <<'PY' || fail "the sweep's rows"
import sys; from psringlib import results
rows = results.read_rows(sys.argv[1])
assert [(r["workers"], r["mps"], r["error"]) for r in rows] == [("1", "0", ""), ("2", "0", ""), ("1", "1", ""), ("2", "1", "")], rows
assert all(r["gpus"] == "1" and r["ranks_per_gpu"] == r["workers"] and r["ring_path"] == "ipc" for r in rows), rows
PY
"${sweep[@]}" --mps --csv "$S/b.csv" -- --device cuda >"$S/out" 2>&1 || fail "the resumed sweep failed"
grep -q "2 already done" "$S/out" || fail "runs under MPS not taken as done: $(cat "$S/out")"
[[ $(started) == 1 ]] || fail "a daemon was started with nothing to run"
# a failed run: recorded, the sweep goes on, the daemon stops
FAKE_TRAIN_FAIL_NP=2 "${sweep[@]}" --mps --csv "$S/f.csv" -- --device cuda >"$S/out" 2>&1 || fail "sweep with a failed run: $(cat "$S/out")"
grep -q "FAILED" "$S/out" || fail "the failed run was not reported: $(cat "$S/out")"
check_stopped "after a failed run" 2
# a daemon that answers quit but stays: ended, and said so
rc=0; FAKE_MPS_NOQUIT=1 "${sweep[@]}" --mps --csv "$S/q.csv" -- --device cuda >"$S/out" 2>"$S/err" || rc=$?
[[ $rc == 0 ]] || fail "sweep with a daemon that does not quit: exit $rc"
grep -q "^psring sweep: --mps: the daemon did not quit in 10 s; its processes were ended$" "$S/err" \
  || fail "a daemon left behind was not said: $(cat "$S/err")"
check_stopped "after a daemon that stayed" 3
# Ctrl-C and SIGTERM during a run (the sweep started as from a terminal: SIGINT not ignored, as a
# background job's is)
n=3
for sig in INT TERM; do
  n=$((n + 1))
  rm -f "$S/hang"
  FAKE_TRAIN_HANG=$S/hang python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "${sweep[@]}" --mps --csv "$S/i$sig.csv" -- --device cuda >"$S/out" 2>"$S/err" &
  pid=$!
  for _ in $(seq 300); do [[ -s $S/hang ]] && break; sleep 0.1; done
  [[ -s $S/hang ]] || { kill -KILL $pid; fail "SIG$sig: the run never started: $(cat "$S/out" "$S/err")"; }
  kill -$sig $pid
  rc=0; timeout 60 tail --pid=$pid -f /dev/null || fail "SIG$sig: the sweep did not end"
  wait $pid || rc=$?
  want=143; [[ $sig == INT ]] && want=130
  [[ $rc == "$want" ]] || fail "SIG$sig: exit $rc, want $want: $(cat "$S/err")"
  grep -q "run the same command again to resume" "$S/err" || fail "SIG$sig: $(cat "$S/err")"
  for p in $(cat "$S/hang"); do ! alive "$p" || fail "SIG$sig: the run's rank $p still runs"; done
  check_stopped "after SIG$sig" $n
done
# ---- psring mps -- CMD: the same daemon around one command ---------------------------------------
n=$((n + 1))
out=$("$TOP_SRCDIR/psring" mps --quiet -- sh -c 'test -e "$CUDA_MPS_PIPE_DIRECTORY/control" && echo "up in $CUDA_MPS_PIPE_DIRECTORY"') \
  || fail "psring mps: the command failed: $out"
check_stopped "psring mps, after its command" $n
[[ $out == "up in $PIPE" ]] || fail "psring mps: the command did not see the daemon's pipe folder: $out"
n=$((n + 1))
rc=0; "$TOP_SRCDIR/psring" mps --quiet -- sh -c 'exit 3' || rc=$?
[[ $rc == 3 ]] || fail "psring mps: exit $rc, want the command's 3"
check_stopped "psring mps, after a failing command" $n
rc=0; env PATH="$PATH_NO_MPS" "$TOP_SRCDIR/psring" mps -- true 2>"$S/err" || rc=$?
if ! PATH=$PATH_NO_MPS command -v nvidia-cuda-mps-control >/dev/null; then
  [[ $rc == 2 && $(cat "$S/err") == "psring mps: MPS is missing"* && $(wc -l <"$S/err") == 1 ]] \
    || fail "psring mps without MPS: exit $rc, $(cat "$S/err")"
fi
n=$((n + 1))
"$TOP_SRCDIR/psring" mps --quiet -- sleep 60 &
pid=$!
for _ in $(seq 100); do [[ $(started) == "$n" ]] && break; sleep 0.1; done
sleep 0.5
kill -TERM $pid
rc=0; wait $pid || rc=$?
[[ $rc == 143 ]] || fail "psring mps after SIGTERM: exit $rc, want 143"
check_stopped "psring mps, after SIGTERM" $n
pass "sweep --mps and psring mps: refusals, the daemon's folders reach every rank, stopped after success, failure, SIGINT and SIGTERM"
