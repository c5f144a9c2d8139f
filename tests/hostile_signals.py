"""tests/hostile_signals.py: a signal sent to the launcher ends the whole job in every mode.

SIGTERM, SIGINT or SIGHUP to `psring train` (local, ring, PS bsp, ssp and async: the async PS runs
mpirun with --enable-recovery, the path that used to leave the job training) ends every process
within 5 s, prints one line naming the signal and exits 128 + its number, leaving nothing behind
(tests/hostile.py checks the processes, the TMPDIR with the async run's result file, the sockets).
"""
import signal
import unittest

import common
from hostile import hostile_case, train_args

# long enough to be running when the signal comes: many epochs of a small shard
LONG = ["--train-limit", "2048", "--epochs", "100000", "--quiet"]


class Signals(unittest.TestCase):
    def ended(self, sig, *args):
        name = signal.Signals(sig).name
        hostile_case(self, train_args(*(list(args) + LONG)), 128 + sig, want="^psring: ended by %s$" % name, sig=sig)

    def test_term_local(self):
        self.ended(signal.SIGTERM, "--topology", "local")

    def test_int_local(self):
        self.ended(signal.SIGINT, "--topology", "local")

    def test_term_ring(self):
        self.ended(signal.SIGTERM, "-np", "2", "--topology", "ring")

    def test_int_ring(self):
        self.ended(signal.SIGINT, "-np", "2", "--topology", "ring")

    def test_hup_ps_bsp(self):
        self.ended(signal.SIGHUP, "-np", "3", "--topology", "ps", "--sync", "bsp")

    def test_term_ps_ssp(self):
        self.ended(signal.SIGTERM, "-np", "3", "--topology", "ps", "--sync", "ssp", "--staleness", "2")

    def test_term_ps_async(self):
        self.ended(signal.SIGTERM, "-np", "3", "--topology", "ps", "--sync", "async", "--slow-rank", "0", "--slow-ms", "40")

    def test_int_ps_async(self):
        self.ended(signal.SIGINT, "-np", "3", "--topology", "ps", "--sync", "async")


if __name__ == "__main__":
    common.main()
