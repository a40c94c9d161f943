/*
 * The seccomp half of the sandbox (SPEC R7.6): system calls a command never needs and that reach
 * past what Landlock confines, modelled on Docker's default profile. One filter, built from the
 * table below for the architecture the helper was compiled for; every process the helper starts
 * inherits it, and no_new_privs keeps a command from dropping it.
 */
#define _GNU_SOURCE

#include "seccomp.h"

#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "common.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the filter reads the low word of an argument at its offset: little-endian only"
#endif

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "the seccomp filter knows x86_64 and aarch64"
#endif

/* System calls newer than some C libraries' headers: one number on every architecture. */
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#define SYS_io_uring_enter 426
#define SYS_io_uring_register 427
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#define SYS_move_mount 429
#define SYS_fsopen 430
#define SYS_fsconfig 431
#define SYS_fsmount 432
#define SYS_fspick 433
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Creating any namespace: a new user namespace hands out capabilities inside it, and every kind
 * is kernel attack surface a build or test never needs. (In clone(), 0x80 is part of the exit
 * signal, so CLONE_NEWTIME is checked for unshare() only.) */
#define NEW_NAMESPACES                                                                            \
    (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | \
     CLONE_NEWNET)
#define SET_ID_BITS (S_ISUID | S_ISGID)

enum check {
    ALWAYS,   /* every call */
    ARG_IS,   /* (low word of args[arg] & mask) == value */
    ARG_HAS,  /* (low word of args[arg] & mask) != 0 */
    ARG_NOT,  /* (low word of args[arg] & mask) != value */
};

struct rule {
    long nr;
    enum check check;
    unsigned arg;
    uint32_t mask, value;
    int err; /* the errno the call fails with */
};

#define DENY(nr) {nr, ALWAYS, 0, 0, 0, EPERM}
#define DENY_IF_IS(nr, arg, mask, value) {nr, ARG_IS, arg, mask, value, EPERM}
#define DENY_IF_HAS(nr, arg, mask) {nr, ARG_HAS, arg, mask, 0, EPERM}

static const struct rule deny_list[] = {
    /* io_uring runs operations (socket, connect, open) outside the system calls filtered here. */
    DENY(SYS_io_uring_setup),
    DENY(SYS_io_uring_enter),
    DENY(SYS_io_uring_register),
    /* Typing into a terminal outside (TIOCSTI) and the Linux console's ioctl (TIOCLINUX). */
    DENY_IF_IS(SYS_ioctl, 1, 0xffffffffU, TIOCSTI),
    DENY_IF_IS(SYS_ioctl, 1, 0xffffffffU, TIOCLINUX),
    /* Device nodes: a block or character device made in the scope would reach any disk. */
#ifdef SYS_mknod
    DENY_IF_IS(SYS_mknod, 1, S_IFMT, S_IFBLK),
    DENY_IF_IS(SYS_mknod, 1, S_IFMT, S_IFCHR),
#endif
    DENY_IF_IS(SYS_mknodat, 2, S_IFMT, S_IFBLK),
    DENY_IF_IS(SYS_mknodat, 2, S_IFMT, S_IFCHR),
    /* Set-user-ID and set-group-ID bits: Landlock does not see chmod, anywhere; and a file can be
     * created with them (open's or mknod's mode). C libraries pass a mode of 0 when O_CREAT is
     * not given, so the mode is checked whatever the flags. openat2() hides its mode in memory:
     * ENOSYS, on which callers fall back to openat(). */
#ifdef SYS_chmod
    DENY_IF_HAS(SYS_chmod, 1, SET_ID_BITS),
#endif
    DENY_IF_HAS(SYS_fchmod, 1, SET_ID_BITS),
    DENY_IF_HAS(SYS_fchmodat, 2, SET_ID_BITS),
    DENY_IF_HAS(SYS_fchmodat2, 2, SET_ID_BITS),
#ifdef SYS_open
    DENY_IF_HAS(SYS_open, 2, SET_ID_BITS),
    DENY_IF_HAS(SYS_creat, 1, SET_ID_BITS),
#endif
#ifdef SYS_mknod
    DENY_IF_HAS(SYS_mknod, 1, SET_ID_BITS),
#endif
    DENY_IF_HAS(SYS_openat, 3, SET_ID_BITS),
    DENY_IF_HAS(SYS_mknodat, 2, SET_ID_BITS),
    {SYS_openat2, ALWAYS, 0, 0, 0, ENOSYS},
    /* Namespaces; clone3() hides its flags in memory, so it is refused with ENOSYS, which makes
     * the C library fall back to clone(), whose flags are checked. */
    DENY_IF_HAS(SYS_clone, 0, NEW_NAMESPACES),
    DENY_IF_HAS(SYS_unshare, 0, NEW_NAMESPACES | CLONE_NEWTIME),
    {SYS_clone3, ALWAYS, 0, 0, 0, ENOSYS},
    DENY(SYS_setns),
    /* Mounts (Landlock refuses them too, but only for the old mount() family). */
    DENY(SYS_mount),
    DENY(SYS_umount2),
    DENY(SYS_pivot_root),
    DENY(SYS_open_tree),
    DENY(SYS_move_mount),
    DENY(SYS_fsopen),
    DENY(SYS_fsconfig),
    DENY(SYS_fsmount),
    DENY(SYS_fspick),
    DENY(SYS_mount_setattr),
    /* Files by handle bypass path checks. */
    DENY(SYS_open_by_handle_at),
    /* Kernel keyrings, BPF, perf, userfaultfd: attack surface with no use in a build. */
    DENY(SYS_keyctl),
    DENY(SYS_add_key),
    DENY(SYS_request_key),
    DENY(SYS_bpf),
    DENY(SYS_perf_event_open),
    DENY(SYS_userfaultfd),
    /* The machine itself: modules, kexec, reboot, swap, accounting, the kernel log. */
    DENY(SYS_init_module),
    DENY(SYS_finit_module),
    DENY(SYS_delete_module),
    DENY(SYS_kexec_load),
#ifdef SYS_kexec_file_load
    DENY(SYS_kexec_file_load),
#endif
    DENY(SYS_reboot),
    DENY(SYS_swapon),
    DENY(SYS_swapoff),
    DENY(SYS_acct),
    DENY(SYS_syslog),
#ifdef SYS_iopl
    DENY(SYS_iopl),
    DENY(SYS_ioperm),
#endif
};

