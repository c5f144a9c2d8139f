# src/data: IDX reader, DistributedSampler, batches (no MPI, no ZeroMQ)
noinst_LIBRARIES += src/data/libdata.a
src_data_libdata_a_SOURCES = src/data/idx.c src/data/sampler.c src/data/batch.c
src_data_libdata_a_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
noinst_HEADERS += src/data/idx.h src/data/sampler.h src/data/batch.h

check_PROGRAMS += tests/test_data
TESTS += tests/test_data
tests_test_data_SOURCES = tests/test_data.c
noinst_HEADERS += tests/mnist_dir.h
tests_test_data_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_data_LDADD = src/data/libdata.a src/common/libcommon.a $(CHECK_LIBS) $(ZLIB_LIBS) -lm
