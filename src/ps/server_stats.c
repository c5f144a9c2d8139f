/* server_stats.c: what a parameter-server shard measures and reports (server_impl.h): the
 * staleness of every applied gradient, the metrics average service (AVG, server 0), the report
 * sent to the workers at the end (STATS) and printed, and --stall-warn's naming of lagging
 * workers. None of it changes what is trained. */
#include "server_impl.h"
#include <string.h>

void server_record_staleness(ps_server_t *s, uint64_t g, uint64_t read_clock) {
    uint64_t st = g > read_clock ? g - read_clock : 0;
    s->hist[st < PS_HIST - 1 ? st : PS_HIST - 1]++;
    s->stale_n++;
    s->stale_sum += (double)st;
    if (st > s->stale_max) s->stale_max = st;
}

void server_finish_avg(ps_server_t *s) {
    if (s->avg_count == 0) return;
    for (int w = 0; w < s->c.nworkers; w++)
        if (server_worker_live(s, w) && !s->avg_in[w]) return;
    double mean[AVG_MAX];
    for (int i = 0; i < s->avg_n; i++) mean[i] = s->avg_sum[i] / s->avg_count;
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!s->avg_in[w]) continue;
        s->avg_in[w] = 0;
        if (!server_worker_live(s, w)) continue;
        ps_header_t h = server_header(s, PS_MSG_AVG_REPLY, PS_DTYPE_F64, s->avg_n);
        server_send_copy(s, w, &h, mean, s->avg_n * sizeof(double));
    }
    s->avg_count = 0;
    memset(s->avg_sum, 0, sizeof s->avg_sum);
}

size_t ps_server_report_len(const ps_server_t *s) { return PS_ST_FIELDS + PS_HIST + s->c.nworkers; }

void ps_server_report(const ps_server_t *s, double *r) {
    r[PS_ST_APPLY_S] = s->apply_s;
    r[PS_ST_BYTES_IN] = (double)s->bytes_in;
    r[PS_ST_BYTES_OUT] = (double)s->bytes_out;
    r[PS_ST_REJECTED] = (double)ps_transport_rejected(s->tr);
    r[PS_ST_STALE_N] = (double)s->stale_n;
    r[PS_ST_STALE_SUM] = s->stale_sum;
    r[PS_ST_STALE_MAX] = (double)s->stale_max;
    r[PS_ST_CLOCK_GAP] = (double)s->clock_gap;
    r[PS_ST_NLOST] = s->nlost;
    r[PS_ST_UPDATES] = (double)s->updates;
    for (int i = 0; i < PS_HIST; i++) r[PS_ST_FIELDS + i] = (double)s->hist[i];
    for (int w = 0; w < s->c.nworkers; w++) r[PS_ST_FIELDS + PS_HIST + w] = s->lost[w];
}

void server_send_stats(ps_server_t *s) {
    if (s->stats_sent) return;
    for (int w = 0; w < s->c.nworkers; w++)
        if (!s->lost[w] && !s->done[w]) return;
    s->stats_sent = 1;
    size_t n = ps_server_report_len(s);
    double *r = xcalloc(n, sizeof(double));
    ps_server_report(s, r);
    for (int w = 0; w < s->c.nworkers; w++) {
        if (s->lost[w] || s->bye[w]) continue;
        ps_header_t h = server_header(s, PS_MSG_STATS, PS_DTYPE_F64, n);
        server_send_copy(s, w, &h, r, n * sizeof(double));
    }
    free(r);
}

/* --stall-warn (server 0 only, as Horovod's coordinator): bsp names the workers still missing
 * from a round that others entered stall_warn seconds ago; async/ssp names a worker that is
 * behind the fastest and has not pushed for stall_warn seconds. Each stall is named once; the
 * job goes on (a dead worker is --peer-timeout's business). */
void server_check_stalls(ps_server_t *s, double now) {
    if (s->c.stall_warn <= 0 || s->c.index != 0) return;
    uint64_t maxc = 0;
    for (int w = 0; w < s->c.nworkers; w++) if (server_worker_live(s, w) && s->clock[w] > maxc) maxc = s->clock[w];
    for (int w = 0; w < s->c.nworkers; w++) {
        if (!server_worker_live(s, w) || s->done[w] || s->stopped[w]) continue;
        double quiet;
        if (s->c.sync == SYNC_BSP) {
            if (s->npushed == 0 || s->pushed[w]) continue;
            quiet = now - s->round_t0;
        } else {
            if (s->clock[w] >= maxc) continue;
            quiet = now - s->last_push[w];
        }
        if (!stall_watch_due(&s->stall, w, quiet)) continue;
        fprintf(stderr, "psring: ps server 0: stall: worker rank %d (mpi rank %d) has not pushed for %.1f s "
                "(its clock %llu, others up to %llu); still waiting (--stall-warn %.3g)\n", w,
                s->c.worker_rank_base + w, quiet, (unsigned long long)s->clock[w],
                (unsigned long long)(s->c.sync == SYNC_BSP ? s->round + 1 : maxc), s->c.stall_warn);
    }
}

void ps_server_print_report(const ps_server_t *s, FILE *f) {
    const char *mode = ps_sync_name(s->c.sync);
    double mean = s->stale_n ? s->stale_sum / (double)s->stale_n : 0;
    fprintf(f, "ps server %d: sync=%s staleness_bound=%d updates=%llu staleness_mean=%.3f "
            "staleness_max=%llu max_clock_gap=%llu rejected=%llu lost=%d\n", s->c.index, mode,
            s->c.sync == SYNC_SSP ? s->c.staleness : -1, (unsigned long long)s->updates, mean,
            (unsigned long long)s->stale_max, (unsigned long long)s->clock_gap,
            (unsigned long long)ps_transport_rejected(s->tr), s->nlost);
    if (s->budget)   /* the samples the workers' pushes spent, against the budget */
        fprintf(f, "ps server %d: samples=%llu budget=%llu\n", s->c.index, (unsigned long long)s->counted,
                (unsigned long long)s->budget);
    if (s->c.sync != SYNC_BSP && s->stale_n) {
        fprintf(f, "ps server %d: staleness histogram (clocks: count):", s->c.index);
        for (int i = 0; i < PS_HIST; i++)
            if (s->hist[i]) fprintf(f, " %s%d:%llu", i == PS_HIST - 1 ? ">=" : "", i, (unsigned long long)s->hist[i]);
        fputc('\n', f);
    }
    for (int w = 0; w < s->c.nworkers; w++)
        if (s->lost[w]) fprintf(f, "ps server %d: lost worker rank %d (mpi rank %d)\n", s->c.index, w, s->c.worker_rank_base + w);
    if (s->c.auth)
        fprintf(f, "ps server %d: auth=curve refused=%llu (handshakes without the --ps-auth key)\n", s->c.index,
                (unsigned long long)ps_transport_auth_refused(s->tr));
    if (s->c.stall_warn > 0 && s->c.index == 0)
        fprintf(f, "ps server 0: stalls named=%llu (--stall-warn %.3g s)\n", (unsigned long long)s->stall.stalls, s->c.stall_warn);
    fflush(f);
}
