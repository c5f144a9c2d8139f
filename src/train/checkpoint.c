/* checkpoint.c: training state to disk and back (format in checkpoint.h).
 * Writes go to PATH.tmp.<pid>, are fsync'ed, renamed over PATH and the directory fsync'ed, so a
 * crash, a kill or ENOSPC at any point leaves either the old checkpoint or the new one, never a mix.
 * The reader trusts nothing: every length is checked against the file size before it is used. */
#include "checkpoint.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <libgen.h>
#include <sys/stat.h>
#include <zlib.h>
#include "model/optim.h"
#include "data/sampler.h"

#define CKPT_MAGIC "PSRCKPT1"
#define CKPT_VERSION 3u   /* 2 added the optimizer kind, 3 the data layout; older files still load */

/* a growable byte buffer: the whole checkpoint is assembled in memory, CRC'd, then written once */
typedef struct { unsigned char *p; size_t n, cap; } buf_t;

static int buf_put(buf_t *b, const void *src, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) return -1;
        b->p = q; b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
    return 0;
}

static int write_all(int fd, const unsigned char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; return -1; }
        p += w; n -= (size_t)w;
    }
    return 0;
}

int checkpoint_save(const char *path, const checkpoint_header_t *h, const float *params,
                    const float *state, char *err, size_t errlen) {
    buf_t b = {0};
    uint32_t version = CKPT_VERSION, nsizes = (uint32_t)h->nsizes;
    int ok = !buf_put(&b, CKPT_MAGIC, 8) && !buf_put(&b, &version, 4) && !buf_put(&b, &nsizes, 4);
    for (int i = 0; ok && i < h->nsizes; i++) { uint32_t s = (uint32_t)h->sizes[i]; ok = !buf_put(&b, &s, 4); }
    ok = ok && !buf_put(&b, &h->nparams, 8) && !buf_put(&b, &h->state_per_param, 4) &&
         !buf_put(&b, &h->step, 8) && !buf_put(&b, &h->epoch, 4) &&
         !buf_put(&b, &h->batch_in_epoch, 4) && !buf_put(&b, &h->seed, 8) &&
         !buf_put(&b, &h->optimizer, 4) &&
         !buf_put(&b, &h->sampler, 4) && !buf_put(&b, &h->workers, 4) && !buf_put(&b, &h->batch, 4) &&
         !buf_put(&b, &h->drop_last, 4) && !buf_put(&b, &h->train_count, 8) &&
         !buf_put(&b, params, h->nparams * sizeof(float)) &&
         !buf_put(&b, state, h->nparams * h->state_per_param * sizeof(float));
    uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
    /* zlib's crc32 takes uInt lengths: feed large buffers in pieces */
    for (size_t off = 0; ok && off < b.n;) {
        size_t n = b.n - off > (1u << 30) ? (1u << 30) : b.n - off;
        crc = (uint32_t)crc32(crc, b.p + off, (uInt)n);
        off += n;
    }
    ok = ok && !buf_put(&b, &crc, 4);
    if (!ok) { free(b.p); snprintf(err, errlen, "checkpoint %s: out of memory", path); return -1; }

    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "checkpoint %s: cannot create %s: %s", path, tmp, strerror(errno));
        free(b.p);
        return -1;
    }
    if (write_all(fd, b.p, b.n) != 0 || fsync(fd) != 0) {
        snprintf(err, errlen, "checkpoint %s: write failed: %s (previous checkpoint left intact)", path, strerror(errno));
        close(fd); unlink(tmp); free(b.p);
        return -1;
    }
    free(b.p);
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "checkpoint %s: cannot replace: %s (previous checkpoint left intact)", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    /* make the rename itself durable */
    char dirbuf[4200];
    snprintf(dirbuf, sizeof dirbuf, "%s", path);
    int dfd = open(dirname(dirbuf), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) { fsync(dfd); close(dfd); }
    return 0;
}

/* reads the whole file; the reader below walks it with bounds checks */
static unsigned char *read_file(const char *path, size_t *n, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, errlen, "checkpoint %s: %s", path, strerror(errno)); return NULL; }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "checkpoint %s: not a regular file", path);
        fclose(f);
        return NULL;
    }
    unsigned char *p = malloc((size_t)st.st_size + 1);
    if (!p) { snprintf(err, errlen, "checkpoint %s: out of memory", path); fclose(f); return NULL; }
    *n = fread(p, 1, (size_t)st.st_size, f);
    int bad = ferror(f) || *n != (size_t)st.st_size;
    fclose(f);
    if (bad) { snprintf(err, errlen, "checkpoint %s: read failed", path); free(p); return NULL; }
    return p;
}

