#!/bin/bash
# tree_paths.sh: nothing in the tree falls back to a folder of one particular machine: no absolute
# path into someone's home or work folders (the top-level folders the pattern `home` below lists),
# no folder beside the checkout (`beside`), no fixed /tmp folder of data (`tmpdata`). A tool
# or test finds what it needs in the tree, in what its environment names ($PSRING_MNIST_DIR, ...),
# or says what to set. System paths any machine has (/usr, /proc, /sys, /dev, /etc, /run, /opt,
# /usr/local/cuda) and scratch files made under /tmp are fine. Scans src/ tests/ experiments/
# fuzz/ docs/ (not docs/results/: measured records keep the paths they were measured with) and the
# top-level scripts; prints one line per finding (FILE:LINE: the path) and fails.
. "$(dirname "$0")/common.sh"
cd "$TOP_SRCDIR" || fail "cd $TOP_SRCDIR"
self=tests/tree_paths.sh
# a literal absolute path starts the line or follows a quote, space, =, :, (, [, ",", or "-" of ${X:-...}
home='(^|[^A-Za-z0-9_.~}$)/])/(work|home|root|Users|mnt|scratch|shared|srv)/'
beside='\.\./shared([/"'"'"' ]|$)'
tmpdata='/tmp/[A-Za-z0-9._-]*(mnist|shared)'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files() { git ls-files --cached --others --exclude-standard -- src tests experiments fuzz docs psring quickstart \
              README.md Makefile.am configure.ac; }
else   # an unpacked tarball: what it ships
  files() { find src tests experiments fuzz docs psring quickstart README.md Makefile.am configure.ac -type f \
              ! -name '*.o' ! -name '*.a' ! -name '*.log' ! -name '*.trs' ! -name 'Makefile' ! -name 'Makefile.in' \
              ! -path '*/.deps/*' 2>/dev/null; }
fi
found=$(files | grep -v -e '^docs/results/' -e "^$self\$" | sort -u | while IFS= read -r f; do
  [[ -f $f ]] || continue
  grep -nIHoE -e "$home[^ \"'\`);:}]*" -e "$beside" -e "$tmpdata[^ \"'\`);:}]*" -- "$f" 2>/dev/null
done)
if [[ -n $found ]]; then
  # FILE:LINE:MATCH -> "tree_paths: FILE:LINE: PATH: ..." (the match less the character before the path)
  printf '%s\n' "$found" | sed -E 's/^([^:]*:[0-9]+:)[^/.]?(.*)$/tree_paths: \1 \2: a path of one machine (use the tree, the environment, or say what to set)/'
  fail "$(printf '%s\n' "$found" | wc -l) paths outside the checkout and its environment"
fi
pass "no paths of one machine in src/ tests/ experiments/ fuzz/ docs/ and the top-level scripts"
