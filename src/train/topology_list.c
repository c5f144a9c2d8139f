/* topology_list.c: the one list of topologies. Adding one is its folder (with its descriptor,
 * topology.h, and a local.mk that adds the descriptor to TOPOLOGY_SOURCES and its library to
 * TOPOLOGY_LIBS), the include of that local.mk in Makefile.am, and its name on the next line. A
 * build may add more (PSRING_MORE_TOPOLOGIES(X), as the test-only topology does). */
#include "train/topology_list.h"
#include <string.h>

#ifndef PSRING_MORE_TOPOLOGIES
#define PSRING_MORE_TOPOLOGIES(X)
#endif
#define TOPOLOGIES(X) X(local) X(ring) X(ps) PSRING_MORE_TOPOLOGIES(X)

#define DECLARE(name) extern const topology_t topology_##name;
#define ADDRESS(name) &topology_##name,
#define NAME(name) #name,
TOPOLOGIES(DECLARE)
const topology_t *const topology_list[] = { TOPOLOGIES(ADDRESS) NULL };
const char *const topology_names[] = { TOPOLOGIES(NAME) NULL };

void topology_list_usage(char *out, size_t outlen) {
    snprintf(out, outlen, "--topology ");
    for (int i = 0; topology_names[i]; i++) {
        size_t len = strlen(out);
        snprintf(out + len, outlen - len, "%s%s", i ? "|" : "", topology_names[i]);
    }
}
