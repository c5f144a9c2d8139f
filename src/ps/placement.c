/* placement.c: which server holds which keys (placement.h). */
#include "ps/placement.h"
#include "ps/wire.h"
#include <math.h>

double ps_byteps_share(int N, int K) {
    if (K <= 0 || N <= 1) return 0;
    double x = 2.0 * K * (N - 1) / ((double)N * N + (double)K * N - 2.0 * K);
    return x < 1 ? x : 1;
}

void ps_key_range(const optim_config_t *optim, size_t count, int nservers, int spare, int s, size_t *lo, size_t *len) {
    if (spare > 0 && spare < nservers) {
        int N = nservers - spare;
        size_t on_spare = (size_t)llround(ps_byteps_share(N, spare) * (double)count), on_workers = count - on_spare;
        if (s < N) { ps_shard_range(on_workers, N, s, lo, len); return; }
        ps_shard_range(on_spare, spare, s - N, lo, len);
        *lo += on_workers;
        return;
    }
    if (!optim || optim_shard_range(optim, count, nservers, s, lo, len) != 0) ps_shard_range(count, nservers, s, lo, len);
}
