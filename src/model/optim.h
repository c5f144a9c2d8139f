/* optim.h: the optimizer as one flat loop over a parameter buffer. The same function runs on a
 * whole model (local, ring: every worker on the averaged gradient) and on a parameter server's
 * shard (ps: each server on its key range), so all topologies share the math exactly.
 * SGD follows torch.optim.SGD (dampening 0, nesterov off):
 *   d = g + wd * p;  v = mu * v + d;  p -= lr * v       (v starts at 0, so step 1 gives v = d)
 * Adam follows torch.optim.Adam (amsgrad off; weight decay L2-style, added to the gradient, not
 * AdamW's decoupled decay), t = steps taken by this state, 1 on the first step:
 *   d = g + wd * p;  m = b1 m + (1-b1) d;  v = b2 v + (1-b2) d^2;
 *   p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * LARS follows You, Gitman, Ginsburg 2017 (Algorithm 1, with momentum), per weight matrix W_l:
 *   trust = eta ||W_l|| / (||g_l|| + wd ||W_l||)  (1 where either norm is 0);
 *   d = trust (g + wd p);  v = mu v + d;  p -= lr v
 * Biases (1-D parameters) are excluded from layer adaptation and from weight decay, as in the
 * common LARS implementations (SimCLR, NVIDIA apex): for them d = g. The norms are over the
 * WHOLE matrix, so a LARS step needs the layer layout (optim_set_layout) and a range that holds
 * every weight matrix it touches entirely (optim_shard_range makes such ranges for a PS). */
#ifndef PSRING_OPTIM_H
#define PSRING_OPTIM_H
#include <stddef.h>

typedef enum { OPTIM_SGD = 0, OPTIM_ADAM, OPTIM_LARS } optim_kind_t;

#define OPTIM_MAX_SEGMENTS 64   /* W_l and b_l of up to 32 layers */

typedef struct {
    float lr;            /* base learning rate (the trainer may scale/warm it up per step) */
    float momentum;      /* SGD and LARS */
    float weight_decay;
    /* added for Adam and LARS; a zero-initialised tail means plain SGD, as before */
    optim_kind_t kind;
    float beta1, beta2, eps;   /* Adam (torch defaults 0.9, 0.999, 1e-8) */
    float lars_eta;            /* LARS trust coefficient (0.001) */
    /* parameter layout for LARS: segment k is [seg_lo[k], seg_lo[k] + seg_len[k]), in order,
     * covering the model; seg_bias[k] = 1 for a bias vector (no adaptation, no decay) */
    int nseg;
    size_t seg_lo[OPTIM_MAX_SEGMENTS], seg_len[OPTIM_MAX_SEGMENTS];
    unsigned char seg_bias[OPTIM_MAX_SEGMENTS];
} optim_config_t;

/* "sgd", "adam", "lars" */
const char *optim_kind_name(optim_kind_t k);
/* The learning rate each kind starts from when none is given: sgd 0.02 (this MLP on MNIST),
 * adam 0.001 (torch.optim.Adam's default), lars 1 (the trust ratio alone sets the step: each
 * weight matrix moves lars_eta of its norm per step, as You et al. 2017 write the update). */
float optim_default_lr(optim_kind_t k);
/* kind with psring-train's defaults (its --help): lr optim_default_lr, momentum 0.9, no weight
 * decay, Adam's betas 0.9 and 0.999 and eps 1e-8 (torch.optim.Adam's), LARS' eta 0.001; no layout */
optim_config_t optim_defaults(optim_kind_t k);
/* Fills the segments for an MLP with these layer widths, laid out as mlp.h does it
 * (W_0, b_0, W_1, b_1, ...). Returns 0, or -1 when there are more than OPTIM_MAX_SEGMENTS. */
int optim_set_layout(optim_config_t *c, const int *sizes, int nsizes);

/* floats of optimizer state per parameter, laid out as count-length blocks:
 * SGD 1 (velocity); Adam 3 (m, v, and t: the step count, the same in every element, so that any
 * slice of the state, a PS shard or a checkpoint, carries it); LARS 1 (velocity) */
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
/* optim_step on elements [offset, offset + count) of the model (params, grads, state point at
 * element offset): a PS server's shard. Only LARS uses offset (to find the layers); it requires
 * every weight matrix overlapping the range to lie inside it and dies otherwise. */
void optim_step_at(const optim_config_t *c, float *params, const float *grads, float *state,
                   size_t count, float lr, size_t offset);
/* Shard s of nshards for a parameter server whose servers each run optim_step_at on their
 * range: LARS gets contiguous ranges whose boundaries fall between segments (the one closest to
 * the even split s*total/nshards, keeping every shard non-empty), so each weight matrix lives on
 * one server and its norms are complete there; other kinds get -1 (use the even split).
 * Returns 0, or -2 when there are fewer segments than shards. */
int optim_shard_range(const optim_config_t *c, size_t total, int nshards, int s, size_t *lo, size_t *len);

#endif
