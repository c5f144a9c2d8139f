/* fuzz_wire.c: libFuzzer harness for the parameter server's wire decoder (src/ps/wire.c), the
 * first thing every byte from the network meets. Invariants: a header that decodes is consistent
 * (payload_len == count * dtype size, count and offset bounded, known type and dtype) and
 * survives encode -> decode unchanged; any input longer than a header is also run through the
 * fp16 codec (src/common/half.c), where half -> float -> half must be the identity (a NaN made
 * quiet) and the F16C and portable paths must agree bit for bit, NaNs included. Not here: the
 * server's stateful checks (sender, shard, range; see tests/ps_hostile.sh, which sends hostile
 * messages to a live server). */
#include "ps/wire.h"
#include "common/half.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ps_header_t h, h2;
    size_t hlen = size < PS_HEADER_BYTES ? size : PS_HEADER_BYTES;
    /* the exact size first (the only one that can pass), then the input as given; a frame of
     * another size fails on its size unless its magic or version is wrong first */
    int err = ps_wire_decode(data, hlen, &h);
    if (hlen != PS_HEADER_BYTES && err != PS_WIRE_ESIZE && err != PS_WIRE_EMAGIC && err != PS_WIRE_EVERSION) abort();
    if (size != hlen && ps_wire_decode(data, size, &h2) != (err == PS_WIRE_EMAGIC || err == PS_WIRE_EVERSION ? err : PS_WIRE_ESIZE)) abort();
    if (err < 0 || err >= PS_WIRE_NERR || !ps_wire_strerror(err)[0]) abort();
    if (err == PS_WIRE_OK) {
        if (h.type == 0 || h.type >= PS_MSG_TYPE_MAX || h.dtype >= PS_DTYPE_MAX) abort();
        if (h.payload_len != h.count * ps_dtype_size(h.dtype)) abort();
        if (h.count > PS_WIRE_MAX_COUNT || h.offset > PS_WIRE_MAX_COUNT) abort();
        if ((h.dtype == PS_DTYPE_NONE) != (h.count == 0)) abort();
        uint8_t out[PS_HEADER_BYTES];
        ps_wire_encode(&h, out);
        if (memcmp(out, data, PS_HEADER_BYTES) != 0) abort();   /* every field round-trips */
        if (ps_wire_decode(out, sizeof out, &h2) != PS_WIRE_OK || memcmp(&h, &h2, sizeof h) != 0) abort();
    }
    /* fp16 on the rest of the input */
    if (size > PS_HEADER_BYTES + 1) {
        size_t n = (size - PS_HEADER_BYTES) / 2;
        uint16_t *hv = malloc(n * 2), *back = malloc(n * 2), *back1 = malloc(n * 2);
        float *f = malloc(n * 4), *g = malloc(n * 4);
        memcpy(hv, data + PS_HEADER_BYTES, n * 2);
        half_to_float(f, hv, n);             /* F16C where the CPU has it */
        half_to_float_portable(g, hv, n);
        half_from_float(back, f, n);
        half_from_float_portable(back1, g, n);
        for (size_t i = 0; i < n; i++) {
            float s = half_to_float1(hv[i]);
            if (memcmp(&s, &f[i], 4) != 0 || memcmp(&s, &g[i], 4) != 0) abort(); /* vector == scalar, NaNs too */
            /* exact round trip; a NaN comes back with its payload, made quiet */
            uint16_t want = isnan(s) ? (uint16_t)(hv[i] | 0x200u) : hv[i];
            if (back[i] != want || back1[i] != want || half_from_float1(s) != want) abort();
        }
        /* the same bytes read as floats: vector == portable for any float, NaN payloads included */
        size_t m = (size - PS_HEADER_BYTES) / 4;
        memcpy(f, data + PS_HEADER_BYTES, m * 4);
        half_from_float(back, f, m);
        half_from_float_portable(back1, f, m);
        if (memcmp(back, back1, m * 2) != 0) abort();
        free(hv); free(back); free(back1); free(f); free(g);
    }
    return 0;
}
