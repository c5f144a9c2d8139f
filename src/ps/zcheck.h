/* zcheck.h: ZeroMQ error checks with file:line and zmq_strerror, for src/ps only. */
#ifndef PSRING_PS_ZCHECK_H
#define PSRING_PS_ZCHECK_H
#include <zmq.h>
#include "common/check.h"

/* for calls returning -1 on error */
#define zmqCheck(call) do { \
    if ((call) == -1) die_at(__FILE__, __LINE__, 1, "%s: %s", #call, zmq_strerror(zmq_errno())); \
} while (0)
/* for calls returning NULL on error */
#define zmqCheckPtr(ptr, call) do { \
    if (((ptr) = (call)) == NULL) die_at(__FILE__, __LINE__, 1, "%s: %s", #call, zmq_strerror(zmq_errno())); \
} while (0)

#endif
