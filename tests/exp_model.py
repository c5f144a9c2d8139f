"""exp_model.py: the cost model (experiments/psringlib/costmodel.py) against values computed by hand,
the BytePS identity and its special cases, psring model --compare on a fixture with its errors
computed by hand, --explain and --extrapolate, and bad input: one line, exit 2."""
import csv
import os
import unittest

import common
from psringlib import costmodel as cm
from psringlib import results, stats

MODEL = os.path.join(common.EXPERIMENTS, "model")
DEMO_SMALL = os.path.join(common.FIXTURES, "demo_small.csv")
CAL_HEAD = "format,alpha_s,beta_s_per_byte,gamma_s_per_byte,link_rate_bps,dilation\n"
DIR = None


def setUpModule():
    global DIR
    DIR = common.scratch()
    common.write_text(path("cal.csv"), CAL_HEAD + "psring-model-2,1e-4,8e-9,0,1000000000,8\n")


def path(name):
    return os.path.join(DIR, name)


def write_rows(name, cols, rows):
    with open(path(name), "w", newline="") as f:
        w = csv.DictWriter(f, cols)
        w.writeheader()
        w.writerows(rows)


class Close:
    def close(self, a, b, what, rel=1e-9):
        self.assertLessEqual(abs(a - b), rel * max(abs(b), 1e-30), "%s: %.9g, want %.9g" % (what, a, b))


class Formulas(Close, unittest.TestCase):
    def test_ring(self):   # 2(N-1) alpha + 2(N-1)/N n beta + (N-1)/N n gamma
        self.close(cm.ring_time(4, 1e6, 1e-5, 1e-9, 1e-10), 6e-5 + 1.5e-3 + 7.5e-5, "ring N=4")
        self.close(cm.ring_time(2, 1e6, 1e-5, 1e-9, 0), 2e-5 + 1e-3, "ring N=2")
        self.close(cm.ring_time(8, 4e5, 1e-4, 8e-9, 0), 14e-4 + 1.75 * 4e5 * 8e-9, "ring N=8")
        self.close(cm.ring_time(1, 1e6, 1e-5, 1e-9, 1e-10), 0.0, "ring N=1")

    # PS, k server hosts: 2N alpha + (max(n, N n/k) + max(N, k) slice) beta + N n/k gamma: a server
    # host's link idles until the first slice is in from every worker
    def test_ps_server_hosts(self):
        self.close(cm.ps_time(4, 1e6, 1e-5, 1e-9, 1e-10, k=1), 8e-5 + 2 * 4e6 * 1e-9 + 4e6 * 1e-10, "ps k=1 N=4 whole shards")
        self.close(cm.ps_time(4, 1e6, 1e-5, 1e-9, 0, k=1, slice_bytes=65536), 8e-5 + (4e6 + 4 * 65536) * 1e-9,
                   "ps k=1 N=4 sliced: N slices of fill")
        self.close(cm.ps_time(4, 1e6, 0, 1e-9, 0, k=8, slice_bytes=1e5), (1e6 + 8e5) * 1e-9, "ps k=8 N=4: the worker link, k slices of fill")
        self.close(cm.ps_time(8, 1e6, 0, 1e-9, 0, k=2, slice_bytes=1 << 30), (4e6 + 4e6) * 1e-9, "whole shards: push, then pull")
        self.close(cm.ps_time(4, 1e6, 0, 1e-9, 0, S=4, slice_bytes=1e5), (1.5e6 + 1e5) * 1e-9, "colocated: one slice of fill")

    def test_slice_bytes(self):
        self.close(cm.slice_bytes(64, 2), 32768, "a 64 KiB slice of floats is 32 KiB on the wire in fp16")
        self.close(cm.slice_bytes(64, 4), 65536, "and 64 KiB in float32")

    def test_ps_colocated_bytes(self):   # (N+S-2) n/S on a shard holder, n on a host without one
        self.close(cm.ps_bytes(4, 1e6, S=2), 2e6, "ps S=2 N=4 bytes")
        self.close(cm.ps_bytes(8, 1e6, S=2), 4e6, "ps S=2 N=8 bytes")
        self.close(cm.ps_bytes(4, 1e6, S=1), 3e6, "ps S=1 colocated N=4 bytes")
        self.close(cm.ps_bytes(2, 1e6, S=1), 1e6, "ps S=1 N=2: the host without a shard pulls n")

    def test_special_cases(self):   # S = N colocated sends the ring's bytes; one server on its own host carries N n
        for N in (2, 3, 4, 8, 64):
            self.close(cm.ps_bytes(N, 1e6, S=N), 2 * (N - 1) / N * 1e6, "S=N is the ring's bytes, N=%d" % N)
            self.close(cm.ps_bytes(N, 1e6, k=1), N * 1e6, "k=1 is N n, N=%d" % N)

    # BytePS: t_opt = 2N(N-1)n/((N^2+kN-2k)B) falls out of ps_bytes at the best split x*
    def test_byteps_identity(self):
        for N in (2, 4, 8, 16, 100):
            for k in range(1, N + 1):
                x = cm.byteps_x(N, k)
                self.close(cm.ps_bytes(N, 1e6, k=k, x=x) / 1.25e8, cm.byteps_optimum(N, k, 1e6, 1.25e8), "BytePS N=%d k=%d" % (N, k), 1e-9)

    def test_byteps_formula(self):
        for N in (2, 4, 8, 16, 100):
            for k in range(1, N + 1):
                self.close(cm.byteps_optimum(N, k, 1e6, 1.25e8), 2 * N * (N - 1) * 1e6 / ((N * N + k * N - 2 * k) * 1.25e8), "t_opt formula",
                           1e-12)

    def test_byteps_no_better_split(self):
        for N in (2, 4, 8, 16, 100):
            for k in range(1, N + 1):
                x = cm.byteps_x(N, k)
                best = cm.ps_bytes(N, 1e6, k=k, x=x)
                worse = [i for i in range(51) if cm.ps_bytes(N, 1e6, k=k, x=i / 50) < best * (1 - 1e-9)]
                self.assertEqual(worse, [], "N=%d k=%d: splits i/50 beat x*" % (N, k))

    def test_byteps_ends(self):
        for N in (2, 4, 8, 16, 100):
            self.close(cm.byteps_optimum(N, 0 + 1e-300, 1e6, 1.25e8), 2 * (N - 1) / N * 1e6 / 1.25e8, "k=0: the ring", 1e-9)
            self.close(cm.byteps_optimum(N, N, 1e6, 1.25e8), 1e6 / 1.25e8, "k=N: n/B", 1e-9)


