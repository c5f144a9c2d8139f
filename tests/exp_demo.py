"""exp_demo.py: psring demo's pieces that need no emulated hosts: the dilation correction (every time
/ D, throughput x D), a step's compute from a timeline, when a run's hosts get their CPU quota, a
Ctrl-C on them, the MNIST subset, a time-to-accuracy run's points, a failed run's reason, --loopback
and bad flags (one line, exit 2). The plan, the verdict and the figures: exp_demo_plan.py,
exp_demo_verdict.py, exp_demo_figures.py. The hosts are fakes: nothing here brings up a cluster or a
network namespace."""
import contextlib
import io
import json
import os
import re
import shlex
import signal
import struct
import unittest

import common
from common import read_text
from demo_fixture import Run
from psringlib import results
from psringlib.demo import hosts, plan, runs

DEMO = os.path.join(common.EXPERIMENTS, "demo")
SUMMARY = ("summary: ps, 4 workers, global batch 4096: test accuracy 90.50%, final loss 0.3753, 134799 samples/s, step 30.458 ms = "
           "data 0.353 + compute 25.688 + exchange 4.353 (wait 0.000) + optimizer 0.188 (+ other), wall 1.2s")


class FakeHosts:
    """hosts.cluster replaced for the test's class (what it was put back after)"""

    @classmethod
    def setUpClass(cls):
        cls.saved_cluster = hosts.cluster

    @classmethod
    def tearDownClass(cls):
        hosts.cluster = cls.saved_cluster


class BadFlags(unittest.TestCase):
    """bad flags: one line, exit 2"""


def _bad_flag(args):
    def test(self):
        common.refused(self, [DEMO] + args.split(), "")
    return test


for _args in ("--dilation 0", "--dilation x", "--repeats 0", "--rate fast", "--bogus", "--steps"):
    setattr(BadFlags, "test_" + re.sub(r"\W+", "_", _args).strip("_"), _bad_flag(_args))


class EndLine(unittest.TestCase):
    """the trainer's summary line the time-to-accuracy figure ends each curve with; an epoch line is not one"""

    def test_summary_line(self):
        self.assertEqual(runs.END_RE.match(SUMMARY).group("acc", "loss", "elapsed"), ("90.50", "0.3753", "1.2"))

    def test_epoch_line_is_not(self):
        self.assertIsNone(runs.END_RE.match("epoch   2/4  step      64  loss 0.2961  samples/s     19179  elapsed 0.8s"))


class DilationCorrection(unittest.TestCase):
    def setUp(self):
        self.raw = {c: "80" for c in runs.TIMES}
        self.raw.update(wall_s="16", samples_per_s="1000", topology="ring")
        self.fixed = runs.correct(self.raw, 8)

    def test_times_divided(self):
        self.assertEqual({c: float(self.fixed[c]) for c in runs.TIMES}, {c: 10.0 for c in runs.TIMES})

    def test_wall_divided(self):
        self.assertEqual(float(self.fixed["wall_s"]), 2.0)

    def test_throughput_multiplied(self):
        self.assertEqual(float(self.fixed["samples_per_s"]), 8000.0)

    def test_input_unchanged(self):
        self.assertEqual(self.raw["step_ms"], "80", "correct() changed its input")


class QuotaGating(FakeHosts, unittest.TestCase):
    """a run on the emulated hosts: quotas off for the start-up, on from the trainer's header to its
    summary line, on again when the run ends, also when it fails before training"""

    def setUp(self):
        self.calls = []
        hosts.cluster = lambda *a, check=True: self.calls.append(a)

    def test_quota_around_training(self):
        rc, out, err = runs.train(["sh", "-c", "echo starting; echo 'psring-train: topology ring'; echo step; echo 'summary: ring'; echo bye;"
                                   " exit 0", "--cluster"], 8)
        self.assertEqual(rc, 0)
        self.assertEqual(out.splitlines()[-1], "bye")
        self.assertEqual(self.calls, [("quota", "off"), ("quota", "on"), ("quota", "off"), ("quota", "on")])

    def test_quota_back_on_failure(self):
        rc, out, err = runs.train(["sh", "-c", "echo oops >&2; exit 3", "--cluster"], 8)
        self.assertEqual(rc, 3)
        self.assertEqual(err.strip(), "oops")
        self.assertEqual(self.calls, [("quota", "off"), ("quota", "on")])

    def test_no_quota_off_cluster(self):
        rc, out, err = runs.train(["sh", "-c", "echo 'psring-train: topology ring'"], 1)
        self.assertEqual(rc, 0)
        self.assertEqual(self.calls, [])


