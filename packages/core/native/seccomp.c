/* The seccomp filter of the sandbox helper: unix sockets, which Landlock does not confine. */
#define _GNU_SOURCE

#include "seccomp.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "common.h"

/*
 * Landlock governs filesystem access, but connecting to a *pathname* unix socket is not a
 * filesystem write it covers (only creating the socket file is), and ABI 6 scoping covers
 * abstract sockets only. A sandboxed `tmux send-keys -t outside 'rm -rf ~' Enter` would make an
 * unconfined tmux server outside the sandbox run anything. So socket(AF_UNIX, ...) fails with
 * EACCES unless the server allows it (--allow-unix-sockets). socketpair() stays allowed: libuv
 * (Node), Python and shells use it for pipes, and it cannot reach anything outside.
 *
 * On x86_64, x32 syscalls (nr | 0x40000000) are a second syscall table the filter would have to
 * mirror, so they are refused. Any other audit arch (e.g. i386 via int 0x80, whose socketcall()
 * multiplexer hides the socket family in memory a filter cannot read) is refused outright.
 */
#define X32_SYSCALL_BIT 0x40000000U
#define NR_SOCKET_X86_64 41
#define NR_SOCKET_AARCH64 198

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the seccomp filter reads the low word of args[0] at offset 0: little-endian only"
#endif

void apply_seccomp(void) {
    enum { /* instruction indexes, for the jump offsets below */
           L_ARCH_X86 = 3,
           L_ARCH_ARM = 6,
           L_CHECK_FAMILY = 8,
           L_ALLOW = 10,
           L_FOREIGN = 11,
           L_DENY = 12 };
#define JUMP(from, to) ((to) - (from) - 1)
    struct sock_filter filter[] = {
        /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, JUMP(1, L_ARCH_X86), 0),
        /* 2 */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, JUMP(2, L_ARCH_ARM),
                 JUMP(2, L_FOREIGN)),
        /* 3: x86_64 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* 4 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, JUMP(4, L_DENY), 0),
        /* 5 */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_SOCKET_X86_64, JUMP(5, L_CHECK_FAMILY),
                 JUMP(5, L_ALLOW)),
        /* 6: aarch64 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* 7 */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_SOCKET_AARCH64, JUMP(7, L_CHECK_FAMILY),
                 JUMP(7, L_ALLOW)),
        /* 8: socket(): the family is an int, the kernel ignores the upper half of the register */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, JUMP(9, L_DENY), JUMP(9, L_ALLOW)),
        /* 10 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* 11 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        /* 12 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
    };
#undef JUMP
    _Static_assert(sizeof filter / sizeof *filter == L_DENY + 1, "jump labels out of date");
    struct sock_fprog prog = {.len = (unsigned short)(sizeof filter / sizeof *filter),
                              .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        die(EXIT_HELPER, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
        die(EXIT_HELPER, "cannot install the seccomp filter: %s", strerror(errno));
}
