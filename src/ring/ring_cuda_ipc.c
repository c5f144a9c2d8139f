/* ring_cuda_ipc.c: the device ring for ranks on one host, the device twin of ring_shm.c: each rank
 * maps its peers' device buffers once (cudaIpcGetMemHandle / cudaIpcOpenMemHandle, handles swapped
 * over MPI) and one kernel reduces its row of segments straight out of every rank's memory and
 * stores the sum back into every rank's buffer. No staging buffer, no host copy, no message per
 * segment. (API in ring_cuda_ipc.h; ring_cuda.c picks this path.)
 *
 * Why: the staged ring moves every segment GPU -> pinned host -> MPI -> pinned host -> GPU with a
 * host round trip per step: its busbw is a small fraction of the GPU's copy rate (figures:
 * docs/results/lab-notes-src.md). NCCL moves data inside a host through exactly such peer
 * mappings. Ranks sharing one GPU, or on different GPUs of one host (NVLink or PCIe peer access,
 * cudaIpcMemLazyEnablePeerAccess), take the same path.
 *
 * The schedule is ring_shm.c's: segment j's final owner in the message ring, rank j-1, adds the
 * segment itself in the ring's order, x_j + x_{j+1} + ... + x_{j+N-1}, and stores the sum into
 * every buffer (reduce-scatter and allgather in one pass), so the sums are bit for bit the CPU
 * ring's. N = 3, rank 0 owns segment 1:
 *
 *            GPU memory of rank 0   of rank 1   of rank 2
 *   seg 0    a0                     b0          c0        <- rank 2's kernel: s = a0+b0+c0 (in
 *   seg 1    a1                     b1          c1           that order), stored into a0, b0, c0
 *   seg 2    a2                     b2          c2
 *
 * Per row: loads count and stores count floats, whatever N. N ranks sharing one GPU therefore
 * make its memory read N x count and write N x count floats: with C the GPU's copy rate (bytes
 * copied per second), busbw = 2 (N-1)/N x bytes / time <= 2 (N-1)/N^2 x C, the physical bound the
 * benchmark prints; this path moves no byte more.
 *
 * One kernel per GPU: the lowest rank on each GPU reduces the rows of every rank on that GPU, in
 * one launch (a row per blockIdx.y); the others only synchronise. Ranks with GPUs of their own
 * each reduce their own row, on their own GPU. Why: without MPS every process is a GPU context of
 * its own and the GPU time-slices between contexts, so N kernels, one per rank, run one after the
 * other with a context switch between each (far below the bound: docs/results/lab-notes-src.md);
 * one kernel over all rows needs no switch. Under MPS the N kernels run side by
 * side and so does one. PSRING_RING_IPC_KERNELS=rank (rank 0's value counts) gives every rank its
 * own kernel, to compare.
 *
 * One call, every rank p:
 *
 *   record an event on the ring's stream, wait for it      p's buffer holds this call's data
 *   MPI_Allgather {handle, offset, count}                  entry: every buffer is ready
 *   (a handle not seen before: open it, MPI_Allreduce      handles opened once, cached
 *    of the verdict)
 *   kernel on the rows of p's GPU (if p is its reducer)    loads and stores peers' memory
 *   cudaStreamSynchronize, MPI_Barrier                     exit: nobody returns while a peer
 *                                                          still loads or stores its buffer
 *
 * Hazards, as in ring_shm.c: a peer's memory is read only after it said its data is complete
 * (its event, then the allgather); rows are disjoint, so within a call no two kernels touch one
 * element; nobody returns (and lets its caller overwrite or free the buffer) before every kernel
 * of the call has finished (stream sync, then the barrier). Nothing spins on the GPU: a rank that
 * dies leaves its peers in an MPI call, and mpirun ends the job naming it.
 *
 * Handles: a rank exports the allocation that holds its buffer (cuPointerGetAttributes: start,
 * size and the process-unique buffer id, so a freed and reallocated buffer is exported anew) and
 * sends the handle and the buffer's offset in it with every call (64 bytes; the allgather is the
 * entry barrier anyway). A receiver keeps the last few mappings per peer and opens a handle only
 * the first time it sees it. Any rank that cannot export or open: every rank returns 0 (the caller
 * takes the staged path), never a wrong sum. Not here: fp16, several hosts (the staged ring). */
