#!/bin/bash
# one device call: the IPC ring's tests, benchmarks and the GPU-count training sweep
set -u
root=$PWD
out=${OUT:-/tmp/out}; mkdir -p "$out"
exec > >(tee "$out/devrun.log") 2>&1
T0=$SECONDS
rt=$(mktemp -d); tar xJf .rt/prefix.tar.xz -C "$rt"; . "$rt/env.sh"
[[ -d $rt/lib/x86_64-linux-gnu ]] && export LD_LIBRARY_PATH=$rt/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
pmix=$rt/usr/lib/x86_64-linux-gnu/pmix2; [[ -d $pmix ]] && export PMIX_PREFIX=$pmix PMIX_LIBDIR=$pmix/lib PMIX_DATADIR=$pmix/share
B=$root/build
export TOP_BUILDDIR=$B TOP_SRCDIR=$root PSRING_MNIST_DIR=$root/data/mnist PSRING_BUILDDIR=$B
. experiments/pslib.sh; psring_mpi_env
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
ldd $B/psring-train | grep "not found"
MPI=(mpirun --oversubscribe --mca pml ob1)
stage() { echo "=== [$((SECONDS - T0)) s] $*"; }
mps_dir=""
mps_start() { mps_dir=$(mktemp -d); mkdir -p "$mps_dir/pipe" "$mps_dir/log"; export CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_dir/log; nvidia-cuda-mps-control -d && sleep 1; ls "$mps_dir/pipe"; }
mps_stop() { [[ -n $mps_dir ]] || return 0; echo quit | nvidia-cuda-mps-control; sleep 1; unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY; mps_dir=""; }
trap mps_stop EXIT
stage tests
timeout 150 bash tests/ring_cuda.sh > "$out/ring_cuda.log" 2>&1; echo "ring_cuda.sh rc=$?"; tail -12 "$out/ring_cuda.log"
timeout 100 bash tests/bench_cuda.sh > "$out/bench_cuda.log" 2>&1; echo "bench_cuda.sh rc=$?"; grep -E "^#|PASS|FAIL" "$out/bench_cuda.log" | tail -14
timeout 60 bash tests/ring_deadrank.sh > "$out/deadrank.log" 2>&1; echo "ring_deadrank.sh rc=$?"; grep -E "ended|FAIL|ok" "$out/deadrank.log"
timeout 100 bash tests/train_cuda.sh > "$out/train_cuda.log" 2>&1; echo "train_cuda.sh rc=$?"; tail -3 "$out/train_cuda.log"
bench() { # tag np args
  local tag=$1 np=$2; shift 2
  timeout 120 "${MPI[@]}" -np "$np" $B/psring-bench-allreduce --device cuda "$@" --csv "$out/bench-$tag.csv" > "$out/bench-$tag.log" 2>&1; echo "bench $tag rc=$?"
  grep "^#" "$out/bench-$tag.log" | grep -v "^# GPUs"; grep -v "^#" "$out/bench-$tag.log" | tail -12
}
train() { # tag np args
  local tag=$1 np=$2; shift 2
  timeout 60 "${MPI[@]}" -np "$np" $B/psring-train --device cuda --data data/mnist --layers 784,512,256,10 --batch 64 --epochs 50 --steps 1500 --timing-skip 100 --test-limit 1000 --quiet --csv "$out/train.csv" "$@" > "$out/train-$tag.log" 2>&1; echo "train $tag rc=$? $(grep -m1 summary "$out/train-$tag.log")"
}
stage bench, no MPS
bench np2 2 --impl all -b 1M -e 256M -f 4 -n 20 -w 3
bench np4 4 --impl all -b 1M -e 256M -f 4 -n 10 -w 2
stage train, no MPS
for np in 1 2 4 8; do train "ring-np$np" "$np" --topology ring; done
for np in 2 4; do train "ps-np$np" $((np + 1)) --topology ps --servers 1; done
stage MPS
mps_start
bench mps-np2 2 --impl all -b 4K -e 256M -f 4 -n 50 -w 5
bench mps-np4 4 --impl ring -b 1M -e 256M -f 16 -n 10 -w 2
for np in 1 2 4 8; do train "mps-ring-np$np" "$np" --topology ring; done
for np in 2 4; do train "mps-ps-np$np" $((np + 1)) --topology ps --servers 1; done
mps_stop
stage done
cut -d, -f1,6,8,9,10,28,29,31,32 "$out/train.csv" | column -t -s,
