# experiments: sweep, plot, cost model and demo (python3 + gnuplot scripts) and their tests.
# psring dispatches `psring sweep|plot|model|demo|...` to the scripts, beside it in the source
# tree or installed (their list: Makefile.am).

EXP_TESTS = tests/exp_csv.sh tests/exp_model.sh tests/exp_demo.sh tests/exp_plot.sh tests/exp_timeline.sh \
  tests/exp_sweep_resume.sh tests/exp_wait.sh tests/gpu_check.sh
TESTS += $(EXP_TESTS)
EXTRA_DIST += $(EXP_TESTS) tests/fixtures/sweep_small.csv tests/fixtures/sweep_small.epochs.csv \
  tests/fixtures/demo_small.csv docs/tradeoff.md docs/img

# waits that sleep for time-dilated emulated hosts (experiments/sleep-wait.c; psring --cluster
# preloads it when the cluster was brought up with --dilation): a shared object like the
# latency shim in tests/local.mk
pkglibexec_PROGRAMS += libpsring-sleepwait.so
libpsring_sleepwait_so_SOURCES = experiments/sleep-wait.c
libpsring_sleepwait_so_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) -fPIC
libpsring_sleepwait_so_LDFLAGS = -shared
libpsring_sleepwait_so_LDADD = $(MPI_LIBS)
