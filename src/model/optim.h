/* optim.h: the optimizer as one flat loop over a parameter buffer. The same function runs on a
 * whole model (local, ring: every worker on the averaged gradient) and on a parameter server's
 * shard (ps: each server on its key range), so all topologies share the math exactly.
 * SGD follows torch.optim.SGD (dampening 0, nesterov off):
 *   d = g + wd * p;  v = mu * v + d;  p -= lr * v       (v starts at 0, so step 1 gives v = d) */
#ifndef PSRING_OPTIM_H
#define PSRING_OPTIM_H
#include <stddef.h>

typedef struct {
    float lr;            /* base learning rate (the trainer may scale/warm it up per step) */
    float momentum;
    float weight_decay;
} optim_config_t;

/* floats of optimizer state per parameter (SGD-momentum: 1, the velocity) */
size_t optim_state_per_param(const optim_config_t *c);
/* one step on count elements; state holds optim_state_per_param(c) * count floats laid out as
 * count-length blocks. lr is this step's learning rate. */
void optim_step(const optim_config_t *c, float *params, const float *grads, float *state,
                size_t count, float lr);
/* optim_step, and grads[0, count) set to 0 in the same pass, for a caller whose gradient buffer is
 * the model's accumulator: saves the separate clearing pass before the next backward. params and
 * state come out bit for bit as from optim_step. */
void optim_step_clear_grads(const optim_config_t *c, float *params, float *grads, float *state,
                            size_t count, float lr);

#endif
