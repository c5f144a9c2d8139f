"""exp_model_published.py: psring model --published on tests/fixtures/published_small.csv (errors
computed by hand in its comments) and on its variants, each one edit of it: a wrong winner, a server
line, a row's framework, gradient accumulation, --check, bound rows; the shipped points and their
citations; and bad input of the cluster-scale commands: one line, exit 2."""
import csv
import io
import os
import re
import statistics
import unittest

import common
from common import assert_line, read_text, sed
from psringlib import published, results

MODEL = os.path.join(common.EXPERIMENTS, "model")
FIX = os.path.join(common.FIXTURES, "published_small.csv")
DATA = os.path.join(common.TOP_SRCDIR, "data")
DIR = None


def setUpModule():
    global DIR
    DIR = common.scratch()
    fix = read_text(FIX)
    # the fixture's variants, each one sed-like edit of it (or of one another)
    variants = {
        "swap": [(r",0\.80,g1,", ",0.68,g1,")],
        "cores": [(r"^# left out: nothing", "# server,fixture-a,4,made up\n\\g<0>")],
        "ov": [(r"^(fx-tree,.*),ddp,", r"\1,none,")],
        "nocite": [(r'"Fixture, a made-up tree point, not a publication"', '""')],
        "topo": [(r",hier,0,1,", ",star,0,1,")],
        "norate": [(r",100,500,50,hier", ",100,,50,hier")],
        "noassume": [(r"^# assume,rdma", None), (r"^(fx-tree,.*),rdma,", r"\1,ib,")],
        "nocol": [(r",single_gpu_rate,", ",rate,")],
        "half": [(r"^fx-ps,(.*),ps,4,1,", r"fx-ps,\1,ps,4.5,1,")],
        "nocores": [(r"^# left out: nothing", "# server,fixture-a,0,made up\n\\g<0>")],
        "fwbad": [(r"^(fx-tree,.*),ddp,", r"\1,mxnet,")],
        "fwnone": [(r"^(fx-tree,.*),ddp,", r"\1,,")],
    }
    for name, edits in variants.items():
        common.write_text(path(name + ".csv"), sed(fix, *edits))
    # gradient accumulation columns: fx-tree 4 and 2, the others empty
    acc = sed(read_text(path("ov.csv")), (r",assumed$", ",assumed,accumulation,baseline_accumulation"), (r"^(fx-tree,.*)$", r"\1,4,2"),
              (r"^(fx-[rph].*)$", r"\1,,"))
    common.write_text(path("acc.csv"), acc)
    common.write_text(path("acc0.csv"), sed(acc, (r"^(fx-tree,.*),4,2$", r"\1,0,2")))
    common.write_text(path("acchalf.csv"), sed(acc, (r"^(fx-tree,.*),4,2$", r"\1,4,2.5")))
    common.write_text(path("accx.csv"), sed(acc, (r"^(fx-tree,.*),4,2$", r"\1,x,2")))
    # the fixture's rows without its '#' lines
    common.write_text(path("chk.csv"), sed(fix, (r"^#", None)))
    common.write_text(path("chkassume.csv"), "#  assume , rdma,4,0.88,spaced\n" + read_text(path("chk.csv")))
    # bound rows: every row's transport unstated
    lines = fix.splitlines(keepends=True)
    rows = list(csv.reader(io.StringIO("".join(l for l in lines if not l.startswith("#")))))
    rows[0].append("bound")
    for r in rows[1:]:
        r.append("transport")
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    common.write_text(path("bound.csv"), "".join(l for l in lines if l.startswith("#")) + out.getvalue())


def path(name):
    return os.path.join(DIR, name)


def model(test, *args):
    return common.run_ok(test, [MODEL] + [str(a) for a in args])


def error_stats(res):
    """(median error %, worst error %, the worst point's id, points) of psringlib.published's results, to the
    0.01% --published prints: the numbers its statistics line is made from (None: no point to count)"""
    points = published.bounded(res)[0]
    if not points:
        return None
    worst = max(points, key=lambda t: t[2])
    return round(100 * statistics.median(t[2] for t in points), 2), round(100 * worst[2], 2), worst[0]["id"], len(points)


def printed_stats(text):
    """the same four of each statistics line TEXT prints: the figures, the id in parentheses"""
    got = []
    for l in text.splitlines():
        if l.startswith("median error"):
            nums = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", re.sub(r"\(.*?\)", "", l))]
            got.append((nums[0], nums[1], re.search(r"\((.*?)\)", l).group(1), int(nums[2])))
    return got


