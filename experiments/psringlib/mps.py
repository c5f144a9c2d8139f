"""mps.py: a private MPS daemon (psring sweep --mps, psring mps): refused where MPS cannot run here,
started with private pipe and log folders, stopped with whatever is left of it. It finds an MPS
daemon of anyone's through /proc."""
import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from .signals import quiet_signals

MPS_CONTROL = "nvidia-cuda-mps-control"
MPS_PROGRAMS = (MPS_CONTROL, "nvidia-cuda-mps-server")
MPS_DEFAULT_PIPE = "/tmp/nvidia-mps"
MPS_START_S = 5.0   # how long the control socket may take to appear after -d returns


def proc_pids():
    """Every live process but this one (a zombie, dead and waiting for its parent, is no process:
    where PID 1 does not reap them, a daemon that stopped long ago still shows its name)."""
    return [int(d) for d in os.listdir("/proc") if d.isdigit() and int(d) != os.getpid()
            and proc_read(int(d), "stat").rpartition(b")")[2][1:2] not in (b"Z", b"X", b"")]


def proc_read(pid, what):
    try:
        with open("/proc/%d/%s" % (pid, what), "rb") as f:
            return f.read()
    except OSError:   # gone, or another user's and hidden
        return b""


def mps_running():
    """(pid, program) of a running MPS control daemon or server, anyone's, or None. The kernel keeps
    15 characters of a program's name, 'nvidia-cuda-mps' for both; a script's argv names it."""
    for pid in proc_pids():
        comm = proc_read(pid, "comm").decode(errors="replace").strip()
        argv = [os.path.basename(a.decode(errors="replace")) for a in proc_read(pid, "cmdline").split(b"\0")[:2]]
        names = [a for a in argv if a in MPS_PROGRAMS]
        if comm == MPS_CONTROL[:15] or names:
            return pid, names[0] if names else comm
    return None


def mps_serves(pipe):
    """Whether an MPS control daemon serves the pipe folder PIPE: its control socket takes a
    connection. The file alone says nothing: a daemon that quit leaves it behind (driver 580)."""
    control = os.path.join(pipe, "control")
    if not os.path.exists(control):
        return False
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(control)
        return True
    except OSError as e:   # refused: stale, or no socket; anything else (not ours to open): say so
        return e.errno not in (errno.ECONNREFUSED, errno.ENOTSOCK)
    finally:
        s.close()


def mps_users(pipe):
    """The processes whose environment points at the pipe folder PIPE: the daemon, its servers
    (and any run still alive)."""
    needle = ("CUDA_MPS_PIPE_DIRECTORY=%s" % pipe).encode()
    return [pid for pid in proc_pids() if needle in proc_read(pid, "environ").split(b"\0")]


