/* stall.h: --stall-warn's bookkeeping, shared by the ring (rank 0 waits for every rank to reach
 * the allreduce) and the PS (server 0 waits for every worker's push), as in Horovod's stall
 * check: a peer quiet for at least the threshold is named once, and again only after it was
 * seen to move (stall_watch_clear). The job goes on either way; naming is all this does. */
#ifndef PSRING_STALL_H
#define PSRING_STALL_H
#include <stdint.h>

typedef struct {
    double warn;          /* seconds; <= 0: off (stall_watch_due never fires) */
    int npeers;
    uint8_t *named;       /* peer named since it last moved */
    uint64_t stalls;      /* namings so far, for reports */
} stall_watch_t;

void stall_watch_init(stall_watch_t *w, int npeers, double warn);
void stall_watch_free(stall_watch_t *w);
/* peer has been quiet for quiet seconds: 1 exactly once when that reaches warn (counted) */
int stall_watch_due(stall_watch_t *w, int peer, double quiet);
/* peer moved: 1 if it had been named (the caller may say it is back) */
int stall_watch_clear(stall_watch_t *w, int peer);

#endif
