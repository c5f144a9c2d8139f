"""exp_demo_best.py: psring demo --best's pieces that need no emulated hosts: the regime the cost model
chooses (one candidate's numbers checked by hand; no claim of the 15% target where the model says it
is out of reach), the plan of runs and their commands and host kinds, the report's winner, margin and
per-host arithmetic and the figure's data on a fixture CSV, and the options --best cannot take (one
line, exit 2, nothing started)."""
import contextlib
import io
import os
import unittest

import common
from psringlib import results
from psringlib.demo import best, bestreport, bestruns

DEMO = os.path.join(common.EXPERIMENTS, "demo")
# the main demo's calibration (docs/results/demo-lesson-2026-11-27/run1/calibration.csv)
CAL = dict(alpha_s=34.75e-6, beta_s_per_byte=8e-9, gamma_s_per_byte=3.624e-11)


class RefusedOptions(unittest.TestCase):
    """exit 2 and the one line WANT; a refused --best makes no results folder"""

    def once(self, want, *args):
        no = os.path.join(common.scratch(), "no")
        rc, out, err = common.run([DEMO] + list(args) + ["-o", no])
        self.assertEqual(rc, 2, out + err)
        self.assertEqual((out + err).rstrip("\n"), want)
        self.assertFalse(os.path.exists(no), "a refused --best made its results folder")


for _flag in ("--loopback", "--quick", "--validate", "--steps 4"):
    def _test(self, flag=_flag):
        self.once("psring demo: --best runs its own scenario: drop " + flag.split()[0], "--best", *flag.split())
    setattr(RefusedOptions, "test_best_" + _flag.lstrip("-").replace(" ", "_"), _test)


def _test_dilation(self):
    self.once("psring demo: --best --dilation 8: BytePS k=2 at N=8 takes 18 CPU shares (a GPU host counts two), more than 1.25 cores"
              " at D=8: give --dilation 16 or more", "--best", "--dilation", "8")


RefusedOptions.test_best_dilation_8 = _test_dilation


class Candidate(unittest.TestCase):
    """one candidate by hand: 784-1024-1024-1024-10 has 784*1024+1024 + 2*(1024*1024+1024) + 1024*10+10
    = 2,913,290 parameters, n = 5,826,580 bytes in fp16. Ring at N=8: 14 alpha + 1.75 n beta +
    0.875 n gamma = 0.4865 + 81.5721 + 0.1848 = 82.2434 ms. BytePS k=2 at N=8: x* = 28/76; the
    busiest link (worker's = server's) 1.473684 n = 8,586,539 B, plus a fill of 8 slices of 32 KiB
    (262,144 B); the busiest server sums 8 x* n / 2 = 8,586,539 B: 16 alpha + (8,586,539 + 262,144)
    beta + 8,586,539 gamma = 0.556 + 70.7895 + 0.3112 = 71.6567 ms; margin 1 - 71.6567 / 82.2434 = 12.87%"""

    @classmethod
    def setUpClass(cls):
        cls.p = best.predict(1024, CAL)

    def test_params(self):
        self.assertEqual(best.params(best.layers(1024)), 2913290)

    def test_ring_exchange(self):
        self.assertAlmostEqual(self.p["points"][("ring, overlap", 8)]["exchange"] * 1e3, 82.2434, delta=1e-3)

    def test_byteps_k2_exchange(self):
        self.assertAlmostEqual(self.p["points"][("BytePS k=2", 8)]["exchange"] * 1e3, 71.6567, delta=1e-3)

    def test_margin(self):
        self.assertAlmostEqual(best.margin(self.p), 0.12873, delta=1e-4)

    def test_batch(self):
        self.assertEqual(self.p["batch"], 112)

    def test_hosts(self):
        self.assertEqual(self.p["points"][("BytePS k=2", 8)]["hosts"], 10)
        self.assertEqual(self.p["points"][("ps-lite, 1 server host", 8)]["hosts"], 9)

    def test_ps_lite_exchange(self):   # 16 alpha + (8 n + 8 slices) beta + 8 n gamma
        pl = self.p["points"][("ps-lite, 1 server host", 8)]["exchange"]
        self.assertAlmostEqual(pl, 16 * 34.75e-6 + (8 * 5826580 + 8 * 32768) * 8e-9 + 8 * 5826580 * 3.624e-11, delta=1e-12)

    def test_byteps_k_below_n_only(self):
        self.assertNotIn(("BytePS k=2", 2), self.p["points"])
        self.assertIn(("BytePS k=1", 2), self.p["points"])

    def test_bound(self):
        self.assertAlmostEqual(best.bound(), 1 - 1 / 1.1875, delta=1e-12)


