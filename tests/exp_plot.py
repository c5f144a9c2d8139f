"""exp_plot.py: psring plot on the committed fixture CSV makes every figure as a non-empty PNG and SVG
(PNG magic checked); bad input gets one line and exit 2; the drawing pieces the demo's figures use;
a GPU sweep's throughput figure draws the reference its ranks' sharing of the GPUs allows (checked
through its data)."""
import csv
import os
import re
import shutil
import unittest

import common
from psringlib import gnuplot as plot
from psringlib import results

LABEL = "loopback: all ranks on this machine"
OUT = None


def setUpModule():
    """the fixture sweep plotted once, labelled as the loopback demo labels it"""
    global OUT
    common.need_program("gnuplot")
    OUT = common.scratch()
    shutil.copy(os.path.join(common.FIXTURES, "sweep_small.csv"), os.path.join(OUT, "r.csv"))
    rc, out, err = common.run([common.PSRING, "plot", os.path.join(OUT, "r.csv"), "-o", os.path.join(OUT, "fig"), "--label", LABEL])
    assert rc == 0, "psring plot failed (%d): %s%s" % (rc, out, err)


class Figures(unittest.TestCase):
    NAMES = ("throughput", "efficiency", "breakdown", "accuracy", "bytes")

    def path(self, name, ext):
        return os.path.join(OUT, "fig", "%s.%s" % (name, ext))

    def test_png_and_svg_not_empty(self):
        for f in self.NAMES:
            for ext in ("png", "svg"):
                self.assertGreater(os.path.getsize(self.path(f, ext)), 0, "%s.%s" % (f, ext))

    def test_png_magic(self):
        for f in self.NAMES:
            with open(self.path(f, "png"), "rb") as fh:
                self.assertIn(b"PNG", fh.read(4), f)

    def test_svg_is_svg(self):
        for f in self.NAMES:
            self.assertIn("<svg", common.read_text(self.path(f, "svg")), f)

    def test_svg_says_how_runs_were_made_once(self):
        for f in self.NAMES:
            self.assertEqual(common.read_text(self.path(f, "svg")).count(LABEL), 1, f)


class BadInput(unittest.TestCase):
    """cells that would crash a figure or the verdict, or draw nonsense: one line naming file, line and column"""

    @classmethod
    def setUpClass(cls):
        rows = results.read_rows(os.path.join(OUT, "r.csv"))
        for name, change in (("zero", dict(samples_per_s="0")), ("workers", dict(workers="0")), ("neg", dict(exchange_ms="-2.5"))):
            with open(os.path.join(OUT, name + ".csv"), "w", newline="") as f:
                w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
                w.writeheader()
                w.writerows([dict(rows[0], **change)] + rows[1:])

    def bad(self, args, want):
        common.refused(self, [common.PSRING] + args, want, cwd=OUT)

    def test_missing_file(self):
        self.bad(["plot", os.path.join(OUT, "missing.csv")], "")

    def test_foreign_csv(self):
        with open(os.path.join(OUT, "bad.csv"), "w") as f:
            f.write("a,b\n1,2\n")
        rc, out, err = common.run([common.PSRING, "plot", os.path.join(OUT, "bad.csv")])
        self.assertEqual(rc, 2, out + err)
        self.assertIn("not a psring results file", out + err)

    def test_plot_zero_samples(self):
        self.bad(["plot", "zero.csv"], "zero.csv:2: column samples_per_s")

    def test_summary_zero_samples(self):
        self.bad(["summary", "zero.csv"], "zero.csv:2: column samples_per_s")

    def test_plot_zero_workers(self):
        self.bad(["plot", "workers.csv"], "workers.csv:2: column workers")

    def test_summary_negative_exchange(self):
        self.bad(["summary", "neg.csv"], "neg.csv:2: column exchange_ms")

    def test_plot_unwritable_out(self):
        self.bad(["plot", "r.csv", "-o", "/proc/x"], "-o /proc/x")
        self.bad(["plot", "r.csv", "-o", "/proc/x"], "No such file")


class DrawingPieces(unittest.TestCase):
    """a subtitle under the title (enhanced-text markup in it escaped), labelled x tics, a key entry
    alone, a bar's min-max as error bars; each drawn by gnuplot"""

    @classmethod
    def setUpClass(cls):
        cls.out = out = common.scratch()
        d = plot.data_file(out, "b.dat", [("ring", 10.0, 2.5, 0.5, 13.0, 12.0, 14.0)])
        cls.bars = plot.bars_figure("Q?", "ms", d, [("a", "#000000"), ("b", "#111111"), ("c", "#222222")], subtitle="r", total=("step", 5))
        plot.draw(out, out, "bars", cls.bars)
        cls.lines = plot.lines_figure("Q?", "ms", [plot.curve("alone", "#000000", expr="NaN", style="points", pt=6),
                                                   plot.curve("", "#000000", plot.data_file(out, "e.dat", [(2, 10.0, "0.80")]), "1:2:3",
                                                              "labels")],
                                      xtics=[("k=2 (6 hosts)", 2), 4])
        plot.draw(out, out, "lines", cls.lines)

    def test_subtitle_escaped(self):
        line = plot.title_line("Question?", subtitle=["a_b regime", "second"])
        self.assertEqual(line, "set title 'Question?' . \"\\n\" . '{/=9 a\\_b regime}' . \"\\n\" . '{/=9 second}'")

    def test_bar_min_max_error_bars(self):
        self.assertTrue(self.bars[-1].endswith("'' using 0:5:6:7 with yerrorbars pt 0 lw 1.5 lc rgb '#000000' title 'step'"), self.bars[-1])

    def test_labelled_xtics(self):
        self.assertIn("set xtics ('k=2 (6 hosts)' 2, '4' 4)", self.lines)

    def test_drawn(self):
        for f in ("bars.png", "lines.svg"):
            self.assertGreater(os.path.getsize(os.path.join(self.out, f)), 1000, f)

    def test_svg_holds_tic_key_and_label(self):
        svg = common.read_text(os.path.join(self.out, "lines.svg"))
        for want in ("k=2 (6 hosts)", "alone", ">0.80<"):
            self.assertIn(want, svg)


