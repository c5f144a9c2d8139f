/* ring_cuda.c: the ring of ring_allreduce.c on device buffers (API and guarantees in ring_cuda.h),
 * and NCCL loaded with dlopen. Ranks on one host take the IPC path (ring_cuda_ipc.c); the rest of
 * this file is the message ring, staged or on a CUDA-aware MPI. What it deliberately does not do:
 * fp16, overlap with backward, several GPUs per rank.
 *
 * Staged ring, one step t of the 2 (N-1) at a time (segments exactly as ring_allreduce.c:
 * send seg_sent(t) right, receive seg_recv(t) from the left; the segment received at step t is the
 * one sent at step t+1). Three pinned host buffers of one segment each rotate roles:
 *
 *   send  holds seg_sent(t) on the host (step 0: copied down chunk by chunk, each chunk sent as
 *         soon as its copy is done)
 *   recv  every chunk of seg_recv(t) has an Irecv posted into it before anything is sent
 *   next  (reduce-scatter) the reduced chunk copied back down for step t+1's send
 *
 *   per chunk k, as it arrives:   MPI_Wait -> H2D (stream) -> add kernel into buf (stream)
 *                                 -> D2H of the sum into next (stream)
 *   so the GPU works on chunk k while MPI receives chunk k+1. Allgather steps copy the final chunk
 *   into place (H2D) and forward the host copy itself: recv becomes the next step's send buffer.
 *   A step ends when its sends completed and the stream drained; then the buffers rotate.
 *
 * With a CUDA-aware MPI the same steps run on device pointers: Irecv into a device scratch
 * segment (or straight into place), Isend from the buffer, add kernel after the wait. */
#include "ring_cuda.h"
#include "ring_cuda_ipc.h"
#include "ring_allreduce.h"
#include "common/mpi_check.h"
#include "common/cuda_check.h"
#include "common/check.h"
#include <dlfcn.h>
#include <unistd.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#define RING_CUDA_TAG 0x53

struct ring_cuda {
    MPI_Comm comm;
    int rank, size, left, right, direct;
    ring_ipc_t *ipc;                /* the IPC path; NULL: messages */
    size_t chunk, seg_cap;          /* elements per chunk; elements per staging buffer */
    size_t req_cap;
    float *h[3];                    /* pinned staging, seg_cap floats each */
    float *d_scratch;               /* seg_cap floats on the device */
    MPI_Request *sreq, *rreq;       /* req_cap each: one per chunk of a segment */
    cudaStream_t stream;
    cudaEvent_t *ev;                /* req_cap: step-0 chunk copies */
    uint64_t bytes_sent, bytes_recv;
};

/* the host ring's schedule (ring_allreduce.h) */
static int seg_sent(const ring_cuda_t *r, int t) { return ring_seg_sent(r->rank, r->size, t); }
static int seg_recv(const ring_cuda_t *r, int t) { return ring_seg_recv(r->rank, r->size, t); }

int ring_cuda_mpi_aware(void) {
    const char *env = getenv("PSRING_CUDA_AWARE");
    if (env && !strcmp(env, "0")) return 0;
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

static void reserve(ring_cuda_t *r, size_t count) {
    size_t seg = count / (size_t)r->size + (count % (size_t)r->size != 0);
    if (seg > r->seg_cap) {
        for (int i = 0; i < 3; i++) if (r->h[i]) cudaCheck(cudaFreeHost(r->h[i]));
        if (r->d_scratch) cudaCheck(cudaFree(r->d_scratch));
        r->seg_cap = seg;
        for (int i = 0; i < 3; i++) cudaCheck(cudaMallocHost((void **)&r->h[i], seg * sizeof(float)));
        cudaCheck(cudaMalloc((void **)&r->d_scratch, seg * sizeof(float)));
    }
    size_t nch = (seg + r->chunk - 1) / r->chunk;
    if (nch == 0) nch = 1;
    if (nch > r->req_cap) {
        for (size_t i = 0; i < r->req_cap; i++) cudaCheck(cudaEventDestroy(r->ev[i]));
        free(r->sreq); free(r->rreq); free(r->ev);
        r->req_cap = nch;
        r->sreq = xmalloc(nch * sizeof *r->sreq);
        r->rreq = xmalloc(nch * sizeof *r->rreq);
        r->ev = xmalloc(nch * sizeof *r->ev);
        for (size_t i = 0; i < nch; i++) cudaCheck(cudaEventCreateWithFlags(&r->ev[i], cudaEventDisableTiming));
    }
}

/* once, from rank 0: why the ring does not take the IPC path */
static void say_staged(const ring_cuda_t *r, const char *why) {
    if (r->rank == 0) {
        fprintf(stderr, "psring: device ring: no CUDA IPC (%s): the %s ring runs\n", why, r->direct ? "CUDA-aware" : "staged");
        fflush(stderr);
    }
}

ring_cuda_t *ring_cuda_create(MPI_Comm comm, size_t max_count, size_t chunk_bytes, int allow_ipc) {
    ring_cuda_t *r = xcalloc(1, sizeof *r);
    ring_comm_setup(comm, &r->comm, &r->rank, &r->size, &r->left, &r->right);
    r->chunk = ring_chunk_elems(chunk_bytes);
    /* every rank must take the same path: direct only if all say CUDA-aware */
    int direct = ring_cuda_mpi_aware();
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &direct, 1, MPI_INT, MPI_MIN, r->comm));
    r->direct = direct;
    cudaCheck(cudaStreamCreate(&r->stream));   /* blocking: orders after the default stream's work */
    const char *env = getenv("PSRING_RING_IPC");
    if (r->size > 1 && allow_ipc && !(env && !strcmp(env, "0"))) {
        char why[256] = "";
        r->ipc = ring_ipc_create(r->comm, r->rank, r->size, r->stream, why, sizeof why);
        if (!r->ipc) say_staged(r, why);
    }
    if (r->size > 1 && !r->ipc) reserve(r, max_count);
    return r;
}

