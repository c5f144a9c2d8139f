"""hosts.py: the demo's emulated hosts: whether they can be made here, psring cluster's
subcommands, their lifecycle around the demo's work (down whatever happens, Ctrl-C included), the
training job in flight, and the hosts' link counters."""
import glob
import os
import signal
import subprocess

from .. import paths
from . import bad


CLUSTER = paths.command("cluster")


def emulation_possible():
    """'' when hosts can be emulated here, else why not (one line)."""
    if os.geteuid() != 0:
        return "not root"
    if subprocess.run(["ip", "netns", "add", "psring-demo-probe"], capture_output=True).returncode != 0:
        return "no network namespaces (ip netns add failed)"
    subprocess.run(["ip", "netns", "del", "psring-demo-probe"], capture_output=True)
    mounts = open("/proc/mounts").read().split("\n")
    if not any(" cgroup " in m and ",cpu," in "," + m.split()[3] + "," for m in mounts if len(m.split()) > 3) and \
       not any(" cgroup2 " in m and "cpu" in open(os.path.join(m.split()[1], "cgroup.controllers")).read().split()
               for m in mounts if " cgroup2 " in m and os.path.exists(os.path.join(m.split()[1], "cgroup.controllers"))):
        return "no cgroup cpu controller"
    if os.path.exists("/run/psring-cluster/state"):
        return "an emulated cluster is already up (psring cluster down first)"
    return ""


def cluster(*args, check=True):
    r = subprocess.run([CLUSTER] + [str(a) for a in args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("psring cluster %s: %s" % (" ".join(map(str, args)), (r.stderr.strip() or r.stdout.strip())))
    return r


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM while the demo works on its hosts (a BaseException, as KeyboardInterrupt:
    no handler of an ordinary error takes it for one)."""


def on_hosts(work):
    """work(made), the hosts that work brings up taken down after it, whatever happens: made lists
    them (down only what this demo brought up: another run's cluster is not ours). Ctrl-C stops the
    job in flight at once and unwinds the run like an error, so that what the run undoes on the
    hosts (a straggler's CPU share, the quotas) reaches them while they are still up; then they go
    down, and the demo exits 130 saying so in one line. A RuntimeError: its line, exit 1."""
    made = []

    def interrupt(*_):
        for sig in (signal.SIGINT, signal.SIGTERM):   # a second Ctrl-C must not cut the unwinding short
            signal.signal(sig, signal.SIG_IGN)
        for p in JOB:
            stop(p, signal.SIGKILL)
        raise Interrupted()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, interrupt)
    try:
        return work(made)
    except Interrupted:
        why = ("interrupted; the emulated hosts are down", 130)
    except RuntimeError as e:
        why = (str(e), 1)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):   # nor cut the hosts' teardown short (also ignored in it)
            signal.signal(sig, signal.SIG_IGN)
        for p in JOB:
            stop(p, signal.SIGKILL)
        if made:
            cluster("down", check=False)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
    bad(*why)


JOB = []   # the training job in flight: Ctrl-C stops its process group before the hosts go down


def stop(p, sig):
    """Signal the job's process group (the launcher, mpirun, local ranks) if it is still there."""
    try:
        os.killpg(p.pid, sig)
    except ProcessLookupError:
        pass


def link_counters():
    """{host: (bytes it sent, bytes it received)} over each emulated host's link so far: the root
    side of host i's veth (psrv<i>) receives what the host sends and sends what it receives. {}
    without emulated hosts."""
    out = {}
    for path in glob.glob("/sys/class/net/psrv*/statistics"):
        try:
            i = int(path.split("/")[-2][len("psrv"):])
            with open(os.path.join(path, "rx_bytes")) as a, open(os.path.join(path, "tx_bytes")) as b:
                out[i] = (int(a.read()), int(b.read()))
        except (OSError, ValueError):
            continue
    return out


def link_columns(before, after, steps):
    """The demo's per-link columns of one run: link_bytes, every host's link that carried the job
    ("h<i>:<sent>/<received>" bytes per step between the trainer's header and its summary line,
    TCP/IP headers included) and link_busiest_bytes, the largest of them."""
    if steps <= 0:
        return {}
    per = {}
    for i in sorted(after):
        if i in before:
            sent, recv = after[i][0] - before[i][0], after[i][1] - before[i][1]
            if sent > 0 or recv > 0:
                per[i] = (sent / steps, recv / steps)
    if not per:
        return {}
    return dict(link_bytes=";".join("h%d:%.0f/%.0f" % (i, a, b) for i, (a, b) in per.items()),
                link_busiest_bytes="%.0f" % max(max(v) for v in per.values()))
