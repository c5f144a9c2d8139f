/* wire.c: encode/decode of the PS header (see wire.h for the layout) and key-range sharding.
 * No I/O, no ZeroMQ: everything here is testable on plain bytes. f16 payloads are converted by
 * common/half.c, the one binary16 codec of src/. */
#include "wire.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *err_names[PS_WIRE_NERR] = {
    "ok", "header frame size is wrong", "bad magic", "unsupported protocol version",
    "unknown message type", "bad or disallowed dtype", "bad element count",
    "payload length mismatch", "shard is not this server's", "offset/count outside the key range",
    "bad sender", "wrong number of frames", "message not valid in this state",
};

const char *ps_wire_strerror(int err) {
    return (err >= 0 && err < PS_WIRE_NERR) ? err_names[err] : "unknown error";
}

const char *ps_wire_version_why(char *buf, size_t cap, const ps_header_t *h) {
    snprintf(buf, cap, "it speaks PS wire protocol version %u, this build version %u (every host must "
             "run the same psring build)", (unsigned)h->version, (unsigned)PS_WIRE_VERSION);
    return buf;
}

size_t ps_dtype_size(int dtype) {
    switch (dtype) {
    case PS_DTYPE_F32: return 4;
    case PS_DTYPE_F16: return 2;
    case PS_DTYPE_F64: return 8;
    default: return 0;
    }
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = v >> (8 * i); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = v >> (8 * i); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t get32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static uint64_t get64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

void ps_wire_encode(const ps_header_t *h, uint8_t out[PS_HEADER_BYTES]) {
    uint32_t lr_bits;
    uint64_t wait_bits;
    memcpy(&lr_bits, &h->lr, 4);
    memcpy(&wait_bits, &h->wait_s, 8);
    put32(out + 0, h->magic);
    put16(out + 4, h->version);
    put16(out + 6, h->type);
    put32(out + 8, (uint32_t)h->sender);
    put32(out + 12, h->shard);
    put64(out + 16, h->iteration);
    put64(out + 24, h->clock);
    put64(out + 32, h->offset);
    put64(out + 40, h->count);
    put16(out + 48, h->dtype);
    put16(out + 50, h->flags);
    put32(out + 52, lr_bits);
    put64(out + 56, h->payload_len);
    put64(out + 64, wait_bits);
    put64(out + 72, h->budget);
    put64(out + 80, h->step_samples);
}

/* which dtypes a message type may carry; NONE means "no payload at all" */
static int dtype_allowed(int type, int dtype) {
    switch (type) {
    case PS_MSG_PUSH: case PS_MSG_PARAMS:
        return dtype == PS_DTYPE_F32 || dtype == PS_DTYPE_F16;
    case PS_MSG_INIT: case PS_MSG_STATE: case PS_MSG_STATE_SET:
        return dtype == PS_DTYPE_F32;
    case PS_MSG_AVG: case PS_MSG_AVG_REPLY: case PS_MSG_STATS:
        return dtype == PS_DTYPE_F64;
    default:
        return dtype == PS_DTYPE_NONE;
    }
}

int ps_wire_decode(const void *buf, size_t len, ps_header_t *h) {
    memset(h, 0, sizeof *h);
    const uint8_t *p = buf;
    /* magic and version are checked first, whatever the size: an older build's header has
     * another size, and its peer is told it speaks another version */
    if (len < 6) return PS_WIRE_ESIZE;
    h->magic = get32(p + 0);
    h->version = get16(p + 4);
    if (len == PS_HEADER_BYTES) {
        uint32_t lr_bits;
        uint64_t wait_bits;
        h->type = get16(p + 6);
        h->sender = (int32_t)get32(p + 8);
        h->shard = get32(p + 12);
        h->iteration = get64(p + 16);
        h->clock = get64(p + 24);
        h->offset = get64(p + 32);
        h->count = get64(p + 40);
        h->dtype = get16(p + 48);
        h->flags = get16(p + 50);
        lr_bits = get32(p + 52);
        memcpy(&h->lr, &lr_bits, 4);
        h->payload_len = get64(p + 56);
        wait_bits = get64(p + 64);
        memcpy(&h->wait_s, &wait_bits, 8);
        h->budget = get64(p + 72);
        h->step_samples = get64(p + 80);
    }
    if (h->magic != PS_WIRE_MAGIC) return PS_WIRE_EMAGIC;
    if (h->version != PS_WIRE_VERSION) return PS_WIRE_EVERSION;
    if (len != PS_HEADER_BYTES) return PS_WIRE_ESIZE;
    if (h->type == 0 || h->type >= PS_MSG_TYPE_MAX) return PS_WIRE_ETYPE;
    if (h->dtype >= PS_DTYPE_MAX || !dtype_allowed(h->type, h->dtype)) return PS_WIRE_EDTYPE;
    if (h->dtype == PS_DTYPE_NONE) {
        if (h->count != 0 || h->offset != 0) return PS_WIRE_ECOUNT;
        if (h->payload_len != 0) return PS_WIRE_ELENGTH;
    } else {
        if (h->count == 0 || h->count > PS_WIRE_MAX_COUNT) return PS_WIRE_ECOUNT;
        if (h->offset > PS_WIRE_MAX_COUNT) return PS_WIRE_ERANGE;
        if (h->payload_len != h->count * ps_dtype_size(h->dtype)) return PS_WIRE_ELENGTH;
    }
    if (h->type == PS_MSG_PUSH && !(isfinite(h->lr) && h->lr >= 0)) return PS_WIRE_ERANGE;
    return PS_WIRE_OK;
}

ps_header_t ps_header_make(int type, int32_t sender, uint32_t shard, int dtype, uint64_t count) {
    ps_header_t h;
    memset(&h, 0, sizeof h);
    h.magic = PS_WIRE_MAGIC;
    h.version = PS_WIRE_VERSION;
    h.type = (uint16_t)type;
    h.sender = sender;
    h.shard = shard;
    h.dtype = (uint16_t)dtype;
    h.count = count;
    h.payload_len = count * ps_dtype_size(dtype);
    return h;
}

void ps_shard_range(size_t count, int nshards, int s, size_t *lo, size_t *len) {
    /* 128-bit products: count * S may not fit in 64 bits for absurd sizes */
    size_t a = (size_t)(((__uint128_t)count * (unsigned)s) / (unsigned)nshards);
    size_t b = (size_t)(((__uint128_t)count * (unsigned)(s + 1)) / (unsigned)nshards);
    *lo = a;
    *len = b - a;
}