class Interrupt(FakeHosts, unittest.TestCase):
    """Ctrl-C in a straggler's run: what the run undoes on the hosts (the quotas on, the straggler's
    share back to 1) reaches them before they go down; then exit 130 with one line, not the
    complaint of a cluster command run after the hosts were gone"""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.saved_signals = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        out = common.scratch()
        calls, up = [], []

        def fake_cluster(*a, check=True):
            calls.append(a)
            if a[0] in ("up", "down"):
                up[:] = [1] if a[0] == "up" else []
            elif not up and check:
                raise RuntimeError("psring cluster %s: no cluster is up" % " ".join(map(str, a)))
        hosts.cluster = fake_cluster

        def work(made):
            hosts.cluster("up", 4)
            made.append(4)
            runs.one(Run("ring", "ring", 4, straggler=0.5), ["sh", "-c", "kill -INT $PPID; sleep 5", "--cluster", "--steps", "1"],
                     {"sweep_id": "demo", "repeat": 1, "command": "x"}, dict(rate="1gbit"), os.path.join(out, "int.csv"),
                     os.path.join(out, "int.epochs.csv"), 8)
        err = io.StringIO()
        cls.code = None
        try:
            with contextlib.redirect_stderr(err):
                hosts.on_hosts(work)
        except SystemExit as e:
            cls.code = e.code
        cls.err, cls.calls = err.getvalue(), calls
        cls.after = signal.getsignal(signal.SIGINT)

    @classmethod
    def tearDownClass(cls):
        for s, h in cls.saved_signals.items():
            signal.signal(s, h)
        super().tearDownClass()

    def test_exit_130(self):
        self.assertEqual(self.code, 130)

    def test_one_line(self):
        self.assertEqual(self.err, "psring demo: interrupted; the emulated hosts are down\n")

    def test_undone_before_down(self):
        self.assertEqual(self.calls, [("up", 4), ("share", "h3", 0.5), ("quota", "off"), ("quota", "on"), ("share", "h3", 1), ("down",)])

    def test_sigint_default_after(self):
        self.assertEqual(self.after, signal.SIG_DFL)


class Timeline(unittest.TestCase):
    """a step's compute from a timeline: the first worker's data + forward + backward between two
    exchange calls, / D, the WARM first steps left out; a PS server's phases do not count"""

    def test_step_samples(self):
        tl = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "rank 0: server 0"}},
              {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "rank 1: worker 0, local rank 0"}}]
        t = 0.0
        for step in range(5):
            for name, dur in (("data", 800.0), ("forward", 4000.0 + 800 * step), ("backward", 8000.0), ("exchange", 5000.0)):
                tl.append({"name": name, "ph": "X", "pid": 1, "tid": 0, "ts": t, "dur": dur})
                if name == "exchange":
                    tl.append({"name": "push", "ph": "X", "pid": 1, "tid": 0, "ts": t, "dur": 1000.0})
                    tl.append({"name": "server-apply", "ph": "X", "pid": 0, "tid": 0, "ts": t + 100, "dur": 3000.0})
                t += dur
        p = os.path.join(common.scratch(), "tl.json")
        with open(p, "w") as f:
            json.dump({"traceEvents": tl}, f)
        got = runs.step_samples(p, 8)
        want = [(800 + 4000 + 800 * s + 8000) / 1e3 / 8 for s in range(plan.WARM, 5)]
        self.assertEqual(len(got), len(want), got)
        self.assertTrue(all(abs(a - b) < 1e-9 for a, b in zip(got, want)), (got, want))


