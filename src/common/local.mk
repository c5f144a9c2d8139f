# src/common: what every part shares, once: fatal-error helpers, the MPI check, RNG, timer, the
# --timeline recorder (every layer records its phases into it), numeric flag parsing, the
# fingerprint check, stall bookkeeping, the start-up watchdog, the fp16 codec (half.c: the only
# binary16 conversion in src/). Compiled with MPI's flags for the MPI ones; a program that calls
# none of them never links their objects (a static library member is pulled in only on use), so
# src/data and src/model stay MPI-free.
noinst_LIBRARIES += src/common/libcommon.a
src_common_libcommon_a_SOURCES = src/common/check.c src/common/mpi_check.c src/common/parse.c \
  src/common/fingerprint.c src/common/stall.c src/common/watchdog.c src/common/timeline.c \
  src/common/half.c src/common/opttab.c src/common/comm_thread.c src/common/outfile.c
src_common_libcommon_a_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
noinst_HEADERS += src/common/check.h src/common/rng.h src/common/timer.h src/common/mpi_check.h \
  src/common/timeline.h src/common/parse.h src/common/fingerprint.h src/common/stall.h \
  src/common/watchdog.h src/common/half.h src/common/opttab.h src/common/stringify.h src/common/comm_thread.h src/common/outfile.h

# --with-cuda: what every layer's GPU code shares (cuda_mem.h: device pinning, device buffers,
# pinned host memory; cuda_check.h; cuda_launch.h), compiled by nvcc into its own library so that
# CPU-only programs never link CUDA. Programs link it after every other CUDA library
# ($(PSRING_CUDA_FIRST), see src/ring/local.mk). `--without-cuda` builds none of this.
EXTRA_DIST += src/common/cuda_mem.cu
noinst_HEADERS += src/common/cuda_mem.h src/common/cuda_check.h src/common/cuda_launch.h
NVCC_FLAGS = $(NVCC_ARCH) -O3 -std=c++17 -Xcompiler -fPIC,-Wall -I$(top_srcdir)/src -I$(top_builddir) -D_GNU_SOURCE
if HAVE_CUDA
noinst_LIBRARIES += src/common/libcommon_cuda.a
src_common_libcommon_cuda_a_SOURCES = src/common/cuda_mem.h src/common/cuda_check.h src/common/cuda_launch.h
src_common_libcommon_cuda_a_LIBADD = src/common/cuda_mem.o
src_common_libcommon_cuda_a_DEPENDENCIES = src/common/cuda_mem.o
src/common/cuda_mem.o: $(top_srcdir)/src/common/cuda_mem.cu $(top_srcdir)/src/common/cuda_mem.h \
    $(top_srcdir)/src/common/cuda_check.h $(top_srcdir)/src/common/cuda_launch.h
	@$(MKDIR_P) src/common
	$(AM_V_GEN)$(NVCC) $(NVCC_FLAGS) -c $(top_srcdir)/src/common/cuda_mem.cu -o $@
CLEANFILES += src/common/cuda_mem.o
endif