#include "ring_cuda_ipc.h"
#include "ring_cuda.h"
#include "ring_allreduce.h"
#include "common/mpi_check.h"
#include "common/cuda_check.h"
#include "common/check.h"
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IPC_CACHE 8      /* mappings kept per peer (a trainer uses one or two buffers) */
#define IPC_WHY 112

typedef struct {                 /* what each rank says at a call's entry */
    cudaIpcMemHandle_t handle;   /* of the allocation holding its buffer */
    uint64_t off, count;         /* the buffer's byte offset in it; the call's count */
    int32_t ok, pad;             /* 0: the buffer cannot be exported (why) */
    char why[IPC_WHY];
} ipc_entry_t;

typedef struct {
    cudaIpcMemHandle_t handle;
    char *base;                  /* the peer's allocation, mapped here */
    uint64_t used;               /* call number of the last use (least recently used goes) */
} ipc_map_t;

typedef CUresult (*get_attrs_fn)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);

struct ring_ipc {
    MPI_Comm comm;               /* the ring's (not ours to free) */
    int rank, size;
    cudaStream_t stream;
    cudaEvent_t entry;
    get_attrs_fn get_attrs;
    ipc_entry_t *all, *prev;     /* this call's and the last call's entries, size each */
    int have_prev;
    ipc_map_t *map;              /* size x IPC_CACHE */
    uint64_t calls;
    int nrows, rows[RING_IPC_MAX_RANKS];   /* the ranks whose row this rank reduces */
    unsigned long long my_id;    /* buffer id of the allocation last exported, its handle */
    char *my_base;
    cudaIpcMemHandle_t my_handle;
};

/* cuPointerGetAttributes through the runtime (no link against libcuda) */
static get_attrs_fn driver_get_attrs(void) {
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return (get_attrs_fn)fn;
}

/* the lowest rank with ok == 0 (size when none), its why copied to every rank */
static int first_failure(MPI_Comm comm, int rank, int size, int ok, char *why, size_t whylen) {
    int first = ok ? size : rank;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
    if (first < size) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", rank == first ? why : "");
        mpiCheck(MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, comm));
        snprintf(why, whylen, "%s", buf);
    }
    return first;
}

/* which rows this rank reduces: every row of the ranks on its GPU if it is the lowest of them
 * (one kernel per GPU), or its own (PSRING_RING_IPC_KERNELS=rank on rank 0) */
static void assign_rows(ring_ipc_t *x, MPI_Comm comm, int rank, int size) {
    const char *env = getenv("PSRING_RING_IPC_KERNELS");
    int per_rank = env && !strcmp(env, "rank");
    mpiCheck(MPI_Bcast(&per_rank, 1, MPI_INT, 0, comm));   /* one choice for all, or rows go missing */
    if (per_rank) { x->nrows = 1; x->rows[0] = rank; return; }
    char *all = ring_cuda_gpu_ids(comm);
    const char *mine = all + RING_CUDA_GPU_ID * (size_t)rank;
    int lowest = 0;   /* the first rank on our GPU (we are on it: there is one) */
    while (strcmp(all + RING_CUDA_GPU_ID * (size_t)lowest, mine)) lowest++;
    x->nrows = 0;
    if (lowest == rank)
        for (int p = 0; p < size; p++)
            if (!strcmp(all + RING_CUDA_GPU_ID * (size_t)p, mine)) x->rows[x->nrows++] = p;
    free(all);
    /* every row reduced exactly once, or a sum would be wrong or missing */
    int total = x->nrows;
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, comm));
    if (total != size) die("ring_cuda: %d rows assigned to %d ranks' reducers", total, size);
}

