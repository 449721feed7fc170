// Fibers: the hand-written context switch that lets one OS thread run the threads of a block.
//
// A context is a saved stack pointer; everything else a switch must keep (the callee-saved
// registers) is pushed on the stack being left. The SSE/x87 control words are not switched: every
// fiber of an OS thread shares them, which is only visible to a kernel that changes the rounding
// mode and then waits at a barrier before restoring it (math.hpp's directed-rounding helpers set
// and restore it around one operation).
// x86-64 System V and aarch64 have a naked assembly routine (a weak symbol, so the header can
// be included by several translation units); other targets fall back to ucontext.
#pragma once
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "config.hpp"

#if !defined(__x86_64__) && !defined(__aarch64__)
#include <ucontext.h>
#define EMU_FIBER_UCONTEXT 1
#endif

#ifdef EMU_ASAN
extern "C" void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old,
                                                size_t* size_old);
#endif

#if defined(__x86_64__)
// void emu_switch_context(void** save_sp, void* load_sp)
asm(R"(
    .text
    .weak emu_switch_context
    .type emu_switch_context, @function
emu_switch_context:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch_context, .-emu_switch_context

    .weak emu_fiber_trampoline
    .type emu_fiber_trampoline, @function
emu_fiber_trampoline:
    movq %r13, %rdi
    callq *%r12
    ud2
    .size emu_fiber_trampoline, .-emu_fiber_trampoline
)");
#elif defined(__aarch64__)
asm(R"(
    .text
    .weak emu_switch_context
    .type emu_switch_context, %function
emu_switch_context:
    sub sp, sp, #160
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mov x9, sp
    str x9, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #160
    ret
    .size emu_switch_context, .-emu_switch_context

    .weak emu_fiber_trampoline
    .type emu_fiber_trampoline, %function
emu_fiber_trampoline:
    mov x0, x20
    blr x19
    brk #0
    .size emu_fiber_trampoline, .-emu_fiber_trampoline
)");
#endif

#ifndef EMU_FIBER_UCONTEXT
extern "C" void emu_switch_context(void** save_sp, void* load_sp);
extern "C" void emu_fiber_trampoline();
#endif

namespace emu {

using FiberEntry = void (*)(void*);

class StackArena;
inline thread_local const StackArena* tl_arena = nullptr;
void install_overflow_report();

// The fiber stacks of one OS thread: one mapping, made when a block first needs fibers and reused
// by every later block (grown only for a larger block). Pages are touched only when used, so a
// large EMU_STACK_SIZE costs address space, not memory. Each stack has a guard page below it, so an
// emulated thread that overflows its stack faults instead of overwriting its neighbour's, and the
// fault is reported as an overflow (install_overflow_report). The top of stack t is moved down by
// (t mod 32) cache lines: otherwise every fiber's hot top frame would sit at the same offset
// within a page and compete for the same few cache sets.
class StackArena {
   public:
    StackArena() = default;
    StackArena(const StackArena&) = delete;
    StackArena& operator=(const StackArena&) = delete;
    ~StackArena() {
        if (tl_arena == this) tl_arena = nullptr;
        release();
    }

    // Make room for `count` stacks of EMU_STACK_SIZE bytes.
    void reserve(int count) {
        if (count <= count_) return;
        release();
        page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        size_ = (size_t(EMU_STACK_SIZE) + page_ - 1) / page_ * page_;
        stride_ = size_ + page_;
        bytes_ = stride_ * static_cast<size_t>(count);
        void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            std::fprintf(stderr, "emu: cannot map %d fiber stacks of %zu bytes\n", count, size_);
            std::fflush(stdout);
            std::_Exit(70);
        }
        mem_ = static_cast<char*>(p);
        for (int t = 0; t < count; ++t) mprotect(mem_ + stride_ * t, page_, PROT_NONE);
        count_ = count;
        tl_arena = this;
        install_overflow_report();
    }
    // Whether `addr` lies in the guard page of one of these stacks.
    bool in_guard(const void* addr) const {
        auto a = reinterpret_cast<std::uintptr_t>(addr), m = reinterpret_cast<std::uintptr_t>(mem_);
        return mem_ && a >= m && a < m + bytes_ && (a - m) % stride_ < page_;
    }
    // Lowest usable byte of stack t, and its usable size (the top is staggered, see above).
    char* base(int t) const { return mem_ + stride_ * static_cast<size_t>(t) + page_; }
    size_t size(int t) const { return size_ - static_cast<size_t>(t % 32) * 64; }

   private:
    void release() {
        if (mem_) munmap(mem_, bytes_);
        mem_ = nullptr;
        count_ = 0;
    }
    char* mem_ = nullptr;
    size_t page_ = 0, size_ = 0, stride_ = 0, bytes_ = 0;
    int count_ = 0;
};

// A fault in a guard page is an emulated thread that overflowed its stack: say so and stop with
// status 3 (the emulator stopped the program) rather than die of a bare SIGSEGV. The handler runs
// on an alternate signal stack, since the faulting stack is full; any other fault goes to the
// handler that was installed before (the default action if none). AddressSanitizer builds leave
// SIGSEGV to the sanitizer, which reports overflows itself.
inline struct sigaction& previous_segv_action() {
    static struct sigaction previous {};
    return previous;
}