class Choice(unittest.TestCase):
    """no candidate reaches 15% within the budget, so the best margin within it, and the prediction says
    plainly that the target is out of reach"""

    @classmethod
    def setUpClass(cls):
        cls.out = common.scratch()
        cls.chosen, cls.cands = best.choose_regime(CAL)
        best.write_prediction(cls.out, cls.chosen, cls.cands, CAL)
        cls.text = common.read_text(os.path.join(cls.out, "prediction.txt"))

    def test_chosen_within_budget_not_reached(self):
        self.assertTrue(self.chosen)
        self.assertFalse(self.chosen["reached"])
        self.assertLessEqual(self.chosen["wall"], best.BUDGET_S)

    def test_chosen_best_margin_under_target(self):
        within = max(c["margin"] for c in self.cands if c["wall"] <= best.BUDGET_S)
        self.assertEqual(self.chosen["margin"], within)
        self.assertLess(within, best.TARGET)

    def test_prediction_says_out_of_reach(self):
        self.assertIn("the 15% target is out of reach within the budget", self.text)
        self.assertIn("the best margin within the budget", self.text)

    def test_prediction_not_cheapest(self):
        self.assertNotIn("cheapest", self.text.split("Chosen:")[1].splitlines()[0])

    def test_prediction_read_back(self):
        pred = best.read_prediction(self.out)
        self.assertEqual(sorted({N for _, N in pred}), [2, 4, 8])
        self.assertTrue(all(r["target_reached"] == "0" for r in pred.values()))
        self.assertEqual(len(pred), 4 + 6 + 6)
        self.assertEqual(pred[("ring, overlap", 8)]["layers"], self.chosen["layers"])

    def test_lower_target_cheaper_of_two(self):   # a lower target that two candidates reach: the cheaper, no 'out of reach'
        low, _ = best.choose_regime(CAL, target=0.11)
        self.assertTrue(low["reached"])
        self.assertEqual(low["W"], 768)
        self.assertTrue(0.11 <= low["margin"] < 0.12, low["margin"])
        self.assertFalse(any("out of reach" in l for l in best.prediction_lines(low, self.cands, CAL)))

    def test_bigger_budget_cheaper_of_two(self):   # two reach 14% (W = 1536, 2048): the cheaper
        big, _ = best.choose_regime(CAL, budget=10 ** 5, target=0.14)
        self.assertTrue(big["reached"])
        self.assertEqual(big["W"], 1536)
        self.assertIn("the cheapest with a margin >= 14%", "\n".join(best.prediction_lines(big, self.cands, CAL)))

    def test_no_candidate_fits(self):
        none, _ = best.choose_regime(CAL, budget=10)
        self.assertIsNone(none)
        self.assertIn("No candidate fits", best.prediction_lines(None, self.cands, CAL)[-1])


REGIME = dict(layers="784,1024,1024,1024,10", batch=112)
WANT = {"ring, overlap": (["--topology", "ring", "--overlap", "--chunk-kb"], ["--byteps", "--ps-mode", "--servers"], "gpu:8"),
        "ps-lite, 1 server host": (["--topology", "ps", "--servers", "--ps-mode", "optimizer"], ["--overlap", "--byteps"], "gpu:9"),
        "BytePS k=1": (["--byteps", "1", "--ps-mode", "sum"], ["--overlap", "--servers"], "gpu:8,cpu:1"),
        "BytePS k=1, overlap": (["--byteps", "1", "--ps-mode", "sum", "--overlap"], ["--servers"], "gpu:8,cpu:1"),
        "BytePS k=2": (["--byteps", "2", "--ps-mode", "sum"], ["--overlap", "--servers"], "gpu:8,cpu:2"),
        "BytePS k=2, overlap": (["--byteps", "2", "--ps-mode", "sum", "--overlap"], ["--servers"], "gpu:8,cpu:2")}


