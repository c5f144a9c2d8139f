"""tests/hostile_bounds.py: what cannot run, or would do nothing, is refused before anything starts.

A process count beyond this machine's limits or an -H list's slots (the launcher), a batch larger
than a worker's shard (the trainer's one check before mpirun, and in a local run's one process),
and flags that would do nothing (--staleness outside ssp, --checkpoint-every without
--checkpoint): each one line naming what was wrong, exit 2, and nothing left (no mpirun session
folder in the case's TMPDIR, no process).
"""
import unittest

import common
from hostile import hostile_case, train_args


class Bounds(unittest.TestCase):
    def refused(self, want, *args):
        hostile_case(self, train_args(*args), 2, want=want, timeout=60)

    def test_np_beyond_machine(self):
        self.refused(r"^psring: -np 100000 is more processes than this machine can start \(at most \d+ within ",
                     "-np", "100000", "--topology", "ring")

    def test_np_beyond_host_slots(self):
        self.refused(r"^psring: -np 3 is more than the 2 slot\(s\) of -H localhost:2 ",
                     "-np", "3", "-H", "localhost:2", "--topology", "ring")

    def test_batch_beyond_shard_ring(self):
        self.refused(r"^psring-train: --batch 1000000: a worker's batch of 1000000 is larger than its shard of 2048 samples "
                     r"\(4096 training samples over 2 workers\); give at most 2048$",
                     "-np", "2", "--topology", "ring", "--train-limit", "4096", "--batch", "1000000")

    def test_batch_beyond_shard_ps(self):
        self.refused(r"^psring-train: --batch 2000: a worker's batch of 2000 is larger than its shard of 1366 samples "
                     r"\(4096 training samples over 3 workers\)",
                     "-np", "4", "--topology", "ps", "--train-limit", "4096", "--batch", "2000")

    def test_batch_beyond_shard_strong(self):
        self.refused(r"give at most 4096 with --scaling strong$", "-np", "2", "--topology", "ring", "--train-limit",
                     "4096", "--batch", "8192", "--scaling", "strong")

    def test_batch_beyond_shard_local(self):
        self.refused(r"^psring: --batch 5000: a worker's batch of 5000 is larger than its shard of 4096 samples",
                     "--topology", "local", "--train-limit", "4096", "--batch", "5000")

    def test_staleness_with_bsp(self):
        self.refused(r"^psring-train: --staleness applies to --sync ssp only ",
                     "-np", "3", "--topology", "ps", "--sync", "bsp", "--staleness", "3")

    def test_staleness_with_async(self):
        self.refused(r"^psring-train: --staleness applies to --sync ssp only ",
                     "-np", "3", "--topology", "ps", "--sync", "async", "--staleness", "0")

    def test_checkpoint_every_without_checkpoint(self):
        self.refused(r"^psring-train: --checkpoint-every needs --checkpoint FILE ",
                     "-np", "2", "--topology", "ring", "--checkpoint-every", "5")


if __name__ == "__main__":
    common.main()
