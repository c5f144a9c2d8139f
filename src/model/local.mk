# src/model: MLP layers, loss, optimizer, BLAS set-up (no MPI, no ZeroMQ)
noinst_LIBRARIES += src/model/libmodel.a
src_model_libmodel_a_SOURCES = src/model/layers.c src/model/mlp.c src/model/optim.c src/model/blas.c
src_model_libmodel_a_CFLAGS = $(AM_CFLAGS) $(BLAS_CFLAGS)
noinst_HEADERS += src/model/layers.h src/model/mlp.h src/model/optim.h src/model/blas.h

if HAVE_CHECK
check_PROGRAMS += tests/test_model
TESTS += tests/test_model
tests_test_model_SOURCES = tests/test_model.c
tests_test_model_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(BLAS_CFLAGS)
tests_test_model_LDADD = src/model/libmodel.a src/common/libcommon.a $(CHECK_LIBS) $(BLAS_LIBS) -lm
endif
