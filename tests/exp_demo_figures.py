"""exp_demo_figures.py: the figures psring demo draws, checked through the data they draw: on the
verdict's fixture, on worker 0's copies, on a fuller fixture with a calibration (the model's lines,
real and dilated points, the breakdown, the servers and bytes figures) and on links counted by the
emulated hosts' veths."""
import contextlib
import io
import os
import re
import shlex
import unittest

import common
from common import read_text
from demo_fixture import CAL_HEAD, COLS, EP_COLS, O, demo_fixture
from psringlib import results
from psringlib.demo import figures, hosts, plan


def data(out, name):
    return read_text(os.path.join(out, "demo-data", name)).splitlines()


def numbers(out, name):
    return [[float(x) for x in shlex.split(l)] for l in data(out, name)]


class DemoFigures(unittest.TestCase):
    """the figures drawn from the verdict's fixture"""

    @classmethod
    def setUpClass(cls):
        cls.out = out = common.scratch()
        cls.csv = demo_fixture(out)
        with contextlib.redirect_stdout(io.StringIO()):
            figures.figures(out, cls.csv, os.path.join(out, "demo.epochs.csv"), os.path.join(out, "none.csv"), O)

    def test_drawn(self):
        for f in ("throughput", "exchange", "breakdown", "bytes", "accuracy"):
            for ext in ("png", "svg"):
                self.assertGreater(os.path.getsize(os.path.join(self.out, "%s.%s" % (f, ext))), 1000, (f, ext))

    def test_regime_in_each(self):
        for f in ("throughput", "exchange", "breakdown", "bytes", "accuracy"):
            want = "1-core hosts, 1gbit links, dilation 1..8" if f != "accuracy" else plan.TTA_REGIME % (plan.LAYERS, "1gbit")
            self.assertIn(want, read_text(os.path.join(self.out, f + ".svg")), f)

    # efficiency over one worker on the same scale model: the ideal line N x its 113778 samples/s, the ring's N=8 at 0.72
    def test_ideal_line(self):
        thr_gp = read_text(os.path.join(self.out, "demo-data", "throughput.png.gp"))
        self.assertIn("x * 113778", thr_gp)
        self.assertIn("N x one worker on the same scale model", thr_gp)

    def test_efficiency_label(self):
        self.assertEqual([l.split()[2].strip("\"") for l in data(self.out, "eff.dat")][-1], "0.72")

    # time to accuracy: one curve a design, each epoch's medians over the repeats, no point invented before them
    def test_accuracy_curve(self):
        self.assertEqual(numbers(self.out, "tta0.dat"), [[0.5, 87.0], [1.1, 90.1], [1.2, 90.1]])

    def test_accuracy_svg(self):
        svg = read_text(os.path.join(self.out, "accuracy.svg"))
        for t in ("ps, 4 server hosts, async, straggler", "all 10,000 test images", "with and without a straggler"):
            self.assertIn(t, svg)

    # the breakdown at N=8, compute + exchange + wait = the step, one bar per configuration under its whole label
    # (double quotes: gnuplot splits a data line at blanks outside them)
    def test_bars(self):
        bars = [shlex.split(l) for l in data(self.out, "bars.dat")]
        self.assertEqual([b[0] for b in bars], ["ring", "ps, 1 server host", plan.BYTEPS])
        self.assertEqual([[float(x) for x in b[1:]] for b in bars], [[10.0, 2.5, 0.0, 12.5, 12.5, 12.5], [10.0, 88.0, 0.0, 98.0, 98.0, 98.0],
                                                                    [10.0, 3.5, 0.0, 13.5, 13.5, 13.5]])

    def test_bar_labels_whole(self):
        svg = read_text(os.path.join(self.out, "breakdown.svg"))
        for lab in ("ring", "ps, 1 server host", plan.BYTEPS):
            self.assertIn(">%s<" % lab, svg, "breakdown.svg lacks a whole bar label")

    def test_throughput_medians(self):
        thr = numbers(self.out, "thr0.dat")
        self.assertEqual([(t[0], round(t[1])) for t in thr], [(1, 102400), (2, 186182), (4, 344202), (8, 655360)])


