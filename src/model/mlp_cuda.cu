/* mlp_cuda.cu: mlp_cuda.h on cuBLAS plus one small kernel per elementwise step. Kernels are kept
 * plain (one thread per element or per row, grid-stride loops) so that they are obviously the
 * loops of layers.c / optim.c; the GEMMs dominate. Deliberately not here: fused kernels, half
 * precision.
 *
 * CUDA graphs: a step is some 30 small launches (each GEMM, bias, ReLU, loss kernel), and at the
 * MNIST MLP's sizes launching them costs as much as running them. So the model's work runs on a
 * stream of its own, and each call on a gathered batch (forward with its loss, correct, backward)
 * is captured once per batch size into a graph and replayed: one launch instead of a dozen. The
 * kernels and GEMMs are the same either way (PSRING_CUDA_GRAPHS=0 runs them one by one; the test
 * compares the two bit for bit). The model's stream is a blocking one, so it stays ordered with
 * the legacy default stream that the buffer helpers and the optimizer use.
 *
 * The elementwise kernels, each with its launch, are in mlp_cuda_kernels.cu.
 *
 * Row-major through column-major cuBLAS: a row-major (R, C) matrix with leading dimension C is
 * the column-major (C, R) matrix, its transpose. So row-major out = inp @ w^T becomes
 * column-major out^T (OUT,B) = w^T^T ... written out per call below. */
#include "mlp_cuda.h"
#include "common/cuda_check.h"
#include "cublas_lib.h"
#include "mlp_cuda_kernels.h"
#include "common/cuda_launch.h"
#include <math.h>
#include <string.h>

/* ---- datasets on the device ---- */
struct cuda_dataset {
    uint8_t *pixels, *labels;      /* device: count x dim, count */
    int count, dim;
};

extern "C" cuda_dataset_t *cuda_dataset_create(const uint8_t *pixels, const uint8_t *labels, int count, int dim) {
    cuda_dataset_t *d = (cuda_dataset_t *)xcalloc(1, sizeof *d);
    d->count = count;
    d->dim = dim;
    size_t np = (size_t)count * (size_t)dim;
    cudaCheck(cudaMalloc((void **)&d->pixels, np ? np : 1));
    cudaCheck(cudaMalloc((void **)&d->labels, count ? (size_t)count : 1));
    if (np) cudaCheck(cudaMemcpy(d->pixels, pixels, np, cudaMemcpyHostToDevice));
    if (count) cudaCheck(cudaMemcpy(d->labels, labels, (size_t)count, cudaMemcpyHostToDevice));
    return d;
}

extern "C" void cuda_dataset_free(cuda_dataset_t *d) {
    if (!d) return;
    cudaCheck(cudaFree(d->pixels));
    cudaCheck(cudaFree(d->labels));
    free(d);
}


/* ---- layers ---- */
#define MLP_CUDA_GRAPHS 8          /* captured graphs kept: (call, batch size) pairs */
#define CUBLAS_WORKSPACE (32u << 20)
struct mlp_cuda {
    int nsizes, nlayers, max_batch, sizes[MLP_MAX_SIZES];
    size_t nparams, w_off[MLP_MAX_SIZES], b_off[MLP_MAX_SIZES];
    float *buf;                    /* one allocation: params (nparams), then grads (nparams) */
    float *params, *grads;
    float *acts[MLP_MAX_SIZES], *probs, *dbuf[2], *x, *rowloss, *loss;
    uint8_t *y;
    int *correct;
    uint32_t *d_idx, *h_idx;       /* mlp_cuda_gather's indices: device, pinned staging */
    cudaStream_t stream;           /* every kernel, GEMM and copy of the model */
    void *workspace;               /* cuBLAS's, set before any capture (none may allocate) */
    int graphs;                    /* capture and replay (PSRING_CUDA_GRAPHS unset or not 0) */
    struct { int kind, B; cudaGraphExec_t exec; } graph[MLP_CUDA_GRAPHS];
    int graph_next;                /* the slot the next capture replaces */
    int idx_pending;               /* h_idx may still be on its way up (no read since the gather) */
    float *h_loss;
    int *h_correct;
    cublasHandle_t cublas;
    const cublas_lib_t *blas;      /* cuBLAS, loaded at the first model (cublas_lib.h) */
};


