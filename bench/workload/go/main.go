// CPU benchmark workload: mix, primes, fib. See ../README.md for the contract.
package main

import (
	"bufio"
	"os"
	"strconv"
)

const (
	mixIters   = 200_000_000
	sieveLimit = 50_000_000
	fibN       = 38
)

// mix relies on Go's uint64 arithmetic wrapping modulo 2^64.
func mix() uint64 {
	s := uint64(88172645463325252)
	h := uint64(14695981039346656037)
	for i := 0; i < mixIters; i++ {
		s = s*6364136223846793005 + 1442695040888963407
		x := s ^ (s >> 33)
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		x ^= x >> 29
		x ^= x << 11
		x ^= x >> 19
		h = (h ^ x) * 1099511628211
	}
	return h
}

func primes() uint64 {
	// One byte per number; nonzero means composite.
	composite := make([]byte, sieveLimit)
	for i := 2; i*i < sieveLimit; i++ {
		if composite[i] == 0 {
			for j := i * i; j < sieveLimit; j += i {
				composite[j] = 1
			}
		}
	}
	var count uint64
	for _, c := range composite[2:] {
		if c == 0 {
			count++
		}
	}
	return count
}

func fib(n uint32) uint64 {
	if n < 2 {
		return uint64(n)
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	var phase byte
	if len(os.Args) > 1 && len(os.Args[1]) > 0 {
		phase = os.Args[1][0]
	}
	all := phase != 'm' && phase != 'p' && phase != 'f'

	out := bufio.NewWriter(os.Stdout)
	emit := func(v uint64) {
		out.WriteString(strconv.FormatUint(v, 10))
		out.WriteByte('\n')
	}
	if all || phase == 'm' {
		emit(mix())
	}
	if all || phase == 'p' {
		emit(primes())
	}
	if all || phase == 'f' {
		emit(fib(fibN))
	}
	if err := out.Flush(); err != nil {
		os.Exit(1)
	}
}
