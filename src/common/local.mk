# src/common: what every part shares, once: fatal-error helpers, the MPI check, RNG, timer, the
# --timeline recorder (every layer records its phases into it), numeric flag parsing, the
# fingerprint check, stall bookkeeping, the start-up watchdog, the fp16 codec (half.c: the only
# binary16 conversion in src/). Compiled with MPI's flags for the MPI ones; a program that calls
# none of them never links their objects (a static library member is pulled in only on use), so
# src/data and src/model stay MPI-free.
noinst_LIBRARIES += src/common/libcommon.a
src_common_libcommon_a_SOURCES = src/common/check.c src/common/mpi_check.c src/common/parse.c \
  src/common/fingerprint.c src/common/stall.c src/common/watchdog.c src/common/timeline.c \
  src/common/half.c
src_common_libcommon_a_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
noinst_HEADERS += src/common/check.h src/common/rng.h src/common/timer.h src/common/mpi_check.h \
  src/common/timeline.h src/common/parse.h src/common/fingerprint.h src/common/stall.h \
  src/common/watchdog.h src/common/half.h
