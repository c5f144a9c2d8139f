# src/ring: ring allreduce and the ring exchange (MPI)
TOPOLOGY_LIBS =
TOPOLOGY_LIBS += src/ring/libring.a

noinst_LIBRARIES += src/ring/libring.a
src_ring_libring_a_SOURCES = src/ring/ring_allreduce.c src/ring/ring_exchange.c src/ring/half.c \
  src/ring/mpi_check.c src/ring/ring_ops.c
src_ring_libring_a_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
noinst_HEADERS += src/ring/ring_allreduce.h src/ring/half.h src/ring/mpi_check.h src/ring/ring_ops.h

# tests: test_ring is an MPI program; the shell scripts run it (and the trainer) under $MPIRUN
check_PROGRAMS += tests/test_ring
tests_test_ring_SOURCES = tests/test_ring.c
tests_test_ring_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
tests_test_ring_LDADD = src/ring/libring.a src/common/libcommon.a $(MPI_LIBS) -lpthread -lm

# the allreduce benchmark lives in src/bench but is built from here: it is the ring's program
bin_PROGRAMS += psring-bench-allreduce
psring_bench_allreduce_SOURCES = src/bench/allreduce.c
psring_bench_allreduce_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
psring_bench_allreduce_LDADD = src/ring/libring.a src/common/libcommon.a $(MPI_LIBS) -lpthread -lm

TESTS += tests/ring_allreduce.sh tests/ring_bench.sh tests/ring_equivalence.sh tests/ring_mismatch.sh \
  tests/ring_deadrank.sh tests/ring_ops.sh
EXTRA_DIST += tests/ring_common.sh tests/ring_allreduce.sh tests/ring_bench.sh tests/ring_equivalence.sh \
  tests/ring_mismatch.sh tests/ring_deadrank.sh tests/ring_ops.sh
