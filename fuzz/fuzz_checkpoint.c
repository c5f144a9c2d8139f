/* fuzz_checkpoint.c: libFuzzer harness for checkpoint_load (src/train/checkpoint.c).
 * A CRC32 guards every checkpoint, so random bytes rarely get past it; when the first input byte
 * is odd the harness patches a correct CRC into the last four bytes first, which lets the fuzzer
 * reach the header, layer, length and tensor checks behind it. The expected model is small
 * (4-3-2, 23 parameters, one state float each) so a valid file is 148 bytes.
 * Invariants: success only for a file whose layers and sizes match exactly; the caller's buffers
 * (with guard canaries) are never written past their end. */
#include "fuzz_util.h"
#include "train/checkpoint.h"
#include <string.h>
#include <zlib.h>

#define NPARAMS 23
#define GUARD 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int fix_crc = data[0] & 1;
    data++; size--;
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    if (fix_crc && size >= 4) {
        uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, (uInt)(size - 4));
        memcpy(buf + size - 4, &crc, 4);
    }
    const char *path = fuzz_memfile(buf, size);
    free(buf);

    checkpoint_header_t want = {0}, got;
    want.nsizes = 3;
    want.sizes[0] = 4; want.sizes[1] = 3; want.sizes[2] = 2;
    want.nparams = NPARAMS;
    want.state_per_param = 1;
    float params[NPARAMS + GUARD], state[NPARAMS + GUARD];
    for (int i = 0; i < NPARAMS + GUARD; i++) params[i] = state[i] = -7.0f;
    char err[512] = "";
    int rc = checkpoint_load(path, &want, &got, params, state, err, sizeof err);
    for (int i = NPARAMS; i < NPARAMS + GUARD; i++)
        if (params[i] != -7.0f || state[i] != -7.0f) abort();   /* wrote past the buffers */
    if (rc == 0) {
        if (got.nsizes != 3 || got.nparams != NPARAMS || got.state_per_param != 1 || got.step < 0 ||
            got.epoch < 0 || got.batch_in_epoch < 0)
            abort();
    } else if (!err[0] || !strstr(err, path)) {
        abort();
    }
    return 0;
}
