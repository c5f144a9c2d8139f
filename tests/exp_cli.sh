#!/usr/bin/env bash
# exp_cli.sh: the Python commands' flags (psringlib.cli.Parser) and the package's shape. A bad flag,
# a flag without its value or an abbreviated one is one line, 'psring CMD: ...', and exit 2; -h and
# --help print the command's own text, not argparse's; --flag=value works; the sweep keeps the
# trainer options in the order given. The commands import psringlib as a package: nothing in
# experiments/ or tests/ loads a module by file path, and no Python file is over 500 lines.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
scratch
E=$TOP_SRCDIR/experiments
# one_line WANT CMD ARGS...: CMD ARGS exits 2 with exactly one line on stderr, which is WANT
one_line() {
  local want=$1 out rc; shift
  out=$("$@" 2>&1 >/dev/null); rc=$?
  [[ $rc == 2 && $(wc -l <<<"$out") == 1 && $out == "$want" ]] || fail "${*#$E/}: rc $rc, want 2 and '$want': $out"
}
for cmd in sweep plot summary demo mps; do
  tail=" (see psring $cmd --help)"
  [[ $cmd == sweep ]] && tail=" (see psring sweep --help; trainer options go after --)"
  [[ $cmd == mps ]] && tail=" (try --help)"
  one_line "psring $cmd: unknown option '--bogus'$tail" "$E/$cmd" --bogus
  # -h is --help, the command's own text: no argparse listing
  "$E/$cmd" --help >"$SCRATCH/help" 2>&1 || fail "$cmd --help failed"
  "$E/$cmd" -h | cmp -s - "$SCRATCH/help" || fail "$cmd -h differs from --help"
  [[ -s $SCRATCH/help ]] && ! grep -q "show this help message" "$SCRATCH/help" || fail "$cmd --help: $(head -3 "$SCRATCH/help")"
done
one_line "psring model: unrecognized arguments: --bogus" "$E/model" --bogus
one_line "psring model: argument --topology: expected one argument" "$E/model" --topology
one_line "psring sweep: --workers needs a value" "$E/sweep" --workers
one_line "psring plot: -o needs a value" "$E/plot" -o
one_line "psring plot: --out needs a value" "$E/plot" x.csv --out
one_line "psring summary: --label needs a value" "$E/summary" --label
one_line "psring demo: --rate needs a value" "$E/demo" --rate
one_line "psring sweep: unknown option '--work' (see psring sweep --help; trainer options go after --)" "$E/sweep" --work 2
one_line "psring plot: one results CSV only (got 'a.csv' and 'b.csv')" "$E/plot" a.csv -o d b.csv
one_line "psring mps: no command: psring mps [--quiet] -- COMMAND [ARGS...]" "$E/mps" --quiet
one_line "psring demo: --dilation must be a positive integer (dilation <= 1000, repeats <= 20): got '0'" "$E/demo" --dilation=0
# --flag=value, and the trainer's options in the order given, before and after --
out=$("$E/sweep" --dry-run --csv="$SCRATCH/s.csv" --topologies=ring --workers=2 --repeats=1 --lr 0.1 --epochs=2 --drop-last -- --seed 3) \
  || fail "sweep --dry-run: $out"
[[ $out == "repeat 0: psring train -np 2 --topology ring --allreduce ring --lr 0.1 --epochs 2 --drop-last --seed 3 --csv FILE"* \
   && $(grep -c "^repeat" <<<"$out") == 1 ]] || fail "sweep --dry-run with --flag=value: $out"
# --staleness reaches only the PS's ssp runs (the trainer refuses it where it would do nothing)
out=$("$E/sweep" --dry-run --csv="$SCRATCH/s.csv" --topologies=ring,ps --workers=2 --servers=1 --sync=bsp,ssp --repeats=1 --staleness 3) \
  || fail "sweep --dry-run --staleness: $out"
[[ $(grep -c -- "--staleness 3" <<<"$out") == 1 && $(grep -c -- "--sync ssp --staleness 3 " <<<"$out") == 1 ]] \
  || fail "sweep --staleness passed to runs other than ssp: $out"
# the package: every module imports on its own (no cycle), none is loaded by path, none is long
python3 - "$E" <<'PY' || fail "psringlib's modules"
import importlib, os, sys
top = os.path.join(sys.argv[1], "psringlib")
names = ["psringlib." + f[:-3] for f in sorted(os.listdir(top)) if f.endswith(".py") and f != "__init__.py"]
names += ["psringlib.demo." + f[:-3] for f in sorted(os.listdir(os.path.join(top, "demo"))) if f.endswith(".py") and f != "__init__.py"]
assert len(names) >= 15, names
for n in names:
    importlib.import_module(n)
PY
cd "$TOP_SRCDIR" || fail "cd $TOP_SRCDIR"
# (the pattern in pieces, so that this file is no hit of its own)
by_path=$(grep -rlE "SourceFile""Loader|spec_from_file""_location|module_from""_spec" experiments tests --exclude="*.log" --exclude="*.trs")
[[ -z $by_path ]] || fail "a module loaded by file path in: $(echo $by_path)"
long=$(for f in $(grep -rlIs --exclude-dir=__pycache__ -m1 "" experiments tests fuzz); do
         [[ $f == *.py ]] || head -1 "$f" | grep -q "^#!.*python" || continue
         n=$(wc -l <"$f"); ((n > 500)) && echo "$f ($n lines)"
       done)
[[ -z $long ]] || fail "Python files over 500 lines: $(echo $long)"
pass "commands' flags: one line and exit 2, their own --help, --flag=value, pass-through order; psringlib imports, none by path, none long"
