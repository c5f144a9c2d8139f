"""signals.py: a block that Ctrl-C or SIGTERM does not cut short (quiet_signals), for the clean-ups
of psring's commands: killing a run, stopping an MPS daemon."""
import signal


class quiet_signals:
    """A block that a second Ctrl-C or SIGTERM does not cut short (killing a run, stopping MPS):
    SIGINT, SIGTERM and SIGHUP are held off inside it, and the first one that came is raised after."""
    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __enter__(self):
        self.came = []
        self.old = {s: signal.signal(s, lambda n, f: self.came.append(n)) for s in self.SIGNALS}

    def __exit__(self, *exc):
        for s, h in self.old.items():
            signal.signal(s, h)
        if self.came and exc[0] is None:
            h = self.old[self.came[0]]
            if callable(h):
                h(self.came[0], None)
        return False

