"""tests/hostile_python.py: the Python commands answer bad input in one line, exit 2, no traceback.

`psring model` with a number that is not one, out of range or of an unknown model, an unknown
flag or a missing calibration; `psring plot` and `psring summary` with no argument, a missing
file, a folder, a CSV that is not psring's, and a bad cell (named by file, line and column);
`psring sweep --dry-run` with a bad list, a bad timeout, an unknown topology or flag.
"""
import csv
import os
import unittest

import common
from hostile import hostile_case
from psringlib import results

NO_TRACEBACK = r"^(?!Traceback)"


class Python(unittest.TestCase):
    def refused(self, want, *args):
        hostile_case(self, [common.PSRING] + list(args), 2, want=NO_TRACEBACK + want, cwd=common.scratch(), timeout=60)

    def cell(self, column, value):
        """the fixture sweep with COLUMN of its second run set to VALUE"""
        rows = results.read_rows(os.path.join(common.FIXTURES, "sweep_small.csv"))
        path = os.path.join(common.scratch(), "r.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows([rows[0], dict(rows[1], **{column: value})] + rows[2:])
        return path

    def not_psring(self):
        path = os.path.join(common.scratch(), "other.csv")
        common.write_text(path, "a,b\n1,2\n")
        return path

    def test_model_hosts_text(self):
        self.refused(r"psring model: argument --hosts: invalid int value: 'abc'$", "model", "--predict", "--hosts", "abc")

    def test_model_hosts_zero(self):
        self.refused(r"psring model: --hosts must be at least 1: got 0$", "model", "--predict", "--hosts", "0")

    def test_model_link_rate_text(self):
        self.refused(r"psring model: --link-rate 'fast' is not a rate > 0 ", "model", "--predict", "--link-rate", "fast")

    def test_model_unknown_model(self):
        self.refused(r"psring model: unknown model 'nosuch' ", "model", "--predict", "--model", "nosuch")

    def test_model_bytes_per_param(self):
        self.refused(r"psring model: --bytes-per-param must be 4 \(fp32\) or 2 \(fp16\): got 3$", "model", "--predict",
                     "--bytes-per-param", "3")

    def test_model_unknown_flag(self):
        self.refused(r"psring model: unrecognized arguments: --bogus$", "model", "--bogus")

    def test_model_missing_calibration(self):
        self.refused(r"psring model: --calibration .*nosuch\.csv: No such file or directory ", "model", "--calibration",
                     os.path.join(common.scratch(), "nosuch.csv"), "--explain", "--topology", "ring", "-N", "4",
                     "--params", "1000", "--compute-ms", "1")

    def test_plot_no_argument(self):
        self.refused(r"psring plot: usage: psring plot RESULTS\.csv ", "plot")

    def test_plot_missing_file(self):
        self.refused(r"psring plot: .*nosuch\.csv: no such file$", "plot", os.path.join(common.scratch(), "nosuch.csv"))

    def test_plot_folder(self):
        self.refused(r"psring plot: .*: a folder, not a results CSV$", "plot", common.scratch())

    def test_plot_not_psring(self):
        self.refused(r"psring plot: .*other\.csv: no column topology, .* \(not a psring results file\)$", "plot", self.not_psring())

    def test_plot_workers_text(self):
        self.refused(r"psring plot: .*r\.csv:3: column workers: 'two' is not an integer >= 1$", "plot",
                     self.cell("workers", "two"))

    def test_summary_no_argument(self):
        self.refused(r"psring summary: usage: psring summary RESULTS\.csv ", "summary")

    def test_summary_missing_file(self):
        self.refused(r"psring summary: .*nosuch\.csv: no such file$", "summary", os.path.join(common.scratch(), "nosuch.csv"))

    def test_summary_folder(self):
        self.refused(r"psring summary: .*: a folder, not a results CSV$", "summary", common.scratch())

    def test_summary_not_psring(self):
        self.refused(r"psring summary: .*other\.csv: no column topology, .* \(not a psring results file\)$", "summary",
                     self.not_psring())

    def test_summary_samples_nan(self):
        self.refused(r"psring summary: .*r\.csv:3: column samples_per_s: 'nan' is not a number > 0$", "summary",
                     self.cell("samples_per_s", "nan"))

    def test_summary_exchange_negative(self):
        self.refused(r"psring summary: .*r\.csv:3: column exchange_ms: '-1' is not a number >= 0$", "summary",
                     self.cell("exchange_ms", "-1"))

    def test_summary_sync_unknown(self):
        self.refused(r"psring summary: .*r\.csv:3: column sync: 'abc' is not one of async, bsp, ssp$", "summary",
                     self.cell("sync", "abc"))


    def swept(self, want, *args):
        """psring sweep --dry-run: a value it refuses is refused before it prints a command"""
        self.refused(r"psring sweep: " + want, "sweep", "--dry-run", "--csv", os.path.join(common.scratch(), "s.csv"),
                     *args)

    def test_sweep_workers_text(self):
        self.swept(r"--workers must be a comma-separated list of integers in \[1, 1024\]: got 'abc'$", "--workers", "abc")

    def test_sweep_workers_zero(self):
        self.swept(r"--workers must be a comma-separated list of integers in \[1, 1024\]: got '0'$", "--workers", "0")

    def test_sweep_timeout_text(self):
        self.swept(r"--timeout must be seconds in \(0, 1e6\]: got 'abc'$", "--timeout", "abc")

    def test_sweep_topology_unknown(self):
        self.swept(r"--topologies: unknown topology 'nosuch' ", "--topologies", "nosuch")

    def test_sweep_unknown_flag(self):
        self.swept(r"unknown option '--bogus' \(see psring sweep --help; ", "--bogus")

if __name__ == "__main__":
    common.main()