class SubsetMnist(unittest.TestCase):
    """the MNIST subset: made once, made again when it holds another count (--validate's test set is
    smaller) or a file cut short"""

    def setUp(self):
        d = common.scratch()
        self.src, self.dst = os.path.join(d, "mn"), os.path.join(d, "mn-sub")
        os.makedirs(self.src)
        for split in ("train", "t10k"):
            with open(os.path.join(self.src, split + "-images-idx3-ubyte"), "wb") as f:
                f.write(struct.pack(">IIII", 2051, 6, 28, 28) + bytes(range(6)) * 784)
            with open(os.path.join(self.src, split + "-labels-idx1-ubyte"), "wb") as f:
                f.write(struct.pack(">II", 2049, 6) + bytes(range(6)))

    def count(self, name):
        with open(os.path.join(self.dst, name), "rb") as f:
            return struct.unpack(">I", f.read(8)[4:8])[0]

    def test_made(self):
        runs.subset_mnist(self.src, self.dst, 5, 2)
        self.assertEqual((self.count("train-images-idx3-ubyte"), self.count("t10k-labels-idx1-ubyte")), (5, 2))

    def test_remade_for_another_count(self):
        runs.subset_mnist(self.src, self.dst, 5, 2)
        runs.subset_mnist(self.src, self.dst, 5, 4)
        self.assertEqual((self.count("t10k-images-idx3-ubyte"), self.count("t10k-labels-idx1-ubyte")), (4, 4))
        self.assertEqual(os.path.getsize(os.path.join(self.dst, "t10k-images-idx3-ubyte")), 16 + 4 * 784)

    def test_remade_when_cut_short(self):
        runs.subset_mnist(self.src, self.dst, 5, 4)
        with open(os.path.join(self.dst, "train-labels-idx1-ubyte"), "wb") as f:
            f.write(b"\0\0")
        runs.subset_mnist(self.src, self.dst, 5, 4)
        self.assertEqual(self.count("train-labels-idx1-ubyte"), 5)


class AccuracyPoints(FakeHosts, unittest.TestCase):
    """a time-to-accuracy run's points as the figure reads them: worker 0's copies (the job is asked for them
    every TTA_EVERY steps), tested after the job by psring train --eval-snapshots (here a stand-in that
    prints their CSV), accuracy in %, then the budget's end (the summary line: the final parameters'
    accuracy at the job's wall time), times / D; the copies' file is gone afterwards"""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        hosts.cluster = lambda *a, check=True: None
        cls.out = out = common.scratch()
        line = ("for a; do [ \"${prev:-}\" = --snapshots ] && echo copies > \"$a\"; [ \"${prev:-}\" = --csv ] && csv=$a; prev=$a; done; "
                "echo '" + SUMMARY + "'; "
                "printf 'topology,workers,steps,step_ms,data_ms,compute_ms,exchange_ms,wait_ms,optimizer_ms,wall_s,samples_per_s\\n"
                "ps,4,36,30,0.4,25,4,0,0.2,1.2,130000\\n' > \"$csv\"")
        cls.ev = ev = os.path.join(out, "eval.sh")
        with open(ev, "w") as f:
            f.write("#!/bin/sh\necho \"$@\" >> %s.args\nprintf 'step,elapsed_s,test_accuracy\\n0,0.000001,0.0825\\n3,0.4,0.6150\\n6,0.8,0.8012\\n'\n"
                    % ev)
        os.chmod(ev, 0o755)
        saved, runs.PSRING = runs.PSRING, ev
        try:
            for sync in ("async", "bsp"):
                runs.one(Run("ps, 4 server hosts", "ps", 4, 4, 4, sync, 1.0, True), ["sh", "-c", line, "job", "--data", "d"],
                         {"sweep_id": "demo", "repeat": 1, "command": sync}, dict(rate="1gbit"), os.path.join(out, "e.csv"),
                         os.path.join(out, "e.epochs.csv"), 4)
        finally:
            runs.PSRING = saved
        cls.args = read_text(ev + ".args").split()

    def test_points(self):
        eps = [(e["sync"], e["epoch"], e["step"], e["elapsed_s"], e["test_accuracy"], e["loss"])
               for e in results.read_rows(os.path.join(self.out, "e.epochs.csv"))]
        want = [("", "0", "0.000", "8.25", ""), ("", "3", "0.100", "61.50", ""), ("", "6", "0.200", "80.12", ""), ("end", "", "0.300", "90.50", "0.3753")]
        self.assertEqual(eps, [(s,) + w for s in ("async", "bsp") for w in want])

    def test_eval_command(self):
        self.assertEqual(self.args[:2], ["train", "--topology"])

    def test_eval_reads_the_copies(self):
        self.assertEqual(self.args[self.args.index("--eval-snapshots") + 1], os.path.join(self.out, "e.csv.snapshots"))

    def test_eval_data_and_layers(self):
        self.assertEqual(self.args[self.args.index("--data") + 1], "d")
        self.assertEqual(self.args[self.args.index("--layers") + 1], plan.LAYERS)

    def test_copies_removed(self):
        self.assertFalse(os.path.exists(os.path.join(self.out, "e.csv.snapshots")))


