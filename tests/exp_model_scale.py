"""exp_model_scale.py: the cost model at cluster scale (costmodel.cluster_parts, exposed, cluster_step)
against values computed by hand; with one GPU a host and no overlap it is the flat model to the last
digit; the tree and the ring cross where the hand says; psring model --predict and --extrapolate;
the table of constants. --published and the bad input of these commands: exp_model_published.py."""
import math
import os
import re
import shutil
import unittest

import common
from common import assert_line, read_text, sed
from psringlib import costmodel as cm
from psringlib import units

MODEL = os.path.join(common.EXPERIMENTS, "model")
X10 = ["--alpha-us", "10", "--line-fraction", "1"]   # the hand values' alpha and whole line; servers sum at gamma_server, 0.03 ns/B
DIR = None


def setUpModule():
    global DIR
    DIR = common.scratch()


def path(name):
    return os.path.join(DIR, name)


def model(test, *args):
    return common.run_ok(test, [MODEL] + [str(a) for a in args])


class Close:
    def close(self, a, b, what, rel=1e-12):
        self.assertLessEqual(abs(a - b), rel * max(abs(b), 1e-30), "%s: %.12g, want %.12g" % (what, a, b))


class ClusterParts(Close, unittest.TestCase):
    """n = 1e6 B, alpha 10 us, beta 1 ns/B (8 Gbit/s), beta_i 0.1 ns/B"""

    def parts(self, topo, H, G, want, **kw):
        got = cm.cluster_parts(topo, H, G, 1e6, 1e-5, 1e-9, kw.pop("beta_i", 1e-10), kw.pop("gamma", 0.0), **kw)
        for g, w, name in zip(got, want, ("latency", "bytes", "summing")):
            self.close(g, w, "%s H=%d G=%d %s" % (topo, H, G, name))

    def test_ring(self):
        self.parts("ring", 2, 4, (14e-5, 1.75e-3, 0))                   # 2x7 alpha; 2x7/8 n at the NIC's beta (the slowest edge)
        self.parts("ring", 1, 4, (6e-5, 1.5e-4, 0))                     # one host: every edge intra, 2x3/4 n beta_i

    def test_hier(self):   # 2(3+1) alpha; 2x3/4 n beta_i + 2x1/2 n beta; 7/8 n gamma
        self.parts("hier", 2, 4, (8e-5, 1.5e-4 + 1e-3, 8.75e-5), gamma=1e-10)

    def test_tree(self):
        self.parts("tree", 8, 1, (6e-5, 2e-3, 1e-4), gamma=1e-10)       # 2 log2 8 alpha; 2n beta; n gamma
        self.parts("tree", 2, 4, (8e-5, 2e-3, 0))                       # 2(1 + 3) alpha; 2n max(beta, beta_i)

    # the switch sums (costmodel's innet): n each way through the NIC whatever H, one message each way, 2 passes of 1 us
    def test_innet(self):
        self.assertEqual(cm.const("switch_pass"), 1.0)
        self.parts("innet", 8, 1, (2.2e-5, 1e-3, 0))                     # 2 alpha + 2 passes; n beta
        self.parts("innet", 64, 1, (2.2e-5, 1e-3, 0))                    # no term grows with H
        self.parts("innet", 4, 4, (8.2e-5, 1.15e-3, 7.5e-5), gamma=1e-10)  # 2(3+1) alpha + 2 passes; 2x3/4 n beta_i + n beta; 3/4 n gamma
        self.parts("innet", 1, 4, (6e-5, 1.5e-4, 0))                     # one host: hier's reduce and broadcast inside it

    def test_ps(self):
        self.parts("ps", 2, 4, (4e-5, 2e-3, 1e-4), gamma=1e-10, k=2)    # ps_time over 2 hosts, k=2, whole shards: n in, then n out
        self.parts("ps", 2, 4, (0, 1.5e-2, 0), beta_i=1e-8, k=2)        # a slow intra-host path: its reduce + broadcast, 2x3/4 n beta_i

    # BytePS' server, 4 threads summing while the link runs: the link (2 ms) outlasts the sum (1e6 x 0.1 ns / 4 = 25 us),
    # which adds one slice's sum (the whole shard, 5e5 x 0.1 ns / 4); at 10 ns/B on 2 threads the sum (5 ms) outlasts the
    # link, which adds one slice's arrival (5e5 x 1 ns)
    def test_ps_server_cores(self):
        self.parts("ps", 2, 4, (4e-5, 2e-3, 1.25e-5), gamma=1e-10, k=2, server_cores=4)
        self.parts("ps", 2, 4, (4e-5, 5e-4, 5e-3), gamma=1e-8, k=2, server_cores=2)

    def test_ps_slices(self):   # slices of 64 KiB: n + a fill of 2 slices through the link (ps_time's), then the last slice's sum
        self.parts("ps", 2, 4, (4e-5, 1e-3 + 2 * 65536e-9, 65536e-10 / 4), gamma=1e-10, k=2, slice_bytes=65536, server_cores=4)

    def test_one_gpu_exchanges_nothing(self):
        self.assertEqual(cm.cluster_parts("ps", 1, 1, 1e6, 1, 1, 1, 1, k=1), (0.0, 0.0, 0.0))


