# src/ring: ring allreduce and the ring exchange (MPI)
TOPOLOGY_LIBS += src/ring/libring.a
# its descriptor (topology.h), compiled into the programs that list topologies
TOPOLOGY_SOURCES += src/ring/ring_topology.c

noinst_LIBRARIES += src/ring/libring.a
src_ring_libring_a_SOURCES = src/ring/ring_allreduce.c src/ring/ring_exchange.c src/ring/ring_overlap.c \
  src/ring/ring_autotune.c src/ring/ring_ops.c src/ring/ring_shm.c
src_ring_libring_a_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
noinst_HEADERS += src/ring/ring_allreduce.h src/ring/ring_ops.h src/ring/ring_shm.h \
  src/ring/ring_config.h src/ring/ring_exchange.h src/ring/ring_exchange_impl.h

# tests: test_ring is an MPI program; the shell scripts run it (and the trainer) under $MPIRUN
check_PROGRAMS += tests/test_ring
tests_test_ring_SOURCES = tests/test_ring.c
tests_test_ring_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
tests_test_ring_LDADD = src/ring/libring.a src/common/libcommon.a $(MPI_LIBS) -lpthread -lm

# the allreduce benchmark lives in src/bench but is built from here: it is the ring's program
bin_PROGRAMS += psring-bench-allreduce
# (--compute runs the trainer's step: train_step.c with the trainer's model_ops.c, the local exchange)
psring_bench_allreduce_SOURCES = src/bench/allreduce.c src/bench/bench_driver.c src/bench/train_step.c src/model/model_ops.c src/exchange/exchange_step.c
psring_bench_allreduce_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
psring_bench_allreduce_LDADD = $(PSRING_CUDA_FIRST) src/ring/libring.a src/exchange/libexchange.a \
  src/model/libmodel.a src/data/libdata.a src/common/libcommon.a $(MPI_LIBS) $(BLAS_LIBS) -lpthread -lm \
  $(PSRING_CUDA_LAST)
EXTRA_DIST += src/bench/allreduce_cuda.c
noinst_HEADERS += src/bench/allreduce_cuda.h
# --device cuda where it cannot run (every build: a hidden GPU, or no CUDA at all)
TESTS += tests/bench_cuda_nodev.sh
EXTRA_DIST += tests/bench_cuda_nodev.sh tests/bench_cuda.sh

TESTS += tests/ring_allreduce.sh tests/ring_bench.sh tests/ring_equivalence.sh tests/ring_mismatch.sh \
  tests/ring_deadrank.sh tests/ring_ops.sh
EXTRA_DIST += tests/ring_allreduce.sh tests/ring_bench.sh tests/ring_equivalence.sh \
  tests/ring_mismatch.sh tests/ring_deadrank.sh tests/ring_ops.sh

# --with-cuda: the ring on device buffers, its reduction kernel, NCCL (dlopen) and the ring
# exchange's device step (libring_cuda.a); programs that may train on the GPU link
# $(PSRING_CUDA_FIRST) before every other psring library and $(PSRING_CUDA_LAST) after the rest.
EXTRA_DIST += src/ring/ring_cuda_kernels.cu tests/ring_cuda.sh
noinst_HEADERS += src/ring/ring_cuda.h src/ring/ring_cuda_ipc.h
if HAVE_CUDA
noinst_LIBRARIES += src/ring/libring_cuda.a
src_ring_libring_cuda_a_SOURCES = src/ring/ring_cuda.c src/ring/ring_cuda_ipc.c src/ring/ring_exchange_cuda.c
src_ring_libring_cuda_a_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) $(CUDA_CFLAGS)
src_ring_libring_cuda_a_LIBADD = src/ring/ring_cuda_kernels.o
src_ring_libring_cuda_a_DEPENDENCIES = src/ring/ring_cuda_kernels.o
src/ring/ring_cuda_kernels.o: $(top_srcdir)/src/ring/ring_cuda_kernels.cu $(top_srcdir)/src/ring/ring_cuda.h \
    $(top_srcdir)/src/ring/ring_cuda_ipc.h \
    $(top_srcdir)/src/common/cuda_check.h
	@$(MKDIR_P) src/ring
	$(AM_V_GEN)$(NVCC) $(NVCC_FLAGS) $(MPI_CFLAGS) -c $(top_srcdir)/src/ring/ring_cuda_kernels.cu -o $@
CLEANFILES += src/ring/ring_cuda_kernels.o
PSRING_CUDA_FIRST = src/ring/libring_cuda.a src/exchange/libexchange_cuda.a src/model/libmodel_cuda.a \
  src/common/libcommon_cuda.a
PSRING_CUDA_LAST = $(CUDA_LIBS) -ldl

check_PROGRAMS += tests/test_ring_cuda
tests_test_ring_cuda_SOURCES = tests/test_ring_cuda.c
tests_test_ring_cuda_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) $(CUDA_CFLAGS)
tests_test_ring_cuda_LDADD = src/ring/libring_cuda.a src/common/libcommon_cuda.a src/ring/libring.a \
  src/common/libcommon.a $(MPI_LIBS) $(CUDA_LIBS) -ldl -lpthread -lm
TESTS += tests/ring_cuda.sh

# psring-bench-allreduce --device cuda: device buffers, ring / mpi / nccl (allreduce_cuda.c)
psring_bench_allreduce_SOURCES += src/bench/allreduce_cuda.c
psring_bench_allreduce_CFLAGS += $(CUDA_CFLAGS)
psring_bench_allreduce_LDADD += src/model/libmodel.a src/common/libcommon.a $(BLAS_LIBS) $(CUDA_LIBS) -ldl
TESTS += tests/bench_cuda.sh

# the reduction kernel's bandwidth against cudaMemcpy device-to-device (target: >= 0.8)
bin_PROGRAMS += psring-bench-reduce-kernel
psring_bench_reduce_kernel_SOURCES = src/bench/reduce_kernel.c
psring_bench_reduce_kernel_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
psring_bench_reduce_kernel_LDADD = src/ring/libring_cuda.a src/common/libcommon_cuda.a src/common/libcommon.a \
  $(CUDA_LIBS) -lm
else
PSRING_CUDA_FIRST =
PSRING_CUDA_LAST =
endif