CAL = {"alpha_s": 0.0, "beta_s_per_byte": 1e-9, "gamma_s_per_byte": 0.0}


class Step(Close, unittest.TestCase):
    def test_bsp_waits_for_straggler(self):   # BSP waits for a straggler at half a core, async does not
        self.close(cm.step_time("ring", 4, 1e6, CAL, 0.01)[0], 0.01 + 1.5e-3, "ring step")
        self.close(cm.step_time("ring", 4, 1e6, CAL, 0.01, slow_share=0.5)[0], 0.02 + 1.5e-3, "ring step, straggler")

    def test_async_no_wait(self):
        self.close(cm.step_time("ps", 4, 1e6, CAL, 0.01, k=1, sync="async", slow_share=0.5)[0], 0.01 + 8e-3, "async: no wait")

    # ssp, staleness 2, the straggler at half a core: a fast worker's step a = 10 + 8 ms, the
    # straggler's b = 20 + 8; without synchronization the straggler's pace (wait b - a = 10 ms); with
    # one every 4 steps max(4a, 2b) / 4 = a (no wait); every 8, max(8a, 6b) / 8 = 21 ms (wait 3 ms)
    def test_ssp_wait(self):
        def ssp(**kw):
            return cm.step_time("ps", 4, 1e6, CAL, 0.01, k=1, sync="ssp", slow_share=0.5, **kw)[2]
        self.close(ssp(staleness=2), 0.01, "ssp wait, no sync")
        self.close(ssp(staleness=2, sync_every=4), 0.0, "ssp wait, sync every 4")
        self.close(ssp(staleness=2, sync_every=8), 0.003, "ssp wait, sync every 8")
        self.close(ssp(staleness=9, sync_every=8), 0.0, "ssp, s >= E: async")

    def test_buckets_under_backward(self):
        self.close(cm.step_time("ring", 4, 1e6, CAL, 0.01, buckets=2)[1], 0.75e-3, "two buckets under backward (6.7 ms): the last one shows")

    def test_slowest_of(self):   # BSP waits for the slowest of N hosts: E[max of N draws] - mean of one host's steps
        self.close(cm.slowest_of([1.0, 2.0], 2), 0.25, "slowest of 2 draws from {1, 2}: 1/4 x 1 + 3/4 x 2 - 1.5")
        self.close(cm.slowest_of([1.0, 2.0, 3.0], 3), (1 / 27 + 2 * 7 / 27 + 3 * 19 / 27) - 2.0, "slowest of 3")
        self.close(cm.slowest_of([5.0] * 10, 8), 0.0, "no spread, no wait")
        self.close(cm.slowest_of([[1.0, 2.0], [1.0, 2.0], [1.0, 10.0]], 2), 0.25, "three runs: the median of 0.25, 0.25 and 2.25")
        self.close(cm.slowest_of([[1.0, 2.0], [1.0, 10.0]], 2), (0.25 + 2.25) / 2, "two runs: the mean of the middle two")

    def test_ring_step_waits_for_slowest(self):
        self.close(cm.step_time("ring", 2, 0, CAL, 1.5, samples=[1.0, 2.0])[2], 0.25, "the ring's step waits for it")
        self.assertEqual(cm.step_time("ring", 1, 0, CAL, 1.5, samples=[1.0, 2.0])[2], 0.0)

    # compute: one worker's step on one full core. Without a step alone, the one-worker runs pooled
    # (ring at 24, 24.5 and 23.8 ms, PS worker at 19.5, 28 and 19.2: median 23.9); with one
    # (topology local, 22 and 23 ms), only those runs and their samples
    def one_worker_rows(self):
        rows = [dict(topology=t, workers="1", straggler="1", step_ms=str(s), exchange_ms=str(e), step_samples_ms="1;2")
                for t, s, e in (("ring", 24, 0), ("ring", 24.5, 0), ("ring", 23.8, 0), ("ps", 24.5, 5), ("ps", 30, 2), ("ps", 23.2, 4))]
        rows += [dict(topology="ring", workers="2", straggler="1", step_ms="99", exchange_ms="0"),
                 dict(topology="ring", workers="1", straggler="0.5", step_ms="99", exchange_ms="0"),
                 dict(topology="ring", workers="1", straggler="1", step_ms="99", exchange_ms="0", error="died")]
        return rows

    def test_one_worker_compute_pooled(self):
        c, samples = stats.one_worker_compute(self.one_worker_rows(), lambda r: 0)[0]
        self.assertAlmostEqual(c, 0.0239, delta=1e-12)
        self.assertEqual(samples, [[0.001, 0.002]] * 6)

    def test_one_worker_compute_step_alone(self):
        rows = self.one_worker_rows()
        rows += [dict(topology="local", workers="1", straggler="1", step_ms=str(s), exchange_ms="0", step_samples_ms="3;4") for s in (22, 23)]
        rows += [dict(topology="local", workers="1", straggler="1", step_ms="5", exchange_ms="0", error="killed")]
        c, samples = stats.one_worker_compute(rows, lambda r: 0)[0]
        self.assertAlmostEqual(c, 0.0225, delta=1e-12)
        self.assertEqual(samples, [[0.003, 0.004]] * 2)


