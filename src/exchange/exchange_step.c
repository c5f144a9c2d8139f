/* exchange_step.c: exchange_step.h. Compiled into the programs that train, beside model_ops.c
 * (with CUDA it reaches the device model's buffers, which only --with-cuda builds have). */
#include "config.h"
#include "exchange_step.h"
#include "common/check.h"
#ifdef HAVE_CUDA
#include "model/mlp_cuda.h"
#include "common/cuda_mem.h"
#endif

int exchange_step_model(exchange_t *ex, model_t *md, float lr) {
    mlp_t *m = md->m;
#ifdef HAVE_CUDA
    if (md->gpu) {
        float *dp = mlp_cuda_params(md->gpu), *dg = mlp_cuda_grads(md->gpu);
        if (ex->ops->step_device) return ex->ops->step_device(ex, dp, dg, m->nparams, lr);
        /* staged (the PS): gradient down into the pinned mirror, host step, parameters up */
        cuda_to_host(m->grads, dg, m->nparams);
        if (ex->ops->step(ex, m->params, m->grads, m->nparams, lr) != 0) return -1;
        cuda_to_device(dp, m->params, m->nparams);
        mlp_cuda_zero_grad(md->gpu);
        return 0;
    }
#endif
    if (ex->ops->step(ex, m->params, m->grads, m->nparams, lr) != 0) return -1;
    if (!ex->step_clears_grads) mlp_zero_grad(m);   /* local clears them in the optimizer's pass */
    return 0;
}
