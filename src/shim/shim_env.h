/* shim_env.h: how the LD_PRELOAD shims (inject-latency.c, sleep-wait.c) read their one setting,
 * a PSRING_*_US environment variable: through the project's one number parser
 * (src/common/parse.c, compiled into each shim), and on a bad value one line naming it and exit 2,
 * as the launcher's own flags do. A shim runs inside someone else's process: it has no other
 * way to refuse. */
#ifndef PSRING_SHIM_ENV_H
#define PSRING_SHIM_ENV_H
#include <stdio.h>
#include <stdlib.h>
#include "common/parse.h"

/* NAME's value in microseconds, 0..max; dflt when NAME is not set. WHO prefixes the message. */
static long shim_env_us(const char *who, const char *name, long dflt, long max) {
    const char *s = getenv(name);
    long us = dflt;
    if (s && parse_long(s, 0, max, &us) < 0) {
        fprintf(stderr, "%s: %s must be microseconds in 0..%ld: got '%s'\n", who, name, max, s);
        exit(2);
    }
    return us;
}

#endif