void ring_cuda_free(ring_cuda_t *r) {
    if (!r) return;
    ring_ipc_free(r->ipc);
    mpiCheck(MPI_Comm_free(&r->comm));
    for (int i = 0; i < 3; i++) if (r->h[i]) cudaCheck(cudaFreeHost(r->h[i]));
    if (r->d_scratch) cudaCheck(cudaFree(r->d_scratch));
    for (size_t i = 0; i < r->req_cap; i++) cudaCheck(cudaEventDestroy(r->ev[i]));
    cudaCheck(cudaStreamDestroy(r->stream));
    free(r->sreq); free(r->rreq); free(r->ev);
    free(r);
}

const char *ring_cuda_path(const ring_cuda_t *r) { return r->ipc ? "ipc" : r->direct ? "cuda-aware" : "staged"; }
uint64_t ring_cuda_bytes_sent(const ring_cuda_t *r) { return r->bytes_sent; }
uint64_t ring_cuda_bytes_recv(const ring_cuda_t *r) { return r->bytes_recv; }

/* chunk k of a segment of slen elements: [a, a + len) relative to the segment */
static size_t chunk_span(const ring_cuda_t *r, size_t slen, size_t k, size_t *len) {
    size_t a = k * r->chunk;
    if (a > slen) a = slen;
    size_t b = a + r->chunk > slen ? slen : a + r->chunk;
    *len = b - a;
    return a;
}

