# tests/echo: the test-only topology (echo_topology.c), and the trainer built with it listed:
# tests/psring-train-echo. What any topology's local.mk does (its descriptor into the trainer's
# sources, its library, if it had one, into TOPOLOGY_LIBS), for a test program of its own.
check_PROGRAMS += tests/psring-train-echo
tests_psring_train_echo_SOURCES = $(TRAIN_PROGRAM_SOURCES) $(TOPOLOGY_SOURCES) tests/echo/echo_topology.c
tests_psring_train_echo_CFLAGS = $(psring_train_CFLAGS) '-DPSRING_MORE_TOPOLOGIES(X)=X(echo)'
tests_psring_train_echo_LDADD = $(psring_train_LDADD)
TESTS += tests/topology_echo.sh
EXTRA_DIST += tests/topology_echo.sh
