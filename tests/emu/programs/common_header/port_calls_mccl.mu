// A MUSA port of a program whose common header includes the MUSA spellings of libraries the
// emulator does not implement; it calls one of them.
#include <cstdio>
#include <mublasLt.h>
#include <mccl.h>
#include <cudnn.h>
int main() {
    mcclUniqueId id;
    mublasLtHandle_t lt = nullptr;
    if (lt) return 2;
    std::printf("calling\n");
    mcclResult_t r = mcclGetUniqueId(&id);
    return r == mcclSuccess ? 0 : 1;
}