def compare(name, out):
    """psring model --compare NAME --out OUT on the hand calibration: the rows of OUT, by (label, workers)"""
    rc, o, e = common.run([MODEL, "--calibration", path("cal.csv"), "--compare", name, "--out", path(out)])
    assert rc == 0, "--compare %s failed (%d): %s%s" % (name, rc, o, e)
    return results.read_rows(path(out)), o


def ring4(rows):
    return [r for r in rows if r["label"] == "ring" and r["workers"] == "4"]


class Compare(unittest.TestCase):
    """--compare on the fixture: hand-computed (fixture rows: n = 200000 params x 2 B; compute 14 ms from
    N=1; a 64 KiB PS slice of float32 parameters is 32 KiB on the wire in fp16)"""

    @classmethod
    def setUpClass(cls):
        rows, cls.printed = compare(DEMO_SMALL, "cmp.csv")
        cls.rows = {(r["label"], r["workers"]): r for r in rows}
        cls.fix = results.read_rows(DEMO_SMALL)

    def test_failed_run_not_compared(self):
        self.assertNotIn(("ring", "8"), self.rows)

    def test_values_by_hand(self):
        want = {  # (model step ms, step err %, model exchange ms, exchange err %)
            ("ring", "4"): (19.4, -3.0, 5.4, -10.0),                                   # 6e-4 + 1.5 x 4e5 x 8e-9
            ("ps, 1 server host", "4"): (28.648576, -4.5, 14.648576, 1.0),             # 8e-4 + (1.6e6 + 4 x 32768) x 8e-9
            ("ps, N colocated", "4"): (19.862144, -5.4, 5.862144, -16.3),              # 8e-4 + (6e5 + 32768) x 8e-9
        }
        for k, (ms, err, ex, exerr) in want.items():
            r = self.rows[k]
            with self.subTest(point=k):
                self.assertAlmostEqual(float(r["model_step_ms"]), ms, delta=1e-3)
                self.assertAlmostEqual(float(r["step_err_pct"]), err, delta=0.051)
                self.assertAlmostEqual(float(r["model_exchange_ms"]), ex, delta=1e-3)
                self.assertAlmostEqual(float(r["exchange_err_pct"]), exerr, delta=0.051)

    def test_prints_table(self):
        self.assertIn("ps, 1 server host", self.printed)

    def two_one_worker_runs(self):   # two one-worker runs of the configuration (12 and 16 ms)
        one = dict(self.fix[0], step_ms="12.0")
        ps1 = dict(self.fix[0], label="ps, 1 server host", topology="ps", servers="1", server_hosts="1", step_ms="20.0", exchange_ms="4.0")
        return [one, ps1] + self.fix[1:]

    def test_compute_median_of_one_worker_runs(self):   # median 14 again
        write_rows("two.csv", list(self.fix[0]), self.two_one_worker_runs())
        rows, _ = compare(path("two.csv"), "cmp2.csv")
        self.assertEqual([r["model_step_ms"] for r in ring4(rows)], ["19.400"])

    # with a step alone on one full core (topology local, 10 ms) compute is that, not the one-worker
    # runs, and the step alone is the reference, not a compared point: ring N=4 at 19.4 - 14 + 10 ms
    def test_compute_step_alone(self):
        alone = dict(self.fix[0], label="step alone", topology="local", fp16="0", step_ms="10.0", exchange_ms="0", wait_ms="0")
        write_rows("alone.csv", list(self.fix[0]), self.two_one_worker_runs() + [alone])
        rows, _ = compare(path("alone.csv"), "cmp4.csv")
        self.assertEqual([r["model_step_ms"] for r in ring4(rows)], ["15.400"])
        self.assertNotIn("step alone", common.read_text(path("cmp4.csv")))

    # ssp with a straggler at half a core: the workers never meet (a sample budget), so whatever
    # steps_per_epoch a row records, a fast worker keeps the straggler's pace: compute (14 ms) later
    # than async's fast worker, who waits for nobody
    def test_ssp_straggler_pace(self):
        ps1 = next(r for r in self.fix if r["label"] == "ps, 1 server host")
        ssp = [dict(ps1, sync="ssp", staleness="2", straggler="0.5", steps_per_epoch=e, command="ssp %s" % e) for e in ("4", "")]
        ssp.append(dict(ps1, sync="async", straggler="0.5", steps_per_epoch="4", command="async"))
        write_rows("ssp.csv", list(self.fix[0]) + ["steps_per_epoch"], self.fix[:1] + ssp)
        rows, _ = compare(path("ssp.csv"), "cmp5.csv")
        m = sorted(float(r["model_step_ms"]) for r in rows if r["sync"] == "ssp")
        a = [float(r["model_step_ms"]) for r in rows if r["sync"] == "async"]
        self.assertEqual((len(m), len(a)), (2, 1))
        self.assertEqual(m[0], m[1])
        self.assertAlmostEqual(m[0] - a[0], 14.0, delta=1e-3)

    # repeats of one configuration: one line, on their median (ring N=4 at 20, 30 and 22 ms: 22 ms)
    def test_repeats_one_line_on_median(self):
        r4 = ring4(self.fix)[0]
        reps = [dict(r4, step_ms=ms, exchange_ms=ex, wait_ms="0", repeat=str(i + 1))
                for i, (ms, ex) in enumerate((("20.0", "5.0"), ("30.0", "9.0"), ("22.0", "6.0")))]
        write_rows("rep.csv", list(self.fix[0]), [r for r in self.fix if r is not r4] + reps)
        rows, _ = compare(path("rep.csv"), "cmp3.csv")
        got = ring4(rows)
        self.assertEqual(len(got), 1, "lines for one configuration")
        r = got[0]
        self.assertEqual((r["runs"], r["step_ms"], r["exchange_ms"]), ("3", "22.000", "6.000"))
        self.assertAlmostEqual(float(r["step_err_pct"]), 100 * (19.4 - 22) / 22, delta=0.051)   # the model's 19.4 ms against the median


