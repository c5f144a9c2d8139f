/* ring_shm.h: between ring_allreduce.c and ring_shm.c only (the public API is ring_allreduce.h):
 * setting up and tearing down the load/store path, and running it on a buffer in a window. */
#ifndef PSRING_RING_SHM_H
#define PSRING_RING_SHM_H
#include "ring_allreduce.h"

/* collective; sets r->shm when every rank of r->comm shares this host's memory */
void ring_shm_init(ring_t *r);
/* collective; frees every window still allocated and the control window */
void ring_shm_free(ring_t *r);
/* 1 and runs the load/store ring if buf[0, count) lies in one of r's windows (every stored sum
 * multiplied by scale, unless scale is 1); 0 otherwise */
int ring_shm_allreduce(ring_t *r, float *buf, size_t count, float scale);

#endif
