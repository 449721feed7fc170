// cooperative_groups::reduce and its operators: a butterfly of shfl_xor over the tile, so every
// thread of the tile gets the result (as CUDA's cg::reduce gives it).
#pragma once
#include "cooperative_groups.hpp"

namespace cooperative_groups {

template <class T = void>
struct plus {
    T operator()(const T& a, const T& b) const { return a + b; }
};
template <class T = void>
struct less {
    T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <class T = void>
struct greater {
    T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <class T = void>
struct bit_and {
    T operator()(const T& a, const T& b) const { return a & b; }
};
template <class T = void>
struct bit_or {
    T operator()(const T& a, const T& b) const { return a | b; }
};
template <class T = void>
struct bit_xor {
    T operator()(const T& a, const T& b) const { return a ^ b; }
};

template <class Group, class T, class Op>
T reduce(const Group& g, T value, Op op, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    for (unsigned offset = g.size() / 2; offset > 0; offset /= 2) value = op(value, g.shfl_xor(value, offset, file, line));
    return value;
}

// A coalesced group need not be a power of two: every thread folds the values in rank order.
template <class T, class Op>
T reduce(const coalesced_group& g, T value, Op op, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    T acc = g.shfl(value, 0, file, line);
    for (unsigned r = 1; r < g.size(); ++r) acc = op(acc, g.shfl(value, r, file, line));
    return acc;
}

}  // namespace cooperative_groups