/*
 * Landlock governs filesystem access, but connecting to a *pathname* unix socket is not a
 * filesystem write it covers (only creating the socket file is), and ABI 6 scoping covers
 * abstract sockets only. A sandboxed `tmux send-keys -t outside 'rm -rf ~' Enter` would make an
 * unconfined tmux server outside the sandbox run anything. So socket(AF_UNIX, ...) fails with
 * EACCES unless the server allows it. socketpair() stays allowed: libuv (Node), Python and shells
 * use it for pipes, and it cannot reach anything outside.
 */
static const struct rule unix_socket_rule = {SYS_socket, ARG_IS, 0, 0xffffffffU, AF_UNIX, EACCES};

/*
 * --no-network (the server's --network none): a socket of any family but AF_UNIX fails with
 * EACCES — TCP and UDP of both IP versions, raw and packet sockets, netlink. (AF_UNIX itself is
 * refused too unless unix sockets are allowed; socketpair() stays.)
 */
static const struct rule network_socket_rule = {SYS_socket, ARG_NOT, 0, 0xffffffffU, AF_UNIX, EACCES};

/*
 * TCP Fast Open: sendto(), sendmsg() or sendmmsg() with MSG_FASTOPEN on an unconnected TCP socket
 * connects it inside the send, past the socket_connect hook where Landlock checks the port (tried
 * on Linux 6.18 with ABI 7: the data reached a port the ruleset did not grant). So the flag fails
 * with EACCES whatever the socket, with --no-network and --proxy-port alike (a TCP socket may be
 * inherited, and --proxy-port makes them). TCP_FASTOPEN_CONNECT needs no rule: with it, connect()
 * still passes the hook (refused there), and the send that follows goes where connect() may go.
 */
#define FASTOPEN_FLAG 0x20000000U /* MSG_FASTOPEN; older C libraries may lack it */
static const struct rule fastopen_rules[] = {
    {SYS_sendto, ARG_HAS, 3, FASTOPEN_FLAG, 0, EACCES},
    {SYS_sendmsg, ARG_HAS, 2, FASTOPEN_FLAG, 0, EACCES},
    {SYS_sendmmsg, ARG_HAS, 3, FASTOPEN_FLAG, 0, EACCES},
};

/*
 * --proxy-port: listen() on a TCP socket that was never bound binds it to an ephemeral port
 * without the socket_bind hook, so Landlock's refusal of binds would not keep a command from
 * accepting connections from outside (tried as above). listen() cannot tell a TCP socket from a
 * unix one, so it fails with EACCES for both: a unix-socket server (--allow-unix-sockets) needs
 * --network host or none.
 */
static const struct rule listen_rule = {SYS_listen, ALWAYS, 0, 0, 0, EACCES};

#define MAX_FILTER 512
struct program {
    struct sock_filter insn[MAX_FILTER];
    unsigned short len;
};

static void emit(struct program *p, struct sock_filter insn) {
    if (p->len == MAX_FILTER) die(EXIT_HELPER, "seccomp filter too long");
    p->insn[p->len++] = insn;
}