static void run_staged(ring_cuda_t *r, float *buf, size_t count) {
    const int n = r->size, nsteps = 2 * (n - 1);
    size_t seg = count / (size_t)n + (count % (size_t)n != 0);
    size_t nch = (seg + r->chunk - 1) / r->chunk;
    float *hs = r->h[0], *hr = r->h[1], *hn = r->h[2];
    /* step 0's send buffer: our own segment, down in chunks (stream order after all earlier
     * default-stream work, since the stream is a blocking one; work on other streams, such as the
     * model's backward, the caller has waited for: ring_exchange_cuda.c syncs first) */
    size_t soff, slen;
    ring_segment(count, n, seg_sent(r, 0), &soff, &slen);
    for (size_t k = 0; k < nch; k++) {
        size_t len, a = chunk_span(r, slen, k, &len);
        if (len) cudaCheck(cudaMemcpyAsync(hs + a, buf + soff + a, len * sizeof(float), cudaMemcpyDeviceToHost, r->stream));
        cudaCheck(cudaEventRecord(r->ev[k], r->stream));
    }
    for (int t = 0; t < nsteps; t++) {
        size_t roff, rlen;
        ring_segment(count, n, seg_sent(r, t), &soff, &slen);
        ring_segment(count, n, seg_recv(r, t), &roff, &rlen);
        for (size_t k = 0; k < nch; k++) {   /* receives first, so sends land in posted buffers */
            size_t len, a = chunk_span(r, rlen, k, &len);
            mpiCheck(MPI_Irecv(hr + a, (int)len, MPI_FLOAT, r->left, RING_CUDA_TAG, r->comm, &r->rreq[k]));
            r->bytes_recv += len * sizeof(float);
        }
        for (size_t k = 0; k < nch; k++) {
            size_t len, a = chunk_span(r, slen, k, &len);
            if (t == 0) cudaCheck(cudaEventSynchronize(r->ev[k]));
            mpiCheck(MPI_Isend(hs + a, (int)len, MPI_FLOAT, r->right, RING_CUDA_TAG, r->comm, &r->sreq[k]));
            r->bytes_sent += len * sizeof(float);
        }
        int reduce = t < n - 1;
        for (size_t k = 0; k < nch; k++) {
            size_t len, a = chunk_span(r, rlen, k, &len);
            mpiCheck(MPI_Wait(&r->rreq[k], MPI_STATUS_IGNORE));
            if (!len) continue;
            if (reduce) {
                cudaCheck(cudaMemcpyAsync(r->d_scratch + a, hr + a, len * sizeof(float), cudaMemcpyHostToDevice, r->stream));
                ring_cuda_add(buf + roff + a, r->d_scratch + a, len, r->stream);
                /* what step t+1 sends is this sum */
                cudaCheck(cudaMemcpyAsync(hn + a, buf + roff + a, len * sizeof(float), cudaMemcpyDeviceToHost, r->stream));
            } else {
                cudaCheck(cudaMemcpyAsync(buf + roff + a, hr + a, len * sizeof(float), cudaMemcpyHostToDevice, r->stream));
            }
        }
        mpiCheck(MPI_Waitall((int)nch, r->sreq, MPI_STATUSES_IGNORE));
        cudaCheck(cudaStreamSynchronize(r->stream));
        float *tmp = hs;
        if (reduce) { hs = hn; hn = tmp; }          /* send the sums; the old send buffer is free */
        else { hs = hr; hr = tmp; }                 /* forward what arrived; receive into the old send buffer */
    }
}

static void run_direct(ring_cuda_t *r, float *buf, size_t count) {
    const int n = r->size, nsteps = 2 * (n - 1);
    size_t seg = count / (size_t)n + (count % (size_t)n != 0);
    size_t nch = (seg + r->chunk - 1) / r->chunk;
    cudaCheck(cudaDeviceSynchronize());   /* buf is complete before MPI reads it */
    for (int t = 0; t < nsteps; t++) {
        size_t soff, slen, roff, rlen;
        ring_segment(count, n, seg_sent(r, t), &soff, &slen);
        ring_segment(count, n, seg_recv(r, t), &roff, &rlen);
        int reduce = t < n - 1;
        float *dst = reduce ? r->d_scratch : buf + roff;
        for (size_t k = 0; k < nch; k++) {
            size_t len, a = chunk_span(r, rlen, k, &len);
            mpiCheck(MPI_Irecv(dst + a, (int)len, MPI_FLOAT, r->left, RING_CUDA_TAG, r->comm, &r->rreq[k]));
            r->bytes_recv += len * sizeof(float);
        }
        for (size_t k = 0; k < nch; k++) {
            size_t len, a = chunk_span(r, slen, k, &len);
            mpiCheck(MPI_Isend(buf + soff + a, (int)len, MPI_FLOAT, r->right, RING_CUDA_TAG, r->comm, &r->sreq[k]));
            r->bytes_sent += len * sizeof(float);
        }
        for (size_t k = 0; k < nch; k++) {
            size_t len, a = chunk_span(r, rlen, k, &len);
            mpiCheck(MPI_Wait(&r->rreq[k], MPI_STATUS_IGNORE));
            if (reduce && len) ring_cuda_add(buf + roff + a, r->d_scratch + a, len, r->stream);
        }
        mpiCheck(MPI_Waitall((int)nch, r->sreq, MPI_STATUSES_IGNORE));
        cudaCheck(cudaStreamSynchronize(r->stream));
    }
}

void ring_cuda_allreduce(ring_cuda_t *r, float *d_buf, size_t count) {
    if (r->size == 1 || count == 0) return;
    if (r->ipc) {
        char why[256] = "";
        if (ring_ipc_allreduce(r->ipc, d_buf, count, &r->bytes_sent, &r->bytes_recv, why, sizeof why)) return;
        say_staged(r, why);   /* the same verdict on every rank: all leave the IPC path for good */
        ring_ipc_free(r->ipc);
        r->ipc = NULL;
    }
    if (count > (size_t)r->size * (size_t)0x7fffffff) die("ring_cuda_allreduce: count %zu too large", count);
    reserve(r, count);
    if (r->direct) run_direct(r, d_buf, count);
    else run_staged(r, d_buf, count);
}