ring_ipc_t *ring_ipc_create(MPI_Comm comm, int rank, int size, void *stream, char *why, size_t whylen) {
    if (size > RING_IPC_MAX_RANKS) {
        snprintf(why, whylen, "%d ranks, more than the %d one kernel reduces over", size, RING_IPC_MAX_RANKS);
        return NULL;
    }
    if (!ring_comm_one_host(comm, rank, size)) {
        snprintf(why, whylen, "the ranks are on several hosts");
        return NULL;
    }
    /* the probe: a small buffer each, every peer's handle opened by every rank */
    char mine[IPC_WHY] = "";
    int ok = 1;
    get_attrs_fn get_attrs = driver_get_attrs();
    if (!get_attrs) { ok = 0; snprintf(mine, sizeof mine, "rank %d: no cuPointerGetAttributes in the driver", rank); }
    void *probe = NULL;
    cudaIpcMemHandle_t h;
    memset(&h, 0, sizeof h);
    cudaCheck(cudaMalloc(&probe, 256));
    cudaError_t e = cudaIpcGetMemHandle(&h, probe);
    if (ok && e != cudaSuccess) {
        ok = 0;
        snprintf(mine, sizeof mine, "rank %d: cudaIpcGetMemHandle: %s", rank, cudaGetErrorString(e));
    }
    (void)cudaGetLastError();
    cudaIpcMemHandle_t *hs = xmalloc((size_t)size * sizeof *hs);
    mpiCheck(MPI_Allgather(&h, (int)sizeof h, MPI_BYTE, hs, (int)sizeof h, MPI_BYTE, comm));
    /* nobody opens before everyone exported (the allgather), nobody frees before all closed */
    for (int p = 0; p < size && ok; p++) {
        if (p == rank) continue;
        void *m = NULL;
        e = cudaIpcOpenMemHandle(&m, hs[p], cudaIpcMemLazyEnablePeerAccess);
        if (e != cudaSuccess) {
            ok = 0;
            snprintf(mine, sizeof mine, "rank %d cannot open rank %d's handle: %s", rank, p, cudaGetErrorString(e));
            (void)cudaGetLastError();
        } else {
            cudaCheck(cudaIpcCloseMemHandle(m));
        }
    }
    free(hs);
    mpiCheck(MPI_Barrier(comm));
    cudaCheck(cudaFree(probe));
    snprintf(why, whylen, "%s", mine);
    if (first_failure(comm, rank, size, ok, why, whylen) < size) return NULL;
    why[0] = 0;

    ring_ipc_t *x = xcalloc(1, sizeof *x);
    assign_rows(x, comm, rank, size);
    x->comm = comm;
    x->rank = rank;
    x->size = size;
    x->stream = (cudaStream_t)stream;
    x->get_attrs = get_attrs;
    x->all = xcalloc((size_t)size, sizeof *x->all);
    x->prev = xcalloc((size_t)size, sizeof *x->prev);
    x->map = xcalloc((size_t)size * IPC_CACHE, sizeof *x->map);
    cudaCheck(cudaEventCreateWithFlags(&x->entry, cudaEventDisableTiming));
    return x;
}

void ring_ipc_free(ring_ipc_t *x) {
    if (!x) return;
    for (size_t i = 0; i < (size_t)x->size * IPC_CACHE; i++)
        if (x->map[i].base) cudaCheck(cudaIpcCloseMemHandle(x->map[i].base));
    cudaCheck(cudaEventDestroy(x->entry));
    free(x->all);
    free(x->prev);
    free(x->map);
    free(x);
}

/* this rank's entry: the handle of buf's allocation (exported again only when it is a new one) */
static void export_mine(ring_ipc_t *x, float *buf, size_t count, ipc_entry_t *me) {
    memset(me, 0, sizeof *me);
    me->count = count;
    CUdeviceptr start = 0;
    size_t range = 0;
    unsigned long long id = 0;
    CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                    CU_POINTER_ATTRIBUTE_BUFFER_ID};
    void *vals[3] = {&start, &range, &id};
    if (x->get_attrs(3, attrs, vals, (CUdeviceptr)(uintptr_t)buf) != CUDA_SUCCESS || !start) {
        snprintf(me->why, sizeof me->why, "rank %d's buffer is not device memory the driver knows", x->rank);
        return;
    }
    char *base = (char *)(uintptr_t)start;
    if ((char *)(buf + count) > base + range)
        die("ring_cuda_allreduce: %zu floats at %p run past the end of their allocation", count, (void *)buf);
    if (id != x->my_id || base != x->my_base) {
        cudaError_t e = cudaIpcGetMemHandle(&x->my_handle, base);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            x->my_id = 0;
            x->my_base = NULL;
            snprintf(me->why, sizeof me->why, "rank %d's buffer cannot be exported (%s; cudaMalloc'd memory can)",
                     x->rank, cudaGetErrorString(e));
            return;
        }
        x->my_id = id;
        x->my_base = base;
    }
    me->handle = x->my_handle;
    me->off = (uint64_t)((char *)buf - base);
    me->ok = 1;
}

