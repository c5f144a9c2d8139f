#!/usr/bin/env bash
# src_layers.sh: the layering the design promises, checked over the sources and the built libraries:
#
#     src/common  <-  src/exchange  <-  src/ring, src/ps  <-  src/train
#
#   - src/common, src/exchange, src/ring and src/ps include nothing of src/train; src/common
#     nothing of exchange, ring or ps; src/exchange nothing of ring or ps;
#   - src/ring never includes from src/ps, nor src/ps from src/ring;
#   - src/ring and src/bench reach the GPU helpers in src/common, not through the model: neither
#     includes src/model/mlp_cuda.h or a check header of src/model;
#   - one fp16 codec: no C/CUDA source but FP16_HOME holds a binary16 conversion (F16C intrinsics,
#     the 0x7c00 exponent mask) or defines a *half_from_float* / *float_from_half* / *f32_to_f16* /
#     *f16_to_f32* function (.cu files may convert with cuda_fp16.h's intrinsics);
#   - libcommon, libexchange, libring and libps (and their _cuda libraries) need no symbol that
#     libtrain.a defines (no trainer code linked).
# An include is resolved as the compiler does: next to the including file first, then under src/.
# Each violation is one line naming the file and what it included or defined.
# Usage: src_layers.sh [SRC_DIR] (default: the source tree's src/; with SRC_DIR, sources only).
. "$(dirname "$0")/common.sh"
# the one fp16 codec, relative to src/
FP16_HOME=common/half.c

src=${1:-$TOP_SRCDIR/src}
for d in common exchange ring ps train; do
  [[ -d $src/$d ]] || fail "$src: not psring's src/ folder (no $d/)"
done
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
    common/*|exchange/*|ring/*|ps/*)
      [[ $rel == train/* ]] && bad+=("$rel_file includes $rel (only src/train may include the trainer)") ;;
  esac
  case $rel_file in
    common/*)
      [[ $rel == exchange/* || $rel == ring/* || $rel == ps/* ]] &&
        bad+=("$rel_file includes $rel (src/common sits below every layer)") ;;
    exchange/*)
      [[ $rel == ring/* || $rel == ps/* ]] && bad+=("$rel_file includes $rel (the interface sits below the topologies)") ;;
    ring/*)
      [[ $rel == ps/* ]] && bad+=("$rel_file includes $rel (the ring must not depend on the PS)") ;;
    ps/*)
      [[ $rel == ring/* ]] && bad+=("$rel_file includes $rel (the PS must not depend on the ring)") ;;
  esac
  case $rel_file in
    ring/*|bench/*)
      [[ $rel == model/mlp_cuda.h || $rel == model/*check*.h ]] &&
        bad+=("$rel_file includes $rel (GPU buffers and checks are src/common's cuda_mem.h, cuda_check.h)") ;;
  esac
done < <(find "$src" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -print0 |
         xargs -0 awk '/^[ \t]*#[ \t]*include[ \t]*"/ { t = $0; sub(/^[^"]*"/, "", t); sub(/".*/, "", t); print FILENAME "\t" t }')

# one fp16 codec: FILE<TAB>WHAT for each conversion found outside FP16_HOME. A definition is a
# line at column 0 naming a codec function whose declaration reaches "{" before ";".
while IFS=$'\t' read -r file what; do
  rel_file=${file#"$src"/}
  [[ $rel_file == "$FP16_HOME" ]] && continue
  bad+=("$rel_file $what: an fp16 conversion outside $FP16_HOME, the one codec")
done < <(find "$src" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -print0 | sort -z |
         xargs -0 awk '
  FNR == 1 { pending = "" }
  {
    line = $0
    if (match(line, /_mm256_cvtps_ph|_mm256_cvtph_ps|_cvtss_sh|_cvtsh_ss|0[xX]7[cC]00/))
      print FILENAME "\tcontains " substr(line, RSTART, RLENGTH)
    if (FILENAME ~ /\.cu$/) next          # cuda_fp16.h intrinsics convert on the device
    if (pending == "" && line ~ /^[A-Za-z_]/ &&
        match(line, /[A-Za-z0-9_]*(half_from_float|float_from_half|f32_to_f16|f16_to_f32)[A-Za-z0-9_]*[ \t]*\(/)) {
      name = substr(line, RSTART, RLENGTH); sub(/[ \t]*\($/, "", name)
      pending = name; line = substr(line, RSTART)
    }
    if (pending != "") {
      b = index(line, "{"); s = index(line, ";")
      if (b && (!s || b < s)) { print FILENAME "\tdefines " pending "()"; pending = "" }
      else if (s) pending = ""
    }
  }' | sort -u)

# the libraries, when built: a symbol a lower layer leaves undefined must not be one libtrain
# defines. Only members whose source still exists count (an archive left from before a file
# moved keeps its old members until it is rebuilt).
members_syms() {   # LIB DIR MODE: "MEMBER SYMBOL" lines of nm MODE (defined or undefined)
  local lib=$1 dir=$2 mode=$3
  # nm -A prints LIB:MEMBER:ADDRESS TYPE SYMBOL (the address blank for undefined ones)
  nm -A $mode "$lib" 2>/dev/null | awk -v lib="$lib" '
    { m = substr($0, length(lib) + 2); sub(/:.*/, "", m); sym = $NF
      base = m; sub(/\.o$/, "", base); sub(/^.*-/, "", base)
      print base "\t" sym }' |
  while IFS=$'\t' read -r base sym; do
    [[ -f $dir/$base.c || -f $dir/$base.cu ]] && printf '%s\n' "$sym"
  done | sort -u
}
lib_train=$TOP_BUILDDIR/src/train/libtrain.a
if [[ $# -eq 0 && -f $lib_train ]]; then
  train_defs=$(members_syms "$lib_train" "$src/train" "--defined-only -g" | grep -v '^$')
  for name in common/libcommon common/libcommon_cuda exchange/libexchange exchange/libexchange_cuda \
              ring/libring ring/libring_cuda ps/libps; do
    lib=$TOP_BUILDDIR/src/$name.a
    [[ -f $lib ]] || continue
    for sym in $(members_syms "$lib" "$src/$(dirname "$name")" -u); do
      grep -qxF "$sym" <<<"$train_defs" && bad+=("src/$name.a needs $sym, defined in src/train/libtrain.a")
    done
  done
fi

if ((${#bad[@]})); then
  printf 'src_layers: %s\n' "${bad[@]}" >&2
  fail "${#bad[@]} layering violation(s) under $src"
fi
pass "src/common <- src/exchange <- src/ring, src/ps <- src/train; ring and ps apart; GPU helpers from src/common; one fp16 codec"
