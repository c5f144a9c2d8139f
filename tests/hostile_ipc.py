"""tests/hostile_ipc.py: --transport ipc leaves no socket behind, however the run ends.

The PS's ipc endpoints are names in Linux's abstract socket namespace, gone with the last socket
that holds them: a clean training run, one ended by SIGTERM and a `psring bench ps` run leave no
/tmp/psring-<pid>* entry of any of their processes (tests/hostile.py checks, with the rest of
what every hostile case must hold).
"""
import signal
import unittest

import common
from hostile import hostile_case, train_args

PS = ["-np", "3", "--topology", "ps", "--transport", "ipc", "--train-limit", "1024", "--quiet"]


class Ipc(unittest.TestCase):
    def test_clean_run(self):
        hostile_case(self, train_args(*(PS + ["--epochs", "1"])), 0, silent=True)

    def test_terminated_run(self):
        hostile_case(self, train_args(*(PS + ["--sync", "ssp", "--epochs", "100000"])), 143,
                     want="^psring: ended by SIGTERM$", sig=signal.SIGTERM)

    def test_bench(self):
        hostile_case(self, [common.PSRING, "bench", "ps", "-np", "3", "--transport", "ipc", "-b", "4K", "-e", "16K"], 0,
                     silent=True)


if __name__ == "__main__":
    common.main()