/* the header read against what this run expects: 0, or -1 with a line in err */
static int header_check(const char *path, const checkpoint_header_t *h, const checkpoint_header_t *expect, char *err,
                        size_t errlen) {
    int same = h->nsizes == expect->nsizes;
    for (int i = 0; same && i < h->nsizes; i++) same = h->sizes[i] == expect->sizes[i];
    if (!same) {
        char got[256] = "", want[256] = "";
        for (int i = 0; i < h->nsizes; i++) snprintf(got + strlen(got), sizeof got - strlen(got), "%s%d", i ? "," : "", h->sizes[i]);
        for (int i = 0; i < expect->nsizes; i++) snprintf(want + strlen(want), sizeof want - strlen(want), "%s%d", i ? "," : "", expect->sizes[i]);
        snprintf(err, errlen, "checkpoint %s: model layers %s do not match --layers %s", path, got, want);
        return -1;
    }
    if (h->optimizer != expect->optimizer) {
        snprintf(err, errlen, "checkpoint %s: written with --optimizer %s, this run uses %s", path,
                 optim_kind_name((optim_kind_t)h->optimizer), optim_kind_name((optim_kind_t)expect->optimizer));
        return -1;
    }
    if (h->nparams != expect->nparams || h->state_per_param != expect->state_per_param) {
        snprintf(err, errlen, "checkpoint %s: %llu params x %u state floats, expected %llu x %u", path,
                 (unsigned long long)h->nparams, h->state_per_param,
                 (unsigned long long)expect->nparams, expect->state_per_param);
        return -1;
    }
    if (h->step < 0 || h->epoch < 0 || h->batch_in_epoch < 0) {
        snprintf(err, errlen, "checkpoint %s: negative step/epoch/batch", path);
        return -1;
    }
    return 0;
}

#define TAKE(dst, len) do { \
        if (off + (len) > body) { snprintf(err, errlen, "checkpoint %s: truncated (file ends inside the header)", path); goto fail; } \
        memcpy((dst), p + off, (len)); off += (len); } while (0)

/* The size a checkpoint of N bytes says it has, read from its header before the CRC is checked,
 * so a file cut short (a copy that stopped, a full disk) is called truncated rather than corrupted:
 * 0 when the header's values are too odd to tell (the CRC then decides), SIZE_MAX when the file
 * ends before the header says it. */
static size_t stated_size(const unsigned char *p, size_t n) {
    uint32_t version, nsizes, spp;
    uint64_t nparams;
    if (n < 16) return SIZE_MAX;
    memcpy(&version, p + 8, 4);
    memcpy(&nsizes, p + 12, 4);
    if (version < 1u || version > CKPT_VERSION || nsizes < 2 || nsizes > 32) return 0;
    size_t at = 16 + 4 * (size_t)nsizes;   /* nparams, then state_per_param */
    if (n < at + 12) return SIZE_MAX;
    memcpy(&nparams, p + at, 8);
    memcpy(&spp, p + at + 8, 4);
    if (nparams > ((uint64_t)1 << 40) || spp > 16) return 0;
    size_t header = at + 8 + 4 + 8 + 4 + 4 + 8 + (version >= 2 ? 4 : 0) + (version >= 3 ? 4 * 4 + 8 : 0);
    return header + (size_t)nparams * (1 + spp) * sizeof(float) + 4;
}

