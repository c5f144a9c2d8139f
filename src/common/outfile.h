/* outfile.h: an output file written whole or not at all. It is written unnamed, in the folder of
 * the path it will have (O_TMPFILE), and given that path only by outfile_commit, after every
 * write, the flush and an fsync succeeded: a full disk, a read-only folder or a killed process
 * leaves the previous file, or none, never a truncated one. Where the file system has no unnamed
 * files it is written as PATH.tmp<pid> beside and renamed (a killed process may then leave that).
 * It does not append (an appended CSV row is metrics_append's one checked write) and prints
 * nothing: errors come back as one line, "PATH: reason", for the caller to prefix with its flag. */
#ifndef PSRING_OUTFILE_H
#define PSRING_OUTFILE_H
#include <stdio.h>

typedef struct {
    FILE *f;            /* write here */
    int named;          /* 1: the fallback, tmp exists under its name */
    char path[4096], tmp[4200];
} outfile_t;

/* opens the unnamed file that becomes PATH; 0, or -1 with err */
int outfile_open(outfile_t *o, const char *path, char *err, size_t errlen);
/* checks every write, fsyncs and puts the file in place of PATH; 0, or -1 with err and PATH as it
 * was. The outfile is closed either way. */
int outfile_commit(outfile_t *o, char *err, size_t errlen);
/* closes it without touching PATH (an error elsewhere) */
void outfile_abandon(outfile_t *o);

#endif
