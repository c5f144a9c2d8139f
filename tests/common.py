"""tests/common.py: what the Python test modules share, as tests/common.sh is for the shell tests.

Finds the tree and the build (TOP_SRCDIR and TOP_BUILDDIR, as make check's AM_TESTS_ENVIRONMENT
sets them; else this folder's parent and the working folder), puts experiments/ on the path for
psringlib (here and in every command a test starts), gives a scratch folder removed on exit, runs a
command capturing its exit status and output, finds MNIST the one way (experiments/pslib.sh's
psring_mnist_dir) and skips a test that cannot run here. main() runs a module's tests verbosely,
so the log names every check that failed, and turns the result into automake's exit status: 0
PASS, 1 FAIL, 77 SKIP (every check skipped). Not a test itself. Neither the tests nor the commands
they start write bytecode (make check runs the modules with python3 -B, which keeps this module's
own out as well), so running them leaves no __pycache__ in the source or build tree.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"   # and none in the commands the tests start

TOP_SRCDIR = os.environ.get("TOP_SRCDIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP_BUILDDIR = os.environ.get("TOP_BUILDDIR") or os.getcwd()
EXPERIMENTS = os.path.join(TOP_SRCDIR, "experiments")
# psringlib for the tests and for the Python commands they start (their CSVs through its reader)
sys.path.insert(0, EXPERIMENTS)
os.environ["PYTHONPATH"] = EXPERIMENTS + (":" + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
TRAIN = os.path.join(TOP_BUILDDIR, "psring-train")
# the launcher a test starts finds this build (make distcheck builds outside the tree it runs from)
os.environ.setdefault("PSRING_BUILDDIR", TOP_BUILDDIR)
PSRING = os.path.join(TOP_SRCDIR, "psring")
FIXTURES = os.path.join(TOP_SRCDIR, "tests", "fixtures")

_scratch = []


def scratch():
    """a fresh folder under $TMPDIR (else /tmp), removed with all it holds when the module ends"""
    d = tempfile.mkdtemp(prefix="psring-test.")
    _scratch.append(d)
    return d


def read_text(path):
    """the text of the file PATH"""
    with open(path) as f:
        return f.read()


def write_text(path, text):
    """the file PATH made to hold TEXT"""
    with open(path, "w") as f:
        f.write(text)


def sed(text, *edits):
    """TEXT with each (pattern, replacement) applied to each line in turn, first match only, as sed's
    s/// does (a replacement of None deletes the lines the pattern matches, as sed's /re/d)"""
    lines = text.split("\n")
    for pattern, repl in edits:
        rx = re.compile(pattern)
        lines = [l for l in lines if not rx.search(l)] if repl is None else [rx.sub(repl, l, count=1) for l in lines]
    return "\n".join(lines)


def assert_line(test, pattern, text, msg=None):
    """some line of TEXT matches the regular expression PATTERN (as grep -E finds it)"""
    if not re.search(pattern, text, re.M):
        test.fail("%sno line matches '%s' in:\n%s" % (msg + ": " if msg else "", pattern, text))


def run(args, cwd=None, env=None, stdin=None):
    """runs ARGS (a list) and returns (rc, stdout, stderr) as text; never raises on a non-zero exit"""
    e = dict(os.environ, **env) if env else None
    p = subprocess.run(args, cwd=cwd, env=e, stdin=subprocess.DEVNULL if stdin is None else stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def run_ok(test, args, **kw):
    """runs ARGS and fails TEST (naming the command and its output) unless it exits 0; its stdout"""
    rc, out, err = run(args, **kw)
    test.assertEqual(rc, 0, "%s exited %d:\n%s%s" % (" ".join(map(str, args)), rc, out, err))
    return out


def refused(test, args, want, cwd=None, env=None):
    """ARGS must exit 2 with one line of output (stdout and stderr) that holds WANT: how every psring
    command refuses bad input"""
    rc, out, err = run(args, cwd=cwd, env=env)
    text = (out + err).rstrip("\n")
    what = " ".join(map(str, args))
    test.assertEqual(rc, 2, "%s: exit %d, want 2: %s" % (what, rc, text))
    test.assertEqual(len(text.split("\n")), 1, "%s: not one line: %s" % (what, text))
    test.assertIn(want, text, what)


def mnist_dir():
    """the MNIST folder as psring_mnist_dir finds it ($PSRING_MNIST_DIR, else the tree's data/mnist), or None"""
    rc, out, _ = run(["sh", "-c", '. "$1/experiments/pslib.sh" && psring_mnist_dir "$1"', "sh", TOP_SRCDIR])
    return out.strip() if rc == 0 and out.strip() else None


def need_mnist():
    """the MNIST folder, or the test skips saying what to set or run"""
    d = mnist_dir()
    if d is None:
        raise unittest.SkipTest("no MNIST (set PSRING_MNIST_DIR, or run experiments/get-mnist)")
    return d


def need_program(name):
    """skips unless NAME is on the PATH"""
    if shutil.which(name) is None:
        raise unittest.SkipTest(name + " missing")


def main():
    """runs the calling module's tests, naming each, and exits as automake's harness reads it"""
    try:
        prog = unittest.main(module="__main__", verbosity=2, exit=False)
    finally:
        for d in _scratch:
            shutil.rmtree(d, ignore_errors=True)
    r = prog.result
    if not r.wasSuccessful():
        sys.exit(1)
    if r.testsRun == 0 and not r.skipped:
        print("no tests ran", file=sys.stderr)
        sys.exit(99)
    sys.exit(77 if len(r.skipped) >= r.testsRun else 0)
