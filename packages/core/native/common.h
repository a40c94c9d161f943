/*
 * What every part of the sandbox helper shares (see ahma-sandbox.c for the whole picture): its
 * name in messages, its exit codes, and two small utilities.
 */
#ifndef AHMA_SANDBOX_COMMON_H
#define AHMA_SANDBOX_COMMON_H

#include <stdint.h>

#define PROG "ahma-sandbox"

/* Exit codes of the helper itself; otherwise it exits the way the command did. */
#define EXIT_UNAVAILABLE 78 /* EX_CONFIG: Landlock unavailable */
#define EXIT_HELPER 125     /* usage or setup error of the helper itself */
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

/* Prints "ahma-sandbox: MESSAGE" on stderr and exits with code. */
void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* Milliseconds on the monotonic clock: for deadlines, immune to changes of the wall clock. */
int64_t now_ms(void);

#endif
