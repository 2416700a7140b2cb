// CPU benchmark workload: mix, primes, fib. See ../README.md for the contract.
use std::io::{self, Write};

const MIX_ITERS: u32 = 200_000_000;
const SIEVE_LIMIT: usize = 50_000_000;
const FIB_N: u32 = 38;

fn mix() -> u64 {
    let mut s: u64 = 88172645463325252;
    let mut h: u64 = 14695981039346656037;
    for _ in 0..MIX_ITERS {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut x = s ^ (s >> 33);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x ^= x >> 29;
        x ^= x << 11;
        x ^= x >> 19;
        h = (h ^ x).wrapping_mul(1099511628211);
    }
    h
}

fn primes() -> u64 {
    // One byte per number; nonzero means composite.
    let mut composite = vec![0u8; SIEVE_LIMIT];
    let mut i = 2;
    while i * i < SIEVE_LIMIT {
        if composite[i] == 0 {
            let mut j = i * i;
            while j < SIEVE_LIMIT {
                composite[j] = 1;
                j += i;
            }
        }
        i += 1;
    }
    composite[2..].iter().filter(|&&c| c == 0).count() as u64
}

fn fib(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

fn main() -> io::Result<()> {
    // args_os: the phase selector need not be valid UTF-8.
    let phase = std::env::args_os()
        .nth(1)
        .and_then(|a| a.as_encoded_bytes().first().copied())
        .unwrap_or(0);
    let all = !matches!(phase, b'm' | b'p' | b'f');

    let mut out = io::stdout().lock();
    if all || phase == b'm' {
        writeln!(out, "{}", mix())?;
    }
    if all || phase == b'p' {
        writeln!(out, "{}", primes())?;
    }
    if all || phase == b'f' {
        writeln!(out, "{}", fib(FIB_N))?;
    }
    out.flush()
}
