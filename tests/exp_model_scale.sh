#!/usr/bin/env bash
# exp_model_scale.sh: the cost model at cluster scale (costmodel.cluster_parts, exposed,
# cluster_step) against values computed by hand; with one GPU a host and no overlap it is the flat
# model to the last digit; the tree and the ring cross where the hand says; psring model --predict,
# --extrapolate and --published on tests/fixtures/published_small.csv (errors computed by hand in
# its comments), a row's framework, --check; the shipped points' citations; bad input: one line, exit 2.
. "$(dirname "$0")/common.sh"
command -v python3 >/dev/null || skip "python3 missing"
scratch
MODEL="$TOP_SRCDIR/experiments/model"
python3 - <<'PY' || fail "formulas"
import math
from psringlib import costmodel as cm
def close(a, b, what, rel=1e-12):
    assert abs(a - b) <= rel * max(abs(b), 1e-30), "%s: %.12g, want %.12g" % (what, a, b)
def parts(topo, H, G, want, **kw):
    got = cm.cluster_parts(topo, H, G, 1e6, 1e-5, 1e-9, kw.pop("beta_i", 1e-10), kw.pop("gamma", 0.0), **kw)
    for g, w, name in zip(got, want, ("latency", "bytes", "summing")):
        close(g, w, "%s H=%d G=%d %s" % (topo, H, G, name))
# n = 1e6 B, alpha 10 us, beta 1 ns/B (8 Gbit/s), beta_i 0.1 ns/B
parts("ring", 2, 4, (14e-5, 1.75e-3, 0))                   # 2x7 alpha; 2x7/8 n at the NIC's beta (the slowest edge)
parts("ring", 1, 4, (6e-5, 1.5e-4, 0))                     # one host: every edge intra, 2x3/4 n beta_i
parts("hier", 2, 4, (8e-5, 1.5e-4 + 1e-3, 8.75e-5), gamma=1e-10)   # 2(3+1) alpha; 2x3/4 n beta_i + 2x1/2 n beta; 7/8 n gamma
parts("tree", 8, 1, (6e-5, 2e-3, 1e-4), gamma=1e-10)       # 2 log2 8 alpha; 2n beta; n gamma
parts("tree", 2, 4, (8e-5, 2e-3, 0))                       # 2(1 + 3) alpha; 2n max(beta, beta_i)
parts("ps", 2, 4, (4e-5, 2e-3, 1e-4), gamma=1e-10, k=2)    # ps_time over 2 hosts, k=2, whole shards: n in, then n out
parts("ps", 2, 4, (0, 1.5e-2, 0), beta_i=1e-8, k=2)        # a slow intra-host path: its reduce + broadcast, 2x3/4 n beta_i
# BytePS' server, 4 threads summing while the link runs: the link (2 ms) outlasts the sum (1e6 x 0.1 ns / 4 = 25 us),
# which adds one slice's sum (the whole shard, 5e5 x 0.1 ns / 4); at 10 ns/B on 2 threads the sum (5 ms) outlasts the
# link, which adds one slice's arrival (5e5 x 1 ns)
parts("ps", 2, 4, (4e-5, 2e-3, 1.25e-5), gamma=1e-10, k=2, server_cores=4)
parts("ps", 2, 4, (4e-5, 5e-4, 5e-3), gamma=1e-8, k=2, server_cores=2)
# slices of 64 KiB: n + a fill of 2 slices through the link (ps_time's), then the last slice's sum
parts("ps", 2, 4, (4e-5, 1e-3 + 2 * 65536e-9, 65536e-10 / 4), gamma=1e-10, k=2, slice_bytes=65536, server_cores=4)
assert cm.cluster_parts("ps", 1, 1, 1e6, 1, 1, 1, 1, k=1) == (0.0, 0.0, 0.0), "one GPU exchanges nothing"
# G = 1: the flat formulas, to the last digit
for N in (2, 3, 4, 8, 100):
    for a, b, g in ((1e-5, 8e-11, 0.0), (3.3e-5, 8e-10, 2.1e-12)):
        assert sum(cm.cluster_parts("ring", N, 1, 4.1e5, a, b, 5 * b, g)) == cm.ring_time(N, 4.1e5, a, b, g), N
        close(sum(cm.cluster_parts("hier", N, 1, 4.1e5, a, b, 5 * b, g)), cm.ring_time(N, 4.1e5, a, b, g), "hier G=1", 1e-15)
        for S, k in ((0, 1), (0, N), (N, 0)):
            assert sum(cm.cluster_parts("ps", N, 1, 4.1e5, a, b, 5 * b, g, S, k, 65536)) == cm.ps_time(N, 4.1e5, a, b, g, S, k, slice_bytes=65536)
            if g == 0:   # nothing to sum: a server that sums pipelined is the flat PS
                assert sum(cm.cluster_parts("ps", N, 1, 4.1e5, a, b, 5 * b, g, S, k, 65536, 4)) == cm.ps_time(N, 4.1e5, a, b, g, S, k, slice_bytes=65536)
        cal = {"alpha_s": a, "beta_s_per_byte": b, "gamma_s_per_byte": g}
        assert cm.cluster_step("ring", N, 1, 4.1e5, 0.02, a, b, b, g)[0] == cm.step_time("ring", N, 4.1e5, cal, 0.02)[0], "overlap 0: today's step"
