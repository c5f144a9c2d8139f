# experiments: sweep, plot and cost model (python3 + gnuplot scripts), the calibration program
# behind the model, and their tests. The scripts run from the source tree; psring dispatches
# `psring sweep|plot|model` to them.
bin_PROGRAMS += psring-calibrate
psring_calibrate_SOURCES = experiments/calibrate.c src/bench/train_step.c src/train/model_ops.c
psring_calibrate_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) $(ZMQ_CFLAGS)
psring_calibrate_LDADD = $(PSRING_CUDA_FIRST) src/ring/libring.a src/train/libtrain.a src/model/libmodel.a src/data/libdata.a \
  src/common/libcommon.a $(MPI_LIBS) $(ZMQ_LIBS) $(BLAS_LIBS) $(ZLIB_LIBS) -lpthread -lm $(PSRING_CUDA_LAST)

check_PROGRAMS += tests/test_timeline
tests_test_timeline_SOURCES = tests/test_timeline.c
tests_test_timeline_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_timeline_LDADD = src/train/libtrain.a src/common/libcommon.a $(CHECK_LIBS) -lm

EXP_TESTS = tests/exp_csv.sh tests/exp_model.sh tests/exp_plot.sh tests/exp_timeline.sh \
  tests/exp_sweep_resume.sh tests/exp_wait.sh tests/gpu_check.sh
TESTS += tests/test_timeline $(EXP_TESTS)
EXTRA_DIST += $(EXP_TESTS) tests/fixtures/sweep_small.csv tests/fixtures/sweep_small.epochs.csv \
  tests/fixtures/calibration.csv docs/tradeoff.md docs/img