class FlatAtOneGpu(Close, unittest.TestCase):
    """G = 1: the flat formulas, to the last digit"""
    CASES = [(N, a, b, g) for N in (2, 3, 4, 8, 100) for a, b, g in ((1e-5, 8e-11, 0.0), (3.3e-5, 8e-10, 2.1e-12))]

    def test_ring(self):
        for N, a, b, g in self.CASES:
            self.assertEqual(sum(cm.cluster_parts("ring", N, 1, 4.1e5, a, b, 5 * b, g)), cm.ring_time(N, 4.1e5, a, b, g), N)

    def test_hier(self):
        for N, a, b, g in self.CASES:
            self.close(sum(cm.cluster_parts("hier", N, 1, 4.1e5, a, b, 5 * b, g)), cm.ring_time(N, 4.1e5, a, b, g), "hier G=1", 1e-15)

    def test_ps(self):
        for N, a, b, g in self.CASES:
            for S, k in ((0, 1), (0, N), (N, 0)):
                self.assertEqual(sum(cm.cluster_parts("ps", N, 1, 4.1e5, a, b, 5 * b, g, S, k, 65536)),
                                 cm.ps_time(N, 4.1e5, a, b, g, S, k, slice_bytes=65536), (N, S, k))

    def test_ps_pipelined_nothing_to_sum(self):   # nothing to sum: a server that sums pipelined is the flat PS
        for N, a, b, g in self.CASES:
            if g == 0:
                for S, k in ((0, 1), (0, N), (N, 0)):
                    self.assertEqual(sum(cm.cluster_parts("ps", N, 1, 4.1e5, a, b, 5 * b, g, S, k, 65536, 4)),
                                     cm.ps_time(N, 4.1e5, a, b, g, S, k, slice_bytes=65536), (N, S, k))

    def test_step_without_overlap(self):   # overlap 0: today's step
        for N, a, b, g in self.CASES:
            cal = {"alpha_s": a, "beta_s_per_byte": b, "gamma_s_per_byte": g}
            self.assertEqual(cm.cluster_step("ring", N, 1, 4.1e5, 0.02, a, b, b, g)[0], cm.step_time("ring", N, 4.1e5, cal, 0.02)[0], N)


