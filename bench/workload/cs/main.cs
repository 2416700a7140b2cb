// CPU benchmark workload: mix, primes, fib. See ../README.md for the contract.
using System;
using System.Globalization;
using System.IO;
using System.Text;

static class Workload
{
    const uint MixIters = 200000000;
    const int SieveLimit = 50000000;
    const uint FibN = 38;

    static ulong Mix()
    {
        // unchecked: wrapping is intended even if compiled with -checked+.
        unchecked
        {
            ulong s = 88172645463325252UL;
            ulong h = 14695981039346656037UL;
            for (uint i = 0; i < MixIters; i++)
            {
                s = s * 6364136223846793005UL + 1442695040888963407UL;
                ulong x = s ^ (s >> 33);
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x ^= x >> 29;
                x ^= x << 11;
                x ^= x >> 19;
                h = (h ^ x) * 1099511628211UL;
            }
            return h;
        }
    }

    static ulong Primes()
    {
        // One byte per number; nonzero means composite.
        var composite = new byte[SieveLimit];
        for (long i = 2; i * i < SieveLimit; i++)
        {
            if (composite[i] == 0)
            {
                for (long j = i * i; j < SieveLimit; j += i) composite[j] = 1;
            }
        }
        ulong count = 0;
        for (int i = 2; i < SieveLimit; i++)
        {
            if (composite[i] == 0) count++;
        }
        return count;
    }

    static ulong Fib(uint n)
    {
        return n < 2 ? n : Fib(n - 1) + Fib(n - 2);
    }

    static int Main(string[] args)
    {
        char phase = args.Length > 0 && args[0].Length > 0 ? args[0][0] : '\0';
        bool all = phase != 'm' && phase != 'p' && phase != 'f';

        // Explicit "\n" and no BOM, independent of platform defaults.
        using (var output = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false)))
        {
            output.NewLine = "\n";
            if (all || phase == 'm') output.WriteLine(Mix().ToString(CultureInfo.InvariantCulture));
            if (all || phase == 'p') output.WriteLine(Primes().ToString(CultureInfo.InvariantCulture));
            if (all || phase == 'f') output.WriteLine(Fib(FibN).ToString(CultureInfo.InvariantCulture));
            output.Flush();
        }
        return 0;
    }
}
