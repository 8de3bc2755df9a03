// train_step.cpp - train.py's training step through libtorch's C++ API: an
// MLP (Linear, LayerNorm, GELU, Dropout, Linear, ReLU, Linear), cross-entropy,
// Adam, one thread, a fixed seed; the hidden activations are batch x hidden x
// 4 B (8 MiB with the defaults).  No Python: only the allocator and libtorch.
//
//     train_step [--steps N] [--batch N] [--hidden N] [--seed N]
//
// Prints `steps/s: N` (the loop, the measured region) and `checksum: HEX`
// (FNV-1a over every step's loss and the final weights' sums, each rounded to
// 6 significant digits): the same on every allocator and every run.
#include <torch/torch.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#include "mallocbench.h"

namespace {

struct Args {
    long steps = 5, batch = 16384, hidden = 128, seed = 0;
};

bool parse_long(const char *s, long min, long *out) {
    char *end;
    errno = 0;
    long v = std::strtol(s, &end, 10);
    if (errno || end == s || *end || v < min)
        return false;
    *out = v;
    return true;
}

int usage(const char *why) {
    std::fprintf(stderr, "train_step: %s\nusage: train_step [--steps N] [--batch N] [--hidden N] [--seed N]\n", why);
    return 2;
}

struct Checksum {
    unsigned long long h = 1469598103934665603ULL;
    void add(double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.5e;", v == 0 ? 0.0 : v);
        for (const char *p = buf; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    }
};

}  // namespace

int main(int argc, char **argv) {
    Args a;
    for (int i = 1; i < argc; i++) {
        long *dst = nullptr, min = 1;
        if (!std::strcmp(argv[i], "--steps")) dst = &a.steps;
        else if (!std::strcmp(argv[i], "--batch")) dst = &a.batch;
        else if (!std::strcmp(argv[i], "--hidden")) dst = &a.hidden;
        else if (!std::strcmp(argv[i], "--seed")) dst = &a.seed, min = 0;
        else return usage((std::string("unknown argument '") + argv[i] + "'").c_str());
        if (i + 1 >= argc || !parse_long(argv[i + 1], min, dst))
            return usage((std::string("'") + argv[i] + "' needs a number >= " + std::to_string(min)).c_str());
        i++;
    }
    const long in = 32, out = 10;
    torch::set_num_threads(1);
    torch::manual_seed(a.seed);
    torch::nn::Sequential net(
        torch::nn::Linear(in, a.hidden), torch::nn::LayerNorm(torch::nn::LayerNormOptions({a.hidden})),
        torch::nn::GELU(), torch::nn::Dropout(0.1), torch::nn::Linear(a.hidden, a.hidden / 4 > 0 ? a.hidden / 4 : 1),
        torch::nn::ReLU(), torch::nn::Linear(a.hidden / 4 > 0 ? a.hidden / 4 : 1, out));
    net->train();
    torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3));
    Checksum ck;
    double loss_v = 0;
    mb_region_begin();
    auto t0 = std::chrono::steady_clock::now();
    for (long s = 0; s < a.steps; s++) {
        auto x = torch::randn({a.batch, in});
        auto y = torch::randint(0, out, {a.batch}, torch::kLong);
        opt.zero_grad();
        auto loss = torch::nn::functional::cross_entropy(net->forward(x), y);
        loss.backward();
        opt.step();
        loss_v = loss.item<double>();
        ck.add(loss_v);
    }
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    mb_region_end();
    for (auto &p : net->parameters())
        ck.add(p.detach().to(torch::kDouble).sum().item<double>());
    std::printf("batch %ld, hidden %ld: activation %.1f MiB, %ld steps, last loss %.4f\n", a.batch, a.hidden,
                a.batch * a.hidden * 4 / 1048576.0, a.steps, loss_v);
    std::printf("steps/s: %.2f\n", a.steps / dt);
    std::printf("checksum: %016llx\n", ck.h);
    return 0;
}