char *ring_cuda_gpu_ids(MPI_Comm comm) {
    int size, dev = 0;
    mpiCheck(MPI_Comm_size(comm, &size));
    cudaCheck(cudaGetDevice(&dev));
    char bus[64] = "", host[64] = "", mine[RING_CUDA_GPU_ID];
    cudaCheck(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "?");
    memset(mine, 0, sizeof mine);
    snprintf(mine, sizeof mine, "%s/%s", host, bus);
    char *all = xmalloc(RING_CUDA_GPU_ID * (size_t)size);
    mpiCheck(MPI_Allgather(mine, RING_CUDA_GPU_ID, MPI_CHAR, all, RING_CUDA_GPU_ID, MPI_CHAR, comm));
    return all;
}

/* ---- NCCL through dlopen: the few entry points we use, typed as in nccl.h ---- */
#include <nccl.h>

struct nccl_ring {
    void *lib;
    ncclComm_t comm;
    cudaStream_t stream;
    ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*destroy)(ncclComm_t);
    const char *(*errstr)(ncclResult_t);
};

#define ncclCheck(n, call) do { ncclResult_t rc_ = (call); \
    if (rc_ != ncclSuccess) die("%s: %s (NCCL %d)", #call, (n)->errstr ? (n)->errstr(rc_) : "?", (int)rc_); } while (0)

nccl_ring_t *nccl_ring_create(MPI_Comm comm, char *err, size_t errlen) {
    int rank, size;
    mpiCheck(MPI_Comm_rank(comm, &rank));
    mpiCheck(MPI_Comm_size(comm, &size));
    /* one GPU per rank: compare every rank's host and PCI bus id */
    char *all = ring_cuda_gpu_ids(comm);
    int clash = -1, with = -1;
    for (int i = 0; i < size && clash < 0; i++)
        for (int j = i + 1; j < size; j++)
            if (!strcmp(all + RING_CUDA_GPU_ID * (size_t)i, all + RING_CUDA_GPU_ID * (size_t)j)) { clash = i; with = j; break; }
    if (clash >= 0) {
        snprintf(err, errlen, "--allreduce nccl needs one GPU per rank: ranks %d and %d share GPU %s "
                 "(use --allreduce ring to share a GPU)", clash, with, all + RING_CUDA_GPU_ID * (size_t)clash);
        free(all);
        return NULL;
    }
    free(all);
    /* every rank must agree that NCCL loaded, or the broadcast below would hang */
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    int ok = lib != NULL;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm));
    if (!ok) {
        snprintf(err, errlen, "--allreduce nccl: NCCL is not available (dlopen libnccl.so.2: %s)",
                 lib ? "failed on another rank" : dlerror());
        if (lib) dlclose(lib);
        return NULL;
    }
    nccl_ring_t *n = xcalloc(1, sizeof *n);
    n->lib = lib;
    ncclResult_t (*get_id)(ncclUniqueId *) = (ncclResult_t (*)(ncclUniqueId *))dlsym(lib, "ncclGetUniqueId");
    ncclResult_t (*init)(ncclComm_t *, int, ncclUniqueId, int) =
        (ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int))dlsym(lib, "ncclCommInitRank");
    n->all_reduce = (ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                      cudaStream_t))dlsym(lib, "ncclAllReduce");
    n->destroy = (ncclResult_t (*)(ncclComm_t))dlsym(lib, "ncclCommDestroy");
    n->errstr = (const char *(*)(ncclResult_t))dlsym(lib, "ncclGetErrorString");
    if (!get_id || !init || !n->all_reduce || !n->destroy || !n->errstr)
        die("libnccl.so.2 lacks ncclGetUniqueId/ncclCommInitRank/ncclAllReduce/ncclCommDestroy/ncclGetErrorString");
    ncclUniqueId id;
    if (rank == 0) ncclCheck(n, get_id(&id));
    mpiCheck(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm));
    ncclCheck(n, init(&n->comm, size, id, rank));
    cudaCheck(cudaStreamCreate(&n->stream));
    return n;
}

void nccl_ring_allreduce(nccl_ring_t *n, float *d_buf, size_t count) {
    if (count == 0) return;
    ncclCheck(n, n->all_reduce(d_buf, d_buf, count, ncclFloat32, ncclSum, n->comm, n->stream));
    cudaCheck(cudaStreamSynchronize(n->stream));
}

void nccl_ring_free(nccl_ring_t *n) {
    if (!n) return;
    ncclCheck(n, n->destroy(n->comm));
    cudaCheck(cudaStreamDestroy(n->stream));
    dlclose(n->lib);
    free(n);
}
