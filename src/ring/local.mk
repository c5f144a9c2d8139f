# src/ring: ring allreduce and the ring exchange (MPI)
TOPOLOGY_LIBS =
TOPOLOGY_LIBS += src/ring/libring.a

noinst_LIBRARIES += src/ring/libring.a
src_ring_libring_a_SOURCES = src/ring/ring_allreduce.c src/ring/ring_exchange.c src/ring/half.c \
  src/ring/mpi_check.c
src_ring_libring_a_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
noinst_HEADERS += src/ring/ring_allreduce.h src/ring/half.h src/ring/mpi_check.h
