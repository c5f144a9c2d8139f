"""tests/hostile_checkpoints.py: a --resume that cannot start is refused in one line, exit 2.

A checkpoint that is missing, empty, a folder, random bytes, one with a flipped byte, one of
another model shape or optimizer, or one that stopped mid-epoch with another worker count; each
is named in one line before training starts. A checkpoint of another topology with the same data
layout (ring's two workers, a PS job's two) resumes: the model is the same.
"""
import os
import unittest

import common
from hostile import hostile_case, train_args

SMALL = ["--layers", "784,32,10", "--train-limit", "512", "--test-limit", "256", "--quiet"]
RING = ["-np", "2", "--topology", "ring"]
PS = ["-np", "3", "--topology", "ps"]


class Checkpoints(unittest.TestCase):
    def checkpoint(self, topo=RING):
        ck = os.path.join(common.scratch(), "ck")
        common.run_ok(self, train_args(*(topo + SMALL + ["--steps", "2", "--checkpoint", ck])))
        return ck

    def resumed(self, ck, want, topo=RING, extra=(), rc=2):
        hostile_case(self, train_args(*(topo + SMALL + list(extra) + ["--epochs", "2", "--resume", ck])), rc, want=want,
                     silent=rc == 0, timeout=60)

    def spoilt(self, data):
        ck = os.path.join(common.scratch(), "ck")
        with open(ck, "wb") as f:
            f.write(data)
        return ck

    def test_missing(self):
        self.resumed(os.path.join(common.scratch(), "nosuch"), r"^psring-train: --resume .*nosuch: no such file$")

    def test_empty(self):
        self.resumed(self.spoilt(b""), r"^psring-train: checkpoint .*: not a psring checkpoint \(bad magic\)$")

    def test_random_bytes(self):
        self.resumed(self.spoilt(os.urandom(2000)), r"^psring-train: checkpoint .*: not a psring checkpoint \(bad magic\)$")

    def test_folder(self):
        d = os.path.join(common.scratch(), "ckdir")
        os.mkdir(d)
        self.resumed(d, r"^psring-train: checkpoint .*ckdir: not a regular file$")

    def test_byte_flipped(self):
        with open(self.checkpoint(), "rb") as f:
            b = bytearray(f.read())
        b[-100] ^= 0xff
        self.resumed(self.spoilt(bytes(b)), r"^psring-train: checkpoint .*: CRC mismatch \(file corrupted: ")

    def test_other_layers(self):
        ck = self.checkpoint()
        hostile_case(self, train_args(*(RING + ["--layers", "784,64,10", "--train-limit", "512", "--test-limit", "256",
                                                "--quiet", "--epochs", "2", "--resume", ck])), 2,
                     want=r"^psring-train: checkpoint .*: model layers 784,32,10 do not match --layers 784,64,10$")

    def test_other_optimizer(self):
        self.resumed(self.checkpoint(), r"^psring-train: checkpoint .*: written with --optimizer sgd, this run uses adam$",
                     extra=["--optimizer", "adam"])

    def test_other_workers_mid_epoch(self):
        self.resumed(self.checkpoint(), r"^psring-train: checkpoint .*: stopped in the middle of epoch 1 \(batch 2\) with "
                     r"a different data layout: workers 2 \(now 4\); ", topo=["-np", "4", "--topology", "ring"])

    def test_ring_checkpoint_in_local_run(self):
        self.resumed(self.checkpoint(), r"^psring: checkpoint .*: stopped in the middle of epoch 1 .*workers 2 \(now 1\); ",
                     topo=["--topology", "local"])

    def test_ps_checkpoint_in_ring_run(self):
        self.resumed(self.checkpoint(PS), None, rc=0)

    def test_ring_checkpoint_in_ps_run(self):
        self.resumed(self.checkpoint(), None, topo=PS, rc=0)


if __name__ == "__main__":
    common.main()
