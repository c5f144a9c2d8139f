/* idx.c: IDX reader for MNIST-format images (magic 0x00000803) and labels (0x00000801), plain or
 * gzipped (zlib's gzread passes plain files through unchanged, so one code path reads both).
 * Every problem a truncated, padded, corrupt or hostile file can have becomes one "PATH: problem"
 * string; nothing here prints or exits, the caller decides. "Length" means the decompressed IDX
 * content: bytes after a complete gzip member that are not another member are skipped by zlib
 * (as `gzip -d` does, with a warning), so they cannot be reported here.
 * It does not shuffle, shard or batch (sampler.c, batch.c), and it does not download (see
 * experiments/get-mnist). */
#include "idx.h"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>

#define IDX_MAGIC_IMAGES 0x00000803u   /* type 0x08 (unsigned byte), 3 dimensions */
#define IDX_MAGIC_LABELS 0x00000801u   /* type 0x08 (unsigned byte), 1 dimension */
#define IDX_MAX_SIDE 1024
/* A header promises a size; grow towards it as bytes arrive rather than trusting it up front,
 * so a forged count of 2^31 images costs a "truncated" error, not a 2 TB malloc. */
#ifndef IDX_GZBUFFER      /* fuzz/local.mk: 8 KB, zlib's default (ASan mmaps every block >= 128 KB) */
#define IDX_GZBUFFER (1u << 17)
#endif
#ifndef IDX_FIRST_ALLOC   /* fuzz/local.mk builds with 64 KB: ASan makes each 64 MB malloc cost 14 ms */
#define IDX_FIRST_ALLOC ((size_t)64 << 20)
#endif

static void seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* gzopen's failure leaves errno set for I/O errors and 0 for zlib's own (out of memory) */
static gzFile idx_open(const char *path, char *err, size_t errlen) {
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) seterr(err, errlen, "%s: cannot open: %s", path, errno ? strerror(errno) : "zlib out of memory");
    else gzbuffer(f, IDX_GZBUFFER);   /* fewer read() calls than the 8 KB default; set before the first read */
    return f;
}

/* gzerror's text already starts with "PATH: "; keep only the part after it */
static const char *zlib_reason(const char *zmsg, const char *path) {
    size_t n = strlen(path);
    if (strncmp(zmsg, path, n) == 0 && zmsg[n] == ':' && zmsg[n + 1] == ' ') return zmsg + n + 2;
    return zmsg;
}

/* Reads up to n bytes into buf, stopping early only at end of data; *got says how many arrived.
 * A zlib or I/O error returns -1 with err set: a corrupt gzip stream also ends early, and its cause
 * is the more useful message, so callers check this before calling a short read "truncated". */
static int idx_read_some(gzFile f, const char *path, void *buf, size_t n, size_t *got,
                         char *err, size_t errlen) {
    *got = 0;
    while (*got < n) {
        size_t want = n - *got;
        if (want > (1u << 30)) want = 1u << 30;   /* gzread takes an unsigned and returns an int */
        int r = gzread(f, (char *)buf + *got, (unsigned)want);
        if (r <= 0) break;
        *got += (size_t)r;
    }
    int zerr = Z_OK;
    const char *zmsg = gzerror(f, &zerr);
    if (zerr == Z_ERRNO) {
        seterr(err, errlen, "%s: read error: %s", path, strerror(errno));
        return -1;
    }
    if (zerr != Z_OK) {
        seterr(err, errlen, "%s: gzip decompression failed: %s", path, zlib_reason(zmsg, path));
        return -1;
    }
    return 0;
}

/* Reads the declared payload (growing the buffer as data arrives) and then insists on EOF.
 * Byte counts in messages are of the decompressed IDX content, header included. */
