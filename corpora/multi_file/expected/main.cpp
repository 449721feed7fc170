// main.cpp -- the host half of multi_file, compiled by the host C++ compiler. It knows nothing
// about kernels: it calls the functions declared in stats_api.h.
#include <cstdio>
#include <vector>

#include "stats_api.h"

int main()
{
    const size_t n = 30000;
    std::vector<int> in(n), out(n);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<int>(i % 211) - 100;

    const int err = stats_transform_on_device(in.data(), out.data(), n);
    if (err != 0) {
        std::printf("FAIL multi_file stats_transform_on_device returned error %d\n", err);
        return 1;
    }
    const long long sum = stats_sum_on_device(in.data(), n);

    int bad = 0;
    long long want_sum = 0;
    for (size_t i = 0; i < n; ++i) {
        bad += out[i] != stats_transform(in[i]) ? 1 : 0;
        want_sum += stats_transform(in[i]);
    }
    bad += sum != want_sum ? 1 : 0;
    std::printf("%s multi_file n=%zu sum=%lld mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, sum, bad);
    return bad == 0 ? 0 : 1;
}
