/* fuzz_idx.c: libFuzzer harness for the IDX reader (src/data/idx.c), plain and gzipped. Each
 * input is read both as an images file and as a labels file (the magic decides which one gets
 * past the header). Invariants checked beyond "no crash, no sanitizer report": success means a
 * buffer of exactly count*rows*cols (count) bytes with sane dimensions, failure means a one-line
 * message naming the file and nothing allocated. Not fuzzed here: dataset_load's directory
 * lookup (plain file system code). */
#include "fuzz_util.h"
#include "data/idx.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_memfile(data, size);
    char err[512];
    uint8_t *pix = NULL;
    int count = -1, rows = -1, cols = -1;
    err[0] = 0;
    if (idx_read_images(path, &pix, &count, &rows, &cols, err, sizeof err) == 0) {
        if (!pix || count < 1 || rows < 1 || rows > 1024 || cols < 1 || cols > 1024) abort();
        /* touch the first and last byte: ASan catches a buffer shorter than promised */
        volatile uint8_t s = pix[0] ^ pix[(size_t)count * rows * cols - 1];
        (void)s;
        free(pix);
    } else if (!err[0] || !strstr(err, path) || memchr(err, '\n', strlen(err))) {
        abort();   /* every failure names the file in one line */
    }
    uint8_t *lab = NULL;
    err[0] = 0;
    if (idx_read_labels(path, &lab, &count, err, sizeof err) == 0) {
        if (!lab || count < 1) abort();
        volatile uint8_t s = lab[0] ^ lab[count - 1];
        (void)s;
        free(lab);
    } else if (!err[0] || !strstr(err, path)) {
        abort();
    }
    return 0;
}