class Plan(unittest.TestCase):
    """per N a cluster of N GPU hosts and 2 CPU hosts (ring, BytePS k < N), then N + 1 GPU hosts for
    ps-lite (its server on h0); every command as intended"""

    @classmethod
    def setUpClass(cls):
        cls.plan = bestruns.clusters()
        cls.n8 = [r for N, _, _, rs in cls.plan if N == 8 for r in rs]

    def test_clusters_n2(self):
        self.assertEqual([(N, h, k, [r.design.label for r in rs]) for N, h, k, rs in self.plan][:2], [
            (2, 4, "gpu:2,cpu:2", ["ring, overlap", "BytePS k=1", "BytePS k=1, overlap"]), (2, 3, "gpu:3", ["ps-lite, 1 server host"])])

    def test_clusters_n4_n8(self):
        self.assertEqual([(N, h, k, len(rs)) for N, h, k, rs in self.plan][2:],
                         [(4, 6, "gpu:4,cpu:2", 5), (4, 5, "gpu:5", 1), (8, 10, "gpu:8,cpu:2", 5), (8, 9, "gpu:9", 1)])

    def test_commands_train_on_cluster(self):
        for r in self.n8:
            c = bestruns.command(r, REGIME, "d")
            self.assertEqual(c[1:5], ["train", "--cluster", "--workers", "8"], c)
            self.assertNotIn("-np", c)
            self.assertIn("--fp16", c)

    def test_commands_flags(self):
        for r in self.n8:
            c = bestruns.command(r, REGIME, "d")
            has, hasnt, _ = WANT[r.design.label]
            self.assertTrue(all(f in c for f in has), (r.design.label, c))
            self.assertFalse(any(f in c for f in hasnt), (r.design.label, c))

    def test_commands_ps_chunk(self):
        for r in self.n8:
            c = bestruns.command(r, REGIME, "d")
            if "--byteps" in c or "--servers" in c:
                self.assertIn(c[c.index("--ps-mode") - 1], ("1", "2"), c)
                self.assertEqual(c[c.index("--ps-chunk-kb") + 1], "64", c)

    def test_commands_regime(self):
        for r in self.n8:
            c = bestruns.command(r, REGIME, "d")
            self.assertEqual(c[c.index("--layers") + 1], REGIME["layers"], c)
            self.assertEqual(c[c.index("--batch") + 1], "112", c)

    def test_kinds_and_dilation_n8(self):
        for r in self.n8:
            self.assertEqual(bestruns.kinds_of(r), WANT[r.design.label][2], r)
            self.assertEqual(bestruns.dilation(r, 16, "1gbit"), 16, r)

    def test_dilation_below_n8(self):
        self.assertEqual([bestruns.dilation(r, 16, "1gbit") for N, _, _, rs in self.plan if N < 8 for r in rs], [8] * 10)

    def test_step_alone_command(self):
        alone = bestruns.command(bestruns.BestRun(bestruns.ALONE, 1), REGIME, "d")
        self.assertNotIn("--cluster", alone)
        self.assertNotIn("--fp16", alone)
        self.assertEqual(alone[2:4], ["--topology", "local"])

    def test_placement_problem(self):
        self.assertEqual(bestruns.placement_problem(16, "1gbit"), "")
        self.assertIn("give --dilation 16", bestruns.placement_problem(8, "1gbit"))


