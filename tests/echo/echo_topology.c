/* echo_topology.c: a topology that exists only for the tests, added the way any topology is: this
 * folder (the descriptor, and local.mk for the build), one name in the list (here through
 * PSRING_MORE_TOPOLOGIES, so that the product's list stays the product's) and one include line.
 * Nothing else in the tree learns of it: the trainer parses its flag, checks it, prints it in
 * --help, creates its exchange and writes its CSV column from this descriptor alone, and the
 * launcher learns from --describe that it runs as one process. Its exchange is the local one under
 * another name, so a run must equal --topology local step by step. */
#include <stddef.h>
#include <string.h>
#include "exchange/topology.h"
#include "exchange/exchange_local.h"

typedef struct { char note[64]; } echo_flags_t;
#define AT(field) offsetof(echo_flags_t, field), sizeof(((echo_flags_t *)0)->field)

static const opttab_row_t echo_rows[] = {
    OPT_SECTION("Echo (--topology echo: the tests' own)"),
    OPT_STRING("echo-note", AT(note), "needs a word of at most 63 characters", OPT_AGREE, "--echo-note WORD", "written to the CSV's echo_note column"),
};

static void echo_defaults(void *cfg) { strcpy(((echo_flags_t *)cfg)->note, "none"); }

static int echo_check(const void *cfg, const topology_common_t *c, char *err, size_t errlen) {
    if (strchr(((const echo_flags_t *)cfg)->note, ',')) {
        snprintf(err, errlen, "--echo-note takes one word: no commas");
        return -1;
    }
    return 0;
}

static int echo_processes(const void *cfg, int np, char *err, size_t errlen) {
    if (np <= 1) return 0;
    snprintf(err, errlen, "--topology echo runs one process: got -np %d", np);
    return -1;
}

static void echo_launch(const void *cfg, topology_launch_t *l) { l->direct = 1; }

/* the local exchange's ops with another name and a report of its own */
static exchange_ops_t echo_ops;
static char echo_note[64];

static void echo_report(exchange_t *ex, exchange_report_t *r) { exchange_report_set(r, "echo_note", "%s", echo_note); }

static exchange_t *echo_create(const void *cfg, const topology_common_t *c, size_t count) {
    exchange_t *ex = exchange_local_create(&c->optim, count);
    echo_ops = *ex->ops;
    echo_ops.name = "echo";
    echo_ops.report = echo_report;
    ex->ops = &echo_ops;
    snprintf(echo_note, sizeof echo_note, "%s", ((const echo_flags_t *)cfg)->note);
    return ex;
}

static const char *const echo_columns[] = { "echo_note", NULL };

const topology_t topology_echo = {
    .name = "echo", .flags = { echo_rows, sizeof echo_rows / sizeof echo_rows[0] },
    .config_size = sizeof(echo_flags_t), .defaults = echo_defaults, .check = echo_check,
    .processes = echo_processes, .launch = echo_launch, .create = echo_create, .columns = echo_columns,
};
