# src/train: the shared training loop and psring-train
noinst_LIBRARIES += src/train/libtrain.a
src_train_libtrain_a_SOURCES = src/train/options.c src/train/metrics.c src/train/checkpoint.c \
  src/train/exchange_local.c src/train/timeline.c
src_train_libtrain_a_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
noinst_HEADERS += src/train/options.h src/train/exchange.h src/train/checkpoint.h src/train/metrics.h \
  src/train/timeline.h

bin_PROGRAMS += psring-train
# exchange.c (the topology factory) sits in the program, not the library: it references every
# topology library, which in turn uses libtrain, and static libraries link in one pass.
psring_train_SOURCES = src/train/train.c src/train/exchange.c
psring_train_CFLAGS = $(AM_CFLAGS)
# topology libraries first: they depend on train/model/data/common
psring_train_LDADD = $(TOPOLOGY_LIBS) src/train/libtrain.a src/model/libmodel.a src/data/libdata.a \
  src/common/libcommon.a $(MPI_LIBS) $(ZMQ_LIBS) $(BLAS_LIBS) $(ZLIB_LIBS) -lpthread -lm
# every library a psring binary links, in link order (for tests and benchmarks too)
PSRING_LIBS = $(TOPOLOGY_LIBS) src/train/libtrain.a src/model/libmodel.a src/data/libdata.a \
  src/common/libcommon.a
PSRING_EXTERNAL_LIBS = $(MPI_LIBS) $(ZMQ_LIBS) $(BLAS_LIBS) $(ZLIB_LIBS) -lpthread -lm
