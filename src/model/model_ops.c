/* model_ops.c: model_ops.h. Compiled into the programs that train (not libmodel) because with
 * CUDA it calls libmodel_cuda, which only --with-cuda builds have. */
#include "config.h"
#include "model_ops.h"
#include "common/check.h"
#include "data/batch.h"
#include <stdio.h>
#include <string.h>
#ifdef HAVE_CUDA
#include "model/mlp_cuda.h"
#endif

int model_device_check(device_t dev) {
    if (dev == DEVICE_CPU) return 0;
#ifdef HAVE_CUDA
    char why[256] = "";
    if (cuda_device_count(why, sizeof why) > 0) return 0;
    fprintf(stderr, "psring-train: --device cuda: no usable CUDA device (%s)\n", why);
#else
    fprintf(stderr, "psring-train: psring was built without CUDA (configure --with-cuda)\n");
#endif
    return EXIT_BADINPUT;
}

int model_device_count(device_t dev) {
#ifdef HAVE_CUDA
    if (dev == DEVICE_CUDA) return cuda_device_count(NULL, 0);
#endif
    (void)dev;
    return 0;
}

void model_init(model_t *md, mlp_t *m, device_t dev, int local_rank) {
    memset(md, 0, sizeof *md);
    md->m = m;
    if (dev == DEVICE_CPU) {
        md->x = xmalloc(sizeof(float) * (size_t)m->max_batch * (size_t)m->sizes[0]);
        md->y = xmalloc((size_t)m->max_batch);
        return;
    }
#ifdef HAVE_CUDA
    char why[256] = "";
    if (cuda_device_pin(local_rank, why, sizeof why) < 0) die_input("--device cuda: no usable CUDA device (%s)", why);
    mlp_cuda_t *g = mlp_cuda_create(m);
    md->gpu = g;
    /* the host mirror takes part in every staged transfer (PS steps, sync, checkpoints): pin it */
    cuda_host_register(m->params, m->nparams * sizeof(float));
    cuda_host_register(m->grads, m->nparams * sizeof(float));
#else
    die_input("psring was built without CUDA (configure --with-cuda)");
#endif
}

void model_free(model_t *md) {
#ifdef HAVE_CUDA
    if (md->gpu) {
        cuda_host_unregister(md->m->params);
        cuda_host_unregister(md->m->grads);
        for (int i = 0; i < 2; i++) cuda_dataset_free(md->dsets[i].dev);
        mlp_cuda_free(md->gpu);
        memset(md, 0, sizeof *md);
        return;
    }
#endif
    free(md->x);
    free(md->y);
    memset(md, 0, sizeof *md);
}

#ifdef HAVE_CUDA
/* ds's copy on the GPU, made at its first use: the trainer gathers from two (train, test) */
static cuda_dataset_t *device_dataset(model_t *md, const dataset_t *ds) {
    for (int i = 0; i < 2; i++)
        if (md->dsets[i].ds == ds) return md->dsets[i].dev;
    for (int i = 0; i < 2; i++)
        if (!md->dsets[i].ds) {
            md->dsets[i].ds = ds;
            md->dsets[i].dev = cuda_dataset_create(ds->pixels, ds->labels, ds->count, ds->dim);
            return md->dsets[i].dev;
        }
    die("model_gather: more than two datasets on the device");
}
#endif

void model_gather(model_t *md, const dataset_t *ds, const uint32_t *idx, int n) {
#ifdef HAVE_CUDA
    if (md->gpu) { mlp_cuda_gather(md->gpu, device_dataset(md, ds), idx, n); return; }
#endif
    batch_gather(md->x, md->y, ds, idx, n);
}

float model_forward(model_t *md, int n) {
#ifdef HAVE_CUDA
    if (md->gpu) return mlp_cuda_forward_gathered(md->gpu, n);
#endif
    return mlp_forward(md->m, md->x, md->y, n);
}

void model_backward(model_t *md, int n, mlp_grad_ready_fn cb, void *ctx) {
#ifdef HAVE_CUDA
    if (md->gpu) {
        mlp_cuda_backward(md->gpu, n);
        cuda_sync();   /* so the trainer's compute time is the GPU's, not the launches' */
        return;
    }
#endif
    mlp_backward(md->m, md->x, md->y, n, cb, ctx);
}

int model_correct(model_t *md, int n) {
#ifdef HAVE_CUDA
    if (md->gpu) return mlp_cuda_correct_gathered(md->gpu, n);
#endif
    return mlp_correct(md->m, md->x, md->y, n);
}

void model_scale_grads(model_t *md, float s) {
#ifdef HAVE_CUDA
    if (md->gpu) { mlp_cuda_scale_grads(md->gpu, s); return; }
#endif
    float *g = md->m->grads;
    for (size_t i = 0; i < md->m->nparams; i++) g[i] *= s;
}

void model_zero_grad(model_t *md) {
#ifdef HAVE_CUDA
    if (md->gpu) { mlp_cuda_zero_grad(md->gpu); return; }
#endif
    mlp_zero_grad(md->m);
}


void model_params_to_host(model_t *md) {
#ifdef HAVE_CUDA
    if (md->gpu) cuda_to_host(md->m->params, mlp_cuda_params(md->gpu), md->m->nparams);
#endif
}

void model_params_to_device(model_t *md) {
#ifdef HAVE_CUDA
    if (md->gpu) cuda_to_device(mlp_cuda_params(md->gpu), md->m->params, md->m->nparams);
#endif
}