class CopiesFigure(unittest.TestCase):
    """worker 0's copies (the step column): a point a copy from step 0, measured, then the job's end; the axis from 0%"""

    @classmethod
    def setUpClass(cls):
        out = common.scratch()
        csv_path = demo_fixture(out)
        cls.cp = cp_dir = os.path.join(out, "copies")
        os.makedirs(cp_dir)
        cp_cols = EP_COLS[:-3] + ["step"] + EP_COLS[-3:]
        for rep in (1, 2):
            for step, t, a in ((0, 0.0, 9.8), (3, 0.1, 60.0), (6, 0.2 + 0.01 * rep, 80.0), ("end", 0.3, 85.0)):
                results.append_row(os.path.join(cp_dir, "demo.epochs.csv"), cp_cols, dict(
                    sweep_id="demo", repeat=rep, command="x", label=plan.TTA_PS, workers=4, sync="async", straggler=1,
                    epoch="end" if step == "end" else "", step="" if step == "end" else step, elapsed_s=t, test_accuracy=a, loss=1))
        with contextlib.redirect_stdout(io.StringIO()):
            figures.figures(cp_dir, csv_path, os.path.join(cp_dir, "demo.epochs.csv"), os.path.join(out, "none.csv"), O)

    def test_points(self):
        self.assertEqual(numbers(self.cp, "tta0.dat"), [[0.0, 9.8], [0.1, 60.0], [0.215, 80.0], [0.3, 85.0]])

    def test_axis_from_zero(self):
        self.assertIn("set yrange [0:100]", read_text(os.path.join(self.cp, "demo-data", "accuracy.png.gp")))

    def test_optimizers_and_copies_said(self):
        gp = read_text(os.path.join(self.cp, "demo-data", "accuracy.png.gp"))
        self.assertIn(plan.TTA_OPTS, gp)
        self.assertIn("copies every 3 steps from step 0", gp)