class Published(unittest.TestCase):
    """--published on the fixture: the errors its comments compute by hand"""

    def published(self, *args):
        return model(self, "--published", *args)

    def stats(self, path, check=None):
        """the statistics of PATH (and of CHECK), as psringlib.published computes them"""
        res, cres = published.compare(path, check)
        return error_stats(res), cres and error_stats(cres)

    def test_fixture_errors(self):
        out = self.published(FIX)
        for want in (r"fx-ring .* 0.8045 +3.14%", r"fx-ps .* 0.8328 +4.10%", r"fx-tree .* 1.9324 +7.36%", r"fx-hier .* 0.8696 +3.38%",
                     r"^winner g1: published ps, model ps: right"):
            with self.subTest(want=want):
                assert_line(self, want, out)

    def test_fixture_statistics(self):
        want = (3.74, 7.36, "fx-tree", 4)
        self.assertEqual(self.stats(FIX)[0], want)
        self.assertEqual(printed_stats(self.published(FIX)), [want])

    def test_wrong_winner_said(self):
        assert_line(self, r"^winner g1: published ring, model ps: WRONG", self.published(path("swap.csv")))

    # fx-ps's servers on 4 threads that sum while the link runs: 0.4 + 16.671 ms of link + one 1 MiB slice's sum at
    # 0.03 ns/B / 4 (0.008 ms) = 17.079 ms; eff 100/117.079 = 0.8541, error 6.77%; the ring's rows keep theirs
    def test_server_line(self):
        out = self.published(path("cores.csv"))
        for want in (r"fx-ps .* k=4 c=4 .* 0.8541 +6.77%", r"fx-ring .* 0.8045 +3.14%", r"^winner g1: published ps, model ps: right"):
            with self.subTest(want=want):
                assert_line(self, want, out)

    # a row's framework says when its exchange starts: fx-tree's with none (after backward): 2 hosts 100 + 8.16 ms,
    # one host 100 + 1.14 ms; speedup 2 x 101.14/108.16 = 1.8702, error 3.90%
    def test_framework_none(self):
        out = self.published(path("ov.csv"))
        for want in (r"fx-tree +tree H=2 G=8 100G rdma none .* 1.8702 +3.90%", r"fx-hier .* 0.8696 +3.38%"):
            with self.subTest(want=want):
                assert_line(self, want, out)
        self.assertEqual(self.stats(path("ov.csv"))[0], (3.64, 4.10, "fx-ps", 4))
        self.assertEqual(printed_stats(out), [(3.64, 4.10, "fx-ps", 4)])

    # gradient accumulation: fx-tree exchanges once per 4 micro-batches of 100 ms, its one-host baseline once per 2, none
    # hidden: 2 hosts 4 x 100 + 8.16 ms, one host 2 x 100 + 1.14 ms; speedup 2 x (400/408.16) / (200/201.14) = 1.9712, error 9.51%
    def test_accumulation(self):
        out = self.published(path("acc.csv"))
        for want in (r"fx-tree +tree H=2 G=8 100G rdma none acc=4 .* 1.9712 +9.51%", r"fx-ring .* 0.8045 +3.14%"):
            with self.subTest(want=want):
                assert_line(self, want, out)
        self.assertEqual(self.stats(path("acc.csv"))[0], (3.74, 9.51, "fx-tree", 4))
        self.assertEqual(printed_stats(out), [(3.74, 9.51, "fx-tree", 4)])

    # --check: the fixture's rows without its '#' lines run through the fixture's assumptions and are reported apart
    def test_check_reported_apart(self):
        out = self.published(path("ov.csv"), "--check", path("chk.csv"))
        m = re.search(r"^independent check, through the assumptions above", out, re.M)
        self.assertTrue(m, out)
        assert_line(self, r"fx-tree +tree H=2 G=8 100G rdma ddp +speedup .* 1.9324 +7.36%", out[m.start():])
        self.assertEqual(self.stats(path("ov.csv"), path("chk.csv")), ((3.64, 4.10, "fx-ps", 4), (3.74, 7.36, "fx-tree", 4)))
        self.assertEqual(printed_stats(out[m.start():]), [(3.74, 7.36, "fx-tree", 4)])
        self.assertEqual(printed_stats(out[:m.end()]), [(3.64, 4.10, "fx-ps", 4)], "--check moved the --published table")

    # bound rows (what the source leaves unstated): the range over the transports with no overlap and its
    # framework's, inside or outside by its distance; listed apart, so a file of bounds alone has no statistics.
    # fx-ring: its own file's tcp line gives 0.8045 (the +3.14% above), the lower end: 0.78 is outside by 3.14%
    def test_bounds_only(self):
        out = self.published(path("bound.csv"))
        for want in (r"^no point whose setup its source states: no error statistics$",
                     r"^bound fx-ring \(ring H=4 G=1 100G tcp none; unstated: transport\): model 0\.8045\.\..* published 0.78: OUTSIDE by 3.14%$",
                     r"^bound fx-tree .* published 1.8: inside$", r"^winner g1: published ps, model ps: right"):
            with self.subTest(want=want):
                assert_line(self, want, out)
        self.assertEqual(printed_stats(out), [], "statistics over bounds")
        self.assertIsNone(self.stats(path("bound.csv"))[0], "statistics over bounds")


