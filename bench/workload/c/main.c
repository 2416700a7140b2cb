// CPU benchmark workload: mix, primes, fib. See ../README.md for the contract.
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Overridable (-DMIX_ITERS=...) so bench/precision can build a candidate doing a known
   amount more work; the defaults are the contract. */
#ifndef MIX_ITERS
#define MIX_ITERS 200000000u
#endif
#ifndef SIEVE_LIMIT
#define SIEVE_LIMIT 50000000u
#endif
#ifndef FIB_N
#define FIB_N 38u
#endif
/* Work that changes no answer (-DMIX_EXTRA=27000000u, -DSIEVE_EXTRA=3700000u: about 3% more
   estimated cycles on mix and on primes, measured under cachegrind on the default caches), for
   a candidate whose code does more while its answers stay right.
   The extra work is code of its own, so the phases' own loops compile as without it, and
   unset it is not compiled at all. */
#ifndef MIX_EXTRA
#define MIX_EXTRA 0u
#endif
#ifndef SIEVE_EXTRA
#define SIEVE_EXTRA 0u
#endif

static uint64_t mix(void) {
    uint64_t s = 88172645463325252u;
    uint64_t h = 14695981039346656037u;
    for (uint32_t i = 0; i < MIX_ITERS; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        uint64_t x = s ^ (s >> 33);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x ^= x >> 29;
        x ^= x << 11;
        x ^= x >> 19;
        h = (h ^ x) * 1099511628211u;
    }
    return h;
}

static uint64_t primes(void) {
    // One byte per number; nonzero means composite.
    uint8_t *composite = calloc(SIEVE_LIMIT, 1);
    if (composite == NULL) {
        perror("calloc");
        exit(1);
    }
    for (uint64_t i = 2; i * i < SIEVE_LIMIT; i++) {
        if (!composite[i]) {
            for (uint64_t j = i * i; j < SIEVE_LIMIT; j += i) composite[j] = 1;
        }
    }
    uint64_t count = 0;
    for (uint64_t i = 2; i < SIEVE_LIMIT; i++) count += !composite[i];
    free(composite);
    return count;
}

#if MIX_EXTRA > 0 || SIEVE_EXTRA > 0
/* The same kinds of work as mix and primes, their results discarded. */
__attribute__((noinline)) static uint64_t extra(uint32_t rounds, uint64_t limit) {
    uint64_t h = 1;
    for (uint32_t i = 0; i < rounds; i++) h = (h ^ (h >> 29) ^ i) * 1099511628211u;
    uint8_t *composite = calloc(limit + 2, 1);
    if (composite == NULL) {
        perror("calloc");
        exit(1);
    }
    for (uint64_t i = 2; i * i < limit; i++) {
        if (!composite[i]) {
            for (uint64_t j = i * i; j < limit; j += i) composite[j] = 1;
        }
    }
    for (uint64_t i = 2; i < limit; i++) h += !composite[i];
    free(composite);
    return h;
}
#endif

static uint64_t fib(uint32_t n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv) {
    char phase = argc > 1 ? argv[1][0] : '\0';
    int all = phase != 'm' && phase != 'p' && phase != 'f';
#if MIX_EXTRA > 0 || SIEVE_EXTRA > 0
    volatile uint64_t discarded = extra((all || phase == 'm') ? MIX_EXTRA : 0u,
                                        (all || phase == 'p') ? SIEVE_EXTRA : 0u);
    (void)discarded;
#endif
    if (all || phase == 'm') printf("%" PRIu64 "\n", mix());
    if (all || phase == 'p') printf("%" PRIu64 "\n", primes());
    if (all || phase == 'f') printf("%" PRIu64 "\n", fib(FIB_N));
    return fflush(stdout) == 0 ? 0 : 1;
}
