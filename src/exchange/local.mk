# src/exchange: the exchange interface (exchange.h) that the trainer drives and every topology
# implements, and the local topology (one process). It sits below src/ring and src/ps and above
# src/model and src/common, so the topologies never include or link the trainer. startup.c is the
# process start-up every MPI topology shares (MPI, fingerprints, local rank, the deadline); a
# program that never calls it never links it, so the local topology stays MPI-free.
noinst_LIBRARIES += src/exchange/libexchange.a
src_exchange_libexchange_a_SOURCES = src/exchange/exchange_local.c src/exchange/startup.c
src_exchange_libexchange_a_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
noinst_HEADERS += src/exchange/exchange.h src/exchange/exchange_local.h src/exchange/topology.h \
  src/exchange/startup.h
# the local topology's descriptor (topology.h), compiled into the programs that list topologies
TOPOLOGY_SOURCES = src/exchange/local_topology.c
# each topology's library, added by its local.mk (linked by every program that lists topologies)
TOPOLOGY_LIBS =

# --with-cuda: the device half of an exchange (exchange_device.c: optimizer state on the GPU,
# shared by the local topology's and the ring's device step) and the local topology's device
# step, in their own library (libexchange_cuda.a, linked through $(PSRING_CUDA_FIRST) after
# libring_cuda.a, see src/ring/local.mk)
EXTRA_DIST += src/exchange/exchange_local_cuda.c src/exchange/exchange_device.c
noinst_HEADERS += src/exchange/exchange_device.h src/exchange/exchange_step.h
if HAVE_CUDA
noinst_LIBRARIES += src/exchange/libexchange_cuda.a
src_exchange_libexchange_cuda_a_SOURCES = src/exchange/exchange_local_cuda.c src/exchange/exchange_device.c
endif