extern "C" mlp_cuda_t *mlp_cuda_create(const mlp_t *h) {
    mlp_cuda_t *m = (mlp_cuda_t *)xcalloc(1, sizeof *m);
    m->nsizes = h->nsizes;
    m->nlayers = h->nlayers;
    m->max_batch = h->max_batch;
    m->nparams = h->nparams;
    memcpy(m->sizes, h->sizes, sizeof m->sizes);
    memcpy(m->w_off, h->w_off, sizeof m->w_off);
    memcpy(m->b_off, h->b_off, sizeof m->b_off);
    int widest = 0;
    for (int l = 1; l < h->nsizes; l++) if (h->sizes[l] > widest) widest = h->sizes[l];
    size_t B = (size_t)h->max_batch;
    cudaCheck(cudaMalloc((void **)&m->buf, 2 * (h->nparams ? h->nparams : 1) * sizeof(float)));
    m->params = m->buf;
    m->grads = m->buf + h->nparams;
    cudaCheck(cudaMemcpy(m->params, h->params, h->nparams * sizeof(float), cudaMemcpyHostToDevice));
    cudaCheck(cudaMemset(m->grads, 0, h->nparams * sizeof(float)));
    for (int l = 1; l <= m->nlayers; l++) cudaCheck(cudaMalloc((void **)&m->acts[l], B * m->sizes[l] * sizeof(float)));
    int C = m->sizes[m->nlayers];
    cudaCheck(cudaMalloc((void **)&m->probs, B * C * sizeof(float)));
    cudaCheck(cudaMalloc((void **)&m->dbuf[0], B * widest * sizeof(float)));
    cudaCheck(cudaMalloc((void **)&m->dbuf[1], B * widest * sizeof(float)));
    cudaCheck(cudaMalloc((void **)&m->x, B * m->sizes[0] * sizeof(float)));
    cudaCheck(cudaMalloc((void **)&m->y, B));
    cudaCheck(cudaMalloc((void **)&m->rowloss, B * sizeof(float)));
    cudaCheck(cudaMalloc((void **)&m->loss, sizeof(float)));
    cudaCheck(cudaMalloc((void **)&m->correct, sizeof(int)));
    cudaCheck(cudaMallocHost((void **)&m->h_loss, sizeof(float)));
    cudaCheck(cudaMallocHost((void **)&m->h_correct, sizeof(int)));
    cudaCheck(cudaMalloc((void **)&m->d_idx, B * sizeof(uint32_t)));
    cudaCheck(cudaMallocHost((void **)&m->h_idx, B * sizeof(uint32_t)));
    m->blas = cublas_lib();
    cublasCheck(m->blas->create(&m->cublas));
    /* full fp32 GEMMs: no TF32 (the CPU comparison is in float) */
    cublasCheck(m->blas->set_math_mode(m->cublas, CUBLAS_DEFAULT_MATH));
    cudaCheck(cudaStreamCreate(&m->stream));
    cublasCheck(m->blas->set_stream(m->cublas, m->stream));
    cudaCheck(cudaMalloc(&m->workspace, CUBLAS_WORKSPACE));
    cublasCheck(m->blas->set_workspace(m->cublas, m->workspace, CUBLAS_WORKSPACE));
    /* CUDA_LAUNCH_BLOCKING (a debugging setting) asks for each launch on its own: no graphs */
    const char *g = getenv("PSRING_CUDA_GRAPHS"), *lb = getenv("CUDA_LAUNCH_BLOCKING");
    m->graphs = !(g && strcmp(g, "0") == 0) && !(lb && strcmp(lb, "0") != 0 && *lb);
    cudaCheck(cudaDeviceSynchronize());
    return m;
}

