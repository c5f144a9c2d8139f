/* topology.h: how a topology describes itself to the programs that run it. Each topology's folder
 * exports one `const topology_t topology_NAME` (local: src/exchange/local_topology.c, ring:
 * src/ring/ring_topology.c, ps: src/ps/ps_topology.c), and src/train/topology_list.c lists them
 * in one line. The trainer parses a topology's flags from its table into its own config struct,
 * lets it check them against the trainer's choices, asks it how many processes and hosts it
 * needs, creates its exchange through it and writes its CSV columns; the launcher learns the rest
 * through `psring-train --describe`. Nothing outside a topology's folder and that list names it.
 *
 * A topology sees the trainer only through topology_common_t: what it needs of the trainer's own
 * options, already validated. */
#ifndef PSRING_TOPOLOGY_H
#define PSRING_TOPOLOGY_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "common/opttab.h"
#include "exchange/exchange.h"
#include "model/optim.h"

#include "model/device.h"    /* device_t */

typedef struct {
    uint64_t fingerprint;   /* of everything that must agree across ranks (trainer and topology) */
    optim_config_t optim;   /* the optimizer every exchange runs */
    device_t device;        /* --device: where the model trains */
    double stall_warn;      /* seconds before a rank that makes no progress is named; 0 = off */
    const char *layers;     /* --layers as the user wrote it, for messages */
    int quiet;
    int check_files;        /* 0: --describe alone (the files that flags name are another host's) */
} topology_common_t;

/* what `psring-train --describe` prints for the launcher, one "key=value" a line */
typedef struct {
    int direct;             /* one process runs without mpirun (no MPI at all) */
    int servers;            /* leading ranks that serve instead of training */
    int cluster_bind;       /* on emulated hosts its ranks must bind the cluster subnet (--bind) */
    double peer_timeout;    /* > 0: its --peer-timeout default, scaled by a cluster's dilation */
    int recovery;           /* it outlives a dead worker: mpirun --enable-recovery */
} topology_launch_t;

/* The processes and hosts a topology's layout wants for N workers (`psring-train --describe
 * --describe-workers N`), so that a user gives the worker count and the launcher does the
 * arithmetic. The launcher deals rank r to host r mod hosts (mpirun --map-by node): a topology
 * orders its ranks so that this puts each where its layout wants it. */
typedef struct {
    int processes;          /* mpirun -np */
    int hosts;              /* the hosts the ranks are dealt over */
    char what[160];         /* the layout in words, for the launcher's messages */
    char args[160];         /* flags the worker count implied, which every rank must be given ("" = none) */
} topology_layout_t;

typedef struct topology {
    const char *name;             /* --topology NAME */
    opttab_t flags;               /* its flags; rows target its config struct; the first row's
                                   * section is its --help heading */
    size_t config_size;           /* its config struct, filled from the flags */
    void (*defaults)(void *cfg);
    /* After every flag is read: the rules between its flags and the trainer's. 0, or -1 with
     * one line in err. May be NULL. */
    int (*check)(const void *cfg, const topology_common_t *c, char *err, size_t errlen);
    /* -np N (0 = not given) and the flags: 0, or -1 with one line in err. May be NULL (any N). */
    int (*processes)(const void *cfg, int np, char *err, size_t errlen);
    /* N workers: its layout (topology_layout_t); 0, or -1 with one line in err. It may complete
     * the flags that N implies in cfg (and name them in args). May be NULL: every process a
     * worker, one per host (N processes on N hosts). */
    int (*layout)(void *cfg, int workers, topology_layout_t *l, char *err, size_t errlen);
    void (*launch)(const void *cfg, topology_launch_t *l);
    exchange_t *(*create)(const void *cfg, const topology_common_t *c, size_t count);
    const char *const *columns;   /* the CSV columns its report() fills, NULL-terminated */
} topology_t;

/* a topology's flag given to another one: its row's table must hold it (see opttab_find) */
static inline const opttab_row_t *topology_flag(const topology_t *t, const char *flag) {
    return opttab_find(&t->flags, flag);
}

#endif
