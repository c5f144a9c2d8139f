#!/usr/bin/env bash
# src_layers.sh: the layering the design promises, checked over the sources and the built libraries:
#
#     src/common  <-  src/exchange  <-  src/ring, src/ps  <-  src/train
#
#   - src/common, src/exchange, src/ring and src/ps include nothing of src/train; src/common,
#     src/data and src/model nothing of exchange, ring or ps; src/exchange nothing of ring or ps;
#   - src/ring never includes from src/ps, nor src/ps from src/ring;
#   - every include of a psring header is written from src/ ("model/mlp.h"), never climbing out
#     of the including file's folder ("../model/mlp.h"), so each header has one spelling;
#   - src/ring and src/bench reach the GPU helpers in src/common, not through the model: neither
#     includes src/model/mlp_cuda.h or a check header of src/model;
#   - one fp16 codec: no C/CUDA source but FP16_HOME holds a binary16 conversion (F16C intrinsics,
#     the 0x7c00 exponent mask) or defines a *half_from_float* / *float_from_half* / *f32_to_f16* /
#     *f16_to_f32* function (.cu files may convert with cuda_fp16.h's intrinsics);
#   - libcommon, libexchange, libring and libps (and their _cuda libraries) need no symbol that
#     libtrain.a defines (no trainer code linked);
#   - each topology in src/train/topology_list.c has one descriptor in one folder, and nothing in
#     src/train, src/common, src/exchange or the launcher names it outside that folder and the list;
#   - no function in src/ is over 80 lines, no file over 400;
#   - ZeroMQ only in the PS's transport (and auth, keygen, the latency shim, the PS benchmark), the
#     transport a leaf of src/ps; MPI initialised only by the shared start-up (and bench's driver).
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
  [[ $target == ../* ]] &&
    bad+=("${file#"$src"/} includes \"$target\" (write it from src/, as \"${target#../}\": no \"../\" includes)")
  resolved=""
  for cand in "$dir/$target" "$src/$target"; do
    if [[ -f $cand ]]; then resolved=$(realpath -m "$cand"); break; fi
  done
  [[ -n $resolved ]] || continue            # config.h and other generated or system headers
  rel_file=${file#"$src"/} rel=${resolved#"$src"/}
  case $rel_file in
    common/*|data/*|model/*|exchange/*|ring/*|ps/*)
      [[ $rel == train/* ]] && bad+=("$rel_file includes $rel (only src/train may include the trainer)") ;;
  esac
  case $rel_file in
    common/*)
      [[ $rel == exchange/* || $rel == ring/* || $rel == ps/* ]] &&
        bad+=("$rel_file includes $rel (src/common sits below every layer)") ;;
    data/*|model/*)
      [[ $rel == exchange/* || $rel == ring/* || $rel == ps/* ]] &&
        bad+=("$rel_file includes $rel (the data and the model sit below the exchange)") ;;
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

# The topologies describe themselves (src/exchange/topology.h). Each name in the one list
# (src/train/topology_list.c, its TOPOLOGIES line) has one descriptor, "const topology_t
# topology_NAME = ", in one folder of src/; outside that folder and the list, neither the trainer
# (src/train), the layers below it (src/common, src/exchange) nor the launcher names it: no include
# of its folder's headers, no "NAME" literal in code (comments are stripped), no TOPO_ constant.
list=$src/train/topology_list.c
names=$(sed -n 's/^#define TOPOLOGIES(X) //p' "$list" 2>/dev/null | grep -o 'X([a-z_0-9]*)' | sed 's/^X(\(.*\))$/\1/')
[[ -n $names ]] || bad+=("train/topology_list.c: no '#define TOPOLOGIES(X) X(name) ...' line")
code_of() { gcc -fpreprocessed -dD -E -P -x c "$1" 2>/dev/null; }   # a C file without its comments
for n in $names; do
  defs=$(grep -rlE "^const topology_t topology_$n = " "$src" --include='*.c' | sort)
  if [[ $(wc -w <<<"$defs") -ne 1 ]]; then
    bad+=("topology $n: not one descriptor 'const topology_t topology_$n = ' under src/ (found: ${defs:-none})")
    continue
  fi
  home=$(dirname "$defs"); home_rel=${home#"$src"/}
  while IFS= read -r f; do
    rel_f=${f#"$src"/}
    [[ $f == "$list" || $(dirname "$f") == "$home" ]] && continue
    code=$(code_of "$f")
    grep -qE "#[[:space:]]*include[[:space:]]*\"(\.\./)?$home_rel/" <<<"$code" && [[ $home_rel != exchange ]] &&
      bad+=("$rel_f includes from $home_rel/ (only topology $n's folder and the list name it)")
    grep -qF "\"$n\"" <<<"$code" && bad+=("$rel_f names topology $n (\"$n\"): only its folder and the list may")
  done < <(find "$src/train" "$src/common" "$src/exchange" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \))
  [[ -f $TOP_SRCDIR/psring && $# -eq 0 ]] &&
    grep -vE '^[[:space:]]*#' "$TOP_SRCDIR/psring" | grep -qE "[!=]=[[:space:]]*\"?$n\"?([[:space:]]|\]|\)|$)" &&
    bad+=("psring compares something with topology $n: the launcher learns a topology's needs from --describe")
done
for f in $(grep -rlE '\bTOPO_[A-Z]+' "$src" --include='*.[ch]' 2>/dev/null); do
  bad+=("${f#"$src"/} uses a TOPO_ constant: topologies are descriptors, not cases")
done

# No function over 80 lines in src/ (a main is a list of named calls; a long function is steps
# that want names). A function's signature starts at column 0 with a name and "(" (no "=" before
# it: a table is no function); it may wrap over lines; its body starts at the first "{" that
# ends a line before any ";" and ends at the next "}" at column 0. No file in src/ over 400 lines.
while IFS=$'\t' read -r file n what; do
  bad+=("${file#"$src"/}: $what is $n lines (at most 80)")
done < <(find "$src" -type f \( -name '*.c' -o -name '*.cu' \) -print0 | sort -z | xargs -0 awk '
  FNR == 1 { start = 0; sig = "" }
  !start && sig == "" && /^[A-Za-z_][^=;]*\(/ && !/^(typedef|struct|enum|union)[ \t]/ {
    sig = $0; sub(/\(.*/, "", sig); sub(/.*[ \t*]/, "", sig) }
  !start && sig != "" {
    if (/;[ \t]*$/ && !/\{[ \t]*$/) sig = ""
    else if (/\{[ \t]*$/) { start = FNR; name = sig; sig = "" } }
  /^\}/ && start { n = FNR - start + 1; if (n > 80) print FILENAME "\t" n "\t" name "()"; start = 0 }')
while read -r n file; do
  [[ $file == total ]] || bad+=("${file#"$src"/}: $n lines (at most 400: a file is one concept)")
done < <(find "$src" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -print0 | xargs -0 wc -l |
         awk '$1 > 400')

# The rooms of the PS and of the start-up (docs/design.md):
#   - ZeroMQ is called only by the PS's transport (src/ps/transport.c; CurveZMQ's keys and ZAP
#     handler in auth.c and keygen.c), the latency shim and the PS benchmark's raw ZeroMQ peer;
#   - the transport is a leaf of the PS: it includes no other header of src/ps but the wire
#     format, the keys and the ZeroMQ checks, and (when built) calls no function that another
#     member of libps.a defines but those;
#   - MPI is initialised in one place, the shared start-up (src/exchange/startup.c), which both
#     topologies call; the micro-benchmarks' driver starts its own (src/bench/bench_driver.c).
zmq_homes=" ps/transport.c ps/transport.h ps/auth.c ps/auth.h ps/keygen.c ps/zcheck.h shim/inject-latency.c bench/ps.c "
transport_needs=" ps/transport.h ps/wire.h ps/auth.h ps/zcheck.h ps/ps_config.h "
while IFS= read -r f; do
  rel_f=${f#"$src"/}
  # the code without its comments and string literals (a message may name a ZeroMQ call)
  code=$(code_of "$f" | sed -E 's/"([^"\\]|\\.)*"/""/g')
  if grep -qE '\bzmq_[a-z_]+|#[[:space:]]*include[[:space:]]*<zmq\.h>' <<<"$code" && [[ $zmq_homes != *" $rel_f "* ]]; then
    bad+=("$rel_f calls ZeroMQ (only the PS's transport, auth, keygen, the latency shim and bench/ps.c may)")
  fi
  if grep -qE '\bMPI_Init(_thread)?[[:space:]]*\(' <<<"$code" && [[ $rel_f != exchange/startup.c && $rel_f != bench/bench_driver.c ]]; then
    bad+=("$rel_f initialises MPI (the one start-up is exchange/startup.c)")
  fi
done < <(find "$src" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) | sort)
for f in "$src/ps/transport.c" "$src/ps/transport.h"; do
  [[ -f $f ]] || { bad+=("ps/${f##*/} missing: the PS's transport layer"); continue; }
  for inc in $(awk '/^[ \t]*#[ \t]*include[ \t]*"/ { t = $0; sub(/^[^"]*"/, "", t); sub(/".*/, "", t); print t }' "$f"); do
    [[ -f $src/ps/$inc ]] && inc=ps/$inc
    [[ $inc == ps/* && $transport_needs != *" $inc "* ]] &&
      bad+=("ps/${f##*/} includes $inc (the transport is a leaf: it knows the wire, not the server or worker)")
  done
done
for t in ring/ring_exchange.c ps/ps_startup.c; do
  grep -q 'startup_begin' "$src/$t" 2>/dev/null || bad+=("$t does not start on startup_begin (exchange/startup.h)")
done
lib_ps=$TOP_BUILDDIR/src/ps/libps.a
if [[ $# -eq 0 && -f $lib_ps ]]; then
  # "MEMBER SYMBOL" for defined (T) and undefined (U) symbols of each member of libps.a
  above=$(nm -A --defined-only -g "$lib_ps" 2>/dev/null | awk '{ m = $1; sub(/:[^:]*$/, "", m); sub(/.*:/, "", m); sub(/\.o$/, "", m); sub(/^.*-/, "", m); print m "\t" $NF }' |
          awk -F'\t' '$1 != "transport" && $1 != "wire" && $1 != "auth" { print $2 }' | sort -u)
  for sym in $(nm -A -u "$lib_ps" 2>/dev/null | awk '{ m = $1; sub(/:[^:]*$/, "", m); sub(/.*:/, "", m) } m ~ /(^|-)transport\.o$/ { print $NF }' | sort -u); do
    grep -qxF "$sym" <<<"$above" && bad+=("ps/transport.c calls $sym, defined above it in libps.a (the transport is a leaf)")
  done
fi

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
pass "src/common <- src/exchange <- src/ring, src/ps <- src/train; ring and ps apart; GPU helpers from src/common; one fp16 codec; topologies as descriptors named only in their folders and the list; no function over 80 lines, no file over 400; ZeroMQ only in the transport, a leaf; one start-up"