class Families(unittest.TestCase):
    """each family's signed error and band on the fixture, and a verdict its bands decide"""

    # By hand, from the fixture's comments (model / published - 1): fx-ring 0.8045 / 0.78 = +3.14%, fx-tree
    # 1.9324 / 1.8 = +7.36%, fx-hier 0.8696 / 0.9 = -3.38% (ring-like); fx-ps 0.8328 / 0.80 = +4.10% (ps-like).
    # ring-like: median +3.14%, worst +7.36%, 3 points; band down = median(3.14, 7.36, 0) = 3.14%, up =
    # median(0, 0, 3.38) = 0. ps-like: +4.10%, +4.10%, 1 point; band down 4.10%, up 0.
    WANT = {"ring-like": (3.14, 7.36, 3, (3.14, 0.0)), "ps-like": (4.10, 4.10, 1, (4.10, 0.0))}

    def test_fixture_families(self):
        got = published.families(published.bounded(published.compare(FIX)[0])[0])
        got = {f: (round(100 * m, 2), round(100 * w, 2), n, tuple(round(100 * x, 2) for x in b)) for f, (m, w, n, b) in got.items()}
        self.assertEqual(got, self.WANT)
        printed = {}
        for l in model(self, "--published", FIX).splitlines():
            if l.split(":")[0] in self.WANT:
                nums = [float(x) for x in re.findall(r"[-+]?\d+(?:\.\d+)?", l.split(":", 1)[1])]
                printed[l.split(":")[0]] = (nums[0], nums[1], int(nums[2]), (-nums[3], nums[4]))
        self.assertEqual(printed, self.WANT)

    def test_asymmetric_verdict(self):
        """where each family's band decides unlike the symmetric +-3.74% (the fixture's median absolute error)"""
        bands = published.median_error(FIX)[2]
        fam = {"tree": bands["ring-like"], "ps": bands["ps-like"]}
        sym = {d: (0.0374, 0.0374) for d in fam}
        # tree 1.0 s, ps 1.035 s: margin 3.5%. Bands: (1 + 0) / (1 - 0.0314) - 1 = 3.24%: decided. Symmetric: the
        # winner inside the runner-up's band (3.5% < 3.74%), and the bands overlapping (1.0374 / 0.9626 - 1 = 7.77%)
        win, second, margin, close, thr = published.verdict({"tree": 1.0, "ps": 1.035}, fam)
        self.assertEqual((win, second, round(100 * margin, 2), close, round(100 * thr, 2)), ("tree", "ps", 3.5, False, 3.24))
        v = published.verdict({"tree": 1.0, "ps": 1.035}, sym)
        self.assertEqual((v[3], round(100 * v[4], 2)), (True, 7.77))
        # ps 1.0 s, tree 1.04 s: margin 4%, over 3.74% (the symmetric rule decides), under 1 / (1 - 0.0410) - 1 = 4.28%:
        # the PS rows over-predicted more, the winner's band reaches the tree's: too close to call
        win, second, margin, close, thr = published.verdict({"tree": 1.04, "ps": 1.0}, fam)
        self.assertEqual((win, second, round(100 * margin, 2), close, round(100 * thr, 2)), ("ps", "tree", 4.0, True, 4.28))


