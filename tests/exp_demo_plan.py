"""exp_demo_plan.py: psring demo's plan of runs, without running one: each run's dilation and CPU
shares, its repeats, the time-to-accuracy and BytePS runs and their commands, the resume key and
the refusal of another regime's results."""
import unittest

import common
from demo_fixture import Run
from psringlib import results
from psringlib.demo import figures, plan

RING2, PS8 = Run("ring", "ring", 2), Run("ps", "ps", 8, 1, 1)
PS8K2 = Run("ps", "ps", 8, 2, 2)


class Plan(unittest.TestCase):
    def test_run_key_of_planned_and_read_back(self):   # repeat 1 (an int) is the run read back (repeat "1"): resume skips it
        self.assertEqual(results.run_key({"sweep_id": "demo", "repeat": 1, "command": "train x"}),
                         results.run_key({"sweep_id": "demo", "repeat": "1", "command": "train x"}))

    # each run's dilation: 1 where its workers fit the CPUs (a core each, one server host sharing), else hosts within 1.25 cores
    # and links at most 125 Mbit/s, capped by --dilation
    def test_dilation_fits_cpus(self):
        self.assertEqual(plan.run_dilation(RING2, 8, "1gbit", cpus=2), 1)
        self.assertEqual(plan.run_dilation(PS8, 8, "1gbit", cpus=2), 8)

    def test_dilation_worker_and_server_host(self):
        self.assertEqual(plan.run_dilation(Run("ps", "ps", 1, 1, 1), 8, "1gbit", cpus=2), 1)

    def test_dilation_server_host_shares_a_core(self):
        self.assertEqual(plan.run_dilation(Run("ps", "ps", 2, 1, 1), 8, "1gbit", cpus=2), 1)

    def test_dilation_two_server_hosts(self):   # two would share both
        self.assertEqual(plan.run_dilation(Run("ps", "ps", 2, 2, 2), 8, "1gbit", cpus=2), 8)

    def test_dilation_straggler_needs_quota(self):
        self.assertEqual(plan.run_dilation(Run("ring", "ring", 2, straggler=0.5), 8, "1gbit", cpus=2), 8)

    def test_dilation_link_rate(self):
        self.assertEqual(plan.run_dilation(RING2, 8, "1gbit", cpus=1), 8)
        self.assertEqual(plan.run_dilation(RING2, 8, "200mbit", cpus=1), 2)

    def test_dilation_capped(self):
        self.assertEqual(plan.run_dilation(RING2, 4, "1gbit", cpus=1), 4)
        self.assertEqual(plan.run_dilation(PS8, 8, "100mbit", cpus=1), 8)
        self.assertEqual(plan.run_dilation(Run("ring", "ring", 4), 16, "100mbit", cpus=2), 4)

    def test_dilation_one_two_hosts_at_most(self):   # D=1: 2 hosts at most
        self.assertEqual(plan.run_dilation(Run("ring", "ring", 4), 8, "1gbit", cpus=16), 8)

    # GPU hosts count two CPU shares: 8 GPU worker hosts + 2 server hosts are 18 shares, D = 16; no D = 1 for them
    def test_gpu_host_shares(self):
        self.assertEqual(plan.run_shares(PS8K2, 8), 18)
        self.assertEqual(plan.run_dilation(PS8K2, 16, "1gbit", cpus=2, gpu_hosts=8), 16)
        self.assertEqual(plan.run_dilation(PS8K2, 16, "1gbit", cpus=2), 8)
        self.assertEqual(plan.run_dilation(RING2, 8, "1gbit", cpus=2, gpu_hosts=2), 8)
        self.assertEqual(plan.run_shares(RING2, 5), 4)
        self.assertEqual(plan.run_dilation(RING2, 8, "100mbit", cpus=2, gpu_hosts=1), 4)

    def test_repeats(self):   # every throughput run as often as --repeats says
        o3, o1 = dict(repeats=3), dict(repeats=1)
        self.assertEqual(plan.repeats_of(Run("ring", "ring", 4), o3), 3)
        self.assertEqual(plan.repeats_of(Run("ps, k server hosts", "ps", 4, 3, 3), o3), 3)
        self.assertEqual(plan.repeats_of(RING2, o3), 3)
        self.assertEqual(plan.repeats_of(Run("ring", "ring", 4), o1), 1)

    # the time-to-accuracy runs: ring, PS bsp, async, ssp at N = 4, with and without the straggler,
    # whole epochs at their own batch on the full test set, at most TTA_REPEATS times
    def tta(self):
        return [r for r in plan.plan(dict(quick=False)) if r[8]]

    def test_tta_runs(self):
        self.assertEqual(sorted((r[1], r[6], r[7]) for r in self.tta()),
                         sorted((t, s, f) for f in (1.0, 0.5) for t, s in (("ring", "bsp"), ("ps", "bsp"), ("ps", "async"), ("ps", "ssp"))))

    def test_tta_at_four_workers(self):
        for r in self.tta():
            self.assertEqual(r[2], 4, r)
            self.assertEqual((r[3], r[4]), (plan.TTA_SERVERS,) * 2 if r[1] == "ps" else (0, 0), r)
            self.assertEqual(r[5], 0, r)

    def test_tta_not_quick(self):
        self.assertFalse(any(r[8] for r in plan.plan(dict(quick=True))))

    def test_tta_repeats(self):
        tta = self.tta()
        self.assertEqual(plan.repeats_of(tta[0], dict(repeats=3)), plan.TTA_REPEATS)
        self.assertEqual(plan.TTA_REPEATS, 2)
        self.assertEqual(plan.repeats_of(tta[0], dict(repeats=1)), 1)

    def test_tta_command(self):
        c = plan.command(self.tta()[0], dict(steps=16), "d")
        self.assertNotIn("--steps", c)
        self.assertEqual(c[c.index("--batch") + 1], str(plan.TTA_BATCH))
        self.assertEqual(c[c.index("--test-limit") + 1], "10000")
        self.assertEqual(c[c.index("--epochs") + 1], str(plan.TTA_EPOCHS))

    # each sync with its own lr and momentum (its best of the grid), as plan.TTA_OPT and the figure say
    def test_tta_optimizer_per_sync(self):
        for sync in ("bsp", "async", "ssp"):
            c = plan.command(next(r for r in self.tta() if r[6] == sync and r[1] == "ps"), dict(steps=16), "d")
            with self.subTest(sync=sync):
                self.assertEqual((c[c.index("--lr") + 1], c[c.index("--momentum") + 1]), tuple("%g" % x for x in plan.TTA_OPT[sync]))
                self.assertEqual(c[c.index("--servers") + 1], str(plan.TTA_SERVERS))
                self.assertEqual("--staleness" in c, sync == "ssp")
                self.assertIn("%s lr %g, momentum %g" % (sync.upper() if sync != "async" else "async", *plan.TTA_OPT[sync]), plan.TTA_OPTS)
                if sync == "ssp":
                    self.assertEqual(c[c.index("--staleness") + 1], str(plan.TTA_SSP_STALENESS))

    # BytePS' placement with one spare host at N = 4 and 8, summing servers, on the hosts the runs
    # with one server host take (N + 1), the launcher deriving the processes from --workers
    def byteps(self):
        return [r for r in plan.plan(dict(quick=False)) if r.byteps]

    def test_byteps_runs(self):
        self.assertEqual([(r.label, r.N, r.servers, r.server_hosts, plan.run_hosts(r)) for r in self.byteps()],
                         [(plan.BYTEPS, 4, 5, 1, 5), (plan.BYTEPS, 8, 9, 1, 9)])

    def test_byteps_command(self):
        c = plan.command(self.byteps()[1], dict(steps=16), "d")
        self.assertEqual((c[c.index("--workers") + 1], c[c.index("--byteps") + 1], c[c.index("--ps-mode") + 1]), ("8", "1", "sum"))
        for flag in ("-np", "--servers", "--overlap"):
            self.assertNotIn(flag, c)
        self.assertIn("--fp16", c)

    def test_byteps_not_quick(self):
        self.assertFalse(any(r.byteps for r in plan.plan(dict(quick=True))))

    def test_byteps_busiest_link(self):
        self.assertEqual(figures.busiest(plan.BYTEPS, 8, 1.0)[2], figures.cm.ps_bytes(8, 1.0, k=1, x=0.2))
        self.assertAlmostEqual(figures.cm.byteps_x(8, 1), 0.2, delta=1e-12)

    # a results CSV of another regime is not resumed (its rows would mix with these): named in the refusal
    def test_other_regime_named(self):
        self.assertEqual(plan.other_regime([{"layers": "784,256,10", "batch_per_worker": "3072"}]), "MLP 784,256,10, batch 3072")

    def test_own_regimes_resumed(self):
        self.assertEqual(plan.other_regime([{"layers": plan.LAYERS, "batch_per_worker": str(plan.BATCH)},
                                            {"layers": plan.LAYERS, "batch_per_worker": str(plan.TTA_BATCH)}, {"layers": ""}]), "")

    # one worker on the scale model: the demo's largest dilation, where one worker's other runs have a core
    def test_scale_model_run(self):
        sc = [r for r in plan.plan(dict(quick=False)) if r.scale]
        self.assertEqual([(r.label, r.N) for r in sc], [("ring", 1)])
        self.assertEqual(plan.run_dilation(sc[0], 8, "1gbit"), 8)
        self.assertEqual(plan.run_dilation(Run("ring", "ring", 1, straggler=1.0), 8, "1gbit"), 1)

    def test_throughput_command(self):
        c = plan.command(Run("ring", "ring", 4, straggler=1.0), dict(steps=16), "d")
        self.assertEqual(c[c.index("--steps") + 1], "16")
        self.assertEqual(c[c.index("--batch") + 1], str(plan.BATCH))


if __name__ == "__main__":
    common.main()
