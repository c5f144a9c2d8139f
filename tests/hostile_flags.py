"""tests/hostile_flags.py: a bad flag of `psring train` costs one line and exit 2, before anything starts.

A value out of its range or of the wrong kind, an unknown flag, a flag without its value, and a
flag of another topology (--sync with ring, --allreduce with ps) are each refused in one line that
names the flag and what it got; nothing is trained and nothing is left (tests/hostile.py).
"""
import unittest

import common
from hostile import hostile_case, train_args

RING = ["-np", "2", "--topology", "ring"]
PS = ["-np", "3", "--topology", "ps"]


class Flags(unittest.TestCase):
    def refused(self, want, *args):
        hostile_case(self, train_args(*args), 2, want=want, timeout=60)

    def test_batch_zero(self):
        self.refused(r"^psring-train: --batch must be an integer in 1\.\.1048576: got '0'$", *RING, "--batch", "0")

    def test_batch_text(self):
        self.refused(r"^psring-train: --batch must be an integer in 1\.\.1048576: got 'abc'$", *RING, "--batch", "abc")

    def test_epochs_negative(self):
        self.refused(r"^psring-train: --epochs must be an integer >= 1: got '-1'$", *RING, "--epochs", "-1")

    def test_steps_zero(self):
        self.refused(r"^psring-train: --steps must be an integer >= 1: got '0'$", *RING, "--steps", "0")

    def test_train_limit_zero(self):
        self.refused(r"^psring-train: --train-limit must be an integer >= 1: got '0'$", *RING, "--train-limit", "0")

    def test_train_limit_text(self):
        self.refused(r"^psring-train: --train-limit must be an integer >= 1: got 'abc'$", *RING, "--train-limit", "abc")

    def test_seed_negative(self):
        self.refused(r"^psring-train: --seed must be a non-negative integer: got '-5'$", *RING, "--seed", "-5")

    def test_momentum_above_one(self):
        self.refused(r"^psring-train: --momentum must be in \[0, 1\): got '2'$", *RING, "--momentum", "2")

    def test_layers_text(self):
        self.refused(r"^psring-train: --layers: 'abc' is not a whole number \(in '784,abc,10'\)$",
                     *RING, "--layers", "784,abc,10")

    def test_layers_wrong_input(self):
        self.refused(r"^psring-train: --layers must start with 784 .* got 100,32,10$", *RING, "--layers", "100,32,10")

    def test_np_zero(self):
        self.refused(r"^psring: -np must be a positive integer up to 999999: got '0'$", "-np", "0", "--topology", "ring")

    def test_np_text(self):
        self.refused(r"^psring: -np must be a positive integer up to 999999: got 'x'$", "-np", "x", "--topology", "ring")

    def test_ps_without_worker(self):
        self.refused(r"^psring-train: --topology ps with -np 1 and --servers 1 leaves no worker ",
                     "-np", "1", "--topology", "ps")

    def test_topology_unknown(self):
        self.refused(r"^psring-train: --topology must be local, ring or ps: got 'nosuch'$", "-np", "2", "--topology", "nosuch")

    def test_sync_unknown(self):
        self.refused(r"^psring-train: --sync must be bsp, async or ssp: got 'nosuch'$", *PS, "--sync", "nosuch")

    def test_staleness_negative(self):
        self.refused(r"^psring-train: --staleness must be an integer >= 0: got '-1'$", *PS, "--sync", "ssp",
                     "--staleness", "-1")

    def test_optimizer_unknown_local(self):
        self.refused(r"^psring-train: --optimizer must be sgd, adam or lars: got 'nosuch'$", "--topology", "local",
                     "--optimizer", "nosuch")

    def test_unknown_flag(self):
        self.refused(r"^psring-train: unknown option '--bogus-flag' \(see --help\)$", *RING, "--bogus-flag")

    def test_missing_value(self):
        self.refused(r"^psring-train: option --batch needs a value \(see --help\)$", *RING, "--batch")

    def test_sync_with_ring(self):
        self.refused(r"^psring-train: --sync applies to --topology ps only$", *RING, "--sync", "ssp")

    def test_servers_with_ring(self):
        self.refused(r"^psring-train: --servers applies to --topology ps only$", *RING, "--servers", "1")

    def test_transport_with_ring(self):
        self.refused(r"^psring-train: --transport applies to --topology ps only$", *RING, "--transport", "ipc")

    def test_allreduce_with_ps(self):
        self.refused(r"^psring-train: --allreduce applies to --topology ring only$", *PS, "--allreduce", "ring")


if __name__ == "__main__":
    common.main()
