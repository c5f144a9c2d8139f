/* topology_list.h: the topologies psring-train knows (topology_list.c: the one list). */
#ifndef PSRING_TOPOLOGY_LIST_H
#define PSRING_TOPOLOGY_LIST_H
#include <stddef.h>
#include "exchange/topology.h"

extern const topology_t *const topology_list[];   /* NULL-terminated, in --help's order */
extern const char *const topology_names[];        /* their names, the same order */
/* "--topology local|ring|ps" into out */
void topology_list_usage(char *out, size_t outlen);

#endif