class Overlap(Close, unittest.TestCase):
    # what backward (6 s) leaves of a 10 s exchange: in 4 buckets the last bucket (10/4) or the queue beyond
    # backward (10 - 6 x 3/4 = 5.5); pieces too small to count: what outlasts backward (4, or none)
    def test_exposed(self):
        self.close(cm.exposed(10, 6), 10, "no overlap")
        self.close(cm.exposed(10, 6, buckets=4), 5.5, "4 buckets: the queue")
        self.close(cm.exposed(2, 6, buckets=4), 0.5, "4 buckets: the last one")
        self.close(cm.exposed(10, 6, buckets=math.inf), 4, "streamed: backward hides at most itself")
        self.close(cm.exposed(2, 6, buckets=math.inf), 0, "streamed: all hidden")

    # each framework's buckets of 100 MiB, from its code's constant: DDP 25 MiB (4, fused), Horovod 64 MiB (2, fused),
    # BytePS 4096000 B (26 partitions that stream), TensorFlow's PS pieces too small to count, none: one after backward
    def test_framework_buckets(self):
        n = 100 * 2 ** 20
        want = {"ddp": (4, True), "horovod": (2, True), "byteps": (26, False), "tf-ps": (math.inf, False), "none": (1, False)}
        self.assertEqual({f: cm.buckets(f, n) for f in cm.FRAMEWORKS}, want)
        self.assertEqual(cm.buckets("horovod", n, 10 * 2 ** 20), (10, True), "a bucket size given")

    # shares in release order: 10 s of exchange under 6 s of backward, 0.75 then 0.25: the first ready at 4.5 s and
    # done at 12, the second ready at 6, done at 14.5: 8.5 s exposed
    def test_unequal_buckets(self):
        self.close(cm.exposed(10, 6, [0.75, 0.25]), 8.5, "two unequal buckets")

    # this trainer's --overlap on 784-768-768-768-10, the layers last first (7690, 590592, 590592, 602880 parameters):
    # the PS a layer each; the ring fuses until a bucket holds 4 MiB of float32 (1048576): 1188874, then 602880
    def test_release(self):
        n = 1791754
        self.assertEqual(cm.release("784,768,768,768,10", "ps"), [7690 / n, 590592 / n, 590592 / n, 602880 / n])
        self.assertEqual(cm.release("784,768,768,768,10", "ring"), [1188874 / n, 602880 / n])

    # a demo row run with --overlap (--compare): the ring on 4 hosts, T = 6 alpha + 1.5 x 4n beta = 10.8105 ms; backward
    # 20 ms makes the first bucket by 13.27 ms, which ends at 20.44 ms, after backward: T - 20 ms x 602880 / n exposed
    def test_row_time_overlap(self):
        n = 1791754
        row = dict(topology="ring", workers="4", servers="0", server_hosts="0", params=str(n), fp16="0", layers="784,768,768,768,10",
                   overlap="1")
        T = cm.ring_time(4, 4 * n, 1e-5, 1e-9, 0.0)
        self.close(cm.row_time(row, {"alpha_s": 1e-5, "beta_s_per_byte": 1e-9, "gamma_s_per_byte": 0.0}, 0.03)[1], T - 0.02 * 602880 / n,
                   "--compare, --overlap")

    def test_unknown_framework(self):
        with self.assertRaises(ValueError) as e:
            cm.buckets("mxnet", 100 * 2 ** 20)
        self.assertIn("framework 'mxnet' has no bucket defaults (none, ddp, horovod, byteps, tf-ps)", str(e.exception))

    def test_backward_share(self):
        self.close(cm.BACKWARD_SHARE, 2 / 3, "backward is 2/3 of compute")

    # buckets of 250 kB on 4 hosts: each pays its 6 alpha: 4 x (6e-5 + 1.5 x 2.5e5 x 1e-9) = 1.74 ms, of which
    # backward (2/3 of 3 ms) leaves max(0.435, 1.74 - 1.5) ms
    def test_bucketed_step(self):
        step, total, shown, _ = cm.cluster_step("ring", 4, 1, 1e6, 0.003, 1e-5, 1e-9, 1e-9, 0.0, framework="ddp", bucket_bytes=2.5e5)
        self.close(total, 1.74e-3, "bucketed total")
        self.close(shown, 4.35e-4, "bucketed exposed")
        self.close(step, 3.435e-3, "bucketed step")

    # streamed (BytePS' partitions of 2.5e5 B), the same 4 pieces: the messages once, 6e-5 + 1.5e-3 s, max(0.39, 1.56 - 1.5) ms
    def test_streamed_step(self):
        step, total, shown, _ = cm.cluster_step("ring", 4, 1, 1e6, 0.003, 1e-5, 1e-9, 1e-9, 0.0, framework="byteps", bucket_bytes=2.5e5)
        self.close(total, 1.56e-3, "streamed total")
        self.close(shown, 3.9e-4, "streamed exposed")

    # the tree against the ring, G = 1, n beta = 1 ms, alpha 10 us: ring - tree = 2(N-1-log2 N) alpha - 2 n beta / N,
    # positive from (N-1-log2 N) N > 100: N=12 gives 88.98, N=13 107.9: the tree wins from N = 13
    def test_tree_ring_crossover(self):
        wins = [N for N in range(2, 65) if sum(cm.cluster_parts("tree", N, 1, 1e6, 1e-5, 1e-9, 0, 0)) < cm.ring_time(N, 1e6, 1e-5, 1e-9, 0)]
        self.assertEqual(wins, list(range(13, 65)))

    # 4 micro-batches of 30 ms, the exchange of 1.31 ms in 2 buckets (hier, as --predict's hand value): the last backward
    # leaves the last bucket, 0.655 ms
    def test_accumulated_step(self):
        step, total, shown, _ = cm.accumulated_step(4, "hier", 2, 4, 1e6, 0.03, 1e-5, 1e-9, 1e-10, 0.0, framework="horovod",
                                                    bucket_bytes=2 ** 19)
        self.assertLess(abs(step - (4 * 0.03 + 0.655e-3)), 1e-15, step)
        self.assertLess(abs(total - 1.31e-3), 1e-15, total)
        self.assertLess(abs(shown - 0.655e-3), 1e-15, shown)

    def test_accumulated_step_of_one(self):
        self.assertEqual(cm.accumulated_step(1, "ring", 4, 1, 1e6, 0.02, 1e-5, 1e-9, 1e-9, 0.0),
                         cm.cluster_step("ring", 4, 1, 1e6, 0.02, 1e-5, 1e-9, 1e-9, 0.0))


