/* opttab.h: command-line flags described once, as rows of a table, so that parsing, the --help
 * text and the fingerprint of what every rank must agree on all read the same row. A program (the
 * trainer) and each topology (src/ring, src/ps, ...) own one table over their own struct; the
 * program merges them into one getopt_long array. Rows only describe: a row's kind says how its
 * value is checked and stored, its offset where. Cross-flag rules ("--autotune needs --overlap")
 * stay in code next to the owner of the flags.
 *
 *   { "batch", OPTTAB_INT, offsetof(options_t, batch), sizeof(int), 1, 1 << 20, NULL, NULL,
 *     "must be an integer in 1..1048576", OPTTAB_AGREE, "--batch B", "batch per worker ..." }
 *
 * It does not know getopt's state or print anything itself except opttab_usage. */
#ifndef PSRING_OPTTAB_H
#define PSRING_OPTTAB_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
    OPTTAB_FLAG,     /* no value: the int target becomes 1 */
    OPTTAB_INT,      /* int in [lo, hi] */
    OPTTAB_LONG,     /* long in [lo, hi] */
    OPTTAB_FLOAT,    /* float in [lo, hi] (open bounds: see parse_float) */
    OPTTAB_U64,      /* uint64_t, any non-negative integer */
    OPTTAB_STRING,   /* char[size], not empty */
    OPTTAB_PATH,     /* char[size], an output or input path (parse_path: not empty, not "-...") */
    OPTTAB_CHOICE,   /* int: the index of the value in words (NULL-terminated) */
    OPTTAB_CUSTOM,   /* the row's parse function */
} opttab_kind_t;

/* what the fingerprint (every rank must agree) takes of a row */
typedef enum {
    OPTTAB_PER_RANK = 0,   /* nothing: paths, logging, per-host addresses */
    OPTTAB_AGREE,          /* the value */
    OPTTAB_AGREE_SET,      /* only whether it is set (non-zero, non-empty) */
} opttab_agree_t;

typedef struct opttab_row {
    const char *flag;            /* long name without "--" */
    opttab_kind_t kind;
    size_t offset, size;         /* the target field in the table's struct */
    double lo, hi;               /* INT, LONG, FLOAT bounds */
    const char *const *words;    /* CHOICE */
    /* CUSTOM: 0, or -1 (the row's bad message is used) */
    int (*parse)(const char *arg, void *target);
    const char *bad;             /* after "--flag ": "must be ..." (then ": got 'X'") for values;
                                  * STRING: the whole complaint ("needs a file path") */
    opttab_agree_t agree;
    const char *usage;           /* --help's left column ("--batch B"); NULL: not listed */
    const char *help;            /* --help's text; '\n' starts an indented continuation line */
    const char *section;         /* a heading printed before this row, or NULL */
} opttab_row_t;

typedef struct {
    const opttab_row_t *rows;
    size_t n;
} opttab_t;

/* Stores arg (NULL for FLAG) into base per row. 0, or -1 with one line in err naming the flag and
 * the value. */
int opttab_set(const opttab_row_t *row, void *base, const char *arg, char *err, size_t errlen);
/* the row of flag in t, or NULL */
const opttab_row_t *opttab_find(const opttab_t *t, const char *flag);
/* --help lines of every listed row: "  %-25s  %s", continuation lines indented to the text */
void opttab_usage(const opttab_t *t, FILE *f);
/* FNV-1a of every OPTTAB_AGREE / OPTTAB_AGREE_SET row's value in base, continuing from h */
uint64_t opttab_fingerprint(const opttab_t *t, const void *base, uint64_t h);
/* "a, b or c" of a CHOICE's words into out */
void opttab_words(const char *const *words, char *out, size_t outlen);

#endif