class Explain(unittest.TestCase):
    """--explain: the formula with the numbers in"""

    def explain(self, *args):
        return common.run_ok(self, [MODEL, "--calibration", path("cal.csv"), "--explain"] + list(args))

    def test_ring(self):
        out = self.explain("--topology", "ring", "-N", "8", "--params", "200000", "--fp16", "--compute-ms", "14")
        self.assertRegex(out, r"14 x 100\.0 us(.|\n)*1\.75 x 0\.40 MB / 125 MB/s")

    def test_ps(self):
        out = self.explain("--topology", "ps", "-N", "4", "--server-hosts", "2", "--params", "200000", "--compute-ms", "14")
        for want in ("BytePS", "8 x 100.0 us", "+ 4 x 0.400) MB"):
            self.assertIn(want, out)

    def test_ssp_wait_falls_with_syncs(self):   # ssp with a straggler at half a core
        args = ["--topology", "ps", "-N", "4", "--server-hosts", "1", "--params", "200000", "--compute-ms", "14", "--straggler", "0.5",
                "--sync", "ssp"]
        self.assertIn("wait 14.00 ms", self.explain(*args))
        self.assertIn("wait 0.00 ms", self.explain(*args, "--sync-every", "4"))


class Extrapolate(unittest.TestCase):
    """--extrapolate: one named model on hosts of G GPUs, 8 to 1024 GPUs (its values: exp_model_scale.py)"""

    @classmethod
    def setUpClass(cls):
        rc, cls.out, err = common.run([MODEL, "--extrapolate", "--compute-ms", "50", "--model", "vgg16"])
        assert rc == 0, "--extrapolate failed: " + cls.out + err
        cls.lines = cls.out.splitlines()

    def test_head(self):
        self.assertTrue(self.lines[0].startswith("vgg16: 138 M params x 4 B; 8 GPUs per host"), self.lines[0])

    def test_eight_rows(self):
        self.assertEqual(sum(1 for l in self.lines if l.lstrip(" ")[:1].isdigit()), 8, self.out)

    def test_winner_changes(self):
        self.assertTrue(any(l.startswith("winner changes: ") for l in self.lines), self.out)