class Predict(unittest.TestCase):
    def last(self, *args):
        return model(self, "--predict", *args).splitlines()[-1]

    def test_flat_ring_to_last_digit(self):   # one GPU a host and no overlap: costmodel's ring_time, to the last digit
        for H, rate, A, X in ((2, "10g", 10, 0), (4, "25Gbit", 3.5, 0.01), (64, "100gbit", 50, 0.002)):
            row = self.last("--topology", "ring", "--hosts", H, "--gpus-per-host", 1, "--framework", "none", "--model", "resnet50",
                            "--link-rate", rate, "--alpha-us", A, "--line-fraction", 1, "--gamma-ns-per-byte", X, "--compute-ms", 50)
            t = cm.ring_time(H, 25600000 * 4, A * 1e-6, 8 / units.rate_bps(rate), X * 1e-9) * 1e3
            want = "%.6f,%.6f,%.6f" % (t, t, 50 + t)
            self.assertRegex(row, "^" + re.escape("ring,%d,1,%d,25600000," % (H, H)) + ".*" + re.escape(",50.000000,%s," % want), (H, rate))

    # n = 1e6 B in 2 fused buckets of 0.5 MiB, each 2(3+1) x 10 us + 2x3/4 x 5e5 x 0.1 ns + 2x1/2 x 5e5 x 1 ns = 0.655 ms;
    # backward (20 ms) leaves the last: step 30.655 ms, 8 x 30/30.655
    def hier(self):
        return model(self, "--predict", "--topology", "hier", "--hosts", 2, "--gpus-per-host", 4, "--params", 250000, "--link-rate", "8g",
                     "--intra-rate", "80g", "--alpha-us", 10, "--line-fraction", 1, "--framework", "horovod", "--bucket-mb", 0.5,
                     "--compute-ms", 30).splitlines()

    def test_header(self):
        self.assertEqual(self.hier()[0], "topology,hosts,gpus_per_host,workers,params,link_rate,compute_ms,exchange_ms,exposed_ms,step_ms,"
                                         "speedup,efficiency")

    def test_hier(self):
        self.assertEqual(self.hier()[-1], "hier,2,4,8,250000,8gbit,30.000000,1.310000,0.655000,30.655000,7.8291,0.9786")

    # hier-host, Horovod 0.16's: hier's 1.23 ms, each GPU's n/4 to host memory and back over PCIe 3 x16
    # (2 x 2.5e5 B x 8 / 126.03 Gbit/s = 31.738 us), the hosts' CPUs summing (H-1)/H x n/4 at 1 ns/B (125 us)
    def test_hier_host(self):
        out = self.last("--topology", "hier-host", "--hosts", 2, "--gpus-per-host", 4, "--params", 250000, "--link-rate", "8g",
                        "--intra-rate", "80g", "--alpha-us", 10, "--line-fraction", 1, "--framework", "none", "--gamma-ns-per-byte", 1,
                        "--compute-ms", 30)
        self.assertTrue(out.startswith("hier-host,2,4,8,250000,8gbit,30.000000,1.386738,"), out)

    # tcp's line at a link rate: at most one stream's 14.8 Gbit/s: at 100 Gbit/s 0.148 (2 x 30.1 us + 8e6 / 14.8e9 s
    # = 600.741 us), at 10 Gbit/s the framing's 1448/1538 (60.2 us + 8e6 / 9.41482e9 s = 909.924 us)
    def test_tcp_line(self):
        for rate, want in (("100g", "0.600741"), ("10g", "0.909924")):
            out = self.last("--topology", "ring", "--hosts", 2, "--gpus-per-host", 1, "--params", 250000, "--link-rate", rate, "--transport", "tcp",
                            "--framework", "none", "--compute-ms", 30)
            self.assertEqual(out.split(",")[7], want, rate)

    # a PS on 2 hosts and 2 server hosts, whole shards, servers summing at 1 ns/B: after the link on one core
    # 4 x 10 us + 2e6 B x 1 ns + 1e6 B x 1 ns = 3.04 ms; on 4 threads while the link runs 0.04 + 2 + 5e5 x 1 ns / 4 = 2.165 ms
    def test_ps_server_cores(self):
        for cores, want in ((0, "3.040000"), (4, "2.165000")):
            out = self.last("--topology", "ps", "--hosts", 2, "--gpus-per-host", 1, "--server-hosts", 2, "--params", 250000, "--link-rate", "8g",
                            "--alpha-us", 10, "--line-fraction", 1, "--framework", "none", "--compute-ms", 30, "--ps-chunk-kb", 0,
                            "--gamma-ns-per-byte", 1, "--server-cores", cores)
            self.assertTrue(out.startswith("ps,2,1,2,250000,8gbit,30.000000,%s,%s," % (want, want)), (cores, out))

    # --transport: the transport's alpha and line fraction unless flags say otherwise; rdma by default. The ring on 2 hosts
    # of one GPU, 1e6 B, 8 Gbit/s, none hidden: tcp 2 x 30.1 us + 1e6 x 8 / (8e9 x 1448/1538) = 1.122355 ms; rdma
    # 2 x 6.6 us + 1e6 / 0.88 ns = 1.149564 ms; the same as rdma with its constants given as flags
    def pr(self, *args):
        return self.last("--topology", "ring", "--hosts", 2, "--gpus-per-host", 1, "--params", 250000, "--link-rate", "8g", "--framework",
                         "none", "--compute-ms", 30, *args).split(",")[7]

    def test_transport_tcp(self):
        self.assertEqual(self.pr("--transport", "tcp"), "1.122355")

    def test_transport_rdma(self):
        self.assertEqual(self.pr("--transport", "rdma"), "1.149564")

    def test_transport_default_rdma(self):
        self.assertEqual(self.pr(), "1.149564")

    def test_transport_flags_override(self):
        self.assertEqual(self.pr("--transport", "tcp", "--alpha-us", 6.6, "--line-fraction", 0.88), "1.149564")


