"""results.py: the results CSV, the one reader and writer of psring's Python (RFC 4180, read and
appended under an flock, a different header refused): the trainer's columns and what the sweep
and the demo add, the run key used to resume, and the checks of the cells the cost model reads.
Python 3 standard library only; it computes nothing (stats.py) and runs nothing."""
import csv
import fcntl
import io
import os

from .units import fnum

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


