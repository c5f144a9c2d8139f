"""tests/hostile_kills.py: kill -9 of one rank ends the whole job, naming the rank.

A ring worker or a PS worker killed mid-training: the job ends within 5 s, exits 137 (128 +
SIGKILL), leaves no process and nothing in its TMPDIR, and its stderr names the killed rank.
That stderr is mpirun's own block (a line between two rules of dashes), which the launcher passes
on (docs/reliability.md): the one place the suite holds to a rank's line, not to one line.
"""
import os
import signal
import subprocess
import time
import unittest

import common
import hostile
from hostile import train_args

LONG = ["--train-limit", "2048", "--epochs", "100000", "--quiet"]


def world_rank(pid):
    """the MPI rank of process PID, from the environment mpirun gave it (None if unreadable)"""
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        return int(env[b"OMPI_COMM_WORLD_RANK"])
    except (OSError, KeyError, ValueError):
        return None


class Kills(unittest.TestCase):
    def killed(self, rank, np_, *args):
        tmp = common.scratch()
        p = subprocess.Popen(train_args(*(list(args) + LONG)), env=dict(os.environ, TMPDIR=tmp), stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            # every rank up and training a while (a loaded machine starts them slowly), then the one
            # whose environment says it is RANK
            start, ranks = time.monotonic(), {}
            while time.monotonic() - start < 30 and len(ranks) < np_:
                time.sleep(0.2)
                ranks = {world_rank(pid): pid for pid, name in hostile.session_pids(p.pid).items() if name == "psring-train"}
            self.assertIn(rank, ranks, "ranks of the job after %.0f s: %s" % (time.monotonic() - start, ranks))
            time.sleep(2)
            os.kill(ranks[rank], signal.SIGKILL)
            sent = time.monotonic()
            try:
                rc = p.wait(timeout=hostile.DEADLINE_S)
            except subprocess.TimeoutExpired:
                rc = None
            took = time.monotonic() - sent
            deadline = time.monotonic() + hostile.SETTLE_S
            while hostile.session_pids(p.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            left = hostile.session_pids(p.pid)
        finally:
            if p.poll() is None or hostile.session_pids(p.pid):
                os.killpg(p.pid, signal.SIGKILL)
            err = p.stderr.read()
            p.stderr.close()
        self.assertIsNotNone(rc, "still running %.0f s after the kill" % hostile.DEADLINE_S)
        self.assertLess(took, hostile.DEADLINE_S)
        self.assertEqual(left, {}, "processes left: %s" % left)
        self.assertEqual(rc, 128 + signal.SIGKILL, "exit %d; stderr:\n%s" % (rc, err))
        lines = [line for line in err.split("\n") if line and not line.startswith("---")]
        self.assertEqual(len(lines), 1, "stderr is not one line between rules:\n%s" % err)
        self.assertRegex(lines[0], r"process rank %d .* exited on signal 9 \(Killed\)" % rank)
        self.assertEqual(os.listdir(tmp), [], "left in its TMPDIR")

    def test_kill_ring_worker(self):
        self.killed(1, 2, "-np", "2", "--topology", "ring")

    def test_kill_ps_worker(self):
        self.killed(2, 3, "-np", "3", "--topology", "ps")


if __name__ == "__main__":
    common.main()