class Shipped(unittest.TestCase):
    """the shipped points: at least 15 from at least 3 sources, every row cited (where, url, quote, what it assumed);
    the model names BytePS the winner over Horovod+NCCL, as published; Horovod's own figures go through --check only"""

    @classmethod
    def setUpClass(cls):
        scaling, horovod = os.path.join(DATA, "published-scaling.csv"), os.path.join(DATA, "published-horovod.csv")
        rc, cls.out, err = common.run([MODEL, "--published", scaling, "--check", horovod])
        assert rc == 0, "shipped points: " + cls.out + err
        cls.scaling, cls.horovod = scaling, horovod

    def test_winner(self):
        assert_line(self, r"^winner byteps-bert-256: published ps, model ps: right", self.out)

    # Horovod+NCCL's 0.70 (its transport and overlap unstated) is a bound: listed apart, its range over the transports
    # with no overlap and Horovod's fusion buckets holds 0.70, and its best case still loses to BytePS (the winner above)
    def test_bound(self):
        assert_line(self, r"^bound byteps-bert-256-nccl \(hier-host H=32 G=8 100G rdma horovod; unstated: transport; overlap\): "
                          r"model 0\.[0-6][0-9]*\.\.0\.[7-9][0-9]* .*published 0.70: inside$", self.out)

    def test_bound_not_among_points(self):
        self.assertNotRegex(self.out, re.compile(r"^byteps-bert-256-nc", re.M))

    # nvbert-dgx1-s128-4 by hand: 4 DGX-1 (8 GPUs), 680 MB of fp16 gradients, 16 sequences a micro-batch at 109.28/s (146.413 ms),
    # 128 micro-batches an all-reduce (configurations.yml), none hidden. Ring over 32 GPUs at the NIC's 400G x 0.88: 62 x 6.6 us +
    # 2 x 31/32 x 680e6 B x 8 / 352e9 = 30.352 ms: 128 c / (128 c + 30.352) = 0.998383; its 1-node baseline, 512 micro-batches,
    # inside the host on NVLink at 1200 Gbit/s: 14 x 6.6 us + 2 x 7/8 x 680e6 x 8 / 1.2e12 = 8.026 ms: 0.999893;
    # speedup 4 x 0.998383 / 0.999893 = 3.9940 against 3.53 published: 13.14%
    def test_nvbert_by_hand(self):
        assert_line(self, r"^nvbert-dgx1-s128-4 +ring H=4 G=8 400G rdma none acc=128 +speedup +3.53 +3.9940 +13.14%", self.out)

    # the median target on the published points (at most 10%); the worst (25%) is missed by one point, whose
    # setup its source does not state (docs/results/model-published-2026-11-28.md)
    def test_median_target(self):
        table = self.out.split("\nindependent check")[0]
        got = published.compare(self.scaling, self.horovod)
        self.assertLessEqual(error_stats(got[0])[0], 10)
        self.assertEqual(printed_stats(table), [error_stats(got[0])])

    def test_check_worst_is_horovod(self):
        check = error_stats(published.compare(self.scaling, self.horovod)[1])
        self.assertRegex(check[2], r"^hvd[a-z0-9-]*$")
        self.assertEqual(check[3], 15)
        self.assertEqual(printed_stats(self.out.split("\nindependent check")[1]), [check])

    # every NVIDIA row exchanges once per its configurations.yml job's GRADIENT_STEPS, and cites it
    def test_accumulation_cited(self):
        want = {"dgx1-s128-4": 128, "dgx1-s128-16": 32, "dgx1-s512-4": 256, "dgx1-s512-16": 64, "dgx2h-s128-4": 16, "dgx2h-s128-16": 4,
                "dgx2h-s128-64": 1, "dgx2h-s512-4": 64, "dgx2h-s512-16": 16, "dgx2h-s512-64": 4}
        rows = {r["id"]: r for r in results.read_rows(self.scaling, [])}
        for k, a in want.items():
            r = rows["nvbert-" + k]
            self.assertEqual(int(r["accumulation"]), a, k)
            self.assertIn("configurations.yml at NVIDIA/DeepLearningExamples 6fe463f", r["assumed"], k)
        for r in rows.values():
            self.assertTrue((r.get("accumulation") or "1") == "1" or "accumulation %s:" % r["accumulation"] in r["assumed"], r["id"])

    def test_citations(self):
        for p, least, sources in ((self.scaling, 15, 3), (self.horovod, 6, 1)):
            notes = []
            rows = results.read_rows(p, notes)
            self.assertGreaterEqual(len(rows), least, p)
            self.assertGreaterEqual(len({r["source"] for r in rows}), sources, p)
            for r in rows:
                for c in ("citation", "where", "url", "quote", "assumed"):
                    self.assertTrue(r[c].strip(), "%s: row %s has no %s" % (p, r["id"], c))
                self.assertTrue(r["source"] != "horovod" or p == self.horovod, "%s: Horovod's own figures belong in the check" % r["id"])
            self.assertTrue(any(x.startswith("# left out:") for x in notes), "%s: no '# left out' line" % p)


