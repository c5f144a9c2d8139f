# src/common: fatal-error helpers, RNG, timer (no MPI, no ZeroMQ)
noinst_LIBRARIES += src/common/libcommon.a
src_common_libcommon_a_SOURCES = src/common/check.c
noinst_HEADERS += src/common/check.h src/common/rng.h src/common/timer.h
