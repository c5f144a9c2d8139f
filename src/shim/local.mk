# src/shim: the LD_PRELOAD shims of the emulated cluster, linked into no program: the launcher
# preloads them into the ranks it starts. Each is built as a "program" named .so so that automake
# makes a shared object without libtool; installed beside the helpers in $(pkglibexecdir), where
# the installed launcher looks for them (in the source tree: the build folder). Each reads its one
# PSRING_*_US setting through shim_env.h and the one number parser (src/common/parse.c, compiled in).
# psring --inject-latency-us: a wait before every message sent (src/shim/inject-latency.c)
pkglibexec_PROGRAMS = libpsring-inject.so
libpsring_inject_so_SOURCES = src/shim/inject-latency.c src/shim/shim_env.h src/common/parse.c
libpsring_inject_so_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) $(ZMQ_CFLAGS) -fPIC
libpsring_inject_so_LDFLAGS = -shared
libpsring_inject_so_LDADD = -ldl -lm
# waits that sleep for time-dilated emulated hosts (src/shim/sleep-wait.c; psring --cluster
# preloads it when the cluster was brought up with --dilation)
pkglibexec_PROGRAMS += libpsring-sleepwait.so
libpsring_sleepwait_so_SOURCES = src/shim/sleep-wait.c src/shim/shim_env.h src/common/parse.c
libpsring_sleepwait_so_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) -fPIC
libpsring_sleepwait_so_LDFLAGS = -shared
libpsring_sleepwait_so_LDADD = $(MPI_LIBS) -lm