class RunsOnFakeHosts(unittest.TestCase):
    """each cluster up with its hosts, kinds and the first run's dilation, the dilation changed where a
    run needs another, down after its runs; the step alone first; every row with exposed_ms = step - the
    step alone's; resumed, nothing is run or brought up again"""

    @classmethod
    def setUpClass(cls):
        out = common.scratch()
        cls.calls, cls.ran = calls, ran = [], []
        saved = bestruns.hosts.cluster, bestruns.train
        bestruns.hosts.cluster = lambda *a, check=True: calls.append(a)

        def fake_train(cmd, D, links=None):
            ran.append(cmd)
            step = 40.0 if "local" in cmd else 100.0 * D   # / D: 100 ms a step on the hosts
            with open(cmd[cmd.index("--csv") + 1], "w") as f:
                f.write("topology,workers,step_ms,data_ms,compute_ms,exchange_ms,wait_ms,optimizer_ms,wall_s,samples_per_s\n"
                        "%s,%s,%g,0,%g,%g,0,0,1,100\n" % ("local" if "local" in cmd else "x",
                                                          cmd[cmd.index("--workers") + 1] if "--workers" in cmd else 1, step, step / 2,
                                                          step / 2))
            return 0, "", ""
        bestruns.train = fake_train
        try:
            chosen, cands = best.choose_regime(CAL)
            fake = os.path.join(out, "fake")
            os.makedirs(fake)
            best.write_prediction(fake, chosen, cands, CAL)
            o = dict(out=out, fresh=False, rate="1gbit", dilation=16, repeats=1)
            cls.made = []
            with contextlib.redirect_stdout(io.StringIO()):
                bestruns.on_clusters(o, fake, "d", os.path.join(fake, "best.csv"), [], cls.made)
            cls.first_calls, cls.first_ran = list(calls), list(ran)
            cls.rows = results.read_rows(os.path.join(fake, "best.csv"))
            calls.clear()
            ran.clear()
            bestruns.on_clusters(o, fake, "d", os.path.join(fake, "best.csv"), cls.rows, cls.made)
        finally:
            bestruns.hosts.cluster, bestruns.train = saved

    def test_clusters_up(self):
        ups = [c for c in self.first_calls if c[0] == "up"]
        self.assertEqual(ups, [("up", h, "--rate", "1gbit", "--dilation", D, "--kinds", k) for h, k, D in
                               ((4, "gpu:2,cpu:2", 8), (3, "gpu:3", 8), (6, "gpu:4,cpu:2", 8), (5, "gpu:5", 8), (10, "gpu:8,cpu:2", 16),
                                (9, "gpu:9", 16))])

    def test_clusters_down(self):
        self.assertEqual([c[0] for c in self.first_calls].count("down"), 6)

    def test_no_dilate(self):
        self.assertEqual([c for c in self.first_calls if c[0] == "dilate"], [])

    def test_nothing_made(self):
        self.assertEqual(self.made, [])

    def test_step_alone_first(self):
        r0 = self.first_ran[0]
        self.assertIn("--topology", r0)
        self.assertEqual(r0[r0.index("--topology") + 1], "local")

    def test_runs_count(self):
        self.assertEqual(len(self.first_ran), 1 + 16)

    def test_rows_exposed(self):
        self.assertEqual(len(self.rows), 17)
        self.assertTrue(all(float(r["exposed_ms"]) == 60.0 for r in self.rows[1:]), self.rows[1:])
        self.assertEqual(self.rows[0]["exposed_ms"], "")

    def test_rows_hosts(self):
        self.assertEqual({(r["label"], r["workers"], r["kinds"], r["hosts_used"]) for r in self.rows if r["label"] == "BytePS k=2"},
                         {("BytePS k=2", "4", "gpu:4,cpu:2", "6"), ("BytePS k=2", "8", "gpu:8,cpu:2", "10")})

    def test_resumed_runs_nothing(self):
        self.assertEqual(self.calls, [])
        self.assertEqual(self.ran, [])


