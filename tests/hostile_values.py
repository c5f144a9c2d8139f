"""tests/hostile_values.py: values that lead a run astray are named, not trained through.

A learning rate that makes the loss NaN stops the run at that step with one line saying the
learning rate is the usual cause, and exit 1 (it used to end at loss NaN with exit 0); --lr beyond
its range names the range; a checkpoint cut short is called truncated, not corrupted.
"""
import os
import unittest

import common
from hostile import hostile_case, train_args

SMALL = ["--topology", "local", "--layers", "784,32,10", "--train-limit", "512", "--test-limit", "256"]


class Values(unittest.TestCase):
    def test_lr_diverges(self):
        hostile_case(self, train_args(*(SMALL + ["--lr", "1000", "--epochs", "3", "--quiet"])), 1,
                     want=r"^psring: the loss became NaN at step \d+ \(lr 1000\): a learning rate too large is the usual "
                          r"cause; try a smaller --lr$")

    def test_lr_diverges_ring(self):
        """worker 0's line alone: mpirun's generic banners after it are the launcher's to drop"""
        hostile_case(self, train_args("-np", "2", "--topology", "ring", "--train-limit", "1024", "--test-limit", "256",
                                      "--lr", "1000", "--epochs", "3", "--quiet"), 1,
                     want=r"^psring: the loss became NaN at step \d+ \(lr 2000\): ")

    def test_lr_beyond_range(self):
        hostile_case(self, train_args("-np", "2", "--topology", "ring", "--lr", "1e30"), 2,
                     want=r"^psring-train: --lr must be a number in \[1e-12, 1000\]: got '1e30'$")

    def checkpoint(self):
        d = common.scratch()
        ck = os.path.join(d, "ck")
        common.run_ok(self, train_args(*(SMALL + ["--steps", "2", "--quiet", "--checkpoint", ck])))
        return ck

    def resumed(self, ck, want):
        hostile_case(self, train_args(*(SMALL + ["--epochs", "2", "--quiet", "--resume", ck])), 2, want=want)

    def test_checkpoint_cut_in_header(self):
        ck = self.checkpoint()
        os.truncate(ck, 20)
        self.resumed(ck, r"^psring: checkpoint .*: truncated: 20 bytes, shorter than a checkpoint's header$")

    def test_checkpoint_cut_in_tensors(self):
        ck = self.checkpoint()
        size = os.path.getsize(ck)
        os.truncate(ck, size // 2)
        self.resumed(ck, r"^psring: checkpoint .*: truncated: %d bytes, its header says %d$" % (size // 2, size))


if __name__ == "__main__":
    common.main()