int checkpoint_load(const char *path, const checkpoint_header_t *expect, checkpoint_header_t *h,
                    float *params, float *state, char *err, size_t errlen) {
    size_t n = 0;
    unsigned char *p = read_file(path, &n, err, errlen);
    if (!p) return -1;
    if (n < 8 || memcmp(p, CKPT_MAGIC, 8) != 0) {
        snprintf(err, errlen, "checkpoint %s: not a psring checkpoint (bad magic)", path);
        goto fail;
    }
    size_t stated = stated_size(p, n);
    if (n < 8 + 4 + 4 + 4 || n < stated) {
        if (stated != SIZE_MAX && stated) snprintf(err, errlen, "checkpoint %s: truncated: %zu bytes, its header says %zu", path, n, stated);
        else snprintf(err, errlen, "checkpoint %s: truncated: %zu bytes, shorter than a checkpoint's header", path, n);
        goto fail;
    }
    size_t body = n - 4, off = 8;
    uint32_t stored_crc;
    memcpy(&stored_crc, p + body, 4);
    uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
    for (size_t o = 0; o < body;) {
        size_t k = body - o > (1u << 30) ? (1u << 30) : body - o;
        crc = (uint32_t)crc32(crc, p + o, (uInt)k);
        o += k;
    }
    if (crc != stored_crc) {
        snprintf(err, errlen, "checkpoint %s: CRC mismatch (file corrupted: stored %08x, computed %08x)", path, stored_crc, crc);
        goto fail;
    }
    uint32_t version, nsizes;
    TAKE(&version, 4);
    if (version < 1u || version > CKPT_VERSION) {
        snprintf(err, errlen, "checkpoint %s: version %u, this psring reads version %u", path, version, CKPT_VERSION);
        goto fail;
    }
    TAKE(&nsizes, 4);
    if (nsizes < 2 || nsizes > 32) { snprintf(err, errlen, "checkpoint %s: bad layer count %u", path, nsizes); goto fail; }
    memset(h, 0, sizeof *h);
    h->nsizes = (int)nsizes;
    for (uint32_t i = 0; i < nsizes; i++) { uint32_t s; TAKE(&s, 4); h->sizes[i] = (int)s; }
    TAKE(&h->nparams, 8);
    TAKE(&h->state_per_param, 4);
    TAKE(&h->step, 8);
    TAKE(&h->epoch, 4);
    TAKE(&h->batch_in_epoch, 4);
    TAKE(&h->seed, 8);
    h->optimizer = 0;
    if (version >= 2) TAKE(&h->optimizer, 4);
    if (version >= 3) {
        TAKE(&h->sampler, 4); TAKE(&h->workers, 4); TAKE(&h->batch, 4); TAKE(&h->drop_last, 4);
        TAKE(&h->train_count, 8);
        h->has_layout = 1;
    }
    if (header_check(path, h, expect, err, errlen) != 0) goto fail;
    size_t want = (size_t)h->nparams * (1 + h->state_per_param) * sizeof(float);
    if (body - off != want) {
        snprintf(err, errlen, "checkpoint %s: %zu bytes of tensors, expected %zu", path, body - off, want);
        goto fail;
    }
    memcpy(params, p + off, h->nparams * sizeof(float));
    off += h->nparams * sizeof(float);
    memcpy(state, p + off, h->nparams * h->state_per_param * sizeof(float));
    free(p);
    return 0;
fail:
    free(p);
    return -1;
}

int checkpoint_layout_mismatch(const char *path, const checkpoint_header_t *h, const checkpoint_header_t *now,
                               char *err, size_t errlen) {
    if (!h->has_layout || h->batch_in_epoch == 0) return 0;
    char diff[512] = "";
#define LAYOUT_FIELD(name, field, fmt, cast)                                                         \
    if (h->field != now->field)                                                                      \
        snprintf(diff + strlen(diff), sizeof diff - strlen(diff), "%s" name " " fmt " (now " fmt ")", \
                 diff[0] ? ", " : "", (cast)h->field, (cast)now->field);
    LAYOUT_FIELD("workers", workers, "%u", unsigned)
    LAYOUT_FIELD("batch per worker", batch, "%u", unsigned)
    if (h->sampler != now->sampler)
        snprintf(diff + strlen(diff), sizeof diff - strlen(diff), "%s--sampler %s (now %s)", diff[0] ? ", " : "",
                 sampler_kind_name((sampler_kind_t)h->sampler), sampler_kind_name((sampler_kind_t)now->sampler));
    LAYOUT_FIELD("drop_last", drop_last, "%u", unsigned)
    LAYOUT_FIELD("training samples", train_count, "%llu", unsigned long long)
#undef LAYOUT_FIELD
    if (!diff[0]) return 0;
    snprintf(err, errlen, "checkpoint %s: stopped in the middle of epoch %d (batch %d) with a different data layout: %s; "
             "resume with the same layout, or from an end-of-epoch checkpoint", path, h->epoch + 1, h->batch_in_epoch, diff);
    return -1;
}