def fig_fixture(fig_dir):
    """the figures' fuller fixture, with a calibration (the model's lines): three repeats a point
    (steps t, t - 0.5, t + 2: median t), the ring and one server host at N = 1, 2 on real cores
    (D = 1), every other point dilated; waits; the colocated PS at N = 2, 4, 8; the k-server sweep"""
    os.makedirs(fig_dir)
    csv_path = os.path.join(fig_dir, "demo.csv")

    def add_fig(label, topo, N, t, k=0, S=0, wait=0.0):
        for rep, d in enumerate((0.0, -0.5, 2.0), 1):
            results.append_row(csv_path, COLS, dict(
                label=label, topology=topo, workers=N, dilation=1 if N <= 2 and "colocated" not in label else 8, servers=S, server_hosts=k,
                straggler=1, sync="bsp", step_ms=t + d, exchange_ms=t + d - 10, wait_ms=wait, samples_per_s=N * 1024 / (t + d) * 1e3,
                params=200000, steps=10, bytes_sent_per_worker=N * 1e6, bytes_recv_per_worker=N * 1e6, bytes_per_server=4e6, sweep_id="demo",
                repeat=rep, command="%s %d %d %d" % (label, N, k, S), error=""))
    for N, t in ((1, 10.0), (2, 11.0), (4, 11.9), (8, 12.5)):
        add_fig("ring", "ring", N, t, wait=0.1 * N)
    for N, t in ((1, 14.0), (2, 26.0), (4, 50.0), (8, 98.0)):
        add_fig("ps, 1 server host", "ps", N, t, k=1, S=1, wait=0.5)
    for N, t in ((2, 12.0), (4, 13.0), (8, 14.0)):
        add_fig("ps, N/2 colocated", "ps", N, t, S=N // 2, wait=1.0)
        add_fig("ps, N colocated", "ps", N, t - 0.5, S=N)
    for k, t in ((2, 26.0), (3, 11.5), (4, 11.0)):
        add_fig("ps, k server hosts", "ps", 4, t, k=k, S=k)
    add_fig("step alone", "local", 1, 8.0)
    with open(os.path.join(fig_dir, "calibration.csv"), "w") as f:
        f.write(CAL_HEAD + "psring-model-2,1e-4,8e-9,0,1000000000,8\n")
    return csv_path


N_BYTES, BETA = 400000.0, 8e-9   # the fixture's n (200000 parameters in fp16) and the calibration's beta


class FullerFigures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = fig_dir = os.path.join(common.scratch(), "figs")
        cls.csv = fig_fixture(fig_dir)
        with contextlib.redirect_stdout(io.StringIO()):
            figures.figures(fig_dir, cls.csv, os.path.join(fig_dir, "none.epochs.csv"), os.path.join(fig_dir, "calibration.csv"), O)

    def D(self, name):
        return [shlex.split(l) for l in data(self.dir, name)]

    def num(self, name):
        return numbers(self.dir, name)

    def gp(self, name):
        return read_text(os.path.join(self.dir, "demo-data", name + ".png.gp"))

    def test_questions_and_regime(self):
        regime = "MLP %s, batch %d/worker, fp16; 1-core hosts, 1gbit links, dilation 1..8" % (plan.LAYERS, plan.BATCH)
        for name, question in figures.FIGURES:
            if name == "accuracy":
                continue
            if name == "bytes":   # no link counters in this fixture: the payload figure (the loopback sweep's)
                question = "How many bytes does each process move per step?"
            svg = read_text(os.path.join(self.dir, name + ".svg"))
            with self.subTest(figure=name):
                self.assertIn(question.replace("the largest N", "N = 8"), svg)
                self.assertIn(regime, svg)

    # throughput: medians with min-max, the points on real cores (D = 1) apart from the dilated ones,
    # the ring's efficiency at its points, and the ring drawn last, over every other curve
    STEPS = {1: 10.0, 2: 11.0, 4: 11.9, 8: 12.5}
    WANT = {N: N * 1024 / t * 1e3 for N, t in STEPS.items()}

    def test_throughput_medians_min_max(self):
        for f, Ns in (("thr0.dat", (1, 2, 4, 8)), ("thr0_real.dat", (1, 2)), ("thr0_dil.dat", (4, 8))):
            got = self.num(f)   # N, median, min (the slowest repeat, t + 2), max (t - 0.5)
            self.assertEqual([g[0] for g in got], list(Ns), f)
            for g in got:
                N = g[0]
                self.assertLess(abs(g[1] - self.WANT[N]), 1, (f, g))
                self.assertLess(abs(g[2] - N * 1024 / (self.STEPS[N] + 2) * 1e3), 1, (f, g))
                self.assertLess(abs(g[3] - N * 1024 / (self.STEPS[N] - 0.5) * 1e3), 1, (f, g))

    def test_colocated_all_dilated(self):
        self.assertEqual([g[0] for g in self.num("thr2_dil.dat")], [2, 4, 8])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "demo-data", "thr2_real.dat")))

    def test_efficiency_points(self):
        w = self.WANT
        self.assertEqual([(e[0], e[2]) for e in self.D("eff.dat")], [("2", "%.2f" % (w[2] / 2 / w[1])), ("4", "%.2f" % (w[4] / 4 / w[1])),
                                                                   ("8", "%.2f" % (w[8] / 8 / w[1]))])

    def clauses(self):
        body = self.gp("throughput")
        clauses = body[body.index("\nplot ") + 6:].split(", \\\n")
        files = [m.group(1) if (m := re.match(r"\s*'([^']*)' using", c)) else "" for c in clauses]
        return clauses, files

    def test_ring_drawn_last(self):
        clauses, files = self.clauses()
        ring = ("thr0.dat", "thr0_real.dat", "thr0_dil.dat", "mod0.dat", "eff.dat")
        ring_at = [i for i, f in enumerate(files) if f in ring]
        other_at = [i for i, f in enumerate(files) if f and f not in ring]
        self.assertTrue(other_at and ring_at, files)
        self.assertLess(max(other_at), min(ring_at), files)
        self.assertEqual(ring_at[-1], len(clauses) - 1, files)

    def test_real_and_dilated_points_apart(self):
        clauses, files = self.clauses()
        self.assertIn("pt 7", clauses[files.index("thr0_real.dat")])
        self.assertIn("pt 6", clauses[files.index("thr0_dil.dat")])
        body = self.gp("throughput")
        self.assertIn("ran on real cores (D = 1)", body)
        self.assertIn("time-dilated (D > 1)", body)

    # exchange: the model and the bytes alone only at the N each configuration measured (the colocated
    # PS: 2, 4, 8, never 3, 5, 6, 7), bytes alone = the busiest link's bytes x beta (n = 400000 bytes)
    def test_exchange_model_and_bytes_alone(self):
        n = N_BYTES
        alone = {0: lambda N: 2 * (N - 1) / N * n, 1: lambda N: max(n, N * n), 2: lambda N: (N + N // 2 - 2) * n / (N // 2),
                 3: lambda N: 2 * (N - 1) / N * n}
        for i, Ns in ((0, [1, 2, 4, 8]), (1, [1, 2, 4, 8]), (2, [2, 4, 8]), (3, [2, 4, 8])):
            with self.subTest(curve=i):
                self.assertEqual([m[0] for m in self.num("mod%d.dat" % i)], Ns)
                self.assertEqual([m[0] for m in self.num("ex%d.dat" % i)], Ns)
                bw = self.num("bw%d.dat" % i)
                self.assertEqual([b[0] for b in bw], Ns)
                self.assertTrue(all(abs(b[1] - alone[i](int(b[0])) * BETA * 1e3) < 1e-5 for b in bw), bw)

    def test_exchange_measured(self):
        self.assertEqual([round(e[1], 4) for e in self.num("ex0.dat")],
                         [round(t - 10 - 0.1 * N, 4) for N, t in ((1, 10.0), (2, 11.0), (4, 11.9), (8, 12.5))])

    # breakdown at N = 8: the repeat with the median step, its compute + exchange + wait = that step,
    # the step's min-max over the repeats beside it
    def test_breakdown(self):
        bars = self.D("bars.dat")
        self.assertEqual([b[0] for b in bars], ["ring", "ps, 1 server host", "ps, N/2 colocated", "ps, N colocated"])
        for b, (t, w) in zip(bars, ((12.5, 0.8), (98.0, 0.5), (14.0, 1.0), (13.5, 0.0))):
            c, e, wt, s, lo, hi = (float(x) for x in b[1:])
            with self.subTest(bar=b[0]):
                self.assertLess(abs(c + e + wt - s), 1e-9)
                self.assertEqual((s, lo, hi), (t, t - 0.5, t + 2))
                self.assertEqual(c, 10.0)
                self.assertLess(abs(wt - w), 1e-9)

    # servers: the hosts each configuration takes, BytePS' formula as the bytes-only bound
    def test_servers_figure(self):
        body = self.gp("servers")
        self.assertIn("'k=1 (5 hosts)' 1, 'k=2 (6 hosts)' 2, 'k=3 (7 hosts)' 3, 'k=4 (8 hosts)' 4", body)
        self.assertIn("bytes alone, BytePS'' placement", body)
        self.assertNotIn("optimum", body)
        self.assertIn("non-colocated", body)

    def test_servers_data(self):
        k = self.num("k.dat")
        self.assertEqual([r[:2] for r in k], [[1, 39.5], [2, 16.0], [3, 1.5], [4, 1.0]])   # k = 1: the one server host's runs
        n = N_BYTES
        self.assertTrue(all(abs(r[5] / (1e3 * 2 * 4 * 3 * n * BETA / (16 + 4 * r[0] - 2 * r[0])) - 1) < 1e-5 for r in k), k)
        # the bytes-alone crossover the lesson quotes: these servers' max(n, 4n/k) against the ring's 1.5 n, level in the figure
        self.assertTrue(all(abs(r[6] / (1e3 * max(n, 4 * n / r[0]) * BETA) - 1) < 1e-5 for r in k), k)

    def test_servers_ring_level(self):
        body = self.gp("servers")
        self.assertIn("%g" % (1e3 * 1.5 * N_BYTES * BETA), body)
        self.assertIn("bytes alone, the ring", body)

    # bytes: what the trainer counts, labelled so; the link formulas (x 2: a process alone on its host
    # sends and receives its link's bytes each way) for the ring and the server host, not the colocated
    def test_bytes_label(self):
        self.assertIn("set ylabel 'payload per process, sent + received (MB per step)'", self.gp("bytes"))

    def test_bytes_payload(self):
        self.assertEqual([w[:2] for w in self.num("wb0.dat")], [[N, 2 * N * 1e6 / 10 / 1e6] for N in (1, 2, 4, 8)])

    def test_bytes_ring_formula(self):
        n = N_BYTES
        self.assertEqual([[round(x, 6) for x in l] for l in self.num("link0.dat")], [[N, round(2 * 2 * (N - 1) / N * n / 1e6, 6)] for N in (1, 2, 4, 8)])

    def test_bytes_server_formula(self):
        n = N_BYTES
        self.assertEqual([[round(x, 6) for x in l] for l in self.num("link1.dat")], [[N, 2 * n / 1e6, round(2 * N * n / 1e6, 6)] for N in (1, 2, 4, 8)])

    def test_bytes_no_colocated_formula(self):
        self.assertEqual([f for f in os.listdir(os.path.join(self.dir, "demo-data")) if f in ("link2.dat", "link3.dat")], [])


BUSY = {"ring": lambda N: 2 * (N - 1) / N * N_BYTES, "ps, 1 server host": lambda N: N * N_BYTES,
        "ps, N/2 colocated": lambda N: (N + N // 2 - 2) * N_BYTES / (N // 2), "ps, N colocated": lambda N: 2 * (N - 1) / N * N_BYTES}


def busy_k(k):   # k server hosts at N = 4
    return max(N_BYTES, 4 * N_BYTES / k)


class LinkBytes(unittest.TestCase):
    """bytes on emulated hosts: the veths' counters before and after a run, per step (link_columns),
    and the figure of the busiest link against each design's formula"""

    @classmethod
    def setUpClass(cls):
        top = common.scratch()
        fig_csv = fig_fixture(os.path.join(top, "figs"))
        cls.dir = link_dir = os.path.join(top, "links")
        os.makedirs(link_dir)
        for r in results.read_rows(fig_csv):   # the fixture, its links measured 4-6% over the formula
            if r["label"] in BUSY and int(r["workers"]) > 1:
                r["link_busiest_bytes"] = "%.0f" % (BUSY[r["label"]](int(r["workers"])) * (1.03 + 0.01 * int(r["repeat"])))
            if r["label"] == "ps, k server hosts":
                r["link_busiest_bytes"] = "%.0f" % (busy_k(int(r["server_hosts"])) * (1.03 + 0.01 * int(r["repeat"])))
            results.append_row(os.path.join(link_dir, "demo.csv"), COLS, r)
        with contextlib.redirect_stdout(io.StringIO()):
            figures.figures(link_dir, os.path.join(link_dir, "demo.csv"), os.path.join(link_dir, "none.epochs.csv"),
                            os.path.join(top, "figs", "calibration.csv"), O)

    def L(self, name):
        return numbers(self.dir, name)

    def test_link_columns(self):
        cols = hosts.link_columns({0: (100, 50), 1: (0, 0), 2: (7, 7)}, {0: (1100, 4050), 1: (2000, 1000), 2: (7, 7), 3: (9, 9)}, 10)
        self.assertEqual(cols, dict(link_bytes="h0:100/400;h1:200/100", link_busiest_bytes="400"))

    def test_link_columns_empty(self):
        self.assertEqual(hosts.link_columns({0: (0, 0)}, {0: (5, 5)}, 0), {})
        self.assertEqual(hosts.link_columns({}, {}, 10), {})

    def test_busiest_against_formula(self):
        for i, lab in enumerate(["ring", "ps, 1 server host", "ps, N/2 colocated", "ps, N colocated"]):
            got, form = self.L("lb%d.dat" % i), self.L("lf%d.dat" % i)
            with self.subTest(design=lab):
                self.assertEqual([g[0] for g in got], [2, 4, 8])
                self.assertEqual([f[0] for f in form], [2, 4, 8])
                for g, f in zip(got, form):   # median 1.05 x, min 1.04 x, max 1.06 x the formula, which is drawn as is
                    want = BUSY[lab](int(g[0])) / 1e6
                    self.assertLess(abs(f[1] - want), 1e-9, (g, f))
                    self.assertLess(abs(g[1] / want - 1.05), 1e-3, (g, f))
                    self.assertLess(abs(g[2] / want - 1.04), 1e-3, (g, f))
                    self.assertLess(abs(g[3] / want - 1.06), 1e-3, (g, f))

    # at each N the designs side by side (the ring and N colocated shards carry the same bytes: not one on the
    # other), each point on its formula's dashed line
    def test_designs_side_by_side(self):
        for N in (2, 4, 8):
            xs_at = sorted(l[4] for i in range(4) for l in self.L("lb%d.dat" % i) if l[0] == N)
            with self.subTest(N=N):
                self.assertEqual(len(xs_at), 4)
                self.assertTrue(all(b - a > 0.2 for a, b in zip(xs_at, xs_at[1:])), xs_at)
                self.assertLess(abs(sum(xs_at) / 4 - N), 0.6, xs_at)

    def test_points_on_their_formula(self):
        for N in (2, 4, 8):
            for i in range(4):
                self.assertEqual([l[2] for l in self.L("lf%d.dat" % i) if l[0] == N], [l[4] for l in self.L("lb%d.dat" % i) if l[0] == N], (i, N))

    # the k-server sweep at N = 4 beside them, each k on max(n, 4n/k)
    def test_k_sweep(self):
        kb, kf = self.L("lbk.dat"), self.L("lfk.dat")
        self.assertEqual([l[0] for l in kb], [4, 4, 4])
        self.assertTrue(all(abs(l[1] - busy_k(k) / 1e6) < 1e-6 for l, k in zip(kf, (2, 3, 4))), kf)
        self.assertTrue(all(abs(g[1] / f[1] - 1.05) < 1e-3 for g, f in zip(kb, kf)), (kb, kf))

    def test_ticks_and_k_labels(self):
        body = read_text(os.path.join(self.dir, "demo-data", "bytes.png.gp"))
        self.assertIn("set xtics ('2' 2, '4' 4, '8' 8)", body)
        self.assertIn("k=2", read_text(os.path.join(self.dir, "demo-data", "lk.dat")))

    def test_svg_says_what_it_counts(self):
        svg = read_text(os.path.join(self.dir, "bytes.svg"))
        for want in (figures.QUESTION["bytes"], "busiest link, busier direction (MB per step)", "headers included"):
            self.assertIn(want, svg)


if __name__ == "__main__":
    common.main()
