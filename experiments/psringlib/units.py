"""units.py: the numbers of psring's tools read from text: a CSV cell (fnum) and a link rate in
tc's units (rate_bps). Nothing else."""
import math


def rate_bps(text):
    """'1gbit' -> 1e9 bits/s (tc's units, as --rate and the cluster's state write them); ValueError otherwise."""
    t, units = text.lower().replace("bit", "").strip(), {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
    return float(t[:-1]) * units[t[-1]] if t[-1:] in units else float(t)



def fnum(v, default=None):
    try:
        x = float(v)
        return x if math.isfinite(x) else default
    except (TypeError, ValueError):
        return default