# what backward (6 s) leaves of a 10 s exchange: in 4 buckets the last bucket (10/4) or the queue beyond
# backward (10 - 6 x 3/4 = 5.5); pieces too small to count: what outlasts backward (4, or none)
close(cm.exposed(10, 6), 10, "no overlap")
close(cm.exposed(10, 6, buckets=4), 5.5, "4 buckets: the queue")
close(cm.exposed(2, 6, buckets=4), 0.5, "4 buckets: the last one")
close(cm.exposed(10, 6, buckets=math.inf), 4, "streamed: backward hides at most itself")
close(cm.exposed(2, 6, buckets=math.inf), 0, "streamed: all hidden")
# each framework's buckets of 100 MiB, from its code's constant: DDP 25 MiB (4, fused), Horovod 64 MiB (2, fused),
# BytePS 4096000 B (26 partitions that stream), TensorFlow's PS pieces too small to count, none: one after backward
n = 100 * 2 ** 20
want = {"ddp": (4, True), "horovod": (2, True), "byteps": (26, False), "tf-ps": (math.inf, False), "none": (1, False)}
assert {f: cm.buckets(f, n) for f in cm.FRAMEWORKS} == want, {f: cm.buckets(f, n) for f in cm.FRAMEWORKS}
assert cm.buckets("horovod", n, 10 * 2 ** 20) == (10, True), "a bucket size given"
# shares in release order: 10 s of exchange under 6 s of backward, 0.75 then 0.25: the first ready at 4.5 s and
# done at 12, the second ready at 6, done at 14.5: 8.5 s exposed
close(cm.exposed(10, 6, [0.75, 0.25]), 8.5, "two unequal buckets")
# this trainer's --overlap on 784-768-768-768-10, the layers last first (7690, 590592, 590592, 602880 parameters):
# the PS a layer each; the ring fuses until a bucket holds 4 MiB of float32 (1048576): 1188874, then 602880
n = 1791754
assert cm.release("784,768,768,768,10", "ps") == [7690 / n, 590592 / n, 590592 / n, 602880 / n], cm.release("784,768,768,768,10", "ps")
assert cm.release("784,768,768,768,10", "ring") == [1188874 / n, 602880 / n], cm.release("784,768,768,768,10", "ring")
# a demo row run with --overlap (--compare): the ring on 4 hosts, T = 6 alpha + 1.5 x 4n beta = 10.8105 ms; backward
# 20 ms makes the first bucket by 13.27 ms, which ends at 20.44 ms, after backward: T - 20 ms x 602880 / n exposed
row = dict(topology="ring", workers="4", servers="0", server_hosts="0", params=str(n), fp16="0", layers="784,768,768,768,10", overlap="1")
T = cm.ring_time(4, 4 * n, 1e-5, 1e-9, 0.0)
close(cm.row_time(row, {"alpha_s": 1e-5, "beta_s_per_byte": 1e-9, "gamma_s_per_byte": 0.0}, 0.03)[1], T - 0.02 * 602880 / n, "--compare, --overlap")
try:
    cm.buckets("mxnet", n); raise AssertionError("mxnet has buckets")
except ValueError as e:
    assert "framework 'mxnet' has no bucket defaults (none, ddp, horovod, byteps, tf-ps)" in str(e), e
close(cm.BACKWARD_SHARE, 2 / 3, "backward is 2/3 of compute")
# buckets of 250 kB on 4 hosts: each pays its 6 alpha: 4 x (6e-5 + 1.5 x 2.5e5 x 1e-9) = 1.74 ms, of which
# backward (2/3 of 3 ms) leaves max(0.435, 1.74 - 1.5) ms
step, total, shown, _ = cm.cluster_step("ring", 4, 1, 1e6, 0.003, 1e-5, 1e-9, 1e-9, 0.0, framework="ddp", bucket_bytes=2.5e5)
close(total, 1.74e-3, "bucketed total"); close(shown, 4.35e-4, "bucketed exposed"); close(step, 3.435e-3, "bucketed step")
# streamed (BytePS' partitions of 2.5e5 B), the same 4 pieces: the messages once, 6e-5 + 1.5e-3 s, max(0.39, 1.56 - 1.5) ms
step, total, shown, _ = cm.cluster_step("ring", 4, 1, 1e6, 0.003, 1e-5, 1e-9, 1e-9, 0.0, framework="byteps", bucket_bytes=2.5e5)
close(total, 1.56e-3, "streamed total"); close(shown, 3.9e-4, "streamed exposed")
# the tree against the ring, G = 1, n beta = 1 ms, alpha 10 us: ring - tree = 2(N-1-log2 N) alpha - 2 n beta / N,
# positive from (N-1-log2 N) N > 100: N=12 gives 88.98, N=13 107.9: the tree wins from N = 13
wins = [N for N in range(2, 65) if sum(cm.cluster_parts("tree", N, 1, 1e6, 1e-5, 1e-9, 0, 0)) < cm.ring_time(N, 1e6, 1e-5, 1e-9, 0)]
assert wins == list(range(13, 65)), wins
PY

