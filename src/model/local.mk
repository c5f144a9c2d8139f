# src/model: MLP layers, loss, optimizer, BLAS set-up (no MPI, no ZeroMQ)
noinst_LIBRARIES += src/model/libmodel.a
src_model_libmodel_a_SOURCES = src/model/layers.c src/model/mlp.c src/model/optim.c src/model/blas.c
src_model_libmodel_a_CFLAGS = $(AM_CFLAGS) $(BLAS_CFLAGS)
noinst_HEADERS += src/model/layers.h src/model/mlp.h src/model/optim.h src/model/blas.h
# model_ops.c: the trainer's model on the CPU or the GPU (its step through an exchange is
# src/exchange/exchange_step.c, above it); it is not in libmodel but compiled into the programs
# that train (psring-train, the benchmarks' --compute), because with CUDA it calls libmodel_cuda,
# which only --with-cuda builds have. device.h: --device's values, which topology.h reads too.
noinst_HEADERS += src/model/model_ops.h src/model/device.h

if HAVE_CHECK
check_PROGRAMS += tests/test_model
TESTS += tests/test_model
# the BLAS fix took effect (test_model blas-setup): its own test, so that where it cannot check it reports SKIP
TESTS += tests/blas_setup.sh
EXTRA_DIST += tests/blas_setup.sh
tests_test_model_SOURCES = tests/test_model.c
tests_test_model_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(BLAS_CFLAGS)
tests_test_model_LDADD = src/model/libmodel.a src/common/libcommon.a $(CHECK_LIBS) $(BLAS_LIBS) -lm
endif

# --with-cuda: the MLP (mlp_cuda.h) and the optimizer (optim_cuda.h) on the GPU, compiled by nvcc
# into its own library so that CPU-only programs never link CUDA; it uses src/common's
# libcommon_cuda.a (buffers, checks). `--without-cuda` builds none of this.
EXTRA_DIST += src/model/mlp_cuda.cu src/model/mlp_cuda_kernels.cu src/model/optim_cuda.cu
noinst_HEADERS += src/model/mlp_cuda.h src/model/mlp_cuda_kernels.h src/model/optim_cuda.h src/model/cublas_lib.h
if HAVE_CUDA
noinst_LIBRARIES += src/model/libmodel_cuda.a
src_model_libmodel_cuda_a_SOURCES = src/model/mlp_cuda.h src/model/optim_cuda.h src/model/cublas_lib.c
src_model_libmodel_cuda_a_CFLAGS = $(AM_CFLAGS) $(CUDA_CFLAGS)
src_model_libmodel_cuda_a_LIBADD = src/model/mlp_cuda.o src/model/mlp_cuda_kernels.o src/model/optim_cuda.o
src_model_libmodel_cuda_a_DEPENDENCIES = src/model/mlp_cuda.o src/model/mlp_cuda_kernels.o src/model/optim_cuda.o
MODEL_CUDA_DEPS = $(top_srcdir)/src/common/cuda_mem.h $(top_srcdir)/src/common/cuda_check.h \
  $(top_srcdir)/src/common/cuda_launch.h $(top_srcdir)/src/model/mlp.h $(top_srcdir)/src/model/optim.h \
  $(top_srcdir)/src/model/cublas_lib.h
src/model/mlp_cuda.o: $(top_srcdir)/src/model/mlp_cuda.cu $(top_srcdir)/src/model/mlp_cuda.h \
  $(top_srcdir)/src/model/mlp_cuda_kernels.h $(MODEL_CUDA_DEPS)
	@$(MKDIR_P) src/model
	$(AM_V_GEN)$(NVCC) $(NVCC_FLAGS) -c $(top_srcdir)/src/model/mlp_cuda.cu -o $@
src/model/mlp_cuda_kernels.o: $(top_srcdir)/src/model/mlp_cuda_kernels.cu $(top_srcdir)/src/model/mlp_cuda_kernels.h $(MODEL_CUDA_DEPS)
	@$(MKDIR_P) src/model
	$(AM_V_GEN)$(NVCC) $(NVCC_FLAGS) -c $(top_srcdir)/src/model/mlp_cuda_kernels.cu -o $@
src/model/optim_cuda.o: $(top_srcdir)/src/model/optim_cuda.cu $(top_srcdir)/src/model/optim_cuda.h $(MODEL_CUDA_DEPS)
	@$(MKDIR_P) src/model
	$(AM_V_GEN)$(NVCC) $(NVCC_FLAGS) -c $(top_srcdir)/src/model/optim_cuda.cu -o $@
CLEANFILES += src/model/mlp_cuda.o src/model/mlp_cuda_kernels.o src/model/optim_cuda.o

if HAVE_CHECK
check_PROGRAMS += tests/test_mlp_cuda tests/test_cublas_lib
TESTS += tests/test_mlp_cuda tests/test_cublas_lib
tests_test_cublas_lib_SOURCES = tests/test_cublas_lib.c
tests_test_cublas_lib_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(CUDA_CFLAGS)
tests_test_cublas_lib_LDADD = src/model/libmodel_cuda.a src/common/libcommon.a $(CHECK_LIBS) $(CUDA_LIBS) -lpthread
tests_test_mlp_cuda_SOURCES = tests/test_mlp_cuda.c
tests_test_mlp_cuda_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(BLAS_CFLAGS)
tests_test_mlp_cuda_LDADD = src/model/libmodel_cuda.a src/common/libcommon_cuda.a src/model/libmodel.a src/data/libdata.a \
  src/common/libcommon.a \
  $(CHECK_LIBS) $(BLAS_LIBS) $(CUDA_LIBS) $(ZLIB_LIBS) -lm
endif
endif
