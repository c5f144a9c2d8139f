/* wire.h: the parameter server's wire protocol over ZeroMQ and key-range sharding. An f16
 * payload holds IEEE binary16 values, little-endian, converted by common/half.h.
 *
 * Every message is a ZeroMQ multipart message: [routing id (added/removed by ROUTER)] +
 * one 88-byte header frame + (for data types) one payload frame. The header is encoded
 * little-endian byte by byte, so it does not depend on struct padding or host byte order:
 *
 *   byte 0        4      6      8              12             16
 *        +--------+------+------+--------------+--------------+
 *        | magic  | ver  | type | sender (i32) | shard (u32)  |
 *        +--------+------+------+--------------+--------------+
 *     16 | iteration (u64)             | clock (u64)                 | 32
 *        +-----------------------------+-----------------------------+
 *     32 | offset (u64, elements)      | count (u64, elements)       | 48
 *        +------+------+---------------+-----------------------------+
 *     48 |dtype |flags | lr (f32)      | payload_len (u64, bytes)    | 64
 *        +------+------+---------------+-----------------------------+
 *     64 | wait_s (f64, seconds)       | budget (u64, samples)       | 80
 *        +-----------------------------+-----------------------------+
 *     80 | step_samples (u64, samples) | 88
 *        +-----------------------------+
 *
 *   magic "PSR1" (0x31525350), version PS_WIRE_VERSION. sender: worker rank (>= 0) or
 *   -1 - server index for server-sent messages. iteration: the worker's clock (PUSH), the
 *   parameter generation wanted (PULL), the round (AVG). clock: the global clock the
 *   parameters carry (PARAMS) or were read at (PUSH, echoed back for staleness). lr: the learning
 *   rate (PUSH only). wait_s: in a bsp PARAMS reply, the seconds the recipient was ready before
 *   the round's last worker was ready (HEARTBEAT with the round, sent ahead of a push; 0 in the
 *   round's other slices and elsewhere), so workers can split wait from transfer.
 *
 *   Sample budget (async/ssp): the run ends when the workers together have trained on a number
 *   of samples, wherever each one is in its epochs. Worker 0's INIT or STATE_SET carries that
 *   number in budget and the samples of a full step in step_samples (0: no budget; both are 0 in
 *   every other message). Server 0 hands the budget out in shares of one step: a PULL or PUSH
 *   with PS_FLAG_SHARE asks for the next one, and server 0's PARAMS answer says which it got in
 *   flags: none of the bits a full step, PS_FLAG_TAIL the budget's remainder (budget %
 *   step_samples), PS_FLAG_STOP nothing (the budget is spent: stop). A push spends the share its
 *   sender holds. A HEARTBEAT on the data connection with PS_FLAG_STOPPED says "I push no more"
 *   (every server leaves the sender out of its clocks; server 0 takes back an unspent share), as
 *   the death of a worker does.
 *
 *   Versions: 2 added the sample budget (then carried in iteration and clock of INIT and
 *   STATE_SET, and the wait in a PARAMS reply's lr, in a 64-byte header); 3 gives them their own
 *   fields. A frame of another version is refused before its size is looked at, so a peer of an
 *   older build is named as such (ps_wire_version_why), not as a frame of the wrong size.
 *
 * Decoding (ps_wire_decode) checks everything that a header alone can check: magic, version,
 * size, type, dtype allowed for the type, count/payload_len consistency. The server then
 * checks what needs its context (shard index, offset/count within its key range, sender). This
 * file does no I/O and knows nothing of sockets. */
#ifndef PSRING_PS_WIRE_H
#define PSRING_PS_WIRE_H
#include <stddef.h>
#include <stdint.h>

#define PS_WIRE_MAGIC 0x31525350u   /* "PSR1" little-endian */
#define PS_WIRE_VERSION 3   /* 3: wait_s, budget and step_samples fields; 2: the sample budget */
#define PS_HEADER_BYTES 88
#define PS_WIRE_MAX_COUNT (1ull << 40) /* elements; keeps count * 8 far from overflow */

typedef enum {
    PS_MSG_INIT = 1,      /* worker 0 -> server: initial params (f32), sets generation 1 */
    PS_MSG_PULL,          /* worker -> server: send me params of generation >= iteration */
    PS_MSG_PUSH,          /* worker -> server: gradient shard (f32|f16), lr in header */
    PS_MSG_PARAMS,        /* server -> worker: parameter shard (f32|f16) */
    PS_MSG_ACK,           /* server -> worker: INIT/STATE_SET applied */
    PS_MSG_HEARTBEAT,     /* either way: I am alive; bsp, worker -> server ahead of a push, with
                           * iteration = the round: my compute is done (the servers' wait) */
    PS_MSG_STATE_GET,     /* worker -> server: send params + optimizer state */
    PS_MSG_STATE,         /* server -> worker: params then state (f32) */
    PS_MSG_STATE_SET,     /* worker 0 -> server: params then state (f32), bumps generation */
    PS_MSG_AVG,           /* worker -> server 0: doubles to average over live workers */
    PS_MSG_AVG_REPLY,     /* server 0 -> worker: the means */
    PS_MSG_DONE,          /* worker -> server: training over, send your report */
    PS_MSG_STATS,         /* server -> worker: report (f64 fields, see ps_stats_index) */
    PS_MSG_BYE,           /* worker -> server: leaving (after the last AVG) */
    PS_MSG_TYPE_MAX
} ps_msg_type_t;

