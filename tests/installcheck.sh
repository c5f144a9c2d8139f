#!/usr/bin/env bash
# installcheck.sh (make installcheck): every psring command run from the installed copy alone, in a
# scratch directory outside the source and build trees, with nothing of them in PATH or the
# environment; as root (where mount namespaces work) the trees' helpers and binaries are also
# hidden under empty mounts, so a run that reached into the tree would fail. Checks: --help of
# every command; get-mnist into the scratch folder; train (local, ring, a bad flag, injected
# latency); a sweep of 2 runs; plot; model --compare against the fixture calibration and
# --published --check over the shipped points; summary;
# the three benchmarks; keygen; cluster up 2 / train --cluster / down (root with namespaces only).
# Environment: PSRING_PREFIX_BIN (the installed bin folder), SRCDIR, BUILDDIR; MNIST from
# $PSRING_MNIST_DIR, else SRCDIR/data/mnist (the one lookup: the installed pslib.sh). The helper
# folder must hold exactly experiments/ and the shims, none of the developer tools of tools/.
set -uo pipefail
bin=${PSRING_PREFIX_BIN:?PSRING_PREFIX_BIN: the installed bin folder} src=${SRCDIR:?} build=${BUILDDIR:?}
P=$bin/psring
libexec=$([[ -f $P ]] && sed -n "s/^libexec_dir='\(.*\)'$/\1/p" "$P")
# the installed pslib.sh first (tests/common.sh then keeps it: the tree's experiments/ is hidden
# below), then the tests' library for fail
[[ -n $libexec && -f $libexec/pslib.sh ]] && . "$libexec/pslib.sh"
FAIL_PREFIX="installcheck: "
. "$src/tests/common.sh"
say() { echo "installcheck: $*"; }
[[ -x $P ]] || fail "$P is not installed (make install first)"
mnist=$(psring_mnist_dir "$src") || mnist=""

