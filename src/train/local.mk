# src/train: the shared training loop and psring-train
noinst_LIBRARIES += src/train/libtrain.a
# accel_share.c: the compute thread's moves between an emulated GPU host's two CPU shares; only
# the trainer's loop knows which of its work is compute, so only the trainer calls it
src_train_libtrain_a_SOURCES = src/train/options.c src/train/metrics.c src/train/checkpoint.c src/train/accel_share.c
src_train_libtrain_a_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
noinst_HEADERS += src/train/options.h src/train/checkpoint.h src/train/metrics.h src/train/topology_list.h \
  src/train/accel_share.h

bin_PROGRAMS += psring-train
# topology_list.c (the one list of topologies) and every topology's descriptor (TOPOLOGY_SOURCES,
# added by each topology's local.mk) sit in the program: the trainer's library stays free of them.
# train.c is main, run.c a run's set-up and teardown, loop.c the step and its drivers, report.c
# the summary and the CSV row; they call src/model/model_ops.c, so they sit in the program with it
TRAIN_PROGRAM_SOURCES = src/train/train.c src/train/run.c src/train/loop.c src/train/report.c src/train/snapshots.c \
  src/train/topology_list.c src/model/model_ops.c src/exchange/exchange_step.c
psring_train_SOURCES = $(TRAIN_PROGRAM_SOURCES) $(TOPOLOGY_SOURCES)
psring_train_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) $(ZMQ_CFLAGS)
# in layer order, the trainer's first: train, the topologies, exchange, model, data, common; the
# GPU libraries (empty without CUDA, see src/ring/local.mk) before them, CUDA's own after everything
psring_train_LDADD = $(PSRING_CUDA_FIRST) $(PSRING_LIBS) $(MPI_LIBS) $(ZMQ_LIBS) $(BLAS_LIBS) $(ZLIB_LIBS) \
  -lpthread -lm $(PSRING_CUDA_LAST)
noinst_HEADERS += src/train/run.h src/train/snapshots.h
# every library a psring binary links, in link order (for tests and benchmarks too)
PSRING_LIBS = src/train/libtrain.a $(TOPOLOGY_LIBS) src/exchange/libexchange.a src/model/libmodel.a \
  src/data/libdata.a src/common/libcommon.a
PSRING_EXTERNAL_LIBS = $(MPI_LIBS) $(ZMQ_LIBS) $(BLAS_LIBS) $(ZLIB_LIBS) -lpthread -lm
# --device: everywhere (refusals), and the GPU-vs-CPU training comparison (SKIP without a GPU)
TESTS += tests/train_device.sh tests/train_snapshots.sh
EXTRA_DIST += tests/train_device.sh tests/train_cuda.sh tests/train_snapshots.sh
if HAVE_CUDA
TESTS += tests/train_cuda.sh
endif
