"""pslib.py: what sweep, plot, summary and demo share: the results CSV (RFC 4180, read and appended
under an flock, a different header refused), the run key used to resume, median/min/max
aggregation. Python 3 standard library only. It does not run anything; the cost model is
costmodel.py."""
import csv
import errno
import fcntl
import io
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def mnist_dir(root=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):
    """The MNIST folder, found the one way every tool and test finds it (pslib.sh's
    psring_mnist_dir): $PSRING_MNIST_DIR, else ROOT/data/mnist, the source tree's (installed, told
    so by the launcher's PSRING_DATADIR: ./data/mnist, psring-train's default --data). None when
    neither holds train-images-idx3-ubyte(.gz); MNIST_MISSING is then the line to tell the user."""
    if os.environ.get("PSRING_DATADIR"):
        root = "."
    for d in (os.environ.get("PSRING_MNIST_DIR"), os.path.join(root, "data", "mnist")):
        if d and any(os.path.exists(os.path.join(d, "train-images-idx3-ubyte" + z)) for z in ("", ".gz")):
            return os.path.abspath(d)
    return None


MNIST_MISSING = "no MNIST (set PSRING_MNIST_DIR, or run experiments/get-mnist)"

# the trainer's columns (src/train/metrics.c). gpus, ranks_per_gpu (0 on the CPU) and ring_path
# (ipc, staged, cuda-aware, nccl, mpi, shm, messages; empty for ps/local) came later: a file from
# before has none of them, and code reads them with row.get (missing = empty)
TRAINER_COLUMNS = [
    "topology", "allreduce", "sync", "staleness", "servers", "workers", "device", "gpus", "ranks_per_gpu", "ring_path",
    "transport",
    "fp16", "overlap", "accumulate", "optimizer", "sampler", "op", "hierarchical", "layers", "params", "batch_per_worker", "global_batch",
    "epochs", "steps", "steps_per_epoch", "lr", "seed", "samples_per_s", "step_ms", "data_ms", "compute_ms",
    "exchange_ms", "wait_ms", "optimizer_ms", "bytes_sent_per_worker", "bytes_recv_per_worker",
    "bytes_per_server", "staleness_mean", "staleness_max", "lost_workers", "final_loss",
    "test_accuracy", "wall_s",
]
# what psring sweep adds about how its runs were made: mps, 1 when they ran under the sweep's own
# MPS daemon (--mps), else 0 (the demo has no such column)
SWEEP_COLUMNS = ["mps"]
# what the sweep and the demo add
EXTRA_COLUMNS = ["repeat", "sweep_id", "error", "command"]
# a run's identity for resuming: under MPS the same command is another run (mps empty in the demo's)
KEY_COLUMNS = ["sweep_id", "repeat", "command", "mps"]


def complaint(prog):
    """Each command's bad(msg, code=2): 'psring PROG: msg', one line on stderr, and exit code."""
    def bad(msg, code=2):
        print("psring %s: %s" % (prog, msg), file=sys.stderr)
        sys.exit(code)
    return bad


class CsvError(Exception):
    pass


def uncommented(lines, comments):
    """lines without those starting with '#', which go to the list comments as they are read."""
    for line in lines:
        if line.startswith("#"):
            comments.append(line.rstrip("\r\n"))
        else:
            yield line


def read_rows(path, comments=None):
    """All rows of a results CSV as dicts (empty list when the file is missing or empty); CsvError
    for one that is not (bytes that are not text, a line cut off inside a quote, a line with more or
    fewer fields than the header: what a killed write leaves). comments, a list: lines starting
    with '#' are no rows but appended to it (a data file that states its sources and assumptions)."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            lines = f if comments is None else uncommented(f, comments)
            r = csv.DictReader(lines, strict=True)
            if r.fieldnames is None:
                return []
            rows = []
            for i, row in enumerate(r, start=2):
                if None in row or None in row.values():
                    n = len(r.fieldnames) + len(row[None]) if None in row else sum(v is not None for v in row.values())
                    i = i if comments is None else r.line_num + len(comments)   # the file's line, its comments counted
                    raise CsvError("%s:%d: %d fields, the header has %d" % (path, i, n, len(r.fieldnames)))
                rows.append(row)
            return rows
    except (UnicodeDecodeError, csv.Error) as e:
        raise CsvError("%s: not a CSV text file (%s)" % (path, e))


def header_of(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return next(csv.reader(f), None)
    except (UnicodeDecodeError, csv.Error) as e:
        raise CsvError("%s: not a CSV text file (%s)" % (path, e))


def format_row(columns, row):
    """One CSV line (with newline) of row's values in column order; missing values are empty."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(["" if row.get(c) is None else str(row.get(c)) for c in columns])
    return buf.getvalue()


