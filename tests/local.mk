# tests: the trainer's own suites (topologies add theirs in their folder's local.mk)
# tests/unit.h: the Check binaries' shared runner, table-driven suites and temporary-folder fixture
noinst_HEADERS += tests/unit.h
check_PROGRAMS += tests/test_train
# (with the list of topologies and their descriptors, whose flags the options parse)
tests_test_train_SOURCES = tests/test_train.c src/train/topology_list.c $(TOPOLOGY_SOURCES)
tests_test_train_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(MPI_CFLAGS) $(ZMQ_CFLAGS)
tests_test_train_LDADD = $(PSRING_CUDA_FIRST) $(PSRING_LIBS) $(CHECK_LIBS) $(PSRING_EXTERNAL_LIBS) $(PSRING_CUDA_LAST)
TESTS += tests/test_train tests/train_cli.sh tests/train_resume.sh tests/train_learns.sh
EXTRA_DIST += tests/common.sh tests/train_cli.sh tests/train_resume.sh tests/train_learns.sh
# tests in Python (tests/*.py: unittest, one named test a check, run verbosely so the log names each
# that failed) share tests/common.py as the shell tests share common.sh; each module is one test
TEST_EXTENSIONS = .py
PY_LOG_COMPILER = $(PYTHON3)
# -B: no __pycache__ of tests/common.py beside it (the helper keeps its own commands from writing one)
AM_PY_LOG_FLAGS = -B
EXTRA_DIST += tests/common.py tests/demo_fixture.py
# a run on a sample budget (PS async: train's budget driver) resumes bit for bit
TESTS += tests/train_budget_resume.sh
EXTRA_DIST += tests/train_budget_resume.sh
# the --ps-auth keyfile (src/ps/auth.c, from the PS library)
check_PROGRAMS += tests/test_auth
TESTS += tests/test_auth
tests_test_auth_SOURCES = tests/test_auth.c
tests_test_auth_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(ZMQ_CFLAGS)
tests_test_auth_LDADD = src/ps/libps.a src/common/libcommon.a $(CHECK_LIBS) $(ZMQ_LIBS) -lm
# the --timeline recorder (src/common/timeline.c) without MPI: parts, merge, stale parts
check_PROGRAMS += tests/test_timeline
tests_test_timeline_SOURCES = tests/test_timeline.c
tests_test_timeline_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_timeline_LDADD = src/common/libcommon.a $(CHECK_LIBS) -lpthread -lm
TESTS += tests/test_timeline
# an emulated GPU host's two CPU shares (src/train/accel_share.c): the compute thread's moves
check_PROGRAMS += tests/test_accel_share
tests_test_accel_share_SOURCES = tests/test_accel_share.c
tests_test_accel_share_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_accel_share_LDADD = src/train/libtrain.a src/common/libcommon.a $(CHECK_LIBS) -lpthread -lm
TESTS += tests/test_accel_share
# the layering of src/: common <- exchange <- ring, ps <- train, ring and ps not each other (#includes, nm)
TESTS += tests/src_layers.sh
EXTRA_DIST += tests/src_layers.sh
# each exchange's own CSV columns (exchange.h report), for local, ring and ps
TESTS += tests/train_csv_columns.sh tests/train_timing_skip.sh
EXTRA_DIST += tests/train_csv_columns.sh tests/train_timing_skip.sh
# the launcher validates options once before mpirun (--check-options)
TESTS += tests/launcher_cli.sh
EXTRA_DIST += tests/launcher_cli.sh
# hostile input and faults (tests/hostile.py: each case's exit code, one stderr line, nothing left)
TESTS += tests/hostile_signals.py tests/hostile_bounds.py tests/hostile_values.py tests/hostile_outputs.py tests/hostile_once.py
EXTRA_DIST += tests/hostile.py tests/hostile_signals.py tests/hostile_bounds.py tests/hostile_values.py tests/hostile_outputs.py \
  tests/hostile_once.py
TESTS += tests/hostile_flags.py tests/hostile_data.py tests/hostile_checkpoints.py tests/hostile_disks.py tests/hostile_kills.py
EXTRA_DIST += tests/hostile_flags.py tests/hostile_data.py tests/hostile_checkpoints.py tests/hostile_disks.py tests/hostile_kills.py
# --optimizer adam|lars on every topology, resume, bad values (and --sampler's)
TESTS += tests/optim_equivalence.sh tests/ring_bytes.sh
EXTRA_DIST += tests/optim_equivalence.sh tests/ring_bytes.sh
# emulated cluster (experiments/cluster): root and network namespaces, else SKIP
TESTS += tests/cluster_updown.sh tests/cluster_losses.sh tests/cluster_dilation.sh tests/demo_interrupt.sh tests/demo_kill.sh
EXTRA_DIST += tests/cluster_common.sh tests/cluster_updown.sh tests/cluster_losses.sh tests/cluster_dilation.sh tests/demo_interrupt.sh tests/demo_kill.sh
# emulated GPU hosts (cluster up --kinds): two CPU shares each, the trainer's compute on its own
TESTS += tests/cluster_kinds.sh
EXTRA_DIST += tests/cluster_kinds.sh
# psring --inject-latency-us (the shim is built in src/shim/local.mk)
TESTS += tests/cluster_latency.sh
EXTRA_DIST += tests/cluster_latency.sh
# tools/pack-runtime: the GPU machine's Open MPI/ZeroMQ/OpenBLAS/Check runtime, packed here
TESTS += tests/pack_runtime.sh
EXTRA_DIST += tests/pack_runtime.sh
# no path of one machine (a home or work folder, a folder beside the checkout) in the tree
TESTS += tests/tree_paths.sh
EXTRA_DIST += tests/tree_paths.sh
# every result README.md and docs/tradeoff.md state stands in its page and in the run it cites
TESTS += tests/docs_claims.sh
EXTRA_DIST += tests/docs_claims.sh
