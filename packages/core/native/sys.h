/*
 * System calls without the C library: they return the result, or -errno, and touch no libc state
 * (no errno, no locks, no thread-local storage).
 *
 * Why: a pool unit's supervisor may run inside the template shell's address space (a CLONE_VM
 * child with a stack of its own: bash/ahma-unit.c), next to the template and to other supervisors.
 * They all share one copy of libc's memory and one thread pointer, so errno, malloc and stdio
 * would race between them. Code that may run there (supervise.c) makes its system calls through
 * these. x86_64 and aarch64, the two architectures the seccomp filter knows (seccomp.c).
 */
#ifndef AHMA_SANDBOX_SYS_H
#define AHMA_SANDBOX_SYS_H

#if defined(__x86_64__)
static inline long sys6(long nr, long a, long b, long c, long d, long e, long f) {
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
/*
 * A fork (clone with SIGCHLD) whose child starts fn(arg) on the stack ending at stack_top (16-byte
 * aligned) and must never return; the parent gets the child's pid or -errno. fn and arg reach the
 * child in callee-saved registers: nothing is written to memory on the way, which matters when the
 * caller shares its memory with others (a fork's memory is a copy of the caller's at that instant).
 */
static inline long fork_onto(void *stack_top, void (*fn)(void *), void *arg) {
    register long r10 __asm__("r10") = 0;
    register long r8 __asm__("r8") = 0;
    register long r12 __asm__("r12") = (long)fn;
    register long r13 __asm__("r13") = (long)arg;
    long ret;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xor %%ebp, %%ebp\n\t"
                     "mov %%r13, %%rdi\n\t"
                     "call *%%r12\n\t"
                     "ud2\n"
                     "1:"
                     : "=a"(ret)
                     : "a"(56L /* SYS_clone */), "D"(17L /* SIGCHLD */), "S"(stack_top), "d"(0L),
                       "r"(r10), "r"(r8), "r"(r12), "r"(r13)
                     : "rcx", "r11", "memory", "cc");
    return ret;
}
#elif defined(__aarch64__)
static inline long sys6(long nr, long a, long b, long c, long d, long e, long f) {
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory", "cc");
    return x0;
}
/* fork_onto(): see the x86_64 version. */
static inline long fork_onto(void *stack_top, void (*fn)(void *), void *arg) {
    register long x8 __asm__("x8") = 220; /* SYS_clone */
    register long x0 __asm__("x0") = 17;  /* SIGCHLD */
    register long x1 __asm__("x1") = (long)stack_top;
    register long x2 __asm__("x2") = 0;
    register long x3 __asm__("x3") = 0;
    register long x4 __asm__("x4") = 0;
    register long x19 __asm__("x19") = (long)fn;
    register long x20 __asm__("x20") = (long)arg;
    __asm__ volatile("svc 0\n\t"
                     "cbnz x0, 1f\n\t"
                     "mov x29, xzr\n\t"
                     "mov x0, x20\n\t"
                     "blr x19\n\t"
                     "brk #0\n"
                     "1:"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x19), "r"(x20)
                     : "memory", "cc", "x30");
    return x0;
}
#else
#error "raw system calls are written for x86_64 and aarch64 only"
#endif

#define sys0(nr) sys6((nr), 0, 0, 0, 0, 0, 0)
#define sys1(nr, a) sys6((nr), (long)(a), 0, 0, 0, 0, 0)
#define sys2(nr, a, b) sys6((nr), (long)(a), (long)(b), 0, 0, 0, 0)
#define sys3(nr, a, b, c) sys6((nr), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define sys4(nr, a, b, c, d) sys6((nr), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define sys5(nr, a, b, c, d, e) sys6((nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

#endif
