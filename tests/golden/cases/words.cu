// Words that merely contain cu/CU/nv are never touched (a substring replace breaks them).
// CHECK: int CUSTOM = 0, CURRENT = 1, Accumulate = 2, ACCUMULATOR = 3, Cubic = 4, inv = 5, cuda_like_var = 6;
int CUSTOM = 0, CURRENT = 1, Accumulate = 2, ACCUMULATOR = 3, Cubic = 4, inv = 5, cuda_like_var = 6;
// CHECK: struct my_cudaMalloc { int cudaMallocCount; } x; int y = x.cudaMallocCount;
struct my_cudaMalloc { int cudaMallocCount; } x; int y = x.cudaMallocCount;