if [[ -z ${PSRING_INSTALLCHECK_HIDDEN:-} ]]; then
  # the installed files must not name the trees (the launcher's helper folder above all)
  [[ -n $libexec && -x $libexec/sweep ]] || fail "$P does not name an installed helper folder (libexec_dir: '$libexec')"
  [[ -f $libexec/pslib.sh ]] || fail "$libexec/pslib.sh is not installed"
  # the helper folder holds exactly the user commands: experiments/ as the tree has it (but its
  # local.mk and Python's caches), and the LD_PRELOAD shims (libpsring-*.so, src/shim); no
  # developer tool of tools/
  files() { find . -name __pycache__ -prune -o -type f ! -name '*.pyc' ! -path ./local.mk ! -name 'libpsring-*.so' -print | sed 's|^\./||' | LC_ALL=C sort; }
  for f in "$src"/tools/*; do
    [[ ! -e $libexec/${f##*/} ]] || fail "the developer tool ${f##*/} is installed ($libexec): tools/ stays in the tree"
  done
  want=$(cd "$src/experiments" && files) have=$(cd "$libexec" && files)
  if [[ $have != "$want" ]]; then
    fail "$libexec is not experiments/: missing $(comm -23 <(echo "$want") <(echo "$have") | paste -sd' '), extra $(comm -13 <(echo "$want") <(echo "$have") | paste -sd' ')"
  fi
  # (the install itself may lie inside a tree: make distcheck installs into the unpacked tarball)
  src=$(cd "$src" && pwd) build=$(cd "$build" && pwd) inside=0
  [[ $(cd "$bin" && pwd)/ == "$build"/* ]] && inside=1
  tree=("$src/experiments/" "$src/data/")
  ((inside)) || tree+=("$build/")
  for t in "${tree[@]}"; do
    grep -rlIF "$t" "$P" "$libexec" 2>/dev/null | grep -q . && fail "installed scripts name $t: $(grep -rlIF "$t" "$P" "$libexec" | head -3)"
  done
  # root: hide the source tree's experiments/ and launcher, and the build tree (unless the install
  # is inside it), in a private mount namespace
  if [[ $(id -u) -eq 0 ]] && unshare -m true 2>/dev/null; then
    hide=("$src/experiments")
    ((inside)) || hide+=("$build")
    export PSRING_INSTALLCHECK_HIDDEN=1 PSRING_MNIST_DIR=$mnist
    exec unshare -m bash -c 'f=$1; shift; mount --bind /dev/null "$f/psring" || exit 1
      for d in "$@"; do mount -t tmpfs -o size=1m,ro psring-hidden "$d" || exit 1; done
      exec bash "$f/tests/installcheck.sh"' installcheck "$src" "${hide[@]}"
  fi
fi
[[ -n ${PSRING_INSTALLCHECK_HIDDEN:-} ]] && say "source tree's experiments/ and launcher hidden (mount namespace)"

W=$(mktemp -d /tmp/psring-installcheck.XXXXXX)
cluster_up=0
trap '((cluster_up)) && "$P" cluster down >/dev/null 2>&1; rm -rf "$W"' EXIT
cp "$src/tests/fixtures/demo_small.csv" "$W/demo.csv" || fail "no tests/fixtures/demo_small.csv"
printf 'format,alpha_s,beta_s_per_byte,gamma_s_per_byte,link_rate_bps,dilation\npsring-model-2,1e-4,8e-9,0,1000000000,8\n' >"$W/calibration.csv"
cd "$W" || fail "cd $W"
unset PSRING_BUILDDIR PSRING_LAUNCHER PSRING_DATADIR TOP_BUILDDIR TOP_SRCDIR
# the launcher must set Open MPI's root flags itself (tests/common.sh set them for the tests)
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_pml
export PATH="$bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" OMPI_MCA_rmaps_base_oversubscribe=1

# run NAME CMD...: must exit 0; output kept in NAME.out
run() { local n=$1 rc=0; shift; "$@" >"$n.out" 2>&1 || rc=$?; ((rc == 0)) || { tail -20 "$n.out"; fail "$n: '$*' exited $rc"; }; }

for c in "" train "bench allreduce" "bench ps" "bench gemm" sweep plot model demo summary cluster get-mnist mps \
         keygen; do
  # shellcheck disable=SC2086
  "$P" $c --help >help.out 2>&1 || { cat help.out; fail "psring $c --help exited non-zero"; }
  grep -qi "usage" help.out || fail "psring $c --help printed no usage: $(head -3 help.out)"
done
say "psring --help and every command's --help"

out=$("$P" train -np 2 --topology ring --allreduce foo 2>&1); rc=$?
[[ $rc -eq 2 && $(printf '%s\n' "$out" | wc -l) -eq 1 ]] || fail "a bad flag: exit $rc, '$out' (want one line, exit 2)"
run keygen "$P" keygen ps.key
[[ -s ps.key ]] || fail "keygen wrote no key file"
run bench-allreduce "$P" bench allreduce -np 2 -b 4K -e 16K -n 2 -w 1
grep -q "ring" bench-allreduce.out || fail "bench allreduce printed no ring row"
run bench-ps "$P" bench ps -np 2 -b 4K -e 16K -n 2 -w 1
run bench-gemm "$P" bench gemm --layers 784,32,10 --steps 3
say "keygen, bench allreduce|ps|gemm, a bad flag (one line, exit 2)"

if [[ -z $mnist ]]; then
  say "SKIP the training, sweep, plot, model and cluster checks: no MNIST (set PSRING_MNIST_DIR)"
  exit 0
fi
PSRING_MNIST_DIR=$mnist run get-mnist "$P" get-mnist
[[ $(ls data/mnist | wc -l) -eq 4 ]] || fail "get-mnist did not put 4 files into ./data/mnist"
tiny=(--layers 784,32,10 --train-limit 1000 --test-limit 500 --epochs 1)
run train-local "$P" train "${tiny[@]}" --csv train.csv
grep -q "test accuracy" train-local.out && [[ $(wc -l <train.csv) -eq 2 ]] || fail "psring train: no summary or CSV row"
run train-ring "$P" train -np 2 --topology ring "${tiny[@]}" --inject-latency-us 10
say "get-mnist into ./data/mnist, train local and ring -np 2 with --inject-latency-us (default --data)"

run sweep "$P" sweep --csv results/sweep.csv --topologies ring --workers 1,2 --repeats 1 --quiet "${tiny[@]}"
rows=$(PYTHONPATH=$(sed -n "s/^libexec_dir='\(.*\)'$/\1/p" "$P") python3 -c 'import sys; from psringlib import results
print(sum(1 for x in results.read_rows(sys.argv[1]) if not x.get("error")))' results/sweep.csv)   # the installed reader
[[ $rows -eq 2 ]] || fail "sweep: $rows successful rows, want 2"
run model "$P" model --calibration calibration.csv --compare demo.csv --out results/model_vs_measured.csv
[[ $(wc -l <results/model_vs_measured.csv) -ge 3 ]] || fail "model --compare wrote no rows"
run explain "$P" model --calibration calibration.csv --explain --topology ring -N 8 --compute-ms 30
grep -q "2(N-1) alpha" explain.out || fail "model --explain printed no formula"
run published "$P" model --published --check   # the shipped points and Horovod's, found under the installed pkgdatadir
grep -qE "^median error .* over [0-9]+ points" published.out || fail "model --published printed no summary: $(head -25 published.out)"
grep -qE "^median error .* \(hvd.*over 15 points" published.out || fail "model --published --check printed no check: $(tail -1 published.out)"
run summary "$P" summary results/sweep.csv --label loopback
if command -v gnuplot >/dev/null; then
  run plot "$P" plot results/sweep.csv -o results/fig --label loopback
  [[ -s results/fig/throughput.png && -s results/fig/throughput.svg ]] || fail "plot made no throughput.png/svg"
  say "sweep of 2 runs, model --compare and --published --check, summary, plot"
else
  say "sweep of 2 runs, model --compare and --published --check, summary (plot skipped: no gnuplot)"
fi

if [[ $(id -u) -eq 0 ]] && command -v tc >/dev/null && ip netns add psring-ic-probe.$$ 2>/dev/null; then
  ip netns del psring-ic-probe.$$
  exec 9>/run/psring-cluster-test.lock && flock -w 300 9 || fail "the cluster test lock stayed taken for 300 s"
  if [[ -e /run/psring-cluster/state ]]; then
    say "SKIP cluster: an emulated cluster is already up (not touching it)"
  else
    cluster_up=1
    export PSRING_CLUSTER_OWNER="test:$$"   # a killed check's cluster is the cluster tests' to remove
    run cluster-up "$P" cluster up 2 --dilation 2
    run train-cluster "$P" train --cluster -np 2 --topology ring "${tiny[@]}"   # the installed sleeping-wait shim
    run cluster-quota-off "$P" cluster quota off   # what the demo does around each run's start-up
    run cluster-quota-on "$P" cluster quota on
    run cluster-down "$P" cluster down
    cluster_up=0
    [[ ! -e /run/psring-cluster/state ]] || fail "cluster down left its state"
    say "cluster up 2 --dilation 2, train --cluster -np 2, quota off and on, cluster down"
  fi
else
  say "SKIP cluster: needs root, tc and network namespaces"
fi
say "PASS: the installed psring in $bin works on its own"
