/* check.h: fatal-error helpers shared by every module.
 * die() prints "psring: <file>:<line>: <message>" and exits. The checks of the other libraries
 * have headers of their own, so that code which does not use a library never includes its
 * header: MPI in common/mpi_check.h, CUDA and cuBLAS in common/cuda_check.h, ZeroMQ in
 * ps/zcheck.h (only the PS speaks ZeroMQ). Exit codes: 1 runtime failure, 2 bad input (flags,
 * files, options). */
#ifndef PSRING_CHECK_H
#define PSRING_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>

#define EXIT_BADINPUT 2

void die_at(const char *file, int line, int code, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));
#define die(...) die_at(__FILE__, __LINE__, 1, __VA_ARGS__)
#define die_input(...) die_at(NULL, 0, EXIT_BADINPUT, __VA_ARGS__)

/* malloc that never returns NULL (count may be 0) */
void *xmalloc(size_t bytes);
void *xcalloc(size_t n, size_t size);

/* Appends ", rank" (or the first "rank") to the NUL-terminated list in buf of cap bytes, for
 * messages that name ranks; when it would not fit, ends the list with ", ..." once. */
void rank_list_add(char *buf, size_t cap, int rank);

/* printf from rank 0 only: set by the trainer once the topology is known */
extern int psring_log_rank;
void printf0(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
