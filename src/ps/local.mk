# src/ps: wire protocol, server, worker, the ps exchange (ZeroMQ; MPI only to start)
TOPOLOGY_LIBS += src/ps/libps.a
noinst_LIBRARIES += src/ps/libps.a
src_ps_libps_a_SOURCES = src/ps/wire.c src/ps/server.c src/ps/worker.c src/ps/ps_exchange.c
src_ps_libps_a_CFLAGS = $(AM_CFLAGS) $(ZMQ_CFLAGS) $(MPI_CFLAGS) -pthread
noinst_HEADERS += src/ps/wire.h src/ps/server.h src/ps/worker.h src/ps/zcheck.h
