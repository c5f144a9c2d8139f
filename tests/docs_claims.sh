#!/bin/bash
# docs_claims.sh: every result README.md and docs/tradeoff.md state about the demo's runs is a row of
# docs/claims.csv: the page, the words it says (quote), the file of the run it cites (file) and the
# words there that say the same (evidence). Each quote must stand in its page and each evidence in its
# file, whitespace and line breaks aside: a page changed without its run, or a run replaced without
# its page, fails here. Skips in an unpacked tarball, which ships neither docs/results nor the lesson.
. "$(dirname "$0")/common.sh"
cd "$TOP_SRCDIR" || fail "cd $TOP_SRCDIR"
[[ -f docs/claims.csv && -d docs/results ]] || skip "no docs/claims.csv or docs/results here (an unpacked tarball)"
python3 - <<'PY' || fail "docs/claims.csv"
import re, sys
from psringlib import results
flat = lambda t: re.sub(r"\s+", " ", t.replace("**", "").replace("`", ""))   # noqa: E731
rows = results.read_rows("docs/claims.csv")
assert len(rows) >= 20, "only %d claims" % len(rows)
bad = []
for i, r in enumerate(rows, 2):
    for what, path, text in (("quote", r["page"], r["quote"]), ("evidence", r["file"], r["evidence"])):
        try:
            body = flat(open(path).read())
        except OSError as e:
            bad.append("docs/claims.csv:%d: %s %s: %s" % (i, what, path, e.strerror))
            continue
        if flat(text) not in body:
            bad.append("docs/claims.csv:%d: %s not in %s: %s" % (i, what, path, text))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
pass "every claim of README.md and docs/tradeoff.md stands in its page and in the run it cites"