def check_tail(path):
    """CsvError when a results file's last line has no newline: a write was cut off there, and a
    row appended to it would join that line (and vanish into its last field)."""
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        with open(path, "rb") as b:
            b.seek(-1, os.SEEK_END)
            if b.read(1) != b"\n":
                raise CsvError("%s: its last line is cut off (a write that was killed?): repair it or use a new file" % path)


def append_row(path, columns, row):
    """Appends row, writing the header if the file is new; refuses a file with another header, or
    whose last line was cut off (the new row would join it, and vanish into its last field)."""
    with open(path, "a+", newline="") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            f.write(format_row(columns, dict(zip(columns, columns))))
        else:
            check_tail(path)
            f.seek(0)
            have = next(csv.reader([f.readline().lstrip("\ufeff")]), [])   # a spreadsheet's byte-order mark
            if have != list(columns):
                raise CsvError("%s: existing file has a different header; use a new file" % path)
            f.seek(0, os.SEEK_END)
        f.write(format_row(columns, row))
        f.flush()
        os.fsync(f.fileno())


def run_key(row):
    """What identifies a run for resuming, as text (a row read back from the CSV holds strings)."""
    return tuple(str(row.get(c, "")) for c in KEY_COLUMNS)


def rate_bps(text):
    """'1gbit' -> 1e9 bits/s (tc's units, as --rate and the cluster's state write them); ValueError otherwise."""
    t, units = text.lower().replace("bit", "").strip(), {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
    return float(t[:-1]) * units[t[-1]] if t[-1:] in units else float(t)


def gnuplot_str(s):
    """s as a gnuplot string literal: '...' with a quote inside doubled."""
    return "'" + str(s).replace("'", "''") + "'"


def fnum(v, default=None):
    try:
        x = float(v)
        return x if math.isfinite(x) else default
    except (TypeError, ValueError):
        return default


def exchange_alone(r):
    """A row's exchange per step (ms) without the wait for the slowest: what the cost model predicts."""
    return float(r["exchange_ms"]) - float(r.get("wait_ms") or 0)


def step_alone(r):
    """A row of the step alone: one worker on one full core, no exchange (topology local)."""
    return r.get("topology") == "local"


# The numbers of a results row that the cost model reads: column -> (least value, or a set of
# words; above the least only; may be empty). A cell the model cannot use is refused here, by
# name, rather than as a traceback or a NaN in its table.
CELLS = {"topology": ({"ring", "ps", "local"}, 0, 0), "sync": ({"bsp", "async", "ssp"}, 0, 1), "workers": (1, 0, 0),
         "params": (1, 0, 0), "batch_per_worker": (1, 0, 0), "step_ms": (0, 1, 0), "exchange_ms": (0, 0, 0),
         "wait_ms": (0, 0, 1), "samples_per_s": (0, 1, 0), "servers": (0, 0, 1), "server_hosts": (0, 0, 1),
         "staleness": (0, 0, 1), "steps_per_epoch": (0, 0, 1), "straggler": (0, 1, 1), "ps_chunk_kb": (0, 0, 1),
         "gpus": (0, 0, 1), "ranks_per_gpu": (0, 0, 1), "mps": ({"0", "1"}, 0, 1)}
INTEGERS = {"workers", "params", "batch_per_worker", "servers", "server_hosts", "staleness", "steps_per_epoch", "gpus",
            "ranks_per_gpu"}


def check_cells(rows, path):
    """CsvError 'path:line: column c: ...' for the first cell of rows (as read, from line 2; a failed
    run's row is skipped) that is not what CELLS asks, or a PS row whose shards cannot be placed."""
    for i, r in enumerate(rows, start=2):
        if r.get("error"):
            continue
        for c, (least, above, empty) in CELLS.items():
            v = (r.get(c) or "").strip()
            if not v and empty:
                continue
            if isinstance(least, set):
                if v not in least:
                    raise CsvError("%s:%d: column %s: '%s' is not one of %s" % (path, i, c, v, ", ".join(sorted(least))))
                continue
            x = (int(v) if v.isdigit() else None) if c in INTEGERS else fnum(v)
            if x is None or x < least or (above and x == least) or (c == "straggler" and x > 1):
                raise CsvError("%s:%d: column %s: '%s' is not %s %s %g%s" % (path, i, c, v, "an integer" if c in INTEGERS else "a number",
                               ">" if above else ">=", least, " and <= 1" if c == "straggler" else ""))
        if any(fnum(x) is None or fnum(x) <= 0 for x in (r.get("step_samples_ms") or "").split(";") if x):
            raise CsvError("%s:%d: column step_samples_ms: '%s' is not numbers > 0 joined by ;" % (path, i, r["step_samples_ms"]))
        if r["topology"] == "ps" and not (fnum(r.get("server_hosts"), 0) > 0 or fnum(r.get("servers"), 0) >= 1):
            raise CsvError("%s:%d: a PS row needs servers or server hosts: got %s and %s" % (path, i, r.get("servers"), r.get("server_hosts")))


def check_columns(path, columns, needed):
    """CsvError when a results file's header (columns) lacks one of needed."""
    missing = [c for c in needed if c not in columns]
    if missing:
        raise CsvError("%s: no column %s (not a psring results file)" % (path, ", ".join(missing)))


def read_results(path, needed):
    """Every row of a results CSV that is read, not appended to (the cost model's --compare,
    summary), through read_rows, with the columns needed and the cells the cost model reads
    checked: CsvError 'path: what is wrong', a missing file too."""
    if not os.path.isfile(path):
        raise CsvError("%s: %s" % (path, "Is a directory" if os.path.isdir(path) else "No such file or directory"))
    try:
        rows = read_rows(path)
        check_columns(path, list(rows[0]) if rows else header_of(path) or [], needed)
    except OSError as e:
        raise CsvError("%s: %s" % (path, e.strerror))
    check_cells(rows, path)
    return rows


def resume_rows(path, columns, foreign):
    """The rows of a results CSV that a run is about to append to (none for a new file), refused
    now if it could not take them, not after the first run: another header (CsvError 'path:
    foreign'), a cut-off last line, bytes that are not text (CsvError), or a path that cannot be
    written (OSError)."""
    have = header_of(path)
    if have is not None and have != list(columns):
        raise CsvError("%s: %s" % (path, foreign))
    check_tail(path)
    existed = os.path.exists(path)
    open(path, "a").close()   # a folder, /proc, a read-only file: refused as the run's append would be
    if not existed:
        os.remove(path)
    return read_rows(path)


def one_worker_compute(rows, key):
    """{key(r): (compute s, [step samples s])}: what the cost model takes compute from, one
    worker's step on one full core, as a real 1-core host computes it. That is the step alone
    (topology local: one process, no quota, no traffic) where the CSV has one, as the demo's
    does: on emulated hosts no one-worker run is that reference, for under a CPU quota a host
    that never waits (the ring rank alone) and one that waits every step (the PS worker) compute
    several ms apart, both off the real host (docs/cluster.md). Without it (a loopback sweep,
    nothing throttled) the one-worker runs are. The median of step - exchange; the samples: the
    steps one by one from each run's timeline (step_samples_ms), a list per run, for BSP's wait
    for the slowest (costmodel.slowest_of takes the median over the runs)."""
    runs = {}
    for r in rows:
        if r.get("error") or r.get("workers") != "1" or (r.get("straggler") or "1") not in ("1", "1.0"):
            continue
        runs.setdefault(key(r), []).append(r)
    out = {}
    for k, rs in runs.items():
        rs = [r for r in rs if step_alone(r)] or rs
        out[k] = (statistics.median((float(r["step_ms"]) - float(r["exchange_ms"])) / 1e3 for r in rs),
                  [s for s in ([float(x) / 1e3 for x in (r.get("step_samples_ms") or "").split(";") if x] for r in rs) if s])
    return out


def config_label(row):
    """ring, mpi-allreduce, ps S=2 (+ sync, fp16, overlap when not the default)."""
    topo = row.get("topology", "")
    if topo == "ring":
        label = "mpi-allreduce" if row.get("allreduce") == "mpi" else "ring"
        if row.get("overlap") == "1":
            label += " overlap"
    elif topo == "ps":
        label = "ps S=%s" % row.get("servers", "?")
        if row.get("sync") and row.get("sync") != "bsp":
            label += " " + row["sync"]
            if row.get("sync") == "ssp" and row.get("staleness"):
                label += "(%s)" % row["staleness"]
    else:
        label = topo
    if row.get("fp16") == "1":
        label += " fp16"
    return label


def aggregate(rows, value, by=("label", "workers"), where=None):
    """{key: (median, min, max, n)} of value over the successful rows (and where(r), if given).
    value: a column, or a function of the row (a number or None); by: columns (label: the
    config_label, the others as integers: (label, workers)), or a function of the row (the
    demo's own label column, a repeat)."""
    groups = {}
    for r in rows:
        if r.get("error") or (where is not None and not where(r)):
            continue
        v = value(r) if callable(value) else fnum(r.get(value))
        if v is None:
            continue
        k = by(r) if callable(by) else tuple(config_label(r) if b == "label" else int(fnum(r.get(b), 0)) for b in by)
        groups.setdefault(k, []).append(v)
    return {k: (statistics.median(v), min(v), max(v), len(v)) for k, v in groups.items()}


def ranking(table):
    """{N: [(median, label), ...] fastest first} of an aggregate keyed (label, N): at each worker
    count, who won (the verdicts of psring summary and psring demo)."""
    out = {}
    for (label, n), v in table.items():
        out.setdefault(n, []).append((v[0], label))
    return {n: sorted(at, reverse=True) for n, at in out.items()}


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


# ---- --mps: a private MPS daemon for the sweep's runs ------------------------------------------
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