def plot_rows(out, rows, name):
    """psring plot of rows; {title: data rows or expression} of its throughput curves, and the script"""
    csv_path = os.path.join(out, name + ".csv")
    cols = list(rows[0])
    for r in rows:
        results.append_row(csv_path, cols, r)
    rc, o, e = common.run([common.PSRING, "plot", csv_path, "-o", os.path.join(out, name)])
    assert rc == 0, "psring plot %s (%d): %s%s" % (name, rc, o, e)
    data = os.path.join(out, name, "plotdata")
    gp = common.read_text(os.path.join(data, "throughput.png.gp"))
    curves = {}
    for src, title in re.findall(r"^(?:plot |  )(.*?) title '(.*?)'(?:, \\)?$", gp, re.M):
        m = re.match(r"'(.*?)' using", src)
        if m:
            curves[title] = [[float(x) for x in l.split()] for l in common.read_text(os.path.join(data, m.group(1))).splitlines()]
        else:
            curves[title] = src.split()[0]
    return curves, gp


class GpuSweep(unittest.TestCase):
    """psring sweep --device cuda (tests/fixtures/sweep_gpu.csv: ring and ps with 1-8 ranks on one GPU,
    with and without MPS, samples/s shaped like an H200's): the figure's data. Where ranks share the GPU
    the reference is one rank's throughput, flat, not N x it; where each has its own, the ideal linear
    line; the subtitle says which and whether MPS ran; series tell MPS and the path apart; the CPU
    fixture's figure keeps its ideal line and axis"""
    FLAT = "one rank (ranks share 1 GPU: its compute does not grow with the ranks)"
    IDEAL = "ideal linear (N x best one rank: a GPU each)"
    TWO = "min(N, 2) x one rank (ranks share 2 GPUs: compute grows up to 2 ranks only)"

    @classmethod
    def setUpClass(cls):
        out = common.scratch()
        cls.gpu = gpu = results.read_rows(os.path.join(common.FIXTURES, "sweep_gpu.csv"))
        cls.best_one = max(float(r["samples_per_s"]) for r in gpu if r["workers"] == "1")
        cls.shared = plot_rows(out, gpu, "shared")
        # every rank with a GPU of its own, no MPS
        cls.own = plot_rows(out, [dict(r, gpus=r["workers"], ranks_per_gpu="1", mps="0") for r in gpu if r["mps"] == "1"], "own")
        # two GPUs shared by up to 4 ranks each under MPS
        cls.two = plot_rows(out, [dict(r, gpus=str(min(int(r["workers"]), 2)), ranks_per_gpu=str(max(1, int(r["workers"]) // 2)))
                                  for r in gpu if r["mps"] == "1"], "two")

    def test_shared_curves(self):
        self.assertEqual(sorted(self.shared[0]), sorted([self.FLAT, "ring (ipc)", "ring (ipc, MPS)", "ps S=1", "ps S=1 (MPS)"]))

    def test_shared_reference_flat(self):
        self.assertEqual(self.shared[0][self.FLAT], [[n, self.best_one] for n in (1, 2, 4, 8)])

    def test_shared_no_ideal_line(self):
        self.assertNotIn("ideal linear", self.shared[1])

    def test_shared_subtitle(self):
        self.assertIn("ranks share 1 GPU (up to 8 ranks on one), with and without MPS", self.shared[1])

    def test_shared_xlabel(self):
        self.assertIn("set xlabel 'ranks N'", self.shared[1])

    def test_series_hold_their_runs(self):
        # each series holds its own runs (the one-rank ring row, no path, starts the ipc curve): median, min, max
        for title, topo, mps in (("ring (ipc)", "ring", "0"), ("ring (ipc, MPS)", "ring", "1"), ("ps S=1 (MPS)", "ps", "1")):
            want = sorted([int(r["workers"])] + [float(r["samples_per_s"])] * 3 for r in self.gpu if r["topology"] == topo and r["mps"] == mps)
            self.assertEqual(self.shared[0][title], want, title)

    def test_own_curves(self):
        self.assertEqual(sorted(self.own[0]), sorted([self.IDEAL, "ring (ipc)", "ps S=1"]))

    def test_own_ideal_line(self):
        self.assertEqual(self.own[0][self.IDEAL], "x*%g" % self.best_one)

    def test_own_subtitle(self):
        self.assertIn("each rank has a GPU of its own (8 GPUs), without MPS", self.own[1])
        self.assertNotIn("share", self.own[1])

    def test_two_reference(self):
        b = self.best_one
        self.assertEqual(self.two[0][self.TWO], [[1, b], [2, 2 * b], [4, 2 * b], [8, 2 * b]])

    def test_two_subtitle(self):
        self.assertIn("ranks share 2 GPUs (up to 4 ranks on one), under MPS", self.two[1])
        self.assertIn("ring (ipc)", self.two[0])

    def test_cpu_figure_as_it_was(self):
        cpu = common.read_text(os.path.join(OUT, "fig", "plotdata", "throughput.png.gp"))
        self.assertIn("title 'ideal linear (N x best N=1)'", cpu)
        self.assertIn("set xlabel 'workers (N)'", cpu)
        self.assertNotIn("GPU", cpu)


if __name__ == "__main__":
    common.main()
