/* mlp.h: a multi-layer perceptron (Linear, ReLU, ..., Linear, softmax cross-entropy).
 * All parameters live in one contiguous float buffer, gradients in a second with the same layout,
 * laid out layer by layer: W0 b0 W1 b1 ... so that the last layer's gradients are one contiguous
 * range at the end (what an overlapping exchange sends first). W_l is (sizes[l+1], sizes[l]).
 * It knows nothing of MPI, ZeroMQ or topologies. */
#ifndef PSRING_MLP_H
#define PSRING_MLP_H
#include <stddef.h>
#include <stdint.h>

#define MLP_MAX_SIZES 17   /* up to 16 linear layers */

typedef struct {
    int nsizes;                   /* layer widths, input first: 784, ..., 10 */
    int sizes[MLP_MAX_SIZES];
    int nlayers;                  /* linear layers: nsizes - 1 */
    size_t nparams;
    size_t w_off[MLP_MAX_SIZES];  /* offsets of W_l and b_l into params/grads */
    size_t b_off[MLP_MAX_SIZES];
    float *params;                /* (nparams) */
    float *grads;                 /* (nparams), same layout */
    int max_batch;
    float *acts[MLP_MAX_SIZES];   /* acts[l] (max_batch, sizes[l]) for l >= 1: post-ReLU outputs; acts[nlayers] = logits */
    float *probs;                 /* (max_batch, sizes[nlayers]) */
    float *dbuf[2];               /* ping-pong scratch for activation gradients */
    struct mlp_allocator {        /* where grads came from (mlp_init_alloc); alloc NULL: the heap */
        float *(*alloc)(void *ctx, size_t n);
        void (*free)(void *ctx, float *p);
        void *ctx;
    } grads_alloc;
} mlp_t;
typedef struct mlp_allocator mlp_allocator_t;

/* Called by mlp_backward when the gradients of [offset, offset+count) are final (last layer
 * first), so an exchange can start sending them while earlier layers are still in backward. */
typedef void (*mlp_grad_ready_fn)(void *ctx, size_t offset, size_t count);

/* Parses "784,512,256,10" into sizes; returns nsizes or -1 with err set. */
int mlp_parse_layers(const char *spec, int *sizes, int max, char *err, size_t errlen);
size_t mlp_count_params(const int *sizes, int nsizes);
/* Initialises like PyTorch's nn.Linear: W, b ~ U(-1/sqrt(in), 1/sqrt(in)), from seed. */
void mlp_init(mlp_t *m, const int *sizes, int nsizes, int max_batch, uint64_t seed);
/* The same, with the gradient buffer from ga->alloc (n floats, 64-byte aligned, zeroed here) and
 * given back by mlp_free through ga->free: the trainer passes its exchange's allocator, e.g.
 * the ring's shared-memory window, which the model knows nothing about. ga NULL: mlp_init. */
void mlp_init_alloc(mlp_t *m, const int *sizes, int nsizes, int max_batch, uint64_t seed, const mlp_allocator_t *ga);
void mlp_free(mlp_t *m);
void mlp_zero_grad(mlp_t *m);
/* x (B, sizes[0]); returns the mean cross-entropy when labels != NULL (else 0). B <= max_batch. */
float mlp_forward(mlp_t *m, const float *x, const uint8_t *labels, int B);
/* After mlp_forward on the same x: ADDS d(mean loss)/d(params) into m->grads. cb may be NULL. */
void mlp_backward(mlp_t *m, const float *x, const uint8_t *labels, int B, mlp_grad_ready_fn cb, void *ctx);
/* Forward only; returns how many of the B samples are classified correctly (argmax). */
int mlp_correct(mlp_t *m, const float *x, const uint8_t *labels, int B);

#endif
