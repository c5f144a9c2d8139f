"""tests/hostile_once.py: what can be checked before mpirun starts is checked there, by one process.

The launcher's check before the job (psring-train --check-options --describe-np N) loads the data
files and reads the checkpoint a --resume starts from, so a truncated data file, a truncated
checkpoint or one written with another seed gets one line and exit 2: not one line per rank
followed by mpirun's abort banner.
"""
import os
import shutil
import unittest

import common
from hostile import hostile_case, train_args

SMALL = ["--layers", "784,32,10", "--train-limit", "512", "--test-limit", "256", "--quiet"]


class Once(unittest.TestCase):
    def test_truncated_data_file_ps(self):
        d = os.path.join(common.scratch(), "mnist")
        shutil.copytree(common.need_mnist(), d)
        images = [n for n in os.listdir(d) if n.startswith("train-images")][0]
        os.truncate(os.path.join(d, images), 100000)
        hostile_case(self, [common.PSRING, "train", "-np", "4", "--topology", "ps", "--steps", "20", "--data", d], 2,
                     want=r"^psring-train: .*%s: " % images)

    def checkpoint(self):
        ck = os.path.join(common.scratch(), "ck")
        common.run_ok(self, train_args(*(["-np", "2", "--topology", "ring", "--steps", "2", "--checkpoint", ck] + SMALL)))
        return ck

    def test_truncated_checkpoint_ring(self):
        ck = self.checkpoint()
        os.truncate(ck, os.path.getsize(ck) - 7)
        hostile_case(self, train_args(*(["-np", "2", "--topology", "ring", "--epochs", "2", "--resume", ck] + SMALL)), 2,
                     want=r"^psring-train: checkpoint .*: truncated: ")

    def test_checkpoint_of_another_seed_ps(self):
        ck = self.checkpoint()
        hostile_case(self, train_args(*(["-np", "3", "--topology", "ps", "--epochs", "2", "--seed", "7", "--resume", ck]
                                        + SMALL)), 2,
                     want=r"^psring-train: --resume .*: written with --seed 42, this run has --seed 7$")


if __name__ == "__main__":
    common.main()