// The alternate signal stack of one OS thread, released when the thread ends.
struct AltSignalStack {
    void* mem = nullptr;
    size_t size = 64 * 1024;
    ~AltSignalStack() {
        if (!mem) return;
        stack_t off{};
        off.ss_flags = SS_DISABLE;
        sigaltstack(&off, nullptr);
        munmap(mem, size);
    }
};

extern "C" inline void emu_on_segv(int sig, siginfo_t* info, void*) {
    const StackArena* arena = tl_arena;
    if (arena && arena->in_guard(info->si_addr)) {
        static const char msg[] = "emu: error: a GPU thread overflowed its fiber stack of " EMU_STACK_SIZE_TEXT
                                  " bytes (rebuild with -DEMU_STACK_SIZE=<bytes> for more)\n";
        ssize_t ignored = write(2, msg, sizeof msg - 1);
        (void)ignored;
        _exit(3);
    }
    sigaction(sig, &previous_segv_action(), nullptr);  // the faulting instruction runs again under it
}

inline void install_overflow_report() {
#ifndef EMU_ASAN
    static thread_local AltSignalStack alt_stack;
    if (!alt_stack.mem) {
        void* mem = mmap(nullptr, alt_stack.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        stack_t alt{};
        alt.ss_sp = mem;
        alt.ss_size = alt_stack.size;
        if (mem != MAP_FAILED && sigaltstack(&alt, nullptr) == 0)
            alt_stack.mem = mem;
        else if (mem != MAP_FAILED)
            munmap(mem, alt_stack.size);
    }
    static bool installed = [] {
        struct sigaction action {};
        action.sa_sigaction = &emu_on_segv;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        return sigaction(SIGSEGV, &action, &previous_segv_action()) == 0;
    }();
    (void)installed;
#endif
}

// A saved execution context.
struct Context {
#ifdef EMU_FIBER_UCONTEXT
    ucontext_t uc;
    const void* sp_hint() const { return &uc; }
#else
    void* sp = nullptr;
    // Where a switch into this context will read first (worth prefetching a switch ahead).
    const void* sp_hint() const { return sp; }
#endif
#ifdef EMU_ASAN
    const void* stack_bottom = nullptr;
    size_t stack_size = 0;
    void* fake_stack = nullptr;
#endif
};

// Prepare `ctx` to start running entry(arg) on the stack [base, base + size) at the next switch into it.
inline void make_context(Context& ctx, char* base, size_t size, FiberEntry entry, void* arg) {
#ifdef EMU_ASAN
    ctx.stack_bottom = base;
    ctx.stack_size = size;
#endif
#if defined(EMU_FIBER_UCONTEXT)
    getcontext(&ctx.uc);
    ctx.uc.uc_stack.ss_sp = base;
    ctx.uc.uc_stack.ss_size = size;
    ctx.uc.uc_link = nullptr;
    makecontext(&ctx.uc, reinterpret_cast<void (*)()>(entry), 1, arg);  // pointer fits on LP64 glibc
#elif defined(__x86_64__)
    auto top = reinterpret_cast<std::uintptr_t>(base + size) & ~std::uintptr_t(15);
    auto* slot = reinterpret_cast<void**>(top - 16);  // rsp after `ret` is 16-aligned
    *--slot = reinterpret_cast<void*>(&emu_fiber_trampoline);  // return address
    *--slot = nullptr;                                          // rbp
    *--slot = nullptr;                                          // rbx
    *--slot = reinterpret_cast<void*>(entry);                   // r12
    *--slot = arg;                                              // r13
    *--slot = nullptr;                                          // r14
    *--slot = nullptr;                                          // r15
    ctx.sp = slot;
#elif defined(__aarch64__)
    auto top = reinterpret_cast<std::uintptr_t>(base + size) & ~std::uintptr_t(15);
    auto* frame = reinterpret_cast<void**>(top - 160);
    std::memset(frame, 0, 160);
    frame[0] = reinterpret_cast<void*>(entry);                  // x19
    frame[1] = arg;                                             // x20
    frame[11] = reinterpret_cast<void*>(&emu_fiber_trampoline);  // x30
    ctx.sp = frame;
#endif
}

// Save the running context into `from` and continue `to`.
inline void switch_context(Context& from, Context& to) {
#ifdef EMU_ASAN
    __sanitizer_start_switch_fiber(&from.fake_stack, to.stack_bottom, to.stack_size);
#endif
#if defined(EMU_FIBER_UCONTEXT)
    swapcontext(&from.uc, &to.uc);
#else
    emu_switch_context(&from.sp, to.sp);
#endif
#ifdef EMU_ASAN
    // Back in `from`: learn the bounds of the stack we came from (this is how the native stack
    // of an OS thread gets its bounds recorded the first time it is left).
    const void* bottom = nullptr;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(from.fake_stack, &bottom, &size);
    (void)bottom;
    (void)size;
#endif
}

}  // namespace emu
