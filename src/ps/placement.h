/* placement.h: which server holds which keys. Three rules, one answer for servers and workers:
 *   even     server s holds [s*n/S, (s+1)*n/S), as ps-lite does
 *   LARS     whole weight and bias tensors on each server (their norms are complete there:
 *            optim_shard_range), in the optimizer mode only
 *   BytePS   (--byteps K) servers 0..N-1 sit on the N worker hosts, servers N..N+K-1 on K hosts
 *            of their own; the K hold the share x* of the keys, evenly, the worker hosts' the
 *            rest, evenly. x* = min(1, 2K(N-1) / (N^2 + KN - 2K)) balances the bytes through
 *            every host's link (Jiang et al., "A Unified Architecture for Accelerating
 *            Distributed DNN Training in Heterogeneous GPU/CPU Clusters", OSDI 2020, section 3.2;
 *            experiments/psringlib/costmodel.py byteps_x). */
#ifndef PSRING_PS_PLACEMENT_H
#define PSRING_PS_PLACEMENT_H
#include <stddef.h>
#include <stdio.h>
#include "model/optim.h"

/* x*: the share of the keys on K spare hosts beside N worker hosts (0 when K = 0 or N = 1) */
double ps_byteps_share(int N, int K);
/* server s's keys [lo, lo + len) of count: BytePS' placement when spare > 0 (the last spare of
 * nservers servers are the spare hosts'; with none it is the even split), else LARS' whole
 * tensors when optim asks for them, else the even split */
void ps_key_range(const optim_config_t *optim, size_t count, int nservers, int spare, int s, size_t *lo, size_t *len);
/* --byteps K with S servers among P processes: 1 when the placement holds (P - S workers, a
 * server beside each plus K), else 0 and the line that says which --servers it needs in why.
 * Inline: the trainer's option parser (ps_topology.c) and the exchange share it without the
 * descriptor linking the PS. */
static inline int ps_byteps_fits(int K, int S, int P, char *why, size_t whylen) {
    if (S - K == P - S) return 1;
    snprintf(why, whylen, "--byteps %d: -np %d with --servers %d makes %d workers, but the placement puts a server on "
             "every worker host plus %d: --servers %d", K, P, S, P - S, K, P - S + K);
    return 0;
}

#endif
