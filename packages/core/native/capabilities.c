/*
 * Dropping every capability (SPEC R7.6). Landlock confines paths, but root's capabilities reach
 * past it: CAP_MKNOD makes devices, CAP_SYS_ADMIN types into other terminals (TIOCSTI), CAP_CHOWN
 * and CAP_FOWNER change any file's owner and mode, CAP_DAC_OVERRIDE reads any file. A process
 * running as root with no capabilities is an ordinary user whose uid happens to be 0.
 *
 * The bounding set is what exec can grant (root regains every capability in it at each exec), so
 * it goes first, while CAP_SETPCAP is still held. An ordinary user cannot empty the bounding set
 * (that takes CAP_SETPCAP), but needs to: with no_new_privs, exec never adds a capability to a
 * process whose uid is not 0.
 */
#define _GNU_SOURCE

#include "capabilities.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "common.h"

/* The highest capability the running kernel knows (newer than our headers, perhaps). */
static int last_capability(void) {
    int last = CAP_LAST_CAP;
    FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
    if (f != NULL) {
        if (fscanf(f, "%d", &last) != 1) last = CAP_LAST_CAP;
        fclose(f);
    }
    return last;
}

void drop_capabilities(void) {
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &header, data) != 0)
        die(EXIT_HELPER, "capget: %s", strerror(errno));
    int has_setpcap = (data[0].effective & (1U << CAP_SETPCAP)) != 0;
    for (int cap = 0; cap <= last_capability(); cap++) {
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1) continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && has_setpcap)
            die(EXIT_HELPER, "cannot drop capability %d from the bounding set: %s", cap,
                strerror(errno));
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        die(EXIT_HELPER, "cannot clear the ambient capabilities: %s", strerror(errno));
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) != 0)
        die(EXIT_HELPER, "cannot drop capabilities: %s", strerror(errno));
}
