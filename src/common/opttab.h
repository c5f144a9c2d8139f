/* opttab.h: command-line flags described once, as rows of a table, so that parsing, the --help
 * text and the fingerprint of what every rank must agree on all read the same row. A program (the
 * trainer) and each topology (src/ring, src/ps, ...) own one table over their own struct; the
 * program merges them into one getopt_long array. Rows only describe: a row's kind says how its
 * value is checked and stored, its offset where. Cross-flag rules ("--autotune needs --overlap")
 * stay in code next to the owner of the flags.
 *
 *   OPT_SECTION("Optimisation"),
 *   OPT_INT("batch", AT(batch), 1, 1 << 20, "must be an integer in 1..1048576", OPT_AGREE, "--batch B", "..."),
 *
 * (AT(field) being the owner's "offsetof(its_struct, field), sizeof(field)"). A table is data:
 * one row a line, however long, so that rows read down as a table.
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
    OPTTAB_SECTION,  /* no flag: a heading of --help before the rows that follow */
} opttab_kind_t;

/* what the fingerprint (every rank must agree) takes of a row */
typedef enum {
    OPT_PER_RANK = 0,   /* nothing: paths, logging, per-host addresses */
    OPT_AGREE,          /* the value */
    OPT_AGREE_SET,      /* only whether it is set (non-zero, non-empty) */
} opttab_agree_t;

typedef struct opttab_row {
    const char *flag;            /* long name without "--"; NULL for a section */
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
    const char *help;            /* --help's text; '\n' starts an indented continuation line;
                                  * OPTTAB_SECTION: the heading */
} opttab_row_t;

/* the rows, by kind: at = the target's offset and size; usage NULL = not listed in --help */
#define OPT_SECTION(heading) { NULL, OPTTAB_SECTION, 0, 0, 0, 0, NULL, NULL, NULL, OPT_PER_RANK, NULL, heading }
#define OPT_FLAG(flag, at, agree, usage, help) { flag, OPTTAB_FLAG, at, 0, 0, NULL, NULL, NULL, agree, usage, help }
#define OPT_INT(flag, at, lo, hi, bad, agree, usage, help) { flag, OPTTAB_INT, at, lo, hi, NULL, NULL, bad, agree, usage, help }
#define OPT_LONG(flag, at, lo, hi, bad, agree, usage, help) { flag, OPTTAB_LONG, at, lo, hi, NULL, NULL, bad, agree, usage, help }
#define OPT_FLOAT(flag, at, lo, hi, bad, agree, usage, help) { flag, OPTTAB_FLOAT, at, lo, hi, NULL, NULL, bad, agree, usage, help }
#define OPT_U64(flag, at, bad, agree, usage, help) { flag, OPTTAB_U64, at, 0, 0, NULL, NULL, bad, agree, usage, help }
#define OPT_STRING(flag, at, bad, agree, usage, help) { flag, OPTTAB_STRING, at, 0, 0, NULL, NULL, bad, agree, usage, help }
#define OPT_PATH(flag, at, agree, usage, help) { flag, OPTTAB_PATH, at, 0, 0, NULL, NULL, NULL, agree, usage, help }
#define OPT_CHOICE(flag, at, words, agree, usage, help) { flag, OPTTAB_CHOICE, at, 0, 0, words, NULL, NULL, agree, usage, help }
#define OPT_CUSTOM(flag, at, parse, bad, agree, usage, help) { flag, OPTTAB_CUSTOM, at, 0, 0, NULL, parse, bad, agree, usage, help }

typedef struct {
    const opttab_row_t *rows;
    size_t n;
} opttab_t;

/* Stores arg (NULL for FLAG) into base per row. 0, or -1 with one line in err naming the flag and
 * the value. */
int opttab_set(const opttab_row_t *row, void *base, const char *arg, char *err, size_t errlen);
/* the row of flag in t, or NULL */
const opttab_row_t *opttab_find(const opttab_t *t, const char *flag);
/* --help lines of every listed row: "  %-25s  %s", continuation lines indented to the text;
 * a section's heading alone */
void opttab_usage(const opttab_t *t, FILE *f);
/* FNV-1a of every OPT_AGREE / OPT_AGREE_SET row's value in base, continuing from h */
uint64_t opttab_fingerprint(const opttab_t *t, const void *base, uint64_t h);
/* "a, b or c" of a CHOICE's words into out */
void opttab_words(const char *const *words, char *out, size_t outlen);

#endif