static struct sock_filter ret_errno(int err) {
    return (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
}

/* The low word of an argument (the kernel reads these as 32-bit values: int, mode_t, cmd). */
static struct sock_filter load_arg(unsigned arg) {
    return (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                        offsetof(struct seccomp_data, args[0]) + 8 * arg);
}

static const struct sock_filter load_nr = BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                   offsetof(struct seccomp_data, nr));

/* One rule; expects the syscall number in A and leaves it there. */
static void emit_rule(struct program *p, const struct rule *r) {
    uint32_t nr = (uint32_t)r->nr;
    switch (r->check) {
    case ALWAYS:
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
        emit(p, ret_errno(r->err));
        return;
    case ARG_IS: /* nr? load arg, mask, compare: fail, or reload nr */
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 5));
        emit(p, load_arg(r->arg));
        emit(p, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, r->mask));
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->value, 0, 1));
        emit(p, ret_errno(r->err));
        emit(p, load_nr);
        return;
    case ARG_NOT: /* nr? load arg, mask, compare: equal goes on, else fail */
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 5));
        emit(p, load_arg(r->arg));
        emit(p, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, r->mask));
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->value, 1, 0));
        emit(p, ret_errno(r->err));
        emit(p, load_nr);
        return;
    case ARG_HAS:
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 4));
        emit(p, load_arg(r->arg));
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, r->mask, 0, 1));
        emit(p, ret_errno(r->err));
        emit(p, load_nr);
        return;
    }
}

/* A jump on A == k: jt and jf count the instructions skipped. */
static struct sock_filter jump_if(uint32_t k, uint8_t jt, uint8_t jf) {
    return (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf);
}

/*
 * --proxy-port: socket() is let through for AF_UNIX (its rule came before) and for TCP over IPv4
 * and IPv6, which Landlock then lets connect to the proxy's port only. Everything else fails with
 * EACCES: UDP (and so DNS: the proxy resolves names), raw, packet and netlink sockets, and stream
 * protocols Landlock does not see, SCTP and MPTCP (IPPROTO_MPTCP, 262) among them. The type is
 * compared without SOCK_NONBLOCK and SOCK_CLOEXEC (arg1 & 0xf, the kernel's SOCK_TYPE_MASK);
 * protocol 0 means TCP for an AF_INET/AF_INET6 stream. A rule of the table tests one argument, so
 * this is a sequence of its own. Expects the syscall number in A and leaves it there.
 */
static void emit_proxy_socket_rule(struct program *p) {
    emit(p, jump_if(SYS_socket, 0, 12));   /*  0  not socket(): to 13 */
    emit(p, load_arg(0));                   /*  1  the family */
    emit(p, jump_if(AF_UNIX, 9, 0));        /*  2  to 12 */
    emit(p, jump_if(AF_INET, 1, 0));        /*  3  to 5 */
    emit(p, jump_if(AF_INET6, 0, 6));       /*  4  else to 11 */
    emit(p, load_arg(1));                   /*  5  the type */
    emit(p, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf)); /*  6 */
    emit(p, jump_if(SOCK_STREAM, 0, 3));    /*  7  else to 11 */
    emit(p, load_arg(2));                   /*  8  the protocol */
    emit(p, jump_if(0, 2, 0));              /*  9  to 12 */
    emit(p, jump_if(IPPROTO_TCP, 1, 0));    /* 10  to 12 */
    emit(p, ret_errno(EACCES));             /* 11 */
    emit(p, load_nr);                       /* 12 */
                                            /* 13  the next rule */
}

void apply_seccomp(int allow_unix_sockets, enum network_mode network) {
    static struct program p; /* static: 4 KiB is more than a small stack should carry */
    p.len = 0;
    /* Another architecture's system calls (i386 through int 0x80: its socketcall() hides the
     * family in memory) would need a second table: refused outright. */
    emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, arch)));
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0));
    emit(&p, ret_errno(EPERM));
    emit(&p, load_nr);
#if defined(__x86_64__)
    /* x32 system calls (nr | 0x40000000) are a second table too. */
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1));
    emit(&p, ret_errno(EPERM));
#endif
    for (size_t i = 0; i < sizeof deny_list / sizeof *deny_list; i++) emit_rule(&p, &deny_list[i]);
    if (!allow_unix_sockets) emit_rule(&p, &unix_socket_rule);
    if (network == NETWORK_NONE) emit_rule(&p, &network_socket_rule);
    if (network == NETWORK_PROXY) {
        emit_proxy_socket_rule(&p);
        emit_rule(&p, &listen_rule);
    }
    if (network != NETWORK_HOST)
        for (size_t i = 0; i < sizeof fastopen_rules / sizeof *fastopen_rules; i++)
            emit_rule(&p, &fastopen_rules[i]);
    emit(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));

    struct sock_fprog prog = {.len = p.len, .filter = p.insn};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        die(EXIT_HELPER, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
        die(EXIT_HELPER, "cannot install the seccomp filter: %s", strerror(errno));
}
