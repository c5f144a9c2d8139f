#!/bin/bash
# pack_runtime.sh: tools/pack-runtime, which packs Open MPI, ZeroMQ, OpenBLAS and Check's
# libsubunit for the GPU machine: bad command lines (one line, exit 2); --list names the files
# it must carry and writes nothing; a real pack (--no-tar, this machine's packages) holds them,
# its env.sh says what docs/gpu.md promises, and a 2-rank job runs from the packed mpirun and
# libraries. SKIP where the packages are not installed (not a Debian system, or a partial one).
. "$(dirname "$0")/common.sh"
PACK=$TOP_SRCDIR/tools/pack-runtime
scratch
for bad in "--bogus" "" "$SCRATCH/a $SCRATCH/b"; do
  # shellcheck disable=SC2086
  out=$("$PACK" $bad 2>&1 >/dev/null); rc=$?
  [[ $rc -eq 2 && $(printf '%s\n' "$out" | wc -l) -eq 1 && $out == pack-runtime:* ]] \
    || fail "pack-runtime $bad: exit $rc, '$out' (want one line, exit 2)"
done
"$PACK" --help | grep -q "pack-runtime \[--list\]" || fail "--help shows no usage"

"$PACK" --list "$SCRATCH/l" >"$SCRATCH/list" 2>"$SCRATCH/err" || { grep -q "is not installed" "$SCRATCH/err" && skip "$(cat "$SCRATCH/err")"; cat "$SCRATCH/err"; fail "--list"; }
[[ ! -e $SCRATCH/l ]] || fail "--list wrote $SCRATCH/l"
# what the build needs at run time: mpirun and its daemon, the MPI, ZeroMQ, OpenBLAS, libsubunit
musts='/mpirun\.openmpi$ /orted$ /libmpi\.so\.40$ /libopen-pal\.so\.40$ /libzmq\.so\.5$ /libopenblas\.so\.0$ /libsubunit\.so\.0$ /share/openmpi/help-orterun\.txt$'
for m in $musts; do grep -q "$m" "$SCRATCH/list" || fail "--list: no file matching $m"; done
grep -v '^/' "$SCRATCH/list" | head -3 | grep -q . && fail "--list: not absolute paths: $(grep -v '^/' "$SCRATCH/list" | head -3)"
grep -q '^/usr/share/doc/' "$SCRATCH/list" && fail "--list packs documentation"

"$PACK" --no-tar "$SCRATCH/rt" >"$SCRATCH/out" 2>&1 || { cat "$SCRATCH/out"; fail "pack-runtime --no-tar"; }
p=$SCRATCH/rt/prefix
for m in $musts; do
  f=$(sed -n "\\|$m|{p;q}" "$SCRATCH/list")
  [[ -e $p$f ]] || fail "the pack has no $f"
done
[[ -e $p/usr/bin/mpirun && ! -e $SCRATCH/rt/prefix.tar.xz ]] || fail "no usr/bin/mpirun link, or a tarball despite --no-tar"
for want in 'export OPAL_PREFIX=$_rt/usr' 'export OMPI_MCA_plm=isolated' 'export PATH=$_rt/usr/bin:$PATH' \
            'export LD_LIBRARY_PATH=$_l:$_l/openmpi/lib:$_l/openblas-pthread' 'OMPI_ALLOW_RUN_AS_ROOT=1'; do
  grep -qF "$want" "$p/env.sh" || fail "env.sh does not say: $want"
done
# sourced from anywhere, env.sh points at its own folder; a job starts from the packed Open MPI
(
  cd / && . "$p/env.sh"
  [[ $(command -v mpirun) == "$p/usr/bin/mpirun" && $OPAL_PREFIX == "$p/usr" ]] || fail "env.sh: mpirun $(command -v mpirun), OPAL_PREFIX $OPAL_PREFIX"
  ldd "$TOP_BUILDDIR/psring-bench-allreduce" | grep -q "libmpi.so.40 => $p/" || fail "psring-bench-allreduce does not load libmpi from the pack"
  timeout -k 5 60 mpirun --oversubscribe -np 2 "$TOP_BUILDDIR/psring-bench-allreduce" -b 4K -e 4K -n 1 -w 0 --impl ring >"$SCRATCH/job" 2>&1 \
    || { cat "$SCRATCH/job"; fail "a 2-rank job from the packed mpirun"; }
) || exit $?
pass "pack-runtime: bad flags, --list, a pack with env.sh, a 2-rank job from it"
