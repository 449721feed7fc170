// Never ends: the runner must stop it at the time limit.
__global__ void noop() {}
int main() {
    noop<<<1, 1>>>();
    volatile int forever = 1;
    while (forever) {
    }
    return 0;
}