extern "C" void mlp_cuda_free(mlp_cuda_t *m) {
    if (!m) return;
    for (int i = 0; i < MLP_CUDA_GRAPHS; i++)
        if (m->graph[i].exec) cudaCheck(cudaGraphExecDestroy(m->graph[i].exec));
    cublasCheck(m->blas->destroy(m->cublas));
    cudaCheck(cudaStreamDestroy(m->stream));
    cudaCheck(cudaFree(m->workspace));
    cudaCheck(cudaFree(m->buf));
    for (int l = 1; l <= m->nlayers; l++) cudaCheck(cudaFree(m->acts[l]));
    cudaCheck(cudaFree(m->probs));
    cudaCheck(cudaFree(m->dbuf[0]));
    cudaCheck(cudaFree(m->dbuf[1]));
    cudaCheck(cudaFree(m->x));
    cudaCheck(cudaFree(m->y));
    cudaCheck(cudaFree(m->rowloss));
    cudaCheck(cudaFree(m->loss));
    cudaCheck(cudaFree(m->correct));
    cudaCheck(cudaFreeHost(m->h_loss));
    cudaCheck(cudaFreeHost(m->h_correct));
    cudaCheck(cudaFree(m->d_idx));
    cudaCheck(cudaFreeHost(m->h_idx));
    free(m);
}

extern "C" float *mlp_cuda_params(mlp_cuda_t *m) { return m->params; }
extern "C" float *mlp_cuda_grads(mlp_cuda_t *m) { return m->grads; }
extern "C" size_t mlp_cuda_nparams(const mlp_cuda_t *m) { return m->nparams; }
extern "C" void mlp_cuda_zero_grad(mlp_cuda_t *m) { cuda_zero(m->grads, m->nparams); }
extern "C" void mlp_cuda_scale_grads(mlp_cuda_t *m, float s) { cuda_scale(m->grads, s, m->nparams); }

static void check_batch(const mlp_cuda_t *m, int B) {
    if (B < 1 || B > m->max_batch) die("mlp_cuda: batch %d outside 1..%d", B, m->max_batch);
}

extern "C" void mlp_cuda_gather(mlp_cuda_t *m, const cuda_dataset_t *d, const uint32_t *idx, int B) {
    check_batch(m, B);
    if (d->dim != m->sizes[0]) die("mlp_cuda_gather: samples of %d values for a model input of %d", d->dim, m->sizes[0]);
    /* every call that reads the batch (forward, correct) ends in a stream sync, after which the
     * last copy out of h_idx is done; a gather with no read since the last one waits for it */
    if (m->idx_pending) cudaCheck(cudaStreamSynchronize(m->stream));
    memcpy(m->h_idx, idx, (size_t)B * sizeof(uint32_t));
    m->idx_pending = 1;
    cudaCheck(cudaMemcpyAsync(m->d_idx, m->h_idx, (size_t)B * sizeof(uint32_t), cudaMemcpyHostToDevice, m->stream));
    mlp_kernel_gather(m->stream, m->x, m->y, d->pixels, d->labels, m->d_idx, B, d->dim);
}

extern "C" void mlp_cuda_input_to_host(mlp_cuda_t *m, float *x, uint8_t *labels, int B) {
    check_batch(m, B);
    cudaCheck(cudaMemcpy(x, m->x, (size_t)B * m->sizes[0] * sizeof(float), cudaMemcpyDeviceToHost));
    cudaCheck(cudaMemcpy(labels, m->y, (size_t)B, cudaMemcpyDeviceToHost));
}

/* upload x (and labels) unless x is NULL (mlp_cuda_gather put the batch there), and compute the
 * logits into acts[nlayers] */
static void forward_logits(mlp_cuda_t *m, const float *x, const uint8_t *labels, int B) {
    check_batch(m, B);
    if (x) cudaCheck(cudaMemcpyAsync(m->x, x, (size_t)B * m->sizes[0] * sizeof(float), cudaMemcpyHostToDevice, m->stream));
    if (x && labels) cudaCheck(cudaMemcpyAsync(m->y, labels, (size_t)B, cudaMemcpyHostToDevice, m->stream));
    const float one = 1.0f;
    const float *in = m->x;
    for (int l = 0; l < m->nlayers; l++) {
        int IN = m->sizes[l], OUT = m->sizes[l + 1];
        float *out = m->acts[l + 1];
        mlp_kernel_bias_fill(m->stream, out, m->params + m->b_off[l], B, OUT);
        /* row-major out (B,OUT) += inp (B,IN) @ w^T, w (OUT,IN) row-major.
         * column-major: out^T (OUT,B) += w^T' (OUT,IN) @ inp^T (IN,B), where the row-major w is the
         * column-major (IN,OUT) matrix, hence op T on it, and the row-major inp is the column-major
         * (IN,B) matrix, used as is */
        cublasCheck(m->blas->sgemm(m->cublas, CUBLAS_OP_T, CUBLAS_OP_N, OUT, B, IN, &one, m->params + m->w_off[l], IN,
                                in, IN, &one, out, OUT));
        if (l + 1 < m->nlayers) {
            mlp_kernel_relu_forward(m->stream, out, (size_t)B * OUT);
        }
        in = out;
    }
}