# --predict with one GPU a host and no overlap: costmodel's ring_time, to the last digit
while read -r H rate A X; do
  row=$("$MODEL" --predict --topology ring --hosts "$H" --gpus-per-host 1 --framework none --model resnet50 --link-rate "$rate" \
        --alpha-us "$A" --line-fraction 1 --gamma-ns-per-byte "$X" --compute-ms 50 | tail -1) || fail "--predict H=$H: $row"
  want=$(python3 -c "import sys; from psringlib import costmodel as cm, units; t = cm.ring_time($H, 25600000 * 4, $A * 1e-6, 8 / units.rate_bps('$rate'), $X * 1e-9) * 1e3
print('%.6f,%.6f,%.6f' % (t, t, 50 + t))")
  [[ $row == "ring,$H,1,$H,25600000,"*",50.000000,$want,"* ]] || fail "--predict H=$H $rate: $row, want exchange, exposed, step $want"
done <<EOF2
2 10g 10 0
4 25Gbit 3.5 0.01
64 100gbit 50 0.002
EOF2
out=$("$MODEL" --predict --topology hier --hosts 2 --gpus-per-host 4 --params 250000 --link-rate 8g --intra-rate 80g --alpha-us 10 --line-fraction 1 \
      --framework horovod --bucket-mb 0.5 --compute-ms 30) || fail "--predict hier: $out"
# n = 1e6 B in 2 fused buckets of 0.5 MiB, each 2(3+1) x 10 us + 2x3/4 x 5e5 x 0.1 ns + 2x1/2 x 5e5 x 1 ns = 0.655 ms;
# backward (20 ms) leaves the last: step 30.655 ms, 8 x 30/30.655
[[ $(head -1 <<<"$out") == "topology,hosts,gpus_per_host,workers,params,link_rate,compute_ms,exchange_ms,exposed_ms,step_ms,speedup,efficiency" ]] \
  || fail "--predict header: $out"
[[ $(tail -1 <<<"$out") == "hier,2,4,8,250000,8gbit,30.000000,1.310000,0.655000,30.655000,7.8291,0.9786" ]] || fail "--predict hier: $out"
# hier-host, Horovod 0.16's: hier's 1.23 ms, each GPU's n/4 to host memory and back over PCIe 3 x16
# (2 x 2.5e5 B x 8 / 126.03 Gbit/s = 31.738 us), the hosts' CPUs summing (H-1)/H x n/4 at 1 ns/B (125 us)
out=$("$MODEL" --predict --topology hier-host --hosts 2 --gpus-per-host 4 --params 250000 --link-rate 8g --intra-rate 80g --alpha-us 10 \
      --line-fraction 1 --framework none --gamma-ns-per-byte 1 --compute-ms 30 | tail -1)
[[ $out == "hier-host,2,4,8,250000,8gbit,30.000000,1.386738,"* ]] || fail "--predict hier-host: $out, want exchange 1.386738 ms"
# tcp's line at a link rate: at most one stream's 14.8 Gbit/s: at 100 Gbit/s 0.148 (2 x 30.1 us + 8e6 / 14.8e9 s
# = 600.741 us), at 10 Gbit/s the framing's 1448/1538 (60.2 us + 8e6 / 9.41482e9 s = 909.924 us)
for rw in "100g 0.600741" "10g 0.909924"; do
  out=$("$MODEL" --predict --topology ring --hosts 2 --gpus-per-host 1 --params 250000 --link-rate "${rw% *}" --transport tcp --framework none \
        --compute-ms 30 | tail -1)
  [[ $(cut -d, -f8 <<<"$out") == "${rw#* }" ]] || fail "--predict tcp at ${rw% *}: $out, want exchange ${rw#* } ms"
done
# a PS on 2 hosts and 2 server hosts, whole shards, servers summing at 1 ns/B: after the link on one core
# 4 x 10 us + 2e6 B x 1 ns + 1e6 B x 1 ns = 3.04 ms; on 4 threads while the link runs 0.04 + 2 + 5e5 x 1 ns / 4 = 2.165 ms
for c in "0 3.040000" "4 2.165000"; do
  out=$("$MODEL" --predict --topology ps --hosts 2 --gpus-per-host 1 --server-hosts 2 --params 250000 --link-rate 8g --alpha-us 10 --line-fraction 1 \
        --framework none --compute-ms 30 --ps-chunk-kb 0 --gamma-ns-per-byte 1 --server-cores ${c% *} | tail -1)
  [[ $out == "ps,2,1,2,250000,8gbit,30.000000,${c#* },${c#* },"* ]] || fail "--predict ps --server-cores ${c% *}: $out, want ${c#* } ms"
done
# --extrapolate, resnet50 on hosts of 8 GPUs at 100 Gbit, 4 buckets (25 MiB) under backward (2/3 of 100 ms):
# hand: at 16 GPUs the ring pays 2 x 15/16 x 8.19 ms at the NIC, hier 1.43 + 8.19 ms; at 128 hier pays
# 1.76 + 1.43 + 15.36 = 18.55 ms, the tree 0.88 + 16.38 = 17.26 ms (at 64: hier 16.89, tree 17.18)
X10=(--alpha-us 10 --line-fraction 1)   # the hand values' alpha and whole line; servers sum at gamma_server, 0.03 ns/B
"$MODEL" --extrapolate "${X10[@]}" --out "$SCRATCH/fig" >"$SCRATCH/ex" || fail "--extrapolate: $(cat "$SCRATCH/ex")"
[[ $(grep -cE '^ +[0-9]+ ' "$SCRATCH/ex") == 8 ]] || fail "--extrapolate: not 8 to 1024 GPUs: $(cat "$SCRATCH/ex")"
# from 32 GPUs one server host a worker host (n through each NIC) beats hier's 2(H-1)/H n; at 128 its 3.07 ms of summing
# (102 MB x 0.03 ns/B) against the tree's latency hands it to the tree
grep -q "^winner changes: ring -> hier at 16 GPUs (bytes .*; hier -> ps-H at 32 GPUs (bytes .*; ps-H -> tree at 128 GPUs (server CPU" "$SCRATCH/ex" || fail "--extrapolate winners: $(tail -1 "$SCRATCH/ex")"
[[ $(head -c 4 "$SCRATCH/fig/extrapolate.png" | od -An -c | tr -d ' ') == *PNG* ]] && grep -q "<svg" "$SCRATCH/fig/extrapolate.svg" \
  || fail "--extrapolate --out: no PNG and SVG"
# on 25 Gbit links ps-H holds 32 to 128 GPUs, its summing the tree's margin at 256 on one core, not on 4 threads that sum
# while the link runs (the 3.07 ms hide under 32.8 ms of link)
"$MODEL" --extrapolate "${X10[@]}" --link-rate 25gbit | grep -q "; hier -> ps-H at 32 GPUs (bytes .*; ps-H -> tree at 256 GPUs (server CPU" \
  || fail "--extrapolate at 25 Gbit: server CPU"
"$MODEL" --extrapolate "${X10[@]}" --link-rate 25gbit --server-cores 4 | grep -q "; hier -> ps-H at 32 GPUs (bytes .*; ps-H -> tree at 256 GPUs (latency" \
  || fail "--extrapolate at 25 Gbit, --server-cores 4: ps-H from 32 to 128 GPUs"

# --published on the fixture: the errors its comments compute by hand
FIX="$TOP_SRCDIR/tests/fixtures/published_small.csv"
"$MODEL" --published "$FIX" >"$SCRATCH/pub" || fail "--published: $(cat "$SCRATCH/pub")"
for want in "fx-ring .* 0.8045 +3.14%" "fx-ps .* 0.8328 +4.10%" "fx-tree .* 1.9324 +7.36%" "fx-hier .* 0.8696 +3.38%" \
            "^median error 3.74%, worst 7.36% \(fx-tree\), over 4 points" "^winner g1: published ps, model ps: right"; do
  grep -Eq "$want" "$SCRATCH/pub" || fail "--published: no '$want' in $(cat "$SCRATCH/pub")"
done
sed 's/,0.80,g1,/,0.68,g1,/' "$FIX" >"$SCRATCH/swap.csv"
"$MODEL" --published "$SCRATCH/swap.csv" | grep -q "^winner g1: published ring, model ps: WRONG" || fail "--published: a wrong winner not said"
# fx-ps's servers on 4 threads that sum while the link runs: 0.4 + 16.671 ms of link + one 1 MiB slice's sum at
# 0.03 ns/B / 4 (0.008 ms) = 17.079 ms; eff 100/117.079 = 0.8541, error 6.77%; the ring's rows keep theirs
sed 's/^# left out: nothing/# server,fixture-a,4,made up\n&/' "$FIX" >"$SCRATCH/cores.csv"
"$MODEL" --published "$SCRATCH/cores.csv" >"$SCRATCH/pub4" || fail "--published with a server line: $(cat "$SCRATCH/pub4")"
for want in "fx-ps .* k=4 c=4 .* 0.8541 +6.77%" "fx-ring .* 0.8045 +3.14%" "^winner g1: published ps, model ps: right"; do
  grep -Eq "$want" "$SCRATCH/pub4" || fail "--published with a server line: no '$want' in $(cat "$SCRATCH/pub4")"
done

# a row's framework says when its exchange starts: fx-tree's with none (after backward): 2 hosts 100 + 8.16 ms,
# one host 100 + 1.14 ms; speedup 2 x 101.14/108.16 = 1.8702, error 3.90%
sed 's/^\(fx-tree,.*\),ddp,/\1,none,/' "$FIX" >"$SCRATCH/ov.csv"
"$MODEL" --published "$SCRATCH/ov.csv" >"$SCRATCH/pub5" || fail "--published with framework none: $(cat "$SCRATCH/pub5")"
for want in "fx-tree +tree H=2 G=8 100G rdma none .* 1.8702 +3.90%" "fx-hier .* 0.8696 +3.38%" "^median error 3.64%, worst 4.10% \(fx-ps\)"; do
  grep -Eq "$want" "$SCRATCH/pub5" || fail "--published with framework none: no '$want' in $(cat "$SCRATCH/pub5")"
done
# gradient accumulation: fx-tree exchanges once per 4 micro-batches of 100 ms, its one-host baseline once per 2, none
# hidden: 2 hosts 4 x 100 + 8.16 ms, one host 2 x 100 + 1.14 ms; speedup 2 x (400/408.16) / (200/201.14) = 1.9712, error 9.51%
sed 's/,assumed$/,assumed,accumulation,baseline_accumulation/; s/^\(fx-tree,.*\)$/\1,4,2/; s/^\(fx-[rph].*\)$/\1,,/' "$SCRATCH/ov.csv" >"$SCRATCH/acc.csv"
"$MODEL" --published "$SCRATCH/acc.csv" >"$SCRATCH/pub7" || fail "--published with accumulation: $(cat "$SCRATCH/pub7")"
for want in "fx-tree +tree H=2 G=8 100G rdma none acc=4 .* 1.9712 +9.51%" "fx-ring .* 0.8045 +3.14%" "^median error 3.74%, worst 9.51% \(fx-tree\)"; do
  grep -Eq "$want" "$SCRATCH/pub7" || fail "--published with accumulation: no '$want' in $(cat "$SCRATCH/pub7")"
done
python3 - <<'PY' || fail "accumulated_step"
from psringlib import costmodel as cm
# 4 micro-batches of 30 ms, the exchange of 1.31 ms in 2 buckets (hier, as --predict's hand value): the last backward
# leaves the last bucket, 0.655 ms
step, total, shown, _ = cm.accumulated_step(4, "hier", 2, 4, 1e6, 0.03, 1e-5, 1e-9, 1e-10, 0.0, framework="horovod", bucket_bytes=2 ** 19)
assert abs(step - (4 * 0.03 + 0.655e-3)) < 1e-15 and abs(total - 1.31e-3) < 1e-15 and abs(shown - 0.655e-3) < 1e-15, (step, total, shown)
assert cm.accumulated_step(1, "ring", 4, 1, 1e6, 0.02, 1e-5, 1e-9, 1e-9, 0.0) == cm.cluster_step("ring", 4, 1, 1e6, 0.02, 1e-5, 1e-9, 1e-9, 0.0)
PY
# --check: the fixture's rows without its '#' lines run through the fixture's assumptions and are reported apart
grep -v '^#' "$FIX" >"$SCRATCH/chk.csv"
"$MODEL" --published "$SCRATCH/ov.csv" --check "$SCRATCH/chk.csv" >"$SCRATCH/pub6" || fail "--check: $(cat "$SCRATCH/pub6")"
sed -n '/^independent check, through the assumptions above/,$p' "$SCRATCH/pub6" >"$SCRATCH/chk.out"
for want in "fx-tree +tree H=2 G=8 100G rdma ddp +speedup .* 1.9324 +7.36%" "^median error 3.74%, worst 7.36% \(fx-tree\), over 4 points"; do
  grep -Eq "$want" "$SCRATCH/chk.out" || fail "--check: no '$want' after its heading in $(cat "$SCRATCH/pub6")"
done
sed '/^independent check/q' "$SCRATCH/pub6" | grep -q "^median error 3.64%, worst 4.10% (fx-ps), over 4 points" \
  || fail "--check moved the --published table: $(cat "$SCRATCH/pub6")"

# bound rows (what the source leaves unstated): the range over the transports with no overlap and its
# framework's, inside or outside by its distance; listed apart, so a file of bounds alone has no statistics
python3 - "$FIX" "$SCRATCH/bound.csv" <<'PY' || fail "bound fixture"
import csv, io, sys
lines = open(sys.argv[1]).read().splitlines(keepends=True)
rows = list(csv.reader(io.StringIO("".join(l for l in lines if not l.startswith("#")))))
rows[0].append("bound")
for r in rows[1:]:
    r.append("transport")
out = io.StringIO()
csv.writer(out, lineterminator="\n").writerows(rows)
open(sys.argv[2], "w").write("".join(l for l in lines if l.startswith("#")) + out.getvalue())
PY
"$MODEL" --published "$SCRATCH/bound.csv" >"$SCRATCH/pub8" || fail "--published with bounds only: $(cat "$SCRATCH/pub8")"
# fx-ring: its own file's tcp line gives 0.8045 (the +3.14% above), the lower end: 0.78 is outside by 3.14%
for want in "^no point whose setup its source states: no error statistics$" \
            "^bound fx-ring \(ring H=4 G=1 100G tcp none; unstated: transport\): model 0\.8045\.\..* published 0.78: OUTSIDE by 3.14%$" \
            "^bound fx-tree .* published 1.8: inside$" "^winner g1: published ps, model ps: right"; do
  grep -Eq "$want" "$SCRATCH/pub8" || fail "--published with bounds only: no '$want' in $(cat "$SCRATCH/pub8")"
done
! grep -q "^median error" "$SCRATCH/pub8" || fail "--published: statistics over bounds: $(cat "$SCRATCH/pub8")"

# the shipped points: at least 15 from at least 3 sources, every row cited (where, url, quote, what it assumed);
# the model names BytePS the winner over Horovod+NCCL, as published; Horovod's own figures go through --check only
DATA="$TOP_SRCDIR/data"
"$MODEL" --published "$DATA/published-scaling.csv" --check "$DATA/published-horovod.csv" >"$SCRATCH/ship" || fail "shipped points: $(cat "$SCRATCH/ship")"
grep -q "^winner byteps-bert-256: published ps, model ps: right" "$SCRATCH/ship" || fail "shipped points: winner: $(cat "$SCRATCH/ship")"
# Horovod+NCCL's 0.70 (its transport and overlap unstated) is a bound: listed apart, its range over the transports
# with no overlap and Horovod's fusion buckets holds 0.70, and its best case still loses to BytePS (the winner above)
grep -Eq "^bound byteps-bert-256-nccl \(hier-host H=32 G=8 100G rdma horovod; unstated: transport; overlap\): model 0\.[0-6][0-9]*\.\.0\.[7-9][0-9]* .*published 0.70: inside$" \
  "$SCRATCH/ship" || fail "shipped bound: $(grep -i bound "$SCRATCH/ship")"
! grep -q "^byteps-bert-256-nc" "$SCRATCH/ship" || fail "the bound point among the points: $(cat "$SCRATCH/ship")"
# nvbert-dgx1-s128-4 by hand: 4 DGX-1 (8 GPUs), 680 MB of fp16 gradients, 16 sequences a micro-batch at 109.28/s (146.413 ms),
# 128 micro-batches an all-reduce (configurations.yml), none hidden. Ring over 32 GPUs at the NIC's 400G x 0.88: 62 x 6.6 us +
# 2 x 31/32 x 680e6 B x 8 / 352e9 = 30.352 ms: 128 c / (128 c + 30.352) = 0.998383; its 1-node baseline, 512 micro-batches,
# inside the host on NVLink at 1200 Gbit/s: 14 x 6.6 us + 2 x 7/8 x 680e6 x 8 / 1.2e12 = 8.026 ms: 0.999893;
# speedup 4 x 0.998383 / 0.999893 = 3.9940 against 3.53 published: 13.14%
grep -Eq "^nvbert-dgx1-s128-4 +ring H=4 G=8 400G rdma none acc=128 +speedup +3.53 +3.9940 +13.14%" "$SCRATCH/ship" \
  || fail "shipped nvbert-dgx1-s128-4: $(grep nvbert-dgx1-s128-4 "$SCRATCH/ship")"
# every NVIDIA row exchanges once per its configurations.yml job's GRADIENT_STEPS, and cites it
python3 - "$DATA/published-scaling.csv" <<'PY' || fail "shipped accumulation"
import sys
from psringlib import results
want = {"dgx1-s128-4": 128, "dgx1-s128-16": 32, "dgx1-s512-4": 256, "dgx1-s512-16": 64, "dgx2h-s128-4": 16, "dgx2h-s128-16": 4,
        "dgx2h-s128-64": 1, "dgx2h-s512-4": 64, "dgx2h-s512-16": 16, "dgx2h-s512-64": 4}
rows = {r["id"]: r for r in results.read_rows(sys.argv[1], [])}
for k, a in want.items():
    r = rows["nvbert-" + k]
    assert int(r["accumulation"]) == a and "configurations.yml at NVIDIA/DeepLearningExamples 6fe463f" in r["assumed"], (k, r["accumulation"])
for r in rows.values():
    assert (r.get("accumulation") or "1") == "1" or "accumulation %s:" % r["accumulation"] in r["assumed"], r["id"]
PY

# the constants: every entry has a value, a unit and a source (measured, cited or assumed); the code reads each name
# it names through const(), and every entry is read (the transports', intra paths' and models' by their prefix)
"$MODEL" --constants >"$SCRATCH/const" || fail "--constants: $(cat "$SCRATCH/const")"
python3 - "$SCRATCH/const" "$TOP_SRCDIR/experiments/model" "$TOP_SRCDIR/experiments/psringlib/costmodel.py" <<'PY' || fail "constants table"
import re, sys
from psringlib import costmodel as cm
assert cm.constants_check(cm.CONSTANTS) == [], cm.constants_check(cm.CONSTANTS)
for bad in ({"x": (1.0, "", "cited: a")}, {"x": (1.0, "us", "")}, {"x": (1.0, "us", "a page")}, {"x": ("1", "us", "cited: a")}, {"x": (1.0, "us")}):
    assert cm.constants_check(dict(cm.CONSTANTS, **bad)) == ["x"], bad
printed = [l.split()[0] for l in open(sys.argv[1]).read().splitlines()[1:]]
assert printed == list(cm.CONSTANTS), printed
code = open(sys.argv[2]).read() + open(sys.argv[3]).read()
named = set(re.findall(r'const\("([a-z0-9_-]+)"\)', code))
named |= {c for c, _ in cm.FRAMEWORKS.values() if c}   # the frameworks' buckets, read through buckets()
assert named <= set(cm.CONSTANTS), named - set(cm.CONSTANTS)
family = lambda n: n.startswith(("alpha_", "line_", "intra_", "params_"))
unread = [n for n in cm.CONSTANTS if n not in named and not family(n)]
assert not unread, "in the table, read by nothing: %s" % unread
assert not re.search(r'GAMMA_PS_NS|"--alpha-us", float, 10|"1000gbit"', code), "a constant outside the table"
PY
mkdir -p "$SCRATCH/lib/psringlib" && cp "$TOP_SRCDIR"/experiments/psringlib/*.py "$SCRATCH/lib/psringlib/"
sed -i 's/^    "gamma_gpu": (0.0, "ns\/B summed",/    "gamma_gpu": (0.0, "",/' "$SCRATCH/lib/psringlib/costmodel.py"
cp "$MODEL" "$SCRATCH/lib/model"   # beside the edited package, which it imports from its own folder
out=$(python3 "$SCRATCH/lib/model" --constants 2>&1); rc=$?
[[ $rc == 2 && $(wc -l <<<"$out") == 1 && $out == *"constant gamma_gpu has no unit or no source"* ]] || fail "--constants with a unitless entry: rc $rc: $out"

# --transport: the transport's alpha and line fraction unless flags say otherwise; rdma by default. The ring on 2 hosts
# of one GPU, 1e6 B, 8 Gbit/s, none hidden: tcp 2 x 30.1 us + 1e6 x 8 / (8e9 x 1448/1538) = 1.122355 ms; rdma
# 2 x 6.6 us + 1e6 / 0.88 ns = 1.149564 ms; the same as rdma with its constants given as flags
pr() { "$MODEL" --predict --topology ring --hosts 2 --gpus-per-host 1 --params 250000 --link-rate 8g --framework none --compute-ms 30 "$@" | tail -1 | cut -d, -f8; }
[[ $(pr --transport tcp) == 1.122355 ]] || fail "--transport tcp: $(pr --transport tcp), want 1.122355 ms"
[[ $(pr --transport rdma) == 1.149564 && $(pr) == 1.149564 ]] || fail "--transport rdma: $(pr --transport rdma), default $(pr), want 1.149564 ms"
[[ $(pr --transport tcp --alpha-us 6.6 --line-fraction 0.88) == 1.149564 ]] || fail "--transport tcp with rdma's flags: $(pr --transport tcp --alpha-us 6.6 --line-fraction 0.88)"
"$MODEL" --extrapolate --transport tcp --link-rate 25gbit | head -1 | grep -q "alpha 30.1 us" || fail "--extrapolate --transport tcp: not tcp's alpha"
# --explain with a transport: its constants at --link-rate, no calibration file (ring, N 2, 1e6 B at 8 Gbit/s, gamma 0.03 ns/B x 5e5)
"$MODEL" --explain --transport tcp --link-rate 8g -N 2 --params 250000 --compute-ms 30 --calibration "$SCRATCH/none.csv" | grep -q "^exchange 1.14 ms" \
  || fail "--explain --transport tcp: $("$MODEL" --explain --transport tcp --link-rate 8g -N 2 --params 250000 --compute-ms 30 2>&1)"
# the median target on the published points (at most 10%); the worst (25%) is missed by one point, whose
# setup its source does not state (docs/results/model-published-2026-11-28.md)
sed '/^independent check/q' "$SCRATCH/ship" | awk '/^median error/ { gsub(/[%,]/, ""); ok = $3 <= 10 } END { exit !ok }' \
  || fail "shipped points: median error over its target: $(grep '^median' "$SCRATCH/ship" | head -1)"
grep -Eq "^median error [0-9.]+%, worst [0-9.]+% \(hvd[a-z0-9-]*\), over 15 points" "$SCRATCH/ship" || fail "shipped check: $(tail -1 "$SCRATCH/ship")"
python3 - "$DATA/published-scaling.csv" "$DATA/published-horovod.csv" <<'PY' || fail "shipped points: citations"
import sys
from psringlib import results
for path, least, sources in ((sys.argv[1], 15, 3), (sys.argv[2], 6, 1)):
    notes = []
    rows = results.read_rows(path, notes)
    assert len(rows) >= least and len({r["source"] for r in rows}) >= sources, "%s: %d rows from %d sources" % (path, len(rows), len({r["source"] for r in rows}))
    for r in rows:
        for c in ("citation", "where", "url", "quote", "assumed"):
            assert r[c].strip(), "%s: row %s has no %s" % (path, r["id"], c)
        assert r["source"] != "horovod" or path == sys.argv[2], "%s: Horovod's own figures belong in the check" % r["id"]
    assert any(x.startswith("# left out:") for x in notes), "%s: no '# left out' line" % path
PY

# bad input: one line, exit 2
sed 's/"Fixture, a made-up tree point, not a publication"/""/' "$FIX" >"$SCRATCH/nocite.csv"
sed 's/,hier,0,1,/,star,0,1,/' "$FIX" >"$SCRATCH/topo.csv"
sed 's/,100,500,50,hier/,100,,50,hier/' "$FIX" >"$SCRATCH/norate.csv"
sed '/^# assume,rdma/d; s/^\(fx-tree,.*\),rdma,/\1,ib,/' "$FIX" >"$SCRATCH/noassume.csv"
sed 's/,single_gpu_rate,/,rate,/' "$FIX" >"$SCRATCH/nocol.csv"
sed 's/^fx-ps,\(.*\),ps,4,1,/fx-ps,\1,ps,4.5,1,/' "$FIX" >"$SCRATCH/half.csv"
sed 's/^# left out: nothing/# server,fixture-a,0,made up\n&/' "$FIX" >"$SCRATCH/nocores.csv"
sed 's/^\(fx-tree,.*\),ddp,/\1,mxnet,/' "$FIX" >"$SCRATCH/fwbad.csv"
sed 's/^\(fx-tree,.*\),ddp,/\1,,/' "$FIX" >"$SCRATCH/fwnone.csv"
sed 's/^\(fx-tree,.*\),4,2$/\1,0,2/' "$SCRATCH/acc.csv" >"$SCRATCH/acc0.csv"
sed 's/^\(fx-tree,.*\),4,2$/\1,4,2.5/' "$SCRATCH/acc.csv" >"$SCRATCH/acchalf.csv"
sed 's/^\(fx-tree,.*\),4,2$/\1,x,2/' "$SCRATCH/acc.csv" >"$SCRATCH/accx.csv"
{ echo "#  assume , rdma,4,0.88,spaced"; cat "$SCRATCH/chk.csv"; } >"$SCRATCH/chkassume.csv"
while IFS='|' read -r args want; do
  out=$("$MODEL" $args 2>&1); rc=$?
  [[ $rc == 2 && $(wc -l <<<"$out") == 1 && $out == *"$want"* ]] || fail "model $args: rc $rc, want 2 and one line with '$want': $out"
done <<EOF2
--predict --model resnet51|unknown model 'resnet51'
--predict --model resnet50 --params 10|alternatives
--predict --link-rate fast|--link-rate 'fast' is not a rate > 0
--predict --link-rate 0g|--link-rate '0g' is not a rate > 0
--predict --intra-rate=-5gbit|--intra-rate '-5gbit' is not a rate > 0
--predict --link-rate nan|--link-rate 'nan' is not a rate > 0
--predict --gpus-per-host 0|--gpus-per-host must be at least 1
--predict --hosts 0|--hosts must be at least 1
--predict --framework mxnet|--framework 'mxnet': no bucket defaults for it (none, ddp, horovod, byteps, tf-ps)
--predict --framework none --bucket-mb 25|--bucket-mb goes with a framework that has buckets, not --framework none
--explain --framework horovod --compute-ms 1|--framework and --bucket-mb go with --predict, --extrapolate or --advise
--predict --bucket-mb 0|--bucket-mb must be a number > 0
--predict --bytes-per-param 3|--bytes-per-param must be 4 (fp32) or 2 (fp16)
--predict --topology star|unknown topology 'star' (ring, hier, hier-host, tree, ps, byteps)
--predict --topology ps --hosts 4 --servers 5|--servers must be in 1..--hosts=4
--predict --gamma-ns-per-byte -1|--gamma-ns-per-byte must be a number >= 0
--predict --extrapolate|--predict goes alone
--published $FIX --explain --compute-ms 1|--published goes alone
--explain --topology tree -N 4 --compute-ms 1|unknown topology 'tree' (ring or ps)
--published $SCRATCH/none.csv|none.csv: No such file
--published $SCRATCH/nocite.csv|row fx-tree: no citation
--published $SCRATCH/topo.csv|row fx-hier: unknown topology 'star'
--published $SCRATCH/norate.csv|row fx-hier: no single_gpu_rate
--published $SCRATCH/noassume.csv|row fx-tree: transport 'ib' is not tcp or rdma and has no '# assume' line
--published $SCRATCH/nocol.csv|no column single_gpu_rate
--published $SCRATCH/half.csv|row fx-ps: a number is missing, not positive, or not a whole count
--published $SCRATCH/nocores.csv|is not '# server,SOURCE,CORES (a whole count >= 1),WHERE'
--predict --server-cores -1|--server-cores must be >= 0
--check $SCRATCH/chk.csv|--check goes with --published
--published $FIX --check $FIX|sets nothing: its '# assume' and '# server' lines belong in the --published file
--published $FIX --check $SCRATCH/none.csv|--check $SCRATCH/none.csv: No such file
--published $SCRATCH/fwbad.csv|row fx-tree: framework 'mxnet' has no bucket defaults (none, ddp, horovod, byteps, tf-ps)
--published $SCRATCH/fwnone.csv|row fx-tree: no framework
--published $FIX --check $SCRATCH/chkassume.csv|chkassume.csv: sets nothing
--published $FIX --check=|--check needs a path
--predict --transport ib|argument --transport: invalid choice
--predict --line-fraction 1.5|--line-fraction must be a fraction in (0, 1]
--predict --line-fraction 0|--line-fraction must be a fraction in (0, 1]
--published $FIX --transport tcp|--transport and --line-fraction go with --predict, --extrapolate or --explain
--constants --predict|goes alone
--published $SCRATCH/acc0.csv|row fx-tree: accumulation '0' is not a whole count >= 1
--published $SCRATCH/acchalf.csv|row fx-tree: baseline_accumulation '2.5' is not a whole count >= 1
--published $SCRATCH/accx.csv|row fx-tree: accumulation 'x' is not a whole count >= 1
EOF2
pass "cost model at scale: formulas by hand, G=1 is the flat model, tree/ring cross, --predict, --extrapolate, --published, --check"
