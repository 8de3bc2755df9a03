// malloc_large.cpp - the pattern of mimalloc-bench's malloc-large, written here:
// 20 slots, ROUNDS (default 1000) times a random slot gets a new zero-filled buffer of 5..25 MiB
// (std::make_unique<char[]>: operator new, then every byte written), the old one
// freed.  Under tcmalloc its page faults depend on the page heap's history from
// the first allocation on (std::random_device's own small allocation included),
// which makes it a sharp test that the probe changes nothing in the allocator
// (tests/integration/test_exec.py probe_neutral).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? std::atoi(argv[1]) : 1000;
    const int slots = 20;
    const size_t lo = 5u << 20, hi = 25u << 20;
    std::unique_ptr<char[]> buffers[slots];
    std::random_device rd;  // unused, as there: its allocation is part of the pattern
    std::mt19937 gen(42);
    std::uniform_int_distribution<> size((int)lo, (int)hi);
    std::uniform_int_distribution<> slot(0, slots - 1);
    for (int i = 0; i < rounds; ++i) {
        int k = slot(gen);
        size_t bytes = (size_t)size(gen);
        buffers[k] = std::make_unique<char[]>(bytes);
    }
    std::puts("done");
    return 0;
}
