/* ps_topology.c: the parameter server's descriptor (topology.h): its flags, the rules between
 * them and the trainer's, how many processes it needs (servers first, then workers), its layout
 * over hosts, what the launcher must add on emulated hosts, and its exchange (ps_exchange.c). */
#include "config.h"
#include <stddef.h>
#include <sys/stat.h>
#include "exchange/topology.h"
#include "ps/ps_config.h"
#include "ps/ps_exchange.h"
#include "ps/placement.h"
#include "common/stringify.h"

typedef struct {
    int servers, sync, staleness, transport, fp16, chunk_kb, credit, mode, byteps, overlap;
    long samples;
    float peer_timeout;   /* 0 = not given: the exchange's default, which a launcher may scale */
    char bind[256];       /* "" = not given: 127.0.0.1, or the emulated cluster's subnet */
    char auth[1024];
} ps_flags_t;

#define AT(field) offsetof(ps_flags_t, field), sizeof(((ps_flags_t *)0)->field)
static const char *const sync_words[] = {"bsp", "async", "ssp", NULL};   /* sync_mode_t */
static const char *const transport_words[] = {"tcp", "ipc", NULL};      /* ps_transport_t */
static const char *const mode_words[] = {"optimizer", "sum", NULL};     /* ps_mode_t */

static const opttab_row_t ps_rows[] = {
    OPT_SECTION("Parameter server (--topology ps)"),
    OPT_INT("servers", AT(servers), 1, 4096, "must be an integer >= 1", OPT_AGREE, "--servers S", "the first S ranks are servers, the rest workers (default 1; with\n"
            "--byteps K and psring train --workers N: N+K)"),
    OPT_CHOICE("sync", AT(sync), sync_words, OPT_AGREE, "--sync bsp|async|ssp", "synchronisation (default bsp)"),
    OPT_CHOICE("ps-mode", AT(mode), mode_words, OPT_AGREE, "--ps-mode optimizer|sum", "optimizer: the servers run the optimizer on their key ranges (ps-lite);\n"
               "sum: bsp, the servers only sum and every worker runs the optimizer\n"
               "(BytePS' summation service) (default optimizer)"),
    OPT_INT("byteps", AT(byteps), 0, 4096, "must be a count of spare server hosts >= 0", OPT_AGREE, "--byteps K", "BytePS' placement: a server on every worker host plus K on hosts of\n"
            "their own, which hold x* = 2K(N-1)/(N^2+KN-2K) of the parameters;\n"
            "--servers N+K for N workers, which psring train --workers N implies\n"
            "(default: the even split)"),
    OPT_FLAG("overlap", AT(overlap), OPT_PER_RANK, "--overlap", "bsp: push each layer's slices once backward has finished it, the lowest\n"
             "final slice first (BytePS' priority), from a communication thread"),
    OPT_INT("staleness", AT(staleness), 0, 1 << 20, "must be an integer >= 0", OPT_AGREE, "--staleness K", "ssp: max clocks a worker may run ahead of the slowest (default 2)"),
    OPT_LONG("samples", AT(samples), 1, 1L << 50, "must be an integer >= 1", OPT_AGREE, "--samples N", "async/ssp: train on N samples in all, shared by the workers (default:\n"
           "--epochs x the samples of an epoch); each worker goes on through its\n"
           "own epochs until the servers say the budget is spent"),
    OPT_CHOICE("transport", AT(transport), transport_words, OPT_AGREE, "--transport tcp|ipc", "ZeroMQ transport (default tcp)"),
    OPT_STRING("bind", AT(bind), "needs an address (e.g. 127.0.0.1 or 10.0.0.5)", OPT_PER_RANK, "--bind ADDR|CIDR|IFACE|auto", "address servers bind to; a subnet (10.99.0.0/24) or an interface\n"
           "name picks each server host's own address there (default 127.0.0.1)"),
    OPT_FLOAT("peer-timeout", AT(peer_timeout), 0.1, 86400, "must be a number of seconds in [0.1, 86400]", OPT_PER_RANK, "--peer-timeout SEC", "a silent peer is declared dead after SEC seconds (default " STRINGIFY(PS_PEER_TIMEOUT_DEFAULT) ")"),
    OPT_FLAG("fp16", AT(fp16), OPT_AGREE, "--fp16", "gradients and parameters travel as IEEE half"),
    /* CURVE on one side only would end in a handshake stall: on or off must agree */
    OPT_STRING("ps-auth", AT(auth), "needs a keyfile path (psring keygen FILE makes one)", OPT_AGREE_SET, "--ps-auth KEYFILE", "CurveZMQ: servers accept only workers holding KEYFILE (psring keygen)"),
    OPT_INT("ps-chunk-kb", AT(chunk_kb), 0, 1 << 20, "must be an integer in 0..1048576 (0 = whole shards)", OPT_AGREE, "--ps-chunk-kb K", "bsp: push, apply and answer each shard in K KiB slices, overlapping the\n"
           "server's apply and reply with later slices' arrival; 0 = whole shards\n"
           "(default " STRINGIFY(PS_CHUNK_KB_DEFAULT) "; LARS always uses whole shards)"),
    OPT_INT("ps-credit", AT(credit), 0, 1 << 20, "must be an integer in 0..1048576 (0 = every slice at once)", OPT_PER_RANK, "--ps-credit C", "bsp: a worker keeps at most C slices of each shard on the way and sends\n"
           "the next as an answer returns (BytePS' scheduling credit), so slices\n"
           "reach the server together; 0 = all at once (default " STRINGIFY(PS_CREDIT_DEFAULT) ")"),
};