class Mps:
    """A private MPS daemon (psring sweep --mps, psring mps): refuse() refuses (bad()) where it
    cannot run here, why_not() says why (or None), start() brings it up
    with private pipe and log folders and checks that it answers, env is what every run gets,
    stop() quits it (and ends what is left of it) and removes the folders. Refusals and a start
    that fails: bad(), exit 2, with nothing left running."""

    def __init__(self, quiet, bad, prog="sweep", flag="--mps: "):
        """bad(msg): the caller's one-line refusal (exit 2); prog and flag name the caller in what
        it prints ("sweep", "--mps: ")."""
        self.quiet, self.folder, self.env = quiet, None, {}
        self.bad, self.prog, self.flag = bad, prog, flag

    def refuse(self):
        """bad() with why MPS cannot run here, if it cannot (before start: nothing is running)."""
        why = self.why_not()
        if why:
            self.bad(self.flag + why)

    def why_not(self):
        control = shutil.which(MPS_CONTROL)
        if not control:
            return "MPS is missing (no %s on PATH)" % MPS_CONTROL
        self.control = control
        running = mps_running()
        if running:
            return "MPS is already running here (process %d, %s): psring runs its own daemon only where none runs" \
                % running
        for d in sorted({MPS_DEFAULT_PIPE, os.environ.get("CUDA_MPS_PIPE_DIRECTORY") or MPS_DEFAULT_PIPE}):
            if mps_serves(d):
                return "MPS is already running here (%s/control answers): psring runs its own daemon only where none runs" % d
        return None

    def start(self):
        self.folder = tempfile.mkdtemp(prefix="psring-mps.")
        pipe, log = os.path.join(self.folder, "pipe"), os.path.join(self.folder, "log")
        os.mkdir(pipe, 0o700)
        os.mkdir(log, 0o700)
        self.env = {"CUDA_MPS_PIPE_DIRECTORY": pipe, "CUDA_MPS_LOG_DIRECTORY": log}
        said = os.path.join(self.folder, "start.out")
        why = None
        try:
            # -d forks the daemon and returns; its output goes to a file, which a daemon that keeps
            # it open cannot hold up as it would a pipe; its own session: Ctrl-C is the sweep's
            with open(said, "w") as out:
                rc = subprocess.call([self.control, "-d"], stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                     env=dict(os.environ, **self.env), start_new_session=True, timeout=30)
            text = " ".join(open(said, errors="replace").read().split())[:300]
            if not text and os.path.exists(os.path.join(log, "control.log")):   # where the daemon itself writes
                text = " ".join((open(os.path.join(log, "control.log"), errors="replace").read().strip().splitlines()
                                 or [""])[-1].split())[:300]
            if rc != 0:
                why = "%s -d failed (exit %d): %s" % (MPS_CONTROL, rc, text or "it printed nothing")
            else:
                t0 = time.time()
                while not os.path.exists(os.path.join(pipe, "control")) and time.time() - t0 < MPS_START_S:
                    time.sleep(0.05)
                if not os.path.exists(os.path.join(pipe, "control")):
                    why = "%s -d exited 0 but no daemon came up (no control socket in its pipe folder after %g s)%s" \
                        % (MPS_CONTROL, MPS_START_S, ": " + text if text else "")
        except subprocess.TimeoutExpired:
            why = "%s -d did not return in 30 s" % MPS_CONTROL
        except OSError as e:
            why = "%s -d: %s" % (MPS_CONTROL, e.strerror)
        if why:
            self.stop(say=False)
            self.bad(self.flag + why)
        if not self.quiet:
            print("%s: MPS daemon up, pipe folder %s" % (self.prog, pipe), flush=True)

    def stop(self, say=True):
        """quit, then wait up to 10 s for the daemon and its servers to go; what stays is ended.
        Never raises: it runs on the way out of everything."""
        if not self.folder:
            return
        with quiet_signals():
            pipe, problem = self.env["CUDA_MPS_PIPE_DIRECTORY"], ""
            if os.path.exists(os.path.join(pipe, "control")):
                try:
                    r = subprocess.run([self.control], input="quit\n", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True, env=dict(os.environ, **self.env), timeout=30, start_new_session=True)
                    if r.returncode != 0:
                        problem = "quit exited %d: %s" % (r.returncode, " ".join(r.stdout.split())[:200])
                except (subprocess.TimeoutExpired, OSError) as e:
                    problem = "quit: %s" % e
            t0 = time.time()
            while mps_users(pipe) and time.time() - t0 < 10:
                time.sleep(0.1)
            left = mps_users(pipe)
            stayed = list(left)
            for sig in (signal.SIGTERM, signal.SIGKILL):
                for pid in left:
                    try:
                        os.kill(pid, sig)
                    except OSError:
                        pass
                t0 = time.time()
                while left and time.time() - t0 < 3:
                    time.sleep(0.1)
                    left = mps_users(pipe)
            if problem or stayed:
                print("psring %s: %s%s; %s" % (self.prog, self.flag,
                    problem or "the daemon did not quit in 10 s",
                    "could not end its processes %s" % " ".join(map(str, left)) if left else
                    "its processes were ended" if stayed else "no process of it is left"), file=sys.stderr)
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
            if say and not self.quiet:
                print("%s: MPS daemon stopped" % self.prog, flush=True)
