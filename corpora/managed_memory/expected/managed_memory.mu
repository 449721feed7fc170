// managed_memory: a linked structure in unified memory. The host builds an array of nodes whose
// `next` fields are managed pointers, a kernel walks them on the device, and the host reads the
// results straight from managed memory after synchronising; no explicit copies.
#include <cstdio>

#include "cuda_check.muh"

struct Node {
    int value;
    Node* next;  // a managed pointer, valid on host and device
};

__global__ void chain_sums(const Node* nodes, int* sums, int n, int depth)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int acc = 0;
        const Node* p = &nodes[i];
        for (int d = 0; d < depth && p != nullptr; ++d, p = p->next) acc += p->value;
        sums[i] = acc;
    }
}

int main()
{
    const int n = 5000, depth = 4;
    Node* nodes = nullptr;
    int* sums = nullptr;
    CUDA_CHECK(musaMallocManaged(&nodes, n * sizeof(Node)));
    CUDA_CHECK(musaMallocManaged(&sums, n * sizeof(int), musaMemAttachGlobal));
    for (int i = 0; i < n; ++i) {
        nodes[i].value = i % 100;
        nodes[i].next = i + 3 < n ? &nodes[i + 3] : nullptr;
    }
    chain_sums<<<(n + 127) / 128, 128>>>(nodes, sums, n, depth);
    CUDA_CHECK_KERNEL();  // required before the host touches managed memory again

    int bad = 0;
    for (int i = 0; i < n; ++i) {
        int want = 0;
        for (int d = 0, j = i; d < depth && j < n; ++d, j += 3) want += j % 100;
        bad += sums[i] != want ? 1 : 0;
    }
    CUDA_CHECK(musaFree(nodes));
    CUDA_CHECK(musaFree(sums));
    std::printf("%s managed_memory n=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, bad);
    return bad == 0 ? 0 : 1;
}
