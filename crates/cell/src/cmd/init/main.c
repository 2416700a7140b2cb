/* The starter workload `cell init` writes: each phase does real work and prints one number,
 * which every repetition is checked against ([expect] in cell/cell.toml). Replace it with
 * programs your users run; keep one phase per argument and one answer per phase. */
#include <stdio.h>
#include <string.h>

static unsigned long fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static unsigned long mix(unsigned long n) {
    unsigned long a[64] = {0}, h = 0;
    for (unsigned long i = 0; i < n; i++) {
        a[i & 63] += i ^ (i >> 3);
        h += a[(i * 7) & 63];
    }
    return h;
}

int main(int argc, char **argv) {
    const char *phase = argc > 1 ? argv[1] : "";
    if (strcmp(phase, "mix") == 0) printf("%lu\n", mix(150000000UL));
    else if (strcmp(phase, "fib") == 0) printf("%lu\n", fib(37));
    else {
        fprintf(stderr, "usage: %s mix|fib\n", argv[0]);
        return 2;
    }
    return 0;
}