class Extrapolate(unittest.TestCase):
    # --extrapolate, resnet50 on hosts of 8 GPUs at 100 Gbit, 4 buckets (25 MiB) under backward (2/3 of 100 ms):
    # hand: at 16 GPUs the ring pays 2 x 15/16 x 8.19 ms at the NIC, hier 1.43 + 8.19 ms; at 128 hier pays
    # 1.76 + 1.43 + 15.36 = 18.55 ms, the tree 0.88 + 16.38 = 17.26 ms (at 64: hier 16.89, tree 17.18)
    @classmethod
    def setUpClass(cls):
        cls.fig = os.path.join(DIR, "fig")
        rc, cls.out, err = common.run([MODEL, "--extrapolate"] + X10 + ["--out", cls.fig])
        assert rc == 0, "--extrapolate: " + cls.out + err

    def test_eight_to_1024_gpus(self):
        self.assertEqual(len(re.findall(r"^ +[0-9]+ ", self.out, re.M)), 8, self.out)

    # from 32 GPUs one server host a worker host (n through each NIC) beats hier's 2(H-1)/H n; at 128 its 3.07 ms of summing
    # (102 MB x 0.03 ns/B) against the tree's latency hands it to the tree
    def test_winners(self):
        assert_line(self, r"^winner changes: ring -> hier at 16 GPUs \(bytes .*; hier -> ps-H at 32 GPUs \(bytes .*; ps-H -> tree at 128 GPUs"
                          r" \(server CPU", self.out)

    def test_figure_png(self):
        with open(os.path.join(self.fig, "extrapolate.png"), "rb") as f:
            self.assertIn(b"PNG", f.read(4))

    def test_figure_svg(self):
        self.assertIn("<svg", read_text(os.path.join(self.fig, "extrapolate.svg")))

    # on 25 Gbit links ps-H holds 32 to 128 GPUs, its summing the tree's margin at 256 on one core, not on 4 threads that sum
    # while the link runs (the 3.07 ms hide under 32.8 ms of link)
    def test_25gbit_server_cpu(self):
        assert_line(self, r"; hier -> ps-H at 32 GPUs \(bytes .*; ps-H -> tree at 256 GPUs \(server CPU",
                    model(self, "--extrapolate", *X10, "--link-rate", "25gbit"))

    def test_25gbit_server_cores(self):
        assert_line(self, r"; hier -> ps-H at 32 GPUs \(bytes .*; ps-H -> tree at 256 GPUs \(latency",
                    model(self, "--extrapolate", *X10, "--link-rate", "25gbit", "--server-cores", 4))

    def test_transport_tcp_alpha(self):
        self.assertIn("alpha 30.1 us", model(self, "--extrapolate", "--transport", "tcp", "--link-rate", "25gbit").splitlines()[0])

    # --explain with a transport: its constants at --link-rate, no calibration file (ring, N 2, 1e6 B at 8 Gbit/s, gamma 0.03 ns/B x 5e5)
    def test_explain_transport(self):
        assert_line(self, r"^exchange 1\.14 ms", model(self, "--explain", "--transport", "tcp", "--link-rate", "8g", "-N", 2, "--params", 250000,
                                                      "--compute-ms", 30, "--calibration", path("none.csv")))