class Slices(unittest.TestCase):
    # PS slices (the trainer's 1 MiB) pipeline pulls behind pushes: N server hosts of their own move n
    # per link each way against the ring's 2(N-1)/N n, and beat it from N=4 (as whole shards they never did)
    def exchange(self, topo, N):
        out = common.run_ok(self, [MODEL, "--predict", "--topology", topo, "--hosts", str(N), "--gpus-per-host", "1", "--server-hosts", str(N),
                                   "--model", "resnet50", "--link-rate", "10g", "--framework", "none", "--gamma-ns-per-byte", "0",
                                   "--compute-ms", "50"])
        return float(out.splitlines()[-1].split(",")[7])

    def test_ps_loses_at_2(self):
        self.assertGreaterEqual(self.exchange("ps", 2), self.exchange("ring", 2))

    def test_ps_wins_at_4(self):
        self.assertLess(self.exchange("ps", 4), self.exchange("ring", 4))


BAD = (
    ("--calibration {cal} --explain --topology star -N 4 --compute-ms 1", "unknown topology 'star'"),
    ("--calibration {cal} --explain --topology ring -N 0 --compute-ms 1", "-N must be at least 1"),
    ("--calibration {cal} --explain --topology ps -N 4 --servers 5 --compute-ms 1", "--servers must be in 1..N=4"),
    ("--calibration {cal} --explain --topology ps -N 4 --server-hosts -1 --compute-ms 1", "--server-hosts must be >= 0"),
    ("--calibration {cal} --explain --topology ring -N 4", "needs --compute-ms"),
    ("--calibration {cal} --explain --topology ps -N 4 --sync ssp --sync-every -1 --compute-ms 1", "--sync-every and --staleness must be at least 0"),
    ("--calibration {cal} --compare {d}/cols.csv", "no column"),
    ("--calibration {d}/old.csv --compare {fix}", "an older format"),
    ("--calibration {d}/none.csv --compare {fix}", "No such file"),
    ("--bogus", "unrecognized arguments"),
    ("--calibration {cal} --compare {d}/badcell.csv", "badcell.csv:3: column step_ms: 'nan' is not a number > 0"),
    ("--calibration {cal} --compare {d}/noshard.csv", "a PS row needs servers or server hosts"),
    ("--calibration {d}/beta0.csv --explain --topology ring -N 4 --compute-ms 1", "beta > 0"),
    ("--calibration {cal} --explain --topology ring -N 4 --compute-ms nan", "--compute-ms must be a number > 0"),
    ("--calibration {cal} --explain --topology ps -N 4 --servers 2 --server-hosts 2 --compute-ms 1", "are alternatives"),
    ("--extrapolate --alpha-us -1", "--alpha-us must be a number >= 0"),
    ("--predict --server-hosts 1 --topology ring --servers 2", "are alternatives"),
    ("--extrapolate --explain", "goes alone"),
    ("--calibration {cal} --compare {fix} --out {d}", "Is a directory"),
    ("--calibration {cal}", "nothing to do"),
)