BAD = (
    ("--predict --model resnet51", "unknown model 'resnet51'"),
    ("--predict --model resnet50 --params 10", "alternatives"),
    ("--predict --link-rate fast", "--link-rate 'fast' is not a rate > 0"),
    ("--predict --link-rate 0g", "--link-rate '0g' is not a rate > 0"),
    ("--predict --intra-rate=-5gbit", "--intra-rate '-5gbit' is not a rate > 0"),
    ("--predict --link-rate nan", "--link-rate 'nan' is not a rate > 0"),
    ("--predict --gpus-per-host 0", "--gpus-per-host must be at least 1"),
    ("--predict --hosts 0", "--hosts must be at least 1"),
    ("--predict --framework mxnet", "--framework 'mxnet': no bucket defaults for it (none, ddp, horovod, byteps, tf-ps)"),
    ("--predict --framework none --bucket-mb 25", "--bucket-mb goes with a framework that has buckets, not --framework none"),
    ("--explain --framework horovod --compute-ms 1", "--framework and --bucket-mb go with --predict, --extrapolate or --advise"),
    ("--predict --bucket-mb 0", "--bucket-mb must be a number > 0"),
    ("--predict --bucket-mb 1e-320", "--bucket-mb must be a number > 0 (of one byte at least"),   # else n / size is inf
    ("--predict --bytes-per-param 3", "--bytes-per-param must be 4 (fp32) or 2 (fp16)"),
    ("--predict --topology star", "unknown topology 'star' (ring, hier, hier-host, tree, innet, ps, byteps)"),
    ("--predict --topology ps --hosts 4 --servers 5", "--servers must be in 1..--hosts=4"),
    ("--predict --gamma-ns-per-byte -1", "--gamma-ns-per-byte must be a number >= 0"),
    ("--predict --extrapolate", "--predict goes alone"),
    ("--published {fix} --explain --compute-ms 1", "--published goes alone"),
    ("--explain --topology tree -N 4 --compute-ms 1", "unknown topology 'tree' (ring or ps)"),
    ("--published {d}/none.csv", "none.csv: No such file"),
    ("--published {d}/nocite.csv", "row fx-tree: no citation"),
    ("--published {d}/topo.csv", "row fx-hier: unknown topology 'star'"),
    ("--published {d}/norate.csv", "row fx-hier: no single_gpu_rate"),
    ("--published {d}/noassume.csv", "row fx-tree: transport 'ib' is not tcp or rdma and has no '# assume' line"),
    ("--published {d}/nocol.csv", "no column single_gpu_rate"),
    ("--published {d}/half.csv", "row fx-ps: a number is missing, not positive, or not a whole count"),
    ("--published {d}/nocores.csv", "is not '# server,SOURCE,CORES (a whole count >= 1),WHERE'"),
    ("--predict --server-cores -1", "--server-cores must be >= 0"),
    ("--check {d}/chk.csv", "--check goes with --published"),
    ("--published {fix} --check {fix}", "sets nothing: its '# assume' and '# server' lines belong in the --published file"),
    ("--published {fix} --check {d}/none.csv", "--check {d}/none.csv: No such file"),
    ("--published {d}/fwbad.csv", "row fx-tree: framework 'mxnet' has no bucket defaults (none, ddp, horovod, byteps, tf-ps)"),
    ("--published {d}/fwnone.csv", "row fx-tree: no framework"),
    ("--published {fix} --check {d}/chkassume.csv", "chkassume.csv: sets nothing"),
    ("--published {fix} --check=", "--check needs a path"),
    ("--predict --transport ib", "argument --transport: invalid choice"),
    ("--predict --line-fraction 1.5", "--line-fraction must be a fraction in (0, 1]"),
    ("--predict --line-fraction 0", "--line-fraction must be a fraction in (0, 1]"),
    ("--published {fix} --transport tcp", "--transport and --line-fraction go with --predict, --extrapolate or --explain"),
    ("--constants --predict", "goes alone"),
    ("--published {d}/acc0.csv", "row fx-tree: accumulation '0' is not a whole count >= 1"),
    ("--published {d}/acchalf.csv", "row fx-tree: baseline_accumulation '2.5' is not a whole count >= 1"),
    ("--published {d}/accx.csv", "row fx-tree: accumulation 'x' is not a whole count >= 1"),
)


class BadInput(unittest.TestCase):
    """bad input: one line, exit 2 (each case its own test, numbered in the table's order)"""


def _bad_test(args, want):
    def test(self):
        common.refused(self, [MODEL] + args.format(d=DIR, fix=FIX).split(), want.format(d=DIR))
    test.__doc__ = "model %s: %s" % (args, want)
    return test


for _i, (_args, _want) in enumerate(BAD):
    _flags = "_".join(re.sub(r"\W", "", w) for w in _args.split() if w.startswith("--"))
    setattr(BadInput, "test_bad_%02d_%s" % (_i, _flags), _bad_test(_args, _want))


if __name__ == "__main__":
    common.main()
