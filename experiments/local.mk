# experiments: sweep, plot, cost model and demo (python3 + gnuplot scripts) and their tests.
# psring dispatches `psring sweep|plot|model|demo|...` to the scripts, beside it in the source
# tree or installed (their list: Makefile.am).

EXP_TESTS = tests/exp_csv.sh tests/exp_model.sh tests/exp_model_scale.sh tests/exp_demo.sh tests/exp_plot.sh tests/exp_timeline.sh \
  tests/exp_sweep_resume.sh tests/exp_sweep_mps.sh tests/exp_wait.sh tests/gpu_check.sh
TESTS += $(EXP_TESTS)
EXTRA_DIST += $(EXP_TESTS) tests/fixtures/sweep_small.csv tests/fixtures/sweep_small.epochs.csv tests/fixtures/sweep_gpu.csv \
  tests/fixtures/demo_small.csv tests/fixtures/published_small.csv docs/tradeoff.md docs/img

# The LD_PRELOAD shims of the emulated cluster, each built as a "program" named .so so that
# automake makes a shared object without libtool; installed beside the helpers, where the launcher
# looks for them. Each reads its one PSRING_*_US setting through shim_env.h and the one number
# parser (src/common/parse.c, compiled in).
# psring --inject-latency-us: a wait before every message sent (experiments/inject-latency.c)
pkglibexec_PROGRAMS = libpsring-inject.so
libpsring_inject_so_SOURCES = experiments/inject-latency.c experiments/shim_env.h src/common/parse.c
libpsring_inject_so_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) $(ZMQ_CFLAGS) -fPIC
libpsring_inject_so_LDFLAGS = -shared
libpsring_inject_so_LDADD = -ldl -lm
# waits that sleep for time-dilated emulated hosts (experiments/sleep-wait.c; psring --cluster
# preloads it when the cluster was brought up with --dilation)
pkglibexec_PROGRAMS += libpsring-sleepwait.so
libpsring_sleepwait_so_SOURCES = experiments/sleep-wait.c experiments/shim_env.h src/common/parse.c
libpsring_sleepwait_so_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) -fPIC
libpsring_sleepwait_so_LDFLAGS = -shared
libpsring_sleepwait_so_LDADD = $(MPI_LIBS) -lm
