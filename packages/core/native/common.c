/* The small utilities every part of the sandbox helper uses (declared in common.h). */
#define _GNU_SOURCE

#include "common.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

void die(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs(PROG ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

const char *scope_path;

int cwd_inside_scope(void) {
    if (scope_path == NULL) return 1;
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL) return 0;
    size_t n = strlen(scope_path);
    return strncmp(cwd, scope_path, n) == 0 && (cwd[n] == '\0' || cwd[n] == '/');
}

int is_real_path(int fd, const char *path) {
    char proc[64], real[PATH_MAX];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(proc, real, sizeof real - 1);
    if (n < 0) return 0;
    real[n] = '\0';
    return strcmp(real, path) == 0;
}

int64_t now_ms(void) {
    struct timespec ts = {0, 0};
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