static int idx_read_payload(gzFile f, const char *path, size_t n, size_t header_bytes, uint8_t **out,
                            char *err, size_t errlen) {
    size_t cap = n < IDX_FIRST_ALLOC ? n : IDX_FIRST_ALLOC;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        seterr(err, errlen, "%s: out of memory allocating %zu bytes", path, cap);
        return -1;
    }
    size_t have = 0;
    while (have < n) {
        if (have == cap) {
            size_t ncap = cap * 2 < n ? cap * 2 : n;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                seterr(err, errlen, "%s: out of memory allocating %zu bytes", path, ncap);
                return -1;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got;
        if (idx_read_some(f, path, buf + have, cap - have, &got, err, errlen) != 0) goto fail;
        have += got;
        if (have < cap) {
            seterr(err, errlen, "%s: truncated: header promises %zu bytes, file has %zu", path,
                   header_bytes + n, header_bytes + have);
            goto fail;
        }
    }
    /* one byte past the promised end is garbage; count up to one chunk of it for the message
     * (reading a hostile multi-GB tail to the end just to count it would be wasted time) */
    unsigned char extra[4096];
    size_t more;
    if (idx_read_some(f, path, extra, sizeof extra, &more, err, errlen) != 0) goto fail;
    if (more) {
        seterr(err, errlen, "%s: %s%zu trailing bytes after the %zu the header promises", path,
               more == sizeof extra ? "at least " : "", more, header_bytes + n);
        goto fail;
    }
    *out = buf;
    return 0;
fail:
    free(buf);
    return -1;
}

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* opens path and reads and checks the magic plus ndims big-endian dimensions */
static gzFile idx_header(const char *path, uint32_t magic, const char *kind, int ndims, uint32_t *dims,
                         char *err, size_t errlen) {
    gzFile f = idx_open(path, err, errlen);
    if (!f) return NULL;
    /* magic first, on its own: a labels file passed as images should say "bad magic", not "short" */
    unsigned char hdr[16];
    size_t hbytes = 4 + 4 * (size_t)ndims, got;
    if (idx_read_some(f, path, hdr, 4, &got, err, errlen) != 0) goto fail;
    if (got == 4 && be32(hdr) != magic) {
        seterr(err, errlen, "%s: bad magic 0x%08x, expected 0x%08x (IDX %s)", path, be32(hdr), magic, kind);
        goto fail;
    }
    if (got == 4) {
        if (idx_read_some(f, path, hdr + 4, hbytes - 4, &got, err, errlen) != 0) goto fail;
        got += 4;
    }
    if (got < hbytes) {
        seterr(err, errlen, "%s: truncated: %zu bytes, shorter than the %zu-byte IDX %s header", path,
               got, hbytes, kind);
        goto fail;
    }
    for (int i = 0; i < ndims; i++) dims[i] = be32(hdr + 4 + 4 * i);
    if (dims[0] < 1 || dims[0] > INT_MAX) {
        seterr(err, errlen, "%s: bad count %u, expected 1..%d", path, dims[0], INT_MAX);
        goto fail;
    }
    static const char *side[] = {"count", "rows", "cols"};
    for (int i = 1; i < ndims; i++) {
        if (dims[i] < 1 || dims[i] > IDX_MAX_SIDE) {
            seterr(err, errlen, "%s: bad %s %u, expected 1..%d", path, side[i], dims[i], IDX_MAX_SIDE);
            goto fail;
        }
    }
    return f;
fail:
    gzclose(f);
    return NULL;
}

int idx_read_images(const char *path, uint8_t **pixels, int *count, int *rows, int *cols,
                    char *err, size_t errlen) {
    uint32_t d[3];
    gzFile f = idx_header(path, IDX_MAGIC_IMAGES, "images", 3, d, err, errlen);
    if (!f) return -1;
    size_t n = (size_t)d[0] * d[1] * d[2];   /* < 2^31 * 2^20: fits a 64-bit size_t */
    uint8_t *buf = NULL;
    int rc = idx_read_payload(f, path, n, 16, &buf, err, errlen);
    gzclose(f);
    if (rc != 0) return -1;
    *pixels = buf;
    *count = (int)d[0];
    *rows = (int)d[1];
    *cols = (int)d[2];
    return 0;
}

int idx_read_labels(const char *path, uint8_t **labels, int *count, char *err, size_t errlen) {
    uint32_t d[1];
    gzFile f = idx_header(path, IDX_MAGIC_LABELS, "labels", 1, d, err, errlen);
    if (!f) return -1;
    uint8_t *buf = NULL;
    int rc = idx_read_payload(f, path, d[0], 8, &buf, err, errlen);
    gzclose(f);
    if (rc != 0) return -1;
    *labels = buf;
    *count = (int)d[0];
    return 0;
}