/* enqueue the mean cross-entropy of the logits forward_logits left, against the device labels
 * m->y, and its copy into the pinned h_loss */
static void loss_enqueue(mlp_cuda_t *m, int B) {
    int C = m->sizes[m->nlayers];
    mlp_kernel_softmax_xent_forward(m->stream, m->probs, m->rowloss, m->acts[m->nlayers], m->y, B, C);
    mlp_kernel_mean(m->stream, m->loss, m->rowloss, B);
    cudaCheck(cudaMemcpyAsync(m->h_loss, m->loss, sizeof(float), cudaMemcpyDeviceToHost, m->stream));
}

/* enqueue how many rows of the logits forward_logits left match m->y, copied into h_correct */
static void correct_enqueue(mlp_cuda_t *m, int B) {
    cudaCheck(cudaMemsetAsync(m->correct, 0, sizeof(int), m->stream));
    mlp_kernel_correct(m->stream, m->correct, m->acts[m->nlayers], m->y, B, m->sizes[m->nlayers]);
    cudaCheck(cudaMemcpyAsync(m->h_correct, m->correct, sizeof(int), cudaMemcpyDeviceToHost, m->stream));
}

static void backward_enqueue(mlp_cuda_t *m, int B);
static void forward_loss_enqueue(mlp_cuda_t *m, int B) { forward_logits(m, NULL, NULL, B); loss_enqueue(m, B); }
static void forward_correct_enqueue(mlp_cuda_t *m, int B) { forward_logits(m, NULL, NULL, B); correct_enqueue(m, B); }

/* the calls that are replayed as graphs: they read only the model's own device buffers, so a
 * graph captured for one batch size serves every later call with that size */
enum { GRAPH_FORWARD_LOSS = 1, GRAPH_FORWARD_CORRECT, GRAPH_BACKWARD };

/* capture fn(m, B) into a graph; 0, or -1 with the reason in why (capture is left ended) */
static int graph_capture(mlp_cuda_t *m, void (*fn)(mlp_cuda_t *, int), int B, cudaGraphExec_t *exec,
                         char *why, size_t whylen) {
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamBeginCapture(m->stream, cudaStreamCaptureModeThreadLocal);
    if (e == cudaSuccess) {
        fn(m, B);
        e = cudaStreamEndCapture(m->stream, &g);
    }
    if (e == cudaSuccess) e = cudaGraphInstantiate(exec, g, 0);
    if (g) (void)cudaGraphDestroy(g);
    if (e == cudaSuccess) return 0;
    snprintf(why, whylen, "%s", cudaGetErrorString(e));
    (void)cudaGetLastError();
    return -1;
}

/* run fn(m, B) on the model's stream: replay its graph for (kind, B), captured at the first such
 * call. A capture the runtime refuses (at its start, its end or the graph's instantiation) turns
 * graphs off for this model (said once) and runs the calls one by one, which is slower but the
 * same arithmetic; a launch that fails inside the capture is an error like any other. */
static void run_graphed(mlp_cuda_t *m, int kind, int B, void (*fn)(mlp_cuda_t *, int)) {
    if (!m->graphs) { fn(m, B); return; }
    int slot = -1;
    for (int i = 0; i < MLP_CUDA_GRAPHS; i++)
        if (m->graph[i].exec && m->graph[i].kind == kind && m->graph[i].B == B) slot = i;
    if (slot < 0) {
        slot = m->graph_next;
        m->graph_next = (slot + 1) % MLP_CUDA_GRAPHS;
        if (m->graph[slot].exec) cudaCheck(cudaGraphExecDestroy(m->graph[slot].exec));
        m->graph[slot].exec = NULL;
        char why[160];
        if (graph_capture(m, fn, B, &m->graph[slot].exec, why, sizeof why) != 0) {
            fprintf(stderr, "psring: CUDA graphs off (capture failed: %s): launching kernels one by one\n", why);
            m->graph[slot].exec = NULL;
            m->graphs = 0;
            fn(m, B);
            return;
        }
        m->graph[slot].kind = kind;
        m->graph[slot].B = B;
    }
    cudaCheck(cudaGraphLaunch(m->graph[slot].exec, m->stream));
}

