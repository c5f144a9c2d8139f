/* ring_topology.c: the ring topology's descriptor (topology.h): its flags, the rules between them
 * and the trainer's, and its exchange (ring_exchange.c on the CPU, ring_exchange_cuda.c with
 * --device cuda). Every process is a worker; mpirun starts them. */
#include "config.h"
#include <stddef.h>
#include "exchange/topology.h"
#include "ring/ring_config.h"
#include "ring/ring_exchange.h"
#include "common/stringify.h"

typedef struct {
    int allreduce, op, fp16, overlap, chunk_kb, autotune, hierarchical;
    float bucket_mb;
    char autotune_log[1024];
} ring_flags_t;

#define AT(field) offsetof(ring_flags_t, field), sizeof(((ring_flags_t *)0)->field)
static const char *const allreduce_words[] = {"ring", "mpi", "nccl", NULL};   /* allreduce_impl_t */
static const char *const op_words[] = {"average", "sum", "adasum", NULL};     /* ring_op_t */

static const opttab_row_t ring_rows[] = {
    OPT_SECTION("Ring allreduce (--topology ring)"),
    OPT_CHOICE("allreduce", AT(allreduce), allreduce_words, OPT_AGREE, "--allreduce ring|mpi|nccl", "psring's ring, MPI_Allreduce or (--device cuda) NCCL (default ring)"),
    OPT_FLAG("fp16", AT(fp16), OPT_AGREE, "--fp16", "gradients travel as IEEE half, accumulate in float"),
    OPT_FLAG("overlap", AT(overlap), OPT_AGREE, "--overlap", "exchange finished layers while backward continues"),
    OPT_FLOAT("bucket-mb", AT(bucket_mb), 1.0 / 1024, 4096, "must be a number in [1/1024, 4096]", OPT_AGREE, "--bucket-mb X", "fusion bucket for --overlap (default 4)"),
    OPT_INT("chunk-kb", AT(chunk_kb), 1, 1 << 20, "must be an integer in 1..1048576", OPT_AGREE, "--chunk-kb X", "ring pipeline chunk (default " STRINGIFY(RING_CHUNK_KB_DEFAULT) ")"),
    OPT_CHOICE("op", AT(op), op_words, OPT_AGREE, "--op average|sum|adasum", "combine the gradients: mean, plain sum (scale --lr yourself), or\n"
           "Adasum (pairwise adaptive sum, power-of-two workers) (default average)"),
    OPT_FLAG("autotune", AT(autotune), OPT_AGREE, "--autotune", "with --overlap: try bucket and chunk sizes in the first steps, keep the fastest"),
    OPT_STRING("autotune-log", AT(autotune_log), "needs a file path", OPT_PER_RANK, "--autotune-log FILE", "write the autotune trials as CSV (rank 0)"),
    OPT_FLAG("hierarchical", AT(hierarchical), OPT_AGREE, "--hierarchical", "reduce inside each host, ring across hosts, broadcast inside each host"),
};

static void ring_defaults(void *cfg) {
    ring_flags_t *f = cfg;
    *f = (ring_flags_t){ .allreduce = ALLREDUCE_RING, .op = RING_OP_AVERAGE, .bucket_mb = 4.0f, .chunk_kb = RING_CHUNK_KB_DEFAULT };
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

/* what the GPU path does not do (yet): said, rather than silently running on the CPU */
static int ring_check_device(const ring_flags_t *f, const topology_common_t *c, char *err, size_t errlen) {
    if (f->allreduce == ALLREDUCE_NCCL && c->device != DEVICE_CUDA)
        FAIL("--allreduce nccl needs --device cuda (NCCL reduces GPU buffers)");
    if (c->device != DEVICE_CUDA) return 0;
    if (f->overlap) FAIL("--overlap is not implemented for --device cuda (the GPU ring reduces after backward)");
    if (f->op == RING_OP_ADASUM || f->hierarchical) FAIL("--op adasum and --hierarchical are not implemented for --device cuda");
    if (f->fp16) FAIL("--fp16 is not implemented for --device cuda");
    if (c->stall_warn > 0) FAIL("--stall-warn is not implemented for --topology ring --device cuda");
    return 0;
}

static int ring_check(const void *cfg, const topology_common_t *c, char *err, size_t errlen) {
    const ring_flags_t *f = cfg;
    if (ring_check_device(f, c, err, errlen)) return -1;
    if (c->stall_warn > 0 && f->overlap)
        FAIL("--stall-warn does not combine with --overlap (the check runs on the main thread's MPI calls)");
    if (f->op == RING_OP_ADASUM && (f->fp16 || f->overlap || f->allreduce != ALLREDUCE_RING || f->hierarchical))
        FAIL("--op adasum runs on psring's ring in float on the whole gradient: not with --fp16, --overlap, --allreduce mpi|nccl or --hierarchical");
    if (f->autotune && !f->overlap) FAIL("--autotune tunes the --overlap buckets and ring chunks: add --overlap");
    if (f->autotune && f->allreduce != ALLREDUCE_RING) FAIL("--autotune tunes psring's ring: not with --allreduce mpi|nccl");
    if (f->autotune_log[0] && !f->autotune) FAIL("--autotune-log needs --autotune");
    if (f->hierarchical && (f->fp16 || f->overlap || f->allreduce != ALLREDUCE_RING))
        FAIL("--hierarchical runs psring's ring in float on the calling thread: not with --fp16, --overlap or --allreduce mpi|nccl");
    return 0;
}

static void ring_launch(const void *cfg, topology_launch_t *l) { (void)cfg; (void)l; }

static exchange_t *ring_create(const void *cfg, const topology_common_t *c, size_t count) {
    const ring_flags_t *f = cfg;
    ring_config_t rc = {
        .fingerprint = c->fingerprint, .optim = c->optim, .allreduce = (allreduce_impl_t)f->allreduce,
        .op = (ring_op_t)f->op, .fp16 = f->fp16, .hierarchical = f->hierarchical, .overlap = f->overlap,
        .bucket_mb = f->bucket_mb, .chunk_kb = f->chunk_kb, .autotune = f->autotune,
        .autotune_log = f->autotune_log, .stall_warn = c->stall_warn, .quiet = c->quiet,
    };
#ifdef HAVE_CUDA
    if (c->device == DEVICE_CUDA) return exchange_ring_cuda_create(&rc, count);
#endif
    return exchange_ring_create(&rc, count);
}

static const char *const ring_columns[] = { "allreduce", "ring_path", "fp16", "overlap", "op", "hierarchical", NULL };

const topology_t topology_ring = {
    .name = "ring", .flags = { ring_rows, sizeof ring_rows / sizeof ring_rows[0] },
    .config_size = sizeof(ring_flags_t), .defaults = ring_defaults, .check = ring_check,
    .launch = ring_launch, .create = ring_create, .columns = ring_columns,
};
