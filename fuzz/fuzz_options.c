/* fuzz_options.c: libFuzzer harness for psring-train's option parser (src/train/options.c).
 * The input is split at NUL bytes into up to 63 arguments after argv[0], so the fuzzer builds
 * command lines out of flags, values and junk, and options_parse runs on them repeatedly in one
 * process (as the unit tests do). Invariants: the result is 0, 1 (--help) or 2 (with a one-line
 * message); on success every numeric field is inside its documented range (the topology's: its
 * table's) and the fingerprint is
 * computable; and the next parse of a fixed valid command line still succeeds (no state leaks
 * from one call into the next). --help's text goes to /dev/null. */
#include "config.h"
#include "train/options.h"
#include "train/topology_list.h"
#include "exchange/exchange_local.h"
#include "ring/ring_exchange.h"
#include "ps/ps_exchange.h"
#include <stdlib.h>
#include <string.h>

/* The descriptors name their exchanges; parsing never creates one, so the harness links none */
exchange_t *exchange_local_create(const optim_config_t *optim, size_t count) { abort(); }
exchange_t *exchange_ring_create(const ring_config_t *c, size_t count) { abort(); }
exchange_t *exchange_ps_create(const ps_config_t *c, size_t count) { abort(); }
#ifdef HAVE_CUDA
exchange_t *exchange_local_cuda_create(const optim_config_t *optim, size_t count) { abort(); }
exchange_t *exchange_ring_cuda_create(const ring_config_t *c, size_t count) { abort(); }
#endif

/* every numeric flag of the chosen topology inside its row's range, or still at its default */
static int topology_in_range(const options_t *o) {
    unsigned char def[OPTIONS_TOPOLOGY_CONFIG_MAX];
    o->topology->defaults(def);
    for (size_t i = 0; i < o->topology->flags.n; i++) {
        const opttab_row_t *r = &o->topology->flags.rows[i];
        const unsigned char *p = o->topo_cfg + r->offset;
        double v;
        if (r->kind == OPTTAB_INT) v = *(const int *)p;
        else if (r->kind == OPTTAB_LONG) v = (double)*(const long *)p;
        else if (r->kind == OPTTAB_FLOAT) v = *(const float *)p;
        else continue;
        if ((v < r->lo || v > r->hi) && memcmp(p, def + r->offset, r->size) != 0) return 0;
    }
    return 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    if (!freopen("/dev/null", "w", stdout)) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = 0;
    char *args[64];
    int argc = 0;
    args[argc++] = "psring-train";
    for (size_t i = 0; i <= size && argc < 63;) {
        args[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    args[argc] = NULL;
    options_t o;
    char err[512] = "";
    int rc = options_parse(&o, argc, args, err, sizeof err);
    if (rc == 2) {
        /* one line, unless the user's own argument (quoted in the message) had a newline */
        if (!err[0] || (strchr(err, '\n') && !memchr(data, '\n', size))) abort();
    } else if (rc == 0) {
        if (o.batch < 1 || o.epochs < 1 || o.threads < 1 || o.accumulate < 1 ||
            o.nsizes < 2 || o.sizes[0] < 1 || !(o.lr > 0) || o.momentum < 0 || o.momentum >= 1 ||
            !topology_in_range(&o))
            abort();
        volatile uint64_t fp = options_fingerprint(&o);
        (void)fp;
    } else if (rc != 1) {
        abort();
    }
    free(buf);
    /* a parse must not depend on the previous one (getopt keeps hidden state between calls) */
    char a0[] = "psring-train", a1[] = "--batch", a2[] = "8", a3[] = "--data", a4[] = "/";
    char *fixed[] = { a0, a1, a2, a3, a4, NULL };
    if (options_parse(&o, 5, fixed, err, sizeof err) != 0 || o.batch != 8) abort();
    return 0;
}