class Report(unittest.TestCase):
    """the report on a fixture: N = 4 and 8, two repeats a run (medians), exposed = step - step alone"""

    @classmethod
    def setUpClass(cls):
        cls.out = out = common.scratch()
        csv_path = os.path.join(out, "best.csv")

        def add(label, N, hosts, sps, ex, step, rep):
            results.append_row(csv_path, bestruns.COLUMNS, dict(
                label=label, topology="ps" if "ps" in label.lower() else "ring", workers=N, layers="784,1024,1024,1024,10",
                batch_per_worker=112, samples_per_s=sps, exchange_ms=ex, wait_ms=0, step_ms=step, exposed_ms=step - 30, hosts_used=hosts,
                sweep_id="best", repeat=rep, command=label + str(N), error=""))
        for rep, d in ((1, 0.0), (2, 20.0)):   # repeat 2 a little faster: medians halfway
            for N, ring_sps, k2_sps in ((4, 3000, 3300), (8, 5000, 6000)):
                add("ring, overlap", N, N, ring_sps + d, 100.0, 130.0, rep)
                add("BytePS k=2", N, N + 2, k2_sps + d, 90.0, 120.0, rep)
                add("ps-lite, 1 server host", N, N + 1, 1000 + d, 400.0, 430.0, rep)
        results.append_row(csv_path, bestruns.COLUMNS, dict(label="step alone", topology="local", workers=1, step_ms=30, samples_per_s=3733,
                                                            sweep_id="best", repeat=1, command="alone", error=""))
        cls.rows = results.read_rows(csv_path)
        cls.tab = bestreport.tables(cls.rows)
        fix = {("ring, overlap", 8): dict(model_exchange_ms="120", model_exposed_ms="95", margin_k2_n8_pct="12.87"),
               ("BytePS k=2", 8): dict(model_exchange_ms="82", model_exposed_ms="82", margin_k2_n8_pct="12.87"),
               ("ring, overlap", 4): dict(model_exchange_ms="130", model_exposed_ms="120", margin_k2_n8_pct="12.87")}
        cls.text = "\n".join(bestreport.summary_lines(cls.rows, fix, dict(rate="1gbit")))
        with contextlib.redirect_stdout(io.StringIO()):
            bestreport.figure(out, cls.rows)

    def dat(self, i):
        return [[float(x) for x in l.split()] for l in common.read_text(os.path.join(self.out, "best-data", "perhost%d.dat" % i)).splitlines()]

    def assertNear(self, got, want):   # %g: 6 digits
        self.assertEqual(len(got), len(want), got)
        self.assertTrue(all(abs(a - b) < 1e-3 for g, w in zip(got, want) for a, b in zip(g, w)), (got, want))

    def test_per_host(self):
        self.assertEqual(self.tab[("BytePS k=2", 8)]["per_host"][:3], (6010 / 10, 6000 / 10, 6020 / 10))
        self.assertEqual(self.tab[("ring, overlap", 8)]["per_host"][0], 5010 / 8)

    def test_exposed_and_hosts(self):
        self.assertEqual(self.tab[("ring, overlap", 4)]["exposed"][0], 100.0)
        self.assertEqual(self.tab[("BytePS k=2", 4)]["hosts"], 6)

    def test_winner(self):
        w = bestreport.winner(self.tab, 8)
        self.assertEqual((w[0], w[2], w[4]), ("BytePS k=2", "ring, overlap", 10))
        self.assertAlmostEqual(w[3], 6010 / 5010 - 1, delta=1e-12)

    def test_summary_lines(self):
        for want in ("winner: BytePS k=2, 6010 samples/s, 20.0% over ring, overlap, on 10 hosts (the runner-up takes 8)",
                     "winner: BytePS k=2, 3310 samples/s, 10.0% over ring, overlap, on 6 hosts (the runner-up takes 4)",
                     "The model's exchange within 10% of the measured at N = 4, 8: 2 of 3",
                     "BytePS k=2's exchange at N=8: 10.0% under the ring's (predicted 12.9% under"):
            with self.subTest(want=want):
                self.assertIn(want, self.text)

    def test_table_row(self):
        row = next(l for l in self.text.splitlines() if l.strip().startswith("BytePS k=2") and "601" in l)
        self.assertEqual(row.split()[2:], ["90.00", "90.00", "6010", "10", "601", "82.00", "yes"])

    # the figure draws samples/s per host used: N, median, min, max per design
    def test_figure_ring(self):
        self.assertEqual(self.dat(0), [[4, 3010 / 4, 3000 / 4, 3020 / 4], [8, 5010 / 8, 5000 / 8, 5020 / 8]])

    def test_figure_byteps_k2(self):
        self.assertNear(self.dat(4), [[4, 3310 / 6, 3300 / 6, 3320 / 6], [8, 601, 600, 602]])

    def test_figure_ps_lite(self):
        self.assertNear(self.dat(1), [[4, 1010 / 5, 200, 204], [8, 1010 / 9, 1000 / 9, 1020 / 9]])

    def test_figure_no_byteps_k1(self):   # no BytePS k=1 in the fixture
        self.assertFalse(os.path.exists(os.path.join(self.out, "best-data", "perhost2.dat")))


if __name__ == "__main__":
    common.main()
