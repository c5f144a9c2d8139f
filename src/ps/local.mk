# src/ps: wire protocol, server, worker, the ps exchange (ZeroMQ; MPI only to start)
TOPOLOGY_LIBS += src/ps/libps.a
# its descriptor (topology.h), compiled into the programs that list topologies
TOPOLOGY_SOURCES += src/ps/ps_topology.c
noinst_LIBRARIES += src/ps/libps.a
src_ps_libps_a_SOURCES = src/ps/wire.c src/ps/transport.c src/ps/server.c src/ps/server_rounds.c \
  src/ps/server_stats.c src/ps/server_reply.c src/ps/server_budget.c src/ps/bind.c src/ps/worker.c \
  src/ps/worker_wait.c src/ps/worker_liveness.c src/ps/worker_send.c src/ps/worker_step.c \
  src/ps/ps_exchange.c src/ps/auth.c src/ps/placement.c \
  src/ps/ps_startup.c
src_ps_libps_a_CFLAGS = $(AM_CFLAGS) $(ZMQ_CFLAGS) $(MPI_CFLAGS) -pthread
noinst_HEADERS += src/ps/wire.h src/ps/server.h src/ps/worker.h src/ps/zcheck.h src/ps/auth.h \
  src/ps/ps_config.h src/ps/ps_exchange.h src/ps/server_impl.h src/ps/placement.h src/ps/worker_impl.h \
  src/ps/transport.h src/ps/ps_exchange_impl.h

check_PROGRAMS += tests/test_ps
TESTS += tests/test_ps
tests_test_ps_SOURCES = tests/test_ps.c
tests_test_ps_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(ZMQ_CFLAGS) -pthread
tests_test_ps_LDADD = src/ps/libps.a src/model/libmodel.a src/data/libdata.a src/common/libcommon.a \
  $(CHECK_LIBS) $(ZMQ_LIBS) $(BLAS_LIBS) $(ZLIB_LIBS) -lpthread -lm
TESTS += tests/ps_bsp_equiv.sh tests/ps_sum_equiv.sh tests/ps_byteps.sh tests/ps_overlap.sh tests/ps_ssp.sh tests/ps_async.sh tests/ps_kill.sh tests/ps_startup_death.sh \
  tests/ps_budget.sh
EXTRA_DIST += tests/ps_bsp_equiv.sh tests/ps_sum_equiv.sh tests/ps_byteps.sh tests/ps_overlap.sh tests/ps_ssp.sh tests/ps_async.sh tests/ps_kill.sh tests/ps_startup_death.sh \
  tests/ps_budget.sh

# psring-bench-ps (source in src/bench, built from here: it is the PS's own benchmark)
bin_PROGRAMS += psring-bench-ps
# (the shared flags, sweep and CSV: bench_driver.c; --compute runs the trainer's step: train_step.c
# with the trainer's model_ops.c)
psring_bench_ps_SOURCES = src/bench/ps.c src/bench/bench_driver.c src/bench/train_step.c src/model/model_ops.c src/exchange/exchange_step.c
noinst_HEADERS += src/bench/train_step.h src/bench/bench_driver.h
psring_bench_ps_CFLAGS = $(AM_CFLAGS) $(ZMQ_CFLAGS) $(MPI_CFLAGS)
psring_bench_ps_LDADD = $(PSRING_CUDA_FIRST) src/ps/libps.a src/exchange/libexchange.a \
  src/model/libmodel.a src/data/libdata.a \
  src/common/libcommon.a $(MPI_LIBS) $(ZMQ_LIBS) $(BLAS_LIBS) $(ZLIB_LIBS) -lpthread -lm $(PSRING_CUDA_LAST)
TESTS += tests/ps_bench.sh
EXTRA_DIST += tests/ps_bench.sh

# --ps-auth: psring-keygen writes the CurveZMQ keyfile (psring keygen runs it)
bin_PROGRAMS += psring-keygen
psring_keygen_SOURCES = src/ps/keygen.c
psring_keygen_CFLAGS = $(AM_CFLAGS) $(ZMQ_CFLAGS)
psring_keygen_LDADD = src/ps/libps.a src/common/libcommon.a $(ZMQ_LIBS)
# --transport ipc leaves no socket in /tmp, clean or killed (tests/hostile.py's checks)
TESTS += tests/hostile_ipc.py
EXTRA_DIST += tests/hostile_ipc.py
