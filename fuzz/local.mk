# fuzz: reliability and security checks (docs/reliability.md). First the libFuzzer harnesses
# (clang -fsanitize=fuzzer,address,undefined), built only by `make fuzz` (never by `make` or
# `make check`: they need clang, and gcc builds the rest). Each harness is compiled together with
# the sources it fuzzes, so it does not depend on the gcc-built libraries.
# Run them with tools/fuzz-all SECONDS. In `make check` the same harnesses are built with the
# ordinary compiler around fuzz/replay_main.c and replay the seed corpus plus every crasher found
# so far (fuzz/regress/<target>/), so a fixed bug stays fixed (also under --enable-sanitizers).
#
# One list per harness of what it links besides fuzz/fuzz_<t>.c, used by both builds so they
# cannot drift apart: FUZZ_SRC_<t>, the product sources (paths in the source tree), FUZZ_DEFS_<t>,
# their preprocessor flags, FUZZ_LIBS_<t>, the system libraries. A source the harness needs and
# the list lacks is an undefined reference in `make check` as well as in `make fuzz`.
FUZZ_SRC_idx = src/data/idx.c
FUZZ_DEFS_idx = -DIDX_FIRST_ALLOC=65536 -DIDX_GZBUFFER=8192 $(ZLIB_CFLAGS)
FUZZ_LIBS_idx = $(ZLIB_LIBS)
FUZZ_SRC_checkpoint = src/train/checkpoint.c src/model/optim.c src/data/sampler.c src/common/check.c
FUZZ_DEFS_checkpoint = $(ZLIB_CFLAGS)
FUZZ_LIBS_checkpoint = $(ZLIB_LIBS) -lm
FUZZ_SRC_wire = src/ps/wire.c src/common/half.c
FUZZ_DEFS_wire =
FUZZ_LIBS_wire = -lm
FUZZ_SRC_options = src/train/options.c src/train/topology_list.c src/exchange/local_topology.c \
  src/ring/ring_topology.c src/ps/ps_topology.c src/common/opttab.c src/model/mlp.c src/model/layers.c \
  src/model/optim.c src/data/sampler.c src/common/check.c src/common/parse.c
FUZZ_DEFS_options = $(BLAS_CFLAGS)
FUZZ_LIBS_options = $(BLAS_LIBS) -lm

# the libFuzzer build compiles in the source tree (the lists are relative to it), output here;
# each harness also depends on the Makefile, so a changed list rebuilds it
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -fno-omit-frame-pointer -std=gnu11 -I$(abs_top_srcdir)/src -I$(abs_top_srcdir)/fuzz -I$(abs_top_builddir) \
  -D_GNU_SOURCE
FUZZ_TARGETS = fuzz/fuzz_idx fuzz/fuzz_checkpoint fuzz/fuzz_wire fuzz/fuzz_options
FUZZ_CHECK_CC = @if test "x$(HAVE_LIBFUZZER)" != xyes; then \
  echo "make fuzz: configure found no clang with libFuzzer (apt-get install clang, or set FUZZ_CC)" >&2; exit 1; fi
FUZZ_BUILD = $(MKDIR_P) fuzz && cd $(top_srcdir) && $(FUZZ_CC) $(FUZZ_FLAGS)

fuzz: $(FUZZ_TARGETS)
fuzz/fuzz_idx: fuzz/fuzz_idx.c $(FUZZ_SRC_idx) Makefile fuzz/fuzz_util.h
	$(FUZZ_CHECK_CC)
	$(AM_V_CC)$(FUZZ_BUILD) $(FUZZ_DEFS_idx) fuzz/fuzz_idx.c $(FUZZ_SRC_idx) -o $(abs_top_builddir)/$@ $(FUZZ_LIBS_idx)
fuzz/fuzz_checkpoint: fuzz/fuzz_checkpoint.c $(FUZZ_SRC_checkpoint) Makefile fuzz/fuzz_util.h
	$(FUZZ_CHECK_CC)
	$(AM_V_CC)$(FUZZ_BUILD) $(FUZZ_DEFS_checkpoint) fuzz/fuzz_checkpoint.c $(FUZZ_SRC_checkpoint) \
	  -o $(abs_top_builddir)/$@ $(FUZZ_LIBS_checkpoint)
