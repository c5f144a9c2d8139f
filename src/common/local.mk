# src/common: what every part shares, once: fatal-error helpers, the MPI check, RNG, timer, the
# --timeline hook, numeric flag parsing. Compiled with MPI's flags for mpi_check.c; a program that
# does not call mpiCheck never links that object (a static library member is pulled on use).
noinst_LIBRARIES += src/common/libcommon.a
src_common_libcommon_a_SOURCES = src/common/check.c src/common/mpi_check.c src/common/parse.c
src_common_libcommon_a_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
noinst_HEADERS += src/common/check.h src/common/rng.h src/common/timer.h src/common/mpi_check.h \
  src/common/timeline_hook.h src/common/parse.h
