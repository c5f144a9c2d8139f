# experiments: the commands users run (sweep, plot, summary, model, demo, mps, cluster, ...:
# python3 + gnuplot and shell scripts) and their tests. The Python they share is the package
# experiments/psringlib, installed beside them. psring dispatches `psring sweep|plot|model|demo|...`
# to the scripts, beside it in the source tree or installed (the folder as it is: Makefile.am).
# The LD_PRELOAD shims they use live in src/shim; the developer's tools are in tools/.

EXP_TESTS = tests/exp_cli.sh tests/exp_csv.py tests/exp_model.py tests/exp_model_scale.py tests/exp_model_published.py tests/exp_model_advise.py tests/exp_model_transport.py tests/exp_model_verdict.sh \
  tests/exp_demo.py tests/exp_demo_plan.py tests/exp_demo_verdict.py tests/exp_demo_figures.py tests/exp_demo_best.py tests/exp_plot.py tests/exp_timeline.sh \
  tests/exp_sweep_resume.sh tests/exp_sweep_mps.sh tests/exp_wait.sh tests/gpu_check.sh
TESTS += $(EXP_TESTS)
EXTRA_DIST += $(EXP_TESTS) tests/fixtures/sweep_small.csv tests/fixtures/sweep_small.epochs.csv tests/fixtures/sweep_gpu.csv \
  tests/fixtures/demo_small.csv tests/fixtures/demo_run_terms.csv tests/fixtures/published_small.csv docs/tradeoff.md docs/exercises.md docs/img
# psring plot refuses a test_accuracy it cannot draw (tests/hostile.py's checks)
TESTS += tests/hostile_plot.py tests/hostile_python.py
EXTRA_DIST += tests/hostile_plot.py tests/hostile_python.py