class BadInput(unittest.TestCase):
    """bad input: one line, exit 2 (each case its own test, named by its flags)"""

    @classmethod
    def setUpClass(cls):
        common.write_text(path("old.csv"), "key,value\nalpha_mpi,1e-5\n")
        common.write_text(path("cols.csv"), "topology,workers\nring,2\n")
        common.write_text(path("beta0.csv"), CAL_HEAD + "psring-model-2,1e-4,0,0,1000000000,8\n")
        rows = results.read_rows(DEMO_SMALL)
        for name, i, change in (("badcell", 1, dict(step_ms="nan")),
                                ("noshard", [r["label"] for r in rows].index("ps, N colocated"), dict(servers="0"))):
            write_rows(name + ".csv", list(rows[0]), rows[:i] + [dict(rows[i], **change)] + rows[i + 1:])

    def test_help_is_the_docstring(self):   # one usage line, no argparse listing after it
        rc, out, err = common.run([MODEL, "--help"])
        self.assertEqual(rc, 0, out + err)
        lines = (out + err).splitlines()
        self.assertEqual(sum(1 for l in lines if l.startswith("usage:")), 1, out + err)
        self.assertFalse(any(l.startswith("options:") for l in lines), out + err)


def _bad_test(args, want):
    def test(self):
        common.refused(self, [MODEL] + args.format(cal=path("cal.csv"), d=DIR, fix=DEMO_SMALL).split(), want)
    return test


for _i, (_args, _want) in enumerate(BAD):
    setattr(BadInput, "test_bad_%02d_%s" % (_i, "_".join(w.strip("-") for w in _args.split() if w.startswith("--") and w != "--calibration")[:60]),
            _bad_test(_args, _want))


if __name__ == "__main__":
    common.main()