#define PS_STALENESS_DEFAULT 2   /* ssp's bound when --staleness is not given (its --help says so) */

static void ps_defaults(void *cfg) {
    ps_flags_t *f = cfg;
    *f = (ps_flags_t){ .servers = 0, .sync = SYNC_BSP, .staleness = -1, .transport = PS_TRANSPORT_TCP,
                       .chunk_kb = PS_CHUNK_KB_DEFAULT, .credit = PS_CREDIT_DEFAULT, .byteps = -1 };
}

/* --servers, 0 until given or implied (ps_layout): BytePS' placement derives it from the worker
 * count; ps-lite's default is one server */
static int ps_servers(const ps_flags_t *f) { return f->servers ? f->servers : 1; }

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

static int ps_check(const void *cfg, const topology_common_t *c, char *err, size_t errlen) {
    const ps_flags_t *f = cfg;
    struct stat st;
    /* -1: not given (ps_defaults), so a flag that would do nothing is refused by name */
    if (f->staleness >= 0 && f->sync != SYNC_SSP)
        FAIL("--staleness applies to --sync ssp only (bsp waits for every worker, async for none)");
    if (f->samples && f->sync == SYNC_BSP)
        FAIL("--samples applies to --topology ps --sync async or ssp only (bsp and the ring keep epochs)");
    if (c->device == DEVICE_CUDA && f->fp16) FAIL("--fp16 is not implemented for --device cuda");
    if (f->byteps >= 0 && !f->servers)
        FAIL("--byteps %d needs --servers N+%d for N workers (psring train --workers N implies it)", f->byteps, f->byteps);
    if (f->byteps >= 0 && f->byteps >= f->servers)
        FAIL("--byteps %d needs --servers above it: a server on every worker host plus %d (got --servers %d)", f->byteps, f->byteps, f->servers);
    if (f->byteps > 0 && c->optim.kind == OPTIM_LARS && f->mode != PS_MODE_SUM)
        FAIL("--byteps with --optimizer lars needs --ps-mode sum (LARS on the servers needs whole tensors on each)");
    if (f->overlap && f->sync != SYNC_BSP)
        FAIL("--overlap on the PS needs --sync bsp (async and ssp push whole shards, each applied on arrival)");
    if (f->overlap && c->device == DEVICE_CUDA)
        FAIL("--overlap is not implemented for --device cuda (the GPU backward hands over its gradient whole)");
    if (f->mode == PS_MODE_SUM && f->sync != SYNC_BSP)
        FAIL("--ps-mode sum needs --sync bsp (a summation service answers a round of every worker's gradient)");
    if (c->check_files && f->auth[0] && stat(f->auth, &st) != 0)
        FAIL("--ps-auth %s: no such file (make one with: psring keygen %s)", f->auth, f->auth);
    return 0;
}

