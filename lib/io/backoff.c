/* The reconnect backoff of one sender (backoff.h). */
#include "io/backoff.h"

#define MAX_SHIFT 30 /* initial << 30 exceeds any sensible max */

/* xorshift64*: good enough for jitter, deterministic under a test seed. */
static uint64_t next_rand(uint64_t *s) {
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

int64_t qsf_jitter_ms(uint64_t *rng, int64_t b) {
    if (b <= 0)
        return 0;
    return b + (int64_t) (next_rand(rng) % (uint64_t) b);
}

void qsf_backoff_init(qsf_backoff *b, int64_t initial_ms, int64_t max_ms, uint64_t seed) {
    b->initial_ms = initial_ms < 0 ? 0 : initial_ms;
    b->max_ms = max_ms < b->initial_ms ? b->initial_ms : max_ms;
    b->failures = 0;
    b->rng = seed;
}

int64_t qsf_backoff_next(qsf_backoff *b, bool immediate_first) {
    int k = b->failures;
    if (b->failures < MAX_SHIFT + 1)
        b->failures++;
    if (immediate_first && k == 0)
        return 0;
    int n = immediate_first ? k - 1 : k;
    if (n > MAX_SHIFT)
        n = MAX_SHIFT;
    int64_t base = b->initial_ms;
    for (int i = 0; i < n && base < b->max_ms; i++)
        base *= 2;
    return qsf_jitter_ms(&b->rng, base > b->max_ms ? b->max_ms : base);
}

void qsf_backoff_progress(qsf_backoff *b) {
    b->failures = 0;
}
