/* accel_share.c: see accel_share.h. A move is one write of the TID to a file kept open. */
#include "accel_share.h"
#include "common/check.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* a group's file that moves one thread: `tasks` in cgroup v1, `cgroup.threads` in v2 (threaded) */
static int open_group(accel_share_t *a, int which, const char *dir, char *err, size_t errlen) {
    const char *names[] = {"tasks", "cgroup.threads"};
    for (int k = 0; k < 2; k++) {
        snprintf(a->file[which], sizeof a->file[which], "%s/%s", dir, names[k]);
        if (access(a->file[which], F_OK) == 0) break;
    }
    a->fd[which] = open(a->file[which], O_WRONLY | O_CLOEXEC);
    if (a->fd[which] >= 0) return 0;
    snprintf(err, errlen, "cannot enter the %s share %s: no tasks or cgroup.threads file to write there (%s)",
             which == ACCEL_SHARE_ACCEL ? "accelerator" : "host", dir, strerror(errno));
    return -1;
}

/* the calling thread onto share `which`; -1 with the line in err when the kernel refuses */
static int move_to(accel_share_t *a, int which, char *err, size_t errlen) {
    if (write(a->fd[which], a->tid, (size_t)a->tid_len) == a->tid_len) {
        a->where = which;
        a->moves++;
        return 0;
    }
    snprintf(err, errlen, "cannot move thread %.*s into %s: %s", a->tid_len - 1, a->tid, a->file[which], strerror(errno));
    return -1;
}

static void close_files(accel_share_t *a) {
    for (int k = 0; k < 2; k++)
        if (a->fd[k] >= 0) close(a->fd[k]);
    a->fd[0] = a->fd[1] = -1;
    a->on = 0;
}

int accel_share_open(accel_share_t *a, const char *accel_dir, const char *host_dir, char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    a->fd[0] = a->fd[1] = -1;
    a->tid_len = snprintf(a->tid, sizeof a->tid, "%ld\n", (long)syscall(SYS_gettid));
    if (open_group(a, ACCEL_SHARE_HOST, host_dir, err, errlen) != 0 ||
        open_group(a, ACCEL_SHARE_ACCEL, accel_dir, err, errlen) != 0 ||
        move_to(a, ACCEL_SHARE_ACCEL, err, errlen) != 0) {
        close_files(a);
        return -1;
    }
    a->on = 1;
    return 0;
}

void accel_share_init(accel_share_t *a) {
    const char *accel = getenv(ACCEL_SHARE_ENV), *host = getenv(ACCEL_SHARE_HOST_ENV);
    memset(a, 0, sizeof *a);
    a->fd[0] = a->fd[1] = -1;
    if (!accel || !*accel) return;
    if (!host || !*host) die("%s=%s is set but %s is not: cluster-rsh names both shares of a GPU host", ACCEL_SHARE_ENV,
                             accel, ACCEL_SHARE_HOST_ENV);
    char err[8400];
    if (accel_share_open(a, accel, host, err, sizeof err) != 0) die("%s (a broken emulated GPU host)", err);
    const char *rep = getenv(ACCEL_SHARE_REPORT_ENV);
    a->report = rep && *rep && strcmp(rep, "0") != 0;
}

static void move_or_die(accel_share_t *a, int which) {
    if (!a->on || a->where == which) return;
    char err[4200];
    if (move_to(a, which, err, sizeof err) != 0) die("%s", err);
}

void accel_share_compute(accel_share_t *a) {
    move_or_die(a, ACCEL_SHARE_ACCEL);
    if (a->report) {   /* once, while compute runs: where every thread of this process sits */
        a->report = 0;
        accel_share_report(stderr);
    }
}

void accel_share_exchange(accel_share_t *a) { move_or_die(a, ACCEL_SHARE_HOST); }

void accel_share_free(accel_share_t *a) {
    if (!a->on) return;   /* never opened: a zeroed struct holds no descriptor */
    move_or_die(a, ACCEL_SHARE_HOST);
    close_files(a);
}

/* the cpu controller's group in a /proc/.../cgroup file: the v1 line whose controllers include
 * cpu, else the v2 line (hierarchy 0) */
static void cpu_group(const char *path, char *out, size_t len) {
    snprintf(out, len, "?");
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = '\0';
        char ctl[256];
        snprintf(ctl, sizeof ctl, ",%s,", c1 + 1);
        if (strstr(ctl, ",cpu,")) { snprintf(out, len, "%s", c2 + 1); break; }
        if (!strncmp(line, "0:", 2)) snprintf(out, len, "%s", c2 + 1);
    }
    fclose(f);
}

static void read_line(const char *path, char *out, size_t len) {
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (fgets(out, (int)len, f)) out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

void accel_share_report(FILE *out) {
    DIR *d = opendir("/proc/self/task");
    if (!d) die("/proc/self/task: %s", strerror(errno));
    long pid = (long)getpid(), self = (long)syscall(SYS_gettid);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[64], group[4096];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        read_line(path, comm, sizeof comm);
        snprintf(path, sizeof path, "/proc/self/task/%s/cgroup", e->d_name);
        cpu_group(path, group, sizeof group);
        fprintf(out, "accel share: pid %ld tid %s (%s) cgroup %s%s\n", pid, e->d_name, comm, group,
                atol(e->d_name) == self ? " compute" : "");
    }
    closedir(d);
    fflush(out);
}
