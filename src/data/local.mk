# src/data: IDX reader, DistributedSampler, batches (no MPI, no ZeroMQ)
noinst_LIBRARIES += src/data/libdata.a
src_data_libdata_a_SOURCES = src/data/idx.c src/data/sampler.c src/data/batch.c
src_data_libdata_a_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
noinst_HEADERS += src/data/idx.h src/data/sampler.h src/data/batch.h