/* peer p's allocation for handle h, opened on first sight; NULL with why when it will not open */
static char *peer_base(ring_ipc_t *x, int p, const cudaIpcMemHandle_t *h, char *why, size_t whylen) {
    ipc_map_t *m = x->map + (size_t)p * IPC_CACHE, *slot = m;
    for (int i = 0; i < IPC_CACHE; i++) {
        if (m[i].base && !memcmp(&m[i].handle, h, sizeof *h)) { m[i].used = x->calls; return m[i].base; }
        if (!m[i].base || (slot->base && m[i].used < slot->used)) slot = &m[i];
    }
    if (slot->base) cudaCheck(cudaIpcCloseMemHandle(slot->base));   /* the least recently used */
    slot->base = NULL;
    void *ptr = NULL;
    cudaError_t e = cudaIpcOpenMemHandle(&ptr, *h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, whylen, "rank %d cannot open rank %d's buffer: %s", x->rank, p, cudaGetErrorString(e));
        return NULL;
    }
    slot->handle = *h;
    slot->base = ptr;
    slot->used = x->calls;
    return ptr;
}

int ring_ipc_allreduce(ring_ipc_t *x, float *buf, size_t count, uint64_t *sent, uint64_t *recv,
                       char *why, size_t whylen) {
    const int n = x->size;
    x->calls++;
    ipc_entry_t me;
    export_mine(x, buf, count, &me);
    /* our data is complete (the stream is a blocking one: after the default stream's work) */
    cudaCheck(cudaEventRecord(x->entry, x->stream));
    cudaCheck(cudaEventSynchronize(x->entry));
    mpiCheck(MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, x->all, (int)sizeof me, MPI_BYTE, x->comm));
    for (int p = 0; p < n; p++)
        if (x->all[p].count != count) {
            if (x->rank == 0)
                fprintf(stderr, "psring: ring_cuda_allreduce: rank %d reduces %llu floats, rank %d %llu: every rank must "
                        "pass the same count\n", p, (unsigned long long)x->all[p].count, x->rank, (unsigned long long)count);
            fflush(stderr);
            mpiCheck(MPI_Barrier(x->comm));   /* the line is out before any rank exits */
            exit(1);
        }
    for (int p = 0; p < n; p++)
        if (!x->all[p].ok) { snprintf(why, whylen, "%s", x->all[p].why); return 0; }
    /* a handle not seen in the last call may need opening: then every rank says whether it could */
    int fresh = !x->have_prev;
    for (int p = 0; p < n && !fresh; p++) fresh = memcmp(&x->all[p].handle, &x->prev[p].handle, sizeof x->all[p].handle) != 0;
    float *ptr[RING_IPC_MAX_RANKS];
    char mine[256] = "";
    int ok = 1;
    for (int p = 0; p < n; p++) {
        if (p == x->rank) { ptr[p] = buf; continue; }
        char *base = peer_base(x, p, &x->all[p].handle, mine, sizeof mine);
        if (!base) { ok = 0; ptr[p] = NULL; continue; }
        ptr[p] = (float *)(base + x->all[p].off);
    }
    if (fresh) {
        snprintf(why, whylen, "%s", mine);
        if (first_failure(x->comm, x->rank, n, ok, why, whylen) < n) return 0;
        memcpy(x->prev, x->all, (size_t)n * sizeof *x->all);
        x->have_prev = 1;
    } else if (!ok) {
        die("ring_cuda_allreduce: %s (a mapping seen in the last call)", mine);   /* cannot happen: cached */
    }
    /* rank o's row: segment o+1, whose final owner in the message ring o is; ring order from it */
    float *src[RING_IPC_MAX_RANKS * RING_IPC_MAX_RANKS];
    size_t len[RING_IPC_MAX_RANKS];
    for (int r = 0; r < x->nrows; r++) {
        const int j = (x->rows[r] + 1) % n;
        size_t so;
        ring_segment(count, n, j, &so, &len[r]);
        for (int k = 0; k < n; k++) src[r * n + k] = ptr[(j + k) % n] + so;
    }
    if (x->nrows) ring_cuda_ipc_reduce(src, x->nrows, n, len, x->stream);
    cudaCheck(cudaStreamSynchronize(x->stream));
    mpiCheck(MPI_Barrier(x->comm));
    /* what this rank's row moves between ranks, whoever reduced it (the trainer's bytes columns) */
    size_t so, slen;
    ring_segment(count, n, (x->rank + 1) % n, &so, &slen);
    *sent += (uint64_t)(n - 1) * slen * sizeof(float);
    *recv += (uint64_t)(n - 1) * slen * sizeof(float);
    return 1;
}