static int ps_processes(const void *cfg, int np, char *err, size_t errlen) {
    const ps_flags_t *f = cfg;
    if (np && np <= ps_servers(f))
        FAIL("--topology ps with -np %d and --servers %d leaves no worker (need -np > servers)", np, ps_servers(f));
    if (np && f->byteps >= 0 && !ps_byteps_fits(f->byteps, ps_servers(f), np, err, errlen)) return -1;
    return 0;
}

static const char *plural(int n) { return n == 1 ? "" : "s"; }

/* Servers are ranks 0..S-1, workers S..S+N-1, and the launcher deals rank r to host r mod hosts.
 * ps-lite's servers sit on hosts of their own: S+N hosts, one process each. BytePS' placement
 * (--byteps K) puts a server beside every worker and K on hosts of their own: over N+K hosts the
 * servers take one host each and worker i lands on host i, beside server i; it needs --servers
 * N+K, which N implies when not given. */
static int ps_layout(void *cfg, int workers, topology_layout_t *l, char *err, size_t errlen) {
    ps_flags_t *f = cfg;
    int N = workers, K = f->byteps;
    if (K < 0) {
        int S = ps_servers(f);
        *l = (topology_layout_t){ .processes = S + N, .hosts = S + N };
        snprintf(l->what, sizeof l->what, "%d server%s and %d worker%s, each on a host of its own", S, plural(S), N, plural(N));
        return 0;
    }
    if (f->servers && f->servers != N + K)
        FAIL("--servers %d contradicts --byteps %d with --workers %d: the placement needs --servers %d (or leave --servers out)",
             f->servers, K, N, N + K);
    *l = (topology_layout_t){ .processes = 2 * N + K, .hosts = N + K };
    if (!f->servers) snprintf(l->args, sizeof l->args, "--servers %d", N + K);
    f->servers = N + K;
    int n = snprintf(l->what, sizeof l->what, "%d worker%s beside %d server%s", N, plural(N), N, plural(N));
    if (K) snprintf(l->what + n, sizeof l->what - n, ", %d more on %s", K, K == 1 ? "a host of its own" : "hosts of their own");
    return 0;
}

static void ps_launch(const void *cfg, topology_launch_t *l) {
    const ps_flags_t *f = cfg;
    l->servers = ps_servers(f);
    l->cluster_bind = !f->bind[0];                  /* servers publish the address they bind */
    l->peer_timeout = f->peer_timeout > 0 ? 0 : PS_PEER_TIMEOUT_DEFAULT;  /* the exchange's default */
    l->recovery = f->sync == SYNC_ASYNC;             /* async outlives a dead worker */
}

static exchange_t *ps_create(const void *cfg, const topology_common_t *c, size_t count) {
    const ps_flags_t *f = cfg;
    ps_config_t pc = {
        .fingerprint = c->fingerprint, .optim = c->optim, .servers = ps_servers(f), .sync = (sync_mode_t)f->sync,
        .staleness = f->staleness < 0 ? PS_STALENESS_DEFAULT : f->staleness, .transport = (ps_transport_t)f->transport, .bind = f->bind,
        .peer_timeout = f->peer_timeout, .stall_warn = c->stall_warn, .auth = f->auth, .fp16 = f->fp16,
        .chunk_kb = f->chunk_kb, .credit = f->credit, .mode = (ps_mode_t)f->mode, .byteps = f->byteps, .overlap = f->overlap, .samples = (uint64_t)f->samples, .layers = c->layers,
        .quiet = c->quiet,
    };
    return exchange_ps_create(&pc, count);
}

static const char *const ps_columns[] = { "sync", "ps_mode", "ps_split", "staleness", "servers", "transport", "fp16", "overlap", "bytes_per_server",
                                          "staleness_mean", "staleness_max", "lost_workers", NULL };

const topology_t topology_ps = {
    .name = "ps", .flags = { ps_rows, sizeof ps_rows / sizeof ps_rows[0] },
    .config_size = sizeof(ps_flags_t), .defaults = ps_defaults, .check = ps_check, .processes = ps_processes,
    .layout = ps_layout, .launch = ps_launch, .create = ps_create, .columns = ps_columns,
};