fuzz/fuzz_wire: fuzz/fuzz_wire.c $(FUZZ_SRC_wire) Makefile
	$(FUZZ_CHECK_CC)
	$(AM_V_CC)$(FUZZ_BUILD) $(FUZZ_DEFS_wire) fuzz/fuzz_wire.c $(FUZZ_SRC_wire) -o $(abs_top_builddir)/$@ $(FUZZ_LIBS_wire)
fuzz/fuzz_options: fuzz/fuzz_options.c $(FUZZ_SRC_options) Makefile
	$(FUZZ_CHECK_CC)
	$(AM_V_CC)$(FUZZ_BUILD) $(FUZZ_DEFS_options) fuzz/fuzz_options.c $(FUZZ_SRC_options) \
	  -o $(abs_top_builddir)/$@ $(FUZZ_LIBS_options)
.PHONY: fuzz
CLEANFILES += $(FUZZ_TARGETS)
EXTRA_DIST += fuzz/fuzz_util.h fuzz/fuzz_idx.c fuzz/fuzz_checkpoint.c fuzz/fuzz_wire.c fuzz/fuzz_options.c \
  fuzz/make-corpus fuzz/corpus fuzz/regress fuzz/local.mk

# replay: the harnesses as plain test programs over fuzz/corpus/<t> and fuzz/regress/<t>, built
# from the same lists with the ordinary compiler (and its flags: --enable-sanitizers applies)
FUZZ_REPLAY = tests/fuzz_replay_idx tests/fuzz_replay_checkpoint tests/fuzz_replay_wire tests/fuzz_replay_options
check_PROGRAMS += $(FUZZ_REPLAY)
TESTS += $(FUZZ_REPLAY)
FUZZ_REPLAY_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/fuzz
tests_fuzz_replay_idx_SOURCES = fuzz/fuzz_idx.c fuzz/replay_main.c $(FUZZ_SRC_idx)
tests_fuzz_replay_idx_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS) -DFUZZ_NAME='"idx"' $(FUZZ_DEFS_idx)
tests_fuzz_replay_idx_LDADD = $(FUZZ_LIBS_idx)
tests_fuzz_replay_checkpoint_SOURCES = fuzz/fuzz_checkpoint.c fuzz/replay_main.c $(FUZZ_SRC_checkpoint)
tests_fuzz_replay_checkpoint_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS) -DFUZZ_NAME='"checkpoint"' $(FUZZ_DEFS_checkpoint)
tests_fuzz_replay_checkpoint_LDADD = $(FUZZ_LIBS_checkpoint)
tests_fuzz_replay_wire_SOURCES = fuzz/fuzz_wire.c fuzz/replay_main.c $(FUZZ_SRC_wire)
tests_fuzz_replay_wire_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS) -DFUZZ_NAME='"wire"' $(FUZZ_DEFS_wire)
tests_fuzz_replay_wire_LDADD = $(FUZZ_LIBS_wire)
tests_fuzz_replay_options_SOURCES = fuzz/fuzz_options.c fuzz/replay_main.c $(FUZZ_SRC_options)
tests_fuzz_replay_options_CPPFLAGS = $(FUZZ_REPLAY_CPPFLAGS) -DFUZZ_NAME='"options"' $(FUZZ_DEFS_options)
tests_fuzz_replay_options_LDADD = $(FUZZ_LIBS_options)

# a hostile client for a running parameter server (tests/ps_hostile.sh, tests/ps_auth.sh)
check_PROGRAMS += tests/ps_attack
tests_ps_attack_SOURCES = tests/ps_attack.c
tests_ps_attack_CFLAGS = $(AM_CFLAGS) $(ZMQ_CFLAGS)
tests_ps_attack_LDADD = src/ps/libps.a src/common/libcommon.a $(ZMQ_LIBS) -lm
REL_TESTS = tests/ps_hostile.sh tests/ps_auth.sh tests/fault_kill.sh tests/fault_disk.sh tests/fault_stall.sh
TESTS += $(REL_TESTS)
EXTRA_DIST += $(REL_TESTS) docs/reliability.md
