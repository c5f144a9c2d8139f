/* opttab.c: one row of a flag table at a time (opttab.h): check and store a value, print the
 * --help lines, hash what must agree across ranks. */
#include "common/opttab.h"
#include "common/parse.h"
#include <limits.h>
#include <string.h>

static int got(const opttab_row_t *r, const char *arg, char *err, size_t errlen) {
    snprintf(err, errlen, "--%s %s: got '%s'", r->flag, r->bad ? r->bad : "has a bad value", arg ? arg : "");
    return -1;
}

static int set_string(const opttab_row_t *r, char *dst, const char *arg, char *err, size_t errlen) {
    if (r->kind == OPTTAB_PATH) {
        int rc = parse_path(arg, dst, r->size);
        if (rc == -1) { snprintf(err, errlen, "--%s needs a path: got '%s'", r->flag, arg); return -1; }
        if (rc == -2) { snprintf(err, errlen, "--%s path is too long", r->flag); return -1; }
        return 0;
    }
    if (!arg[0] || strlen(arg) >= r->size) { snprintf(err, errlen, "--%s %s", r->flag, r->bad); return -1; }
    strcpy(dst, arg);
    return 0;
}

static int set_choice(const opttab_row_t *r, int *dst, const char *arg, char *err, size_t errlen) {
    for (int i = 0; r->words[i]; i++)
        if (!strcmp(r->words[i], arg)) { *dst = i; return 0; }
    char w[256];
    opttab_words(r->words, w, sizeof w);
    snprintf(err, errlen, "--%s must be %s: got '%s'", r->flag, w, arg);
    return -1;
}

int opttab_set(const opttab_row_t *r, void *base, const char *arg, char *err, size_t errlen) {
    char *p = (char *)base + r->offset;
    long v;
    unsigned long long u;
    switch (r->kind) {
    case OPTTAB_FLAG: *(int *)p = 1; return 0;
    case OPTTAB_INT:
        if (parse_long(arg, (long)r->lo, (long)r->hi, &v)) return got(r, arg, err, errlen);
        *(int *)p = (int)v; return 0;
    case OPTTAB_LONG:
        if (parse_long(arg, (long)r->lo, (long)r->hi, &v)) return got(r, arg, err, errlen);
        *(long *)p = v; return 0;
    case OPTTAB_FLOAT:
        return parse_float(arg, r->lo, r->hi, (float *)p) ? got(r, arg, err, errlen) : 0;
    case OPTTAB_U64:
        if (parse_ull(arg, ULLONG_MAX, &u)) return got(r, arg, err, errlen);
        *(uint64_t *)p = u; return 0;
    case OPTTAB_STRING:
    case OPTTAB_PATH: return set_string(r, p, arg, err, errlen);
    case OPTTAB_CHOICE: return set_choice(r, (int *)p, arg, err, errlen);
    case OPTTAB_CUSTOM: return r->parse(arg, p) ? got(r, arg, err, errlen) : 0;
    case OPTTAB_SECTION: break;
    }
    return got(r, arg, err, errlen);
}

const opttab_row_t *opttab_find(const opttab_t *t, const char *flag) {
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].flag && !strcmp(t->rows[i].flag, flag)) return &t->rows[i];
    return NULL;
}

void opttab_usage(const opttab_t *t, FILE *f) {
    for (size_t i = 0; i < t->n; i++) {
        const opttab_row_t *r = &t->rows[i];
        if (r->kind == OPTTAB_SECTION) fprintf(f, "%s\n", r->help);
        if (!r->usage) continue;
        fprintf(f, "  %-25s  ", r->usage);
        for (const char *h = r->help; *h; h++) {
            fputc(*h, f);
            if (*h == '\n') fprintf(f, "%29s", "");
        }
        fputc('\n', f);
    }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001b3ull; }
    return h;
}

uint64_t opttab_fingerprint(const opttab_t *t, const void *base, uint64_t h) {
    for (size_t i = 0; i < t->n; i++) {
        const opttab_row_t *r = &t->rows[i];
        if (r->agree == OPT_PER_RANK) continue;
        const char *p = (const char *)base + r->offset;
        int text = r->kind == OPTTAB_STRING || r->kind == OPTTAB_PATH;
        size_t n = text ? strlen(p) : r->size;
        if (r->agree == OPT_AGREE) { h = fnv(h, p, n); continue; }
        unsigned char set = 0;
        for (size_t k = 0; k < n; k++) set |= (unsigned char)p[k];
        set = set != 0;
        h = fnv(h, &set, 1);
    }
    return h;
}

void opttab_words(const char *const *words, char *out, size_t outlen) {
    size_t n = 0;
    while (words[n]) n++;
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, outlen - len, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", words[i]);
    }
}