/* header flags (what each means depends on the type) */
#define PS_FLAG_F16 1u       /* PULL, DONE: answer parameters as half */
#define PS_FLAG_SHARE 2u     /* PULL, PUSH: give me a share of the sample budget for my next step */
#define PS_FLAG_TAIL 4u      /* PARAMS from server 0: the share is the budget's remainder */
#define PS_FLAG_STOP 8u      /* PARAMS from server 0: no share, the budget is spent */
#define PS_FLAG_STOPPED 16u  /* HEARTBEAT on the data connection: the sender pushes no more */

typedef enum { PS_DTYPE_NONE = 0, PS_DTYPE_F32 = 1, PS_DTYPE_F16 = 2, PS_DTYPE_F64 = 3, PS_DTYPE_MAX } ps_dtype_t;

typedef struct {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    int32_t sender;
    uint32_t shard;
    uint64_t iteration;
    uint64_t clock;        /* "version" field of the diagram (the parameters' global clock) */
    uint64_t offset;
    uint64_t count;
    uint16_t dtype;
    uint16_t flags;
    float lr;              /* PUSH: the learning rate */
    uint64_t payload_len;
    double wait_s;         /* bsp PARAMS: the recipient's wait for the round's last worker */
    uint64_t budget;       /* INIT, STATE_SET from worker 0: the sample budget (0: none) */
    uint64_t step_samples; /* INIT, STATE_SET from worker 0: the samples of a full step */
} ps_header_t;

typedef enum {
    PS_WIRE_OK = 0,
    PS_WIRE_ESIZE,        /* header frame is not PS_HEADER_BYTES */
    PS_WIRE_EMAGIC,
    PS_WIRE_EVERSION,
    PS_WIRE_ETYPE,
    PS_WIRE_EDTYPE,       /* unknown dtype, or not allowed for this type */
    PS_WIRE_ECOUNT,       /* count 0 for a data type, nonzero for a control type, or huge */
    PS_WIRE_ELENGTH,      /* payload_len != count * dtype size, or payload frame differs */
    PS_WIRE_ESHARD,       /* shard is not the receiving server's */
    PS_WIRE_ERANGE,       /* offset/count outside (or not covering) the key range */
    PS_WIRE_ESENDER,      /* sender out of range or not matching the connection */
    PS_WIRE_EFRAMES,      /* wrong number of frames */
    PS_WIRE_ESTATE,       /* valid message at the wrong time (e.g. second push in a round) */
    PS_WIRE_NERR
} ps_wire_err_t;

const char *ps_wire_strerror(int err);
/* for PS_WIRE_EVERSION: what the peer speaks and what this build speaks, as one clause
 * ("it speaks PS wire protocol version 2, this build version 3 (...)") written into buf */
const char *ps_wire_version_why(char *buf, size_t cap, const ps_header_t *h);
size_t ps_dtype_size(int dtype);   /* 0 for NONE or unknown */

/* header -> PS_HEADER_BYTES bytes */
void ps_wire_encode(const ps_header_t *h, uint8_t out[PS_HEADER_BYTES]);
/* bytes -> header; returns PS_WIRE_OK or the first problem found (h is filled as far as read;
 * magic and version are read from any frame of 6 bytes or more) */
int ps_wire_decode(const void *buf, size_t len, ps_header_t *h);
/* a header with magic/version set and payload_len derived from count and dtype */
ps_header_t ps_header_make(int type, int32_t sender, uint32_t shard, int dtype, uint64_t count);

/* Key-range sharding, ps-lite style: shard s of S gets [s*count/S, (s+1)*count/S), so shard
 * sizes differ by at most one element and the ranges are contiguous, disjoint and cover. */
void ps_shard_range(size_t count, int nshards, int s, size_t *lo, size_t *len);

/* bsp slicing (--ps-chunk-kb): a shard of len values travels in slices of ck values starting at
 * multiples of ck, the last one shorter. ps_slice_len: the slice at off; ps_slice_ok: a message's
 * (offset, count) is exactly one slice of the grid (what server and worker accept). */
static inline uint64_t ps_slice_len(uint64_t len, uint64_t ck, uint64_t off) { return len - off < ck ? len - off : ck; }
static inline int ps_slice_ok(uint64_t len, uint64_t ck, uint64_t off, uint64_t count) {
    return off % ck == 0 && off < len && count == ps_slice_len(len, ck, off);
}

#endif
