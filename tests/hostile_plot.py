"""tests/hostile_plot.py: `psring plot` refuses a CSV whose test_accuracy it cannot draw.

A successful run's test_accuracy that is inf, text, negative, above 1 (150%), or a percentage
where psring writes a fraction gets one line naming the file, the line and the cell, exit 2, no
traceback and no plotdata/ folder (the check runs before anything is written).
"""
import csv
import os
import shutil
import unittest

import common
from hostile import hostile_case
from psringlib import results


class Plot(unittest.TestCase):
    def refused(self, value, hint=""):
        common.need_program("gnuplot")
        d = common.scratch()
        rows = results.read_rows(os.path.join(common.FIXTURES, "sweep_small.csv"))
        path = os.path.join(d, "r.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows([rows[0], dict(rows[1], test_accuracy=value)] + rows[2:])
        out = os.path.join(d, "fig")
        hostile_case(self, [common.PSRING, "plot", path, "-o", out], 2,
                     want=r"^psring plot: .*r\.csv:3: column test_accuracy: '%s' is not a fraction in 0\.\.1%s$"
                     % (value.replace(".", r"\."), hint))
        self.assertFalse(os.path.exists(out), "psring plot left %s" % out)

    def test_accuracy_inf(self):
        self.refused("inf")

    def test_accuracy_text(self):
        self.refused("high")

    def test_accuracy_negative(self):
        self.refused("-1")

    def test_accuracy_above_one(self):
        self.refused("1.5", r" \(a percentage\? psring writes 0\.934 for 93\.4%\)")

    def test_accuracy_empty(self):
        self.refused("")


if __name__ == "__main__":
    common.main()
