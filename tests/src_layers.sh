#!/usr/bin/env bash
# src_layers.sh: the layering the design promises, checked over the sources' #include lines and
# the built libraries:
#   - src/ring and src/ps include nothing from src/train but the exchange interface (exchange.h),
#     and exchange.h itself includes nothing from src/train (not the trainer's options);
#   - src/ring never includes from src/ps, nor src/ps from src/ring;
#   - libring.a and libps.a need no symbol that libtrain.a defines (no trainer code linked).
# An include is resolved as the compiler does: next to the including file first, then under src/.
# Usage: src_layers.sh [SRC_DIR] (default: the source tree's src/).
. "$(dirname "$0")/common.sh"
src=${1:-$TOP_SRCDIR/src}
[[ -d $src/ring && -d $src/ps && -d $src/train ]] || fail "$src: not psring's src/ folder"
src=$(cd "$src" && pwd)

bad=()
# every quoted include of every C/CUDA source and header, as FILE<TAB>TARGET
while IFS=$'\t' read -r file target; do
  dir=$(dirname "$file")
  resolved=""
  for cand in "$dir/$target" "$src/$target"; do
    if [[ -f $cand ]]; then resolved=$(realpath -m "$cand"); break; fi
  done
  [[ -n $resolved ]] || continue            # config.h and other generated or system headers
  rel_file=${file#"$src"/} rel=${resolved#"$src"/}
  case $rel_file in
    ring/*|ps/*)
      [[ $rel == train/* && $rel != train/exchange.h ]] && bad+=("$rel_file includes $rel (only train/exchange.h is allowed)")
      [[ $rel_file == ring/* && $rel == ps/* ]] && bad+=("$rel_file includes $rel (the ring must not depend on the PS)")
      [[ $rel_file == ps/* && $rel == ring/* ]] && bad+=("$rel_file includes $rel (the PS must not depend on the ring)") ;;
    train/exchange.h)
      [[ $rel == train/* ]] && bad+=("$rel_file includes $rel (the interface must not carry the trainer's headers)") ;;
  esac
done < <(find "$src" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -print0 |
         xargs -0 awk '/^[ \t]*#[ \t]*include[ \t]*"/ { t = $0; sub(/^[^"]*"/, "", t); sub(/".*/, "", t); print FILENAME "\t" t }')

# the libraries, when built: a symbol libps/libring leave undefined must not be one libtrain defines
lib_ring=$TOP_BUILDDIR/src/ring/libring.a lib_ps=$TOP_BUILDDIR/src/ps/libps.a lib_train=$TOP_BUILDDIR/src/train/libtrain.a
if [[ $# -eq 0 && -f $lib_train ]]; then
  train_defs=$(nm --defined-only -g "$lib_train" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u)
  for lib in "$lib_ring" "$lib_ps"; do
    [[ -f $lib ]] || continue
    # strong undefined references only ("U"); timeline_event is weak ("w") by design
    for sym in $(nm -u "$lib" 2>/dev/null | awk '$1 == "U" { print $2 }' | sort -u); do
      grep -qx "$sym" <<<"$train_defs" && bad+=("${lib#"$TOP_BUILDDIR"/} needs $sym, defined in src/train/libtrain.a")
    done
  done
fi

if ((${#bad[@]})); then
  printf 'src_layers: %s\n' "${bad[@]}" >&2
  fail "${#bad[@]} layering violation(s) under $src"
fi
pass "src/ring and src/ps see only train/exchange.h of the trainer, not each other, and link no trainer code"
