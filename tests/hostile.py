"""tests/hostile.py: what the hostile-input suites (tests/hostile_*.py) share, built on tests/common.py.

A case is a command a hostile but realistic user would give. hostile_case() runs it in a session
of its own (start_new_session) with a private TMPDIR, optionally sends its launcher a signal, and
then checks what every case must hold: the exit code it expects, exactly one line on stderr (no
mpirun banner, nothing printed twice), no process of its session left, its TMPDIR empty apart
from what it meant to leave, and no /tmp/psring-<pid>* entry (a ZeroMQ ipc socket) of any process
it ran. Each failure names the command and what differs. Not a test itself.
"""
import os
import re
import resource
import signal
import subprocess
import threading
import time

import common

DEADLINE_S = 5.0       # a signalled job is gone within this
SETTLE_S = 3.0         # how long the session's processes get to go after the launcher ended


def session_pids(sid):
    """the live (not zombie) processes of session SID, as {pid: command}"""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            found[int(name)] = stat[stat.index("(") + 1:stat.rindex(")")]
    return found


def ipc_leftovers(pids, before=()):
    """the /tmp/psring-<pid>* names of processes PIDS (ZeroMQ ipc sockets are named by a pid) that
    were not there BEFORE the case (a pid is reused: an older run may have left a socket under it)"""
    names = set(os.listdir("/tmp")) - set(before)
    return sorted(n for n in names for p in pids if re.match(r"psring-%d(-|$)" % p, n))


class _Watcher(threading.Thread):
    """every pid seen in the session while the case runs (the ipc sockets are named by them)"""

    def __init__(self, sid):
        super().__init__(daemon=True)
        self.sid, self.seen, self.done = sid, set(), threading.Event()

    def run(self):
        while not self.done.is_set():
            self.seen.update(session_pids(self.sid))
            time.sleep(0.05)


def _file_limit(nbytes):
    """a child's preexec: files it writes stop at NBYTES, the write failing as on a full disk (EFBIG,
    with SIGXFSZ ignored so the process lives to report it)"""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return limit


def hostile_case(test, args, want_rc, want=None, sig=None, after=3.0, leave=(), env=None, cwd=None, timeout=120,
                 silent=False, file_limit=None):
    """runs ARGS as described above and fails TEST where it does not hold; SIG: the signal sent to the
    launcher AFTER seconds, ended within DEADLINE_S; WANT: a regular expression the one stderr line
    must match; SILENT: stderr must be empty instead (a clean run that reports nothing there);
    LEAVE: the names the case's TMPDIR may keep; FILE_LIMIT: the bytes a file it writes may reach
    (a full disk without a mount). Returns (stdout, the stderr line, the TMPDIR)."""
    what = " ".join(map(str, args))
    tmp = common.scratch()
    tmp_before = os.listdir("/tmp")
    e = dict(os.environ, TMPDIR=tmp, **(env or {}))
    p = subprocess.Popen(args, cwd=cwd, env=e, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=_file_limit(file_limit) if file_limit else None)
    watch = _Watcher(p.pid)
    watch.start()
    out_parts = []
    reader = threading.Thread(target=lambda: out_parts.append(p.stdout.read()), daemon=True)
    err_parts = []
    ereader = threading.Thread(target=lambda: err_parts.append(p.stderr.read()), daemon=True)
    reader.start()
    ereader.start()
    sent = None
    try:
        if sig is not None:
            time.sleep(after)
            test.assertIsNone(p.poll(), "%s ended before the signal (exit %s)" % (what, p.returncode))
            sent = time.monotonic()
            os.kill(p.pid, sig)
        rc = p.wait(timeout=DEADLINE_S if sig is not None else timeout)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.monotonic() - sent if sent else 0
    deadline = time.monotonic() + SETTLE_S
    while session_pids(p.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = session_pids(p.pid)
    watch.done.set()
    watch.join()
    if left or rc is None:
        os.killpg(p.pid, signal.SIGKILL)
    reader.join(10)
    ereader.join(10)
    p.stdout.close()
    p.stderr.close()
    out, err = "".join(out_parts), "".join(err_parts)
    test.assertIsNotNone(rc, "%s: still running %.0f s after %s" % (what, DEADLINE_S if sig else timeout,
                                                                     "the signal" if sig else "it started"))
    test.assertEqual(left, {}, "%s: processes left: %s" % (what, left))
    lines = err.rstrip("\n").split("\n")
    test.assertEqual(rc, want_rc, "%s: exit %d, want %d; stderr:\n%s" % (what, rc, want_rc, err))
    if silent:
        test.assertEqual(err, "", "%s: printed on stderr:\n%s" % (what, err))
    else:
        test.assertEqual(len(lines), 1, "%s: stderr is not one line:\n%s" % (what, err))
        test.assertTrue(lines[0], "%s: nothing on stderr" % what)
    if want is not None:
        test.assertRegex(lines[0], want, what)
    if sig is not None:
        test.assertLess(took, DEADLINE_S, "%s: took %.1f s to end after the signal" % (what, took))
    kept = sorted(set(os.listdir(tmp)) - set(leave))
    test.assertEqual(kept, [], "%s: left in its TMPDIR: %s" % (what, kept))
    test.assertEqual(ipc_leftovers(watch.seen, tmp_before), [], "%s: sockets left in /tmp" % what)
    return out, lines[0], tmp


def train_args(*args):
    """the launcher's `psring train` with ARGS, on this tree's MNIST (the test skips without it)"""
    return [common.PSRING, "train", "--data", common.need_mnist()] + list(args)
