/* local_topology.c: the local topology's descriptor (topology.h): one process, no flags of its
 * own, no MPI; the optimizer runs on the gradient as is (exchange_local.c, and on the GPU
 * exchange_local_cuda.c in --with-cuda builds). */
#include "config.h"
#include "exchange/topology.h"
#include "exchange/exchange_local.h"

typedef struct { int unused; } local_config_t;

static void local_defaults(void *cfg) { (void)cfg; }

static int local_processes(const void *cfg, int np, char *err, size_t errlen) {
    if (np <= 1) return 0;
    snprintf(err, errlen, "--topology local runs one process: drop -np %d or pick another topology", np);
    return -1;
}

static int local_layout(void *cfg, int workers, topology_layout_t *l, char *err, size_t errlen) {
    if (workers > 1) {
        snprintf(err, errlen, "--topology local runs one worker: drop --workers %d or pick another topology", workers);
        return -1;
    }
    *l = (topology_layout_t){ .processes = 1, .hosts = 1 };
    snprintf(l->what, sizeof l->what, "one process");
    return 0;
}

static void local_launch(const void *cfg, topology_launch_t *l) { l->direct = 1; }

static exchange_t *local_create(const void *cfg, const topology_common_t *c, size_t count) {
#ifdef HAVE_CUDA
    if (c->device == DEVICE_CUDA) return exchange_local_cuda_create(&c->optim, count);
#endif
    return exchange_local_create(&c->optim, count);
}

static const char *const local_columns[] = { NULL };

const topology_t topology_local = {
    .name = "local", .flags = { NULL, 0 }, .config_size = sizeof(local_config_t), .defaults = local_defaults,
    .processes = local_processes, .layout = local_layout, .launch = local_launch, .create = local_create, .columns = local_columns,
};
