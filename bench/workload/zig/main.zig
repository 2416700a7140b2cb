// CPU benchmark workload: mix, primes, fib. See ../README.md for the contract.
const std = @import("std");

const mix_iters: u32 = 200_000_000;
const sieve_limit: usize = 50_000_000;
const fib_n: u32 = 38;

fn mix() u64 {
    var s: u64 = 88172645463325252;
    var h: u64 = 14695981039346656037;
    var i: u32 = 0;
    while (i < mix_iters) : (i += 1) {
        s = s *% 6364136223846793005 +% 1442695040888963407;
        var x = s ^ (s >> 33);
        // plain << discards shifted-out bits; it does not trap
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x ^= x >> 29;
        x ^= x << 11;
        x ^= x >> 19;
        h = (h ^ x) *% 1099511628211;
    }
    return h;
}

fn primes(gpa: std.mem.Allocator) !u64 {
    // One byte per number; nonzero means composite.
    const composite = try gpa.alloc(u8, sieve_limit);
    defer gpa.free(composite);
    @memset(composite, 0);

    var i: usize = 2;
    while (i * i < sieve_limit) : (i += 1) {
        if (composite[i] == 0) {
            var j = i * i;
            while (j < sieve_limit) : (j += i) composite[j] = 1;
        }
    }
    var count: u64 = 0;
    for (composite[2..]) |c| count += @intFromBool(c == 0);
    return count;
}

fn fib(n: u32) u64 {
    return if (n < 2) n else fib(n - 1) + fib(n - 2);
}

pub fn main(init: std.process.Init) !void {
    var args = init.minimal.args.iterate();
    _ = args.skip(); // program name
    const arg: []const u8 = args.next() orelse "";
    const phase: u8 = if (arg.len > 0) arg[0] else 0;
    const all = phase != 'm' and phase != 'p' and phase != 'f';

    var buf: [256]u8 = undefined;
    // Streaming (not positional) so output appends correctly to pipes and files.
    var stdout = std.Io.File.stdout().writerStreaming(init.io, &buf);
    const out = &stdout.interface;
    if (all or phase == 'm') try out.print("{d}\n", .{mix()});
    if (all or phase == 'p') try out.print("{d}\n", .{try primes(init.gpa)});
    if (all or phase == 'f') try out.print("{d}\n", .{fib(fib_n)});
    try out.flush();
}