class FailureReason(unittest.TestCase):
    """the reason is the line that says why, not mpirun's rules of dashes or its generic notice"""
    DASHES = "-" * 74

    def test_signal_notice(self):
        d = self.DASHES
        self.assertTrue(runs.failure("%s\nPrimary job terminated normally\n%s\nmpirun noticed that process rank 2 with PID 0 on node h2"
                                     " exited on signal 9 (Killed).\n%s\n" % (d, d, d), 137).startswith("mpirun noticed that process rank 2"))

    def test_trainer_line(self):
        d = self.DASHES
        self.assertEqual(runs.failure("psring-train: ps: worker 2 silent for 3 s\n%s\nmpirun detected that one or more processes exited"
                                      " with non-zero status\n%s" % (d, d), 1), "psring-train: ps: worker 2 silent for 3 s")

    def test_signals_by_name(self):
        self.assertEqual(runs.failure("", 137), "killed by signal 9 (SIGKILL)")
        self.assertEqual(runs.failure("", -15), "killed by signal 15 (SIGTERM)")

    def test_exit_status(self):
        self.assertEqual(runs.failure(self.DASHES, 3), "exit 3")

    def test_timed_out(self):
        self.assertEqual(runs.failure("mpirun noticed that process rank 0 with PID 1 on node h1 exited on signal 15 (Terminated).\ntimed out\n",
                                      124), "timed out")


class Loopback(unittest.TestCase):
    """--loopback (also what runs without root): the sweep (a stub launcher hands back the fixture
    sweep), then plot and summary, every figure and the verdict labelled loopback; the demo looks for
    MNIST before it starts, so without it the check cannot run here"""

    @classmethod
    def setUpClass(cls):
        common.need_program("gnuplot")
        common.need_mnist()
        d = common.scratch()
        stub = os.path.join(d, "stub")
        with open(stub, "w") as f:
            f.write("#!/bin/bash\ncase $1 in\n"
                    "  sweep) while [[ $# -gt 0 ]]; do [[ $1 == --csv ]] && cp %s \"$2\"; shift; done ;;\n"
                    "  plot) shift; exec %s \"$@\" ;;\n  *) exit 9 ;;\nesac\n"
                    % (shlex.quote(os.path.join(common.FIXTURES, "sweep_small.csv")), shlex.quote(os.path.join(common.EXPERIMENTS, "plot"))))
        os.chmod(stub, 0o755)
        cls.lb = os.path.join(d, "lb")
        cls.rc, out, err = common.run([DEMO, "--loopback", "-o", cls.lb], env=dict(PSRING_LAUNCHER=stub))
        cls.printed = out + err

    def test_runs(self):
        self.assertEqual(self.rc, 0, self.printed)

    def test_figures_labelled(self):
        self.assertIn("loopback: all ranks on this machine", read_text(os.path.join(self.lb, "loopback", "throughput.svg")), self.printed)

    def test_verdict_labelled(self):
        self.assertIn("Note (loopback)", self.printed)


if __name__ == "__main__":
    common.main()
