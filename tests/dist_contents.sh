#!/bin/bash
# dist_contents.sh DISTDIR SRCDIR (make distcheck, through distcheck-hook, on the unpacked tarball):
# the tarball takes experiments/ and tools/ as folders, so it must hold no __pycache__ or *.pyc that
# running the tree's Python left there (dist-hook drops them), and every file git tracks under the
# two folders. Without git or outside a git checkout (a tarball's own distcheck) only the first.
set -u
dist=${1:?DISTDIR} src=${2:?SRCDIR} bad=0
say() { echo "dist_contents: $*"; }
caches=$(cd "$dist" && find experiments tools \( -name __pycache__ -o -name '*.pyc' \) -print)
if [[ -n $caches ]]; then say "FAIL: the tarball holds Python caches: $(echo $caches | cut -c1-200)"; bad=1; fi
if tracked=$(git -C "$src" ls-files -- experiments tools 2>/dev/null) && [[ -n $tracked ]]; then
  missing=$(while read -r f; do [[ -e $dist/$f ]] || echo "$f"; done <<<"$tracked")
  if [[ -n $missing ]]; then say "FAIL: tracked files missing from the tarball: $(echo $missing | cut -c1-200)"; bad=1; fi
  ((bad)) || say "PASS: no Python cache; all $(wc -l <<<"$tracked") tracked files of experiments/ and tools/"
else
  ((bad)) || say "PASS: no Python cache (no git checkout: the tracked files not compared)"
fi
exit $bad