class Constants(unittest.TestCase):
    """every entry has a value, a unit and a source (measured, cited or assumed); the code reads each name
    it names through const(), and every entry is read (the transports', intra paths' and models' by their prefix)"""

    def test_table_checks(self):
        self.assertEqual(cm.constants_check(cm.CONSTANTS), [])

    def test_bad_entries_named(self):
        for bad in ({"x": (1.0, "", "cited: a")}, {"x": (1.0, "us", "")}, {"x": (1.0, "us", "a page")}, {"x": ("1", "us", "cited: a")},
                    {"x": (1.0, "us")}):
            self.assertEqual(cm.constants_check(dict(cm.CONSTANTS, **bad)), ["x"], bad)

    def test_printed_in_order(self):
        printed = [l.split()[0] for l in model(self, "--constants").splitlines()[1:]]
        self.assertEqual(printed, list(cm.CONSTANTS))

    def code(self):
        return read_text(MODEL) + read_text(os.path.join(common.EXPERIMENTS, "psringlib", "costmodel.py"))

    def named(self):
        named = set(re.findall(r'const\("([a-z0-9_-]+)"\)', self.code()))
        return named | {c for c, _ in cm.FRAMEWORKS.values() if c}   # the frameworks' buckets, read through buckets()

    def test_named_are_in_table(self):
        self.assertLessEqual(self.named(), set(cm.CONSTANTS), self.named() - set(cm.CONSTANTS))

    def test_every_entry_read(self):
        named = self.named()
        unread = [n for n in cm.CONSTANTS if n not in named and not n.startswith(("alpha_", "line_", "intra_", "params_"))]
        self.assertEqual(unread, [], "in the table, read by nothing")

    def test_no_constant_outside_table(self):
        self.assertNotRegex(self.code(), r'GAMMA_PS_NS|"--alpha-us", float, 10|"1000gbit"')

    def test_unitless_entry_refused(self):
        lib = os.path.join(common.scratch(), "lib")
        os.makedirs(os.path.join(lib, "psringlib"))
        src = os.path.join(common.EXPERIMENTS, "psringlib")
        for f in os.listdir(src):
            if f.endswith(".py"):
                shutil.copy(os.path.join(src, f), os.path.join(lib, "psringlib", f))
        cmp = os.path.join(lib, "psringlib", "costmodel.py")
        edited = sed(read_text(cmp), (r'^    "gamma_gpu": \(0\.0, "ns/B summed",', '    "gamma_gpu": (0.0, "",'))
        self.assertNotEqual(edited, read_text(cmp), "no gamma_gpu entry to edit")
        with open(cmp, "w") as f:
            f.write(edited)
        shutil.copy(MODEL, os.path.join(lib, "model"))   # beside the edited package, which it imports from its own folder
        common.refused(self, ["python3", os.path.join(lib, "model"), "--constants"], "constant gamma_gpu has no unit or no source")


if __name__ == "__main__":
    common.main()
