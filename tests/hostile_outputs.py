"""tests/hostile_outputs.py: outputs are written whole or not at all, and their errors name no source.

A full disk (here a file-size limit, RLIMIT_FSIZE: the write fails with EFBIG as it would with
ENOSPC, no mount needed) while --dump-params, --snapshots, --loss-log or --csv is written leaves
the previous file byte for byte, or no file where there was none; the one stderr line names the
flag and the file, never a source file and line as a programming error would.
"""
import os
import re
import unittest

import common
from hostile import hostile_case, train_args

SMALL = ["--topology", "local", "--layers", "784,32,10", "--train-limit", "512", "--test-limit", "256", "--epochs", "1",
         "--quiet"]
NO_SOURCE = r"^(?!.*\.c:\d+).*"   # no "file.c:line" anywhere in the line


class Outputs(unittest.TestCase):
    def full(self, flag, path, rc, extra=(), limit=4096):
        """the run with FLAG PATH on a disk that fills at LIMIT bytes a file"""
        _, line, _ = hostile_case(self, train_args(*(SMALL + list(extra) + [flag, path])), rc,
                                  want=NO_SOURCE + re.escape("%s %s" % (flag, path)), file_limit=limit)
        self.assertIn("write failed", line)

    def previous(self, path, text):
        common.write_text(path, text)
        return text

    def kept(self, path, text):
        self.assertEqual(common.read_text(path), text, "%s changed" % path)
        self.assertEqual([n for n in os.listdir(os.path.dirname(path)) if n != os.path.basename(path)], [],
                         "a temporary file is left beside %s" % path)

    def absent(self, path):
        self.assertEqual(os.listdir(os.path.dirname(path)), [], "%s: a file is left" % path)

    def test_dump_params_new(self):
        p = os.path.join(common.scratch(), "params.bin")
        self.full("--dump-params", p, 1)
        self.absent(p)

    def test_dump_params_previous(self):
        p = os.path.join(common.scratch(), "params.bin")
        text = self.previous(p, "the previous parameters\n")
        self.full("--dump-params", p, 1)
        self.kept(p, text)

    def test_snapshots_previous(self):
        p = os.path.join(common.scratch(), "snaps.bin")
        text = self.previous(p, "the previous copies\n")
        self.full("--snapshots", p, 1, extra=["--snapshot-every", "2"])
        self.kept(p, text)

    def test_loss_log_new(self):
        p = os.path.join(common.scratch(), "loss.csv")
        self.full("--loss-log", p, 1, limit=100)
        self.absent(p)

    def test_csv_new(self):
        p = os.path.join(common.scratch(), "runs.csv")
        self.full("--csv", p, 2, limit=100)
        self.absent(p)

    def test_csv_appended(self):
        d = common.scratch()
        p = os.path.join(d, "runs.csv")
        common.run_ok(self, train_args(*(SMALL + ["--csv", p])))
        text = common.read_text(p)
        self.full("--csv", p, 2, limit=len(text) + 10)
        self.kept(p, text)


if __name__ == "__main__":
    common.main()