extern "C" float mlp_cuda_forward(mlp_cuda_t *m, const float *x, const uint8_t *labels, int B) {
    forward_logits(m, x, labels, B);
    /* without labels nothing is copied back: wait all the same, so that on return the upload has
     * read x (a caller may refill a pinned x next) and the logits are done, the same
     * contract as with labels */
    if (labels) loss_enqueue(m, B);
    cudaCheck(cudaStreamSynchronize(m->stream));
    return labels ? *m->h_loss : 0.0f;
}

extern "C" float mlp_cuda_forward_gathered(mlp_cuda_t *m, int B) {
    check_batch(m, B);
    run_graphed(m, GRAPH_FORWARD_LOSS, B, forward_loss_enqueue);
    cudaCheck(cudaStreamSynchronize(m->stream));
    m->idx_pending = 0;
    return *m->h_loss;
}

extern "C" void mlp_cuda_backward(mlp_cuda_t *m, int B) {
    check_batch(m, B);
    run_graphed(m, GRAPH_BACKWARD, B, backward_enqueue);
}

extern "C" int mlp_cuda_graphs_active(const mlp_cuda_t *m) { return m->graphs; }

extern "C" int mlp_cuda_idle(mlp_cuda_t *m) {
    cudaError_t e = cudaStreamQuery(m->stream);
    if (e == cudaErrorNotReady) return 0;
    cudaCheck(e);
    return cuda_idle();
}

static void backward_enqueue(mlp_cuda_t *m, int B) {
    const float one = 1.0f, zero = 0.0f;
    int L = m->nlayers, cur = 0, C = m->sizes[L];
    float *dout = m->dbuf[cur];
    mlp_kernel_softmax_xent_backward(m->stream, dout, m->probs, m->y, B, C);
    for (int l = L - 1; l >= 0; l--) {
        int IN = m->sizes[l], OUT = m->sizes[l + 1];
        const float *inp = l > 0 ? m->acts[l] : m->x;
        /* row-major dw (OUT,IN) += dout^T (OUT,B) @ inp (B,IN).
         * column-major: dw^T (IN,OUT) += inp^T (IN,B) @ dout (B,OUT); inp is the column-major
         * (IN,B) matrix (op N), dout the column-major (OUT,B) matrix (op T) */
        cublasCheck(m->blas->sgemm(m->cublas, CUBLAS_OP_N, CUBLAS_OP_T, IN, OUT, B, &one, inp, IN, dout, OUT, &one,
                                m->grads + m->w_off[l], IN));
        mlp_kernel_bias_grad(m->stream, m->grads + m->b_off[l], dout, B, OUT);
        if (l > 0) {
            float *dinp = m->dbuf[cur ^ 1];
            /* row-major dinp (B,IN) = dout (B,OUT) @ w (OUT,IN).
             * column-major: dinp^T (IN,B) = w^T (IN,OUT) @ dout^T (OUT,B): the row-major w is the
             * column-major (IN,OUT) matrix and the row-major dout the column-major (OUT,B) one,
             * both used as they are */
            cublasCheck(m->blas->sgemm(m->cublas, CUBLAS_OP_N, CUBLAS_OP_N, IN, B, OUT, &one, m->params + m->w_off[l], IN,
                                    dout, OUT, &zero, dinp, IN));
            mlp_kernel_relu_backward(m->stream, dinp, dinp, m->acts[l], (size_t)B * IN);
            cur ^= 1;
            dout = dinp;
        }
    }
}

extern "C" int mlp_cuda_correct(mlp_cuda_t *m, const float *x, const uint8_t *labels, int B) {
    forward_logits(m, x, labels, B);
    correct_enqueue(m, B);
    cudaCheck(cudaStreamSynchronize(m->stream));
    return *m->h_correct;
}

extern "C" int mlp_cuda_correct_gathered(mlp_cuda_t *m, int B) {
    check_batch(m, B);
    run_graphed(m, GRAPH_FORWARD_CORRECT, B, forward_correct_enqueue);
    cudaCheck(cudaStreamSynchronize(m->stream));
    m->idx_pending = 0;
    return *m->h_correct;
}
