# fuzz: reliability and security checks (docs/reliability.md). First the libFuzzer harnesses (clang -fsanitize=fuzzer,address,undefined), built only by `make fuzz`
# (never by `make` or `make check`: they need clang, and gcc builds the rest). Each harness is
# compiled together with the sources it fuzzes, so it does not depend on the gcc-built libraries.
# Run them with experiments/fuzz-all SECONDS. In `make check` the same harnesses are built with the
# ordinary compiler around fuzz/replay_main.c and replay the seed corpus plus every crasher found
# so far (fuzz/regress/<target>/), so a fixed bug stays fixed (also under --enable-sanitizers).
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -fno-omit-frame-pointer -std=gnu11 -I$(top_srcdir)/src -I$(top_srcdir)/fuzz -I$(top_builddir) -D_GNU_SOURCE
FUZZ_TARGETS = fuzz/fuzz_idx fuzz/fuzz_checkpoint fuzz/fuzz_wire fuzz/fuzz_options
FUZZ_SRC_idx = $(top_srcdir)/fuzz/fuzz_idx.c $(top_srcdir)/src/data/idx.c
FUZZ_SRC_checkpoint = $(top_srcdir)/fuzz/fuzz_checkpoint.c $(top_srcdir)/src/train/checkpoint.c \
  $(top_srcdir)/src/model/optim.c $(top_srcdir)/src/data/sampler.c $(top_srcdir)/src/common/check.c
FUZZ_SRC_wire = $(top_srcdir)/fuzz/fuzz_wire.c $(top_srcdir)/src/ps/wire.c $(top_srcdir)/src/common/half.c
FUZZ_SRC_options = $(top_srcdir)/fuzz/fuzz_options.c $(top_srcdir)/src/train/options.c \
  $(top_srcdir)/src/model/mlp.c $(top_srcdir)/src/model/layers.c $(top_srcdir)/src/model/optim.c \
  $(top_srcdir)/src/data/sampler.c $(top_srcdir)/src/common/check.c

FUZZ_CHECK_CC = @if test "x$(HAVE_LIBFUZZER)" != xyes; then \
  echo "make fuzz: configure found no clang with libFuzzer (apt-get install clang, or set FUZZ_CC)" >&2; exit 1; fi

fuzz: $(FUZZ_TARGETS)
fuzz/fuzz_idx: $(FUZZ_SRC_idx) $(top_srcdir)/fuzz/fuzz_util.h
	$(FUZZ_CHECK_CC)
	@$(MKDIR_P) fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_FLAGS) -DIDX_FIRST_ALLOC=65536 -DIDX_GZBUFFER=8192 $(ZLIB_CFLAGS) $(FUZZ_SRC_idx) -o $@ $(ZLIB_LIBS)
fuzz/fuzz_checkpoint: $(FUZZ_SRC_checkpoint) $(top_srcdir)/fuzz/fuzz_util.h
	$(FUZZ_CHECK_CC)
	@$(MKDIR_P) fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_FLAGS) $(ZLIB_CFLAGS) $(FUZZ_SRC_checkpoint) -o $@ $(ZLIB_LIBS) -lm
fuzz/fuzz_wire: $(FUZZ_SRC_wire)
	$(FUZZ_CHECK_CC)
	@$(MKDIR_P) fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_SRC_wire) -o $@ -lm
fuzz/fuzz_options: $(FUZZ_SRC_options)
	$(FUZZ_CHECK_CC)
	@$(MKDIR_P) fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_FLAGS) $(BLAS_CFLAGS) $(FUZZ_SRC_options) -o $@ $(BLAS_LIBS) -lm
.PHONY: fuzz
CLEANFILES += $(FUZZ_TARGETS)
EXTRA_DIST += fuzz/fuzz_util.h fuzz/fuzz_idx.c fuzz/fuzz_checkpoint.c fuzz/fuzz_wire.c fuzz/fuzz_options.c \
  fuzz/make-corpus fuzz/corpus fuzz/regress fuzz/local.mk

# replay: the harnesses as plain test programs over fuzz/corpus/<t> and fuzz/regress/<t>
FUZZ_REPLAY = tests/fuzz_replay_idx tests/fuzz_replay_checkpoint tests/fuzz_replay_wire tests/fuzz_replay_options
check_PROGRAMS += $(FUZZ_REPLAY)
TESTS += $(FUZZ_REPLAY)
tests_fuzz_replay_idx_SOURCES = fuzz/fuzz_idx.c fuzz/replay_main.c
tests_fuzz_replay_idx_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/fuzz -DFUZZ_NAME='"idx"'
tests_fuzz_replay_idx_LDADD = src/data/libdata.a src/common/libcommon.a $(ZLIB_LIBS)
tests_fuzz_replay_checkpoint_SOURCES = fuzz/fuzz_checkpoint.c fuzz/replay_main.c
tests_fuzz_replay_checkpoint_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/fuzz -DFUZZ_NAME='"checkpoint"'
tests_fuzz_replay_checkpoint_LDADD = src/train/libtrain.a src/model/libmodel.a src/data/libdata.a src/common/libcommon.a \
  $(BLAS_LIBS) $(ZLIB_LIBS) -lm
tests_fuzz_replay_wire_SOURCES = fuzz/fuzz_wire.c fuzz/replay_main.c
tests_fuzz_replay_wire_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/fuzz -DFUZZ_NAME='"wire"'
tests_fuzz_replay_wire_LDADD = src/ps/libps.a src/common/libcommon.a -lm
tests_fuzz_replay_options_SOURCES = fuzz/fuzz_options.c fuzz/replay_main.c
tests_fuzz_replay_options_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/fuzz -DFUZZ_NAME='"options"'
tests_fuzz_replay_options_LDADD = src/train/libtrain.a src/model/libmodel.a src/data/libdata.a src/common/libcommon.a \
  $(BLAS_LIBS) $(ZLIB_LIBS) -lm

# a hostile client for a running parameter server (tests/ps_hostile.sh, tests/ps_auth.sh)
check_PROGRAMS += tests/ps_attack
tests_ps_attack_SOURCES = tests/ps_attack.c
tests_ps_attack_CFLAGS = $(AM_CFLAGS) $(ZMQ_CFLAGS)
tests_ps_attack_LDADD = src/ps/libps.a src/common/libcommon.a $(ZMQ_LIBS) -lm
REL_TESTS = tests/ps_hostile.sh tests/ps_auth.sh tests/fault_kill.sh tests/fault_disk.sh tests/fault_stall.sh
TESTS += $(REL_TESTS)
EXTRA_DIST += $(REL_TESTS) docs/reliability.md

# the --ps-auth keyfile (src/ps/auth.c)
check_PROGRAMS += tests/test_auth
TESTS += tests/test_auth
tests_test_auth_SOURCES = tests/test_auth.c src/ps/auth.c
tests_test_auth_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(ZMQ_CFLAGS)
tests_test_auth_LDADD = $(CHECK_LIBS) $(ZMQ_LIBS) -lm
