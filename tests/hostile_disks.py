"""tests/hostile_disks.py: an output that cannot be written is named in one line, before training.

A --csv, --dump-params, --checkpoint, --loss-log or --timeline in a read-only folder, in a
folder that does not exist, or where a folder stands: one line naming the flag and the file, exit
2, and nothing written. As root (who writes in a read-only folder) the read-only cases run as
nobody through setpriv; without it they skip.
"""
import os
import shutil
import unittest

import common
from hostile import hostile_case, train_args

SMALL = ["--topology", "local", "--layers", "784,32,10", "--train-limit", "512", "--test-limit", "256", "--steps", "2",
         "--quiet"]
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


class Disks(unittest.TestCase):
    def refused(self, flag, path, want, prefix=()):
        hostile_case(self, list(prefix) + train_args(*(SMALL + [flag, path])), 2,
                     want=r"^psring-train: %s %s: %s$" % (flag, path.replace(".", r"\."), want), timeout=60)

    def read_only(self, flag, name):
        prefix = []
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                self.skipTest("root writes in a read-only folder, and there is no setpriv to run as nobody")
            prefix = NOBODY
        top = common.scratch()
        os.chmod(top, 0o755)
        ro = os.path.join(top, "ro")
        os.mkdir(ro, 0o555)
        self.refused(flag, os.path.join(ro, name), r"cannot write in .*ro: Permission denied", prefix)
        self.assertEqual(os.listdir(ro), [], "%s wrote in a read-only folder" % flag)

    def test_csv_read_only(self):
        self.read_only("--csv", "r.csv")

    def test_dump_params_read_only(self):
        self.read_only("--dump-params", "p.bin")

    def test_checkpoint_read_only(self):
        self.read_only("--checkpoint", "ck")

    def test_loss_log_read_only(self):
        self.read_only("--loss-log", "l.csv")

    def test_timeline_read_only(self):
        self.read_only("--timeline", "t.json")

    def test_csv_no_folder(self):
        self.refused("--csv", os.path.join(common.scratch(), "nodir", "r.csv"),
                     r"cannot write in .*nodir: No such file or directory")

    def test_checkpoint_no_folder(self):
        self.refused("--checkpoint", os.path.join(common.scratch(), "nodir", "ck"),
                     r"cannot write in .*nodir: No such file or directory")

    def test_dump_params_folder(self):
        self.refused("--dump-params", common.scratch(), "is a directory")

    def test_csv_folder(self):
        self.refused("--csv", common.scratch(), "is a directory")


if __name__ == "__main__":
    common.main()