/* DIR/NAME if it exists, else DIR/NAME.gz; the plain file wins so an unpacked copy is used as is */
static int idx_find(char *path, size_t pathlen, const char *dir, const char *name, char *err, size_t errlen) {
    struct stat st;
    const char *sfx[] = {"", ".gz"};
    for (int i = 0; i < 2; i++) {
        int len = snprintf(path, pathlen, "%s/%s%s", dir, name, sfx[i]);
        if (len < 0 || (size_t)len >= pathlen) {
            seterr(err, errlen, "%s: path too long", dir);
            return -1;
        }
        if (stat(path, &st) == 0) {
            if (!S_ISREG(st.st_mode)) {
                seterr(err, errlen, "%s: not a regular file", path);
                return -1;
            }
            return 0;
        }
        if (errno != ENOENT) {
            seterr(err, errlen, "%s: %s", path, strerror(errno));
            return -1;
        }
    }
    seterr(err, errlen, "no %s[.gz] in %s", name, dir);
    return -1;
}

/* Training reads the pixels in random rows from a block far larger than the caches, so most rows
 * of a batch also miss the TLB; on 2 MB pages those page walks mostly go away
 * (docs/results/lab-notes-src.md, section "src/data/idx.c: the pixels on 2 MB pages"). Linux
 * backs memory with huge pages only where madvise asks for it (THP "madvise", Debian's default),
 * and only when it is asked before the pages are first touched, hence a fresh block. The advice is best effort: where it is refused,
 * ordinary pages hold the same bytes, so its result is deliberately not checked. */
static uint8_t *pixels_alloc(size_t n) {
#ifdef MADV_HUGEPAGE
    const size_t huge = (size_t)2 << 20;
    if (n >= huge) {
        size_t bytes = (n + huge - 1) & ~(huge - 1);
        uint8_t *p = aligned_alloc(huge, bytes);
        if (p) {
            (void)madvise(p, bytes, MADV_HUGEPAGE);
            return p;
        }
    }
#endif
    return malloc(n ? n : 1);
}

int dataset_load(dataset_t *ds, const char *dir, const char *split, int limit, char *err, size_t errlen) {
    memset(ds, 0, sizeof *ds);
    if (!split || (strcmp(split, "train") != 0 && strcmp(split, "t10k") != 0)) {
        seterr(err, errlen, "bad split '%s', expected train or t10k", split ? split : "(null)");
        return -1;
    }
    struct stat st;
    if (stat(dir, &st) != 0) {
        seterr(err, errlen, "%s: MNIST directory: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        seterr(err, errlen, "%s: MNIST directory: not a directory", dir);
        return -1;
    }
    char ipath[4096], lpath[4096], name[64];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", split);
    if (idx_find(ipath, sizeof ipath, dir, name, err, errlen) != 0) return -1;
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", split);
    if (idx_find(lpath, sizeof lpath, dir, name, err, errlen) != 0) return -1;

    uint8_t *pix = NULL, *lab = NULL;
    int icount, rows, cols, lcount;
    if (idx_read_images(ipath, &pix, &icount, &rows, &cols, err, errlen) != 0) return -1;
    if (idx_read_labels(lpath, &lab, &lcount, err, errlen) != 0) {
        free(pix);
        return -1;
    }
    if (lcount != icount) {
        seterr(err, errlen, "%s: %d labels, but %s has %d images", lpath, lcount, ipath, icount);
        goto fail;
    }
    for (int i = 0; i < lcount; i++) {
        if (lab[i] > 9) {
            seterr(err, errlen, "%s: label %u at index %d, expected 0..9", lpath, lab[i], i);
            goto fail;
        }
    }
    int count = (limit > 0 && limit < icount) ? limit : icount;
    size_t dim = (size_t)rows * cols;
    uint8_t *img = pixels_alloc((size_t)count * dim);
    if (!img) {
        seterr(err, errlen, "%s: out of memory for %d x %zu pixels", ipath, count, dim);
        goto fail;
    }
    memcpy(img, pix, (size_t)count * dim);
    free(pix);
    if (count < lcount) {
        uint8_t *shrunk = realloc(lab, (size_t)count);
        if (shrunk) lab = shrunk;   /* keeping the larger block is harmless */
    }
    ds->count = count;
    ds->rows = rows;
    ds->cols = cols;
    ds->dim = (int)dim;
    ds->pixels = img;
    ds->labels = lab;
    return 0;
fail:
    free(pix);
    free(lab);
    return -1;
}

void dataset_free(dataset_t *ds) {
    if (!ds) return;
    free(ds->pixels);
    free(ds->labels);
    memset(ds, 0, sizeof *ds);
}
