/* fingerprint.h: start-up check that every MPI rank runs the same configuration, so that a
 * mismatched command line fails at once with one line instead of hanging in (or garbling) the
 * first collective. The caller hashes what must agree (options_fingerprint in the trainer). */
#ifndef PSRING_FINGERPRINT_H
#define PSRING_FINGERPRINT_H
#include <stdint.h>

/* Collective over MPI_COMM_WORLD. When any rank's (fingerprint, count) differs from rank 0's,
 * rank 0 prints "psring: WHO: options differ across ranks: rank(s) R disagree(s) with rank 0
 * ..." once, and every rank (each saw the same verdict) finalises MPI when started_mpi and exits
 * with status 2. Returns only when all agree. */
void fingerprint_check(const char *who, uint64_t fingerprint, uint64_t count, int started_mpi);

#endif
