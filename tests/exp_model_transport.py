"""exp_model_transport.py: TCP as users run it. costmodel.line_at with S streams (each stream_tcp, the whole at most
line_tcp) by hand; psring model --tcp-streams S and --aws give the line fraction of S streams (NCCL's auto-detection:
1 by default, 16 on AWS); a published row's tcp_streams sets its own; bad input: one line, exit 2."""
import os
import re
import unittest

import common
from common import read_text, write_text
from psringlib import costmodel as cm

MODEL = os.path.join(common.EXPERIMENTS, "model")
FIX = os.path.join(common.FIXTURES, "published_small.csv")
TCP = ["--predict", "--transport", "tcp", "--link-rate", "100gbit", "--hosts", "4", "--gpus-per-host", "8"]


def exchange_ms(test, *args):
    """--predict's exchange_ms for ARGS"""
    out = common.run_ok(test, [MODEL] + TCP + [str(a) for a in args]).splitlines()
    return float(dict(zip(out[0].split(","), out[1].split(",")))["exchange_ms"])


class LineAt(unittest.TestCase):
    """at 100 Gbit/s: S x 14.8 Gbit/s of the link, at most TCP's payload over Ethernet, 1448/1538"""

    def test_streams(self):
        for S, want in ((1, 0.148), (4, 0.592), (6, 0.888), (7, 1448 / 1538), (16, 1448 / 1538)):
            with self.subTest(S=S):
                self.assertAlmostEqual(cm.line_at("tcp", cm.const("line_tcp"), 100e9, S), want, places=12)

    def test_rdma_has_no_streams(self):
        self.assertEqual(cm.line_at("rdma", 0.88, 100e9, 4), 0.88)

    def test_nccl_defaults(self):
        self.assertEqual((cm.const("tcp_streams"), cm.const("tcp_streams_aws")), (1, 16))


class Flags(unittest.TestCase):
    """--predict's exchange with S streams is its exchange at that line fraction"""

    def test_default_one_stream(self):
        self.assertEqual(exchange_ms(self), exchange_ms(self, "--line-fraction", 0.148))

    def test_four_streams(self):
        got = exchange_ms(self, "--tcp-streams", 4)
        self.assertEqual(got, exchange_ms(self, "--line-fraction", 0.592))
        self.assertLess(got, exchange_ms(self))

    def test_aws(self):   # 16 streams: the line's payload, 1448/1538
        self.assertEqual(exchange_ms(self, "--aws"), exchange_ms(self, "--tcp-streams", 16))
        self.assertEqual(exchange_ms(self, "--aws"), exchange_ms(self, "--line-fraction", 1448 / 1538))

    def test_advise_states_streams(self):
        out = common.run_ok(self, [MODEL, "--advise", "--hosts", "2", "--gpus-per-host", "1", "--model", "resnet50", "--compute-ms", "100",
                                   "--link-rate", "100gbit", "--transport", "tcp", "--tcp-streams", "3"])
        line = out.splitlines()[1]
        self.assertRegex(line, r"tcp 3 stream", line)
        self.assertIn("0.444 of the 100Gbit line", line)   # 3 x 14.8 / 100


class PublishedRow(unittest.TestCase):
    """the fixture's tcp rows (fx-ring, fx-ps, fx-hier: 100 Gbit/s) with a tcp_streams column and without its '# assume,tcp'
    line (the constants', capped at the streams), against an '# assume' line of the same line fraction (taken as it says)"""

    def published(self, streams, assume=None):
        lines = [l for l in read_text(FIX).rstrip("\n").split("\n") if not l.startswith("# assume,tcp,")]
        out = [l + ",tcp_streams" if l.startswith("id,") else l + "," + streams if l.startswith("fx-") else l for l in lines]
        if assume:
            out.insert(0, "# assume,tcp,%g,%r,the same line" % (cm.const("alpha_tcp"), assume))
        path = os.path.join(common.scratch(), "pts.csv")
        write_text(path, "\n".join(out) + "\n")
        text = common.run_ok(self, [MODEL, "--published", path])
        return {m[0]: float(m[1]) for m in re.findall(r"^(fx-\S+) .* (\d+\.\d+) +[\d.]+%$", text, re.M)}

    def test_four_streams(self):
        self.assertEqual(self.published("4"), self.published("", assume=0.592))

    def test_empty_is_one(self):
        self.assertEqual(self.published(""), self.published("1"))
        self.assertNotEqual(self.published("1"), self.published("4"))

    def test_bad_count(self):
        for v in ("0", "1.5", "x"):
            with self.subTest(v=v):
                path = os.path.join(common.scratch(), "bad.csv")
                lines = read_text(FIX).rstrip("\n").split("\n")
                write_text(path, "\n".join(l + ",tcp_streams" if l.startswith("id,") else l + "," + v if l.startswith("fx-") else l for l in lines) + "\n")
                common.refused(self, [MODEL, "--published", path], "row fx-ring: a number is missing, not positive, or not a whole count")


class Huge(unittest.TestCase):
    """a gradient of 1e29 or 1e16 parameters is many buckets, not a list of them: a row, no traceback"""

    def test_params(self):
        for P in ("100000000000000000000000000000", "10000000000000000"):
            with self.subTest(P=P):
                self.assertGreater(exchange_ms(self, "--params", P), 1e6)

    def test_equal_buckets_closed_form(self):   # the closed form against the loop over the same equal shares
        for total, back, m in ((1.0, 3.0, 4), (5.0, 2.0, 7), (2.0, 2.0, 1)):
            self.assertAlmostEqual(cm.exposed(total, back, m), cm.exposed(total, back, [1 / m] * m), places=12)


class BadInput(unittest.TestCase):
    def test_refused(self):
        for args, want in (("--tcp-streams 0", "--tcp-streams must be at least 1: got 0"), ("--tcp-streams -2", "--tcp-streams must be at least 1"),
                           ("--tcp-streams two", "argument --tcp-streams: invalid int value: 'two'"),
                           ("--aws --tcp-streams 2", "--tcp-streams S or --aws (one) goes with --transport tcp"),
                           ("--transport rdma --tcp-streams 4", "--tcp-streams S or --aws (one) goes with --transport tcp"),
                           ("--transport udp", "argument --transport: invalid choice: 'udp'"),
                           ("--framework mxnet", "--framework 'mxnet': no bucket defaults for it")):
            with self.subTest(args=args):
                common.refused(self, [MODEL] + TCP + args.split(), want)


if __name__ == "__main__":
    common.main()
