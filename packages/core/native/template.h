/*
 * The template shell (template.c): one warm bash, with the ahma-unit.so builtin loaded, that
 * clones the pool's shell units so they need no bash start-up of their own.
 */
#ifndef AHMA_SANDBOX_TEMPLATE_H
#define AHMA_SANDBOX_TEMPLATE_H

#include <sys/types.h>

/*
 * What a shell unit's B runs, in a copy of the template or in a bash of its own: wait for the go
 * byte, read the request, change to its directory, export its environment entries, run its
 * script. Expects `__ahma_scope` set (empty: no check of the directory).
 *
 * The request is cwd, zero or more `=NAME=VALUE` entries (names checked by the zygote, none of
 * them ours: `__ahma_*` is refused), the mode, the script. `export "NAME=VALUE"` takes the value
 * as it is: nothing in it is expanded or run.
 *
 * Everything stands on the first line of the shell's `-c` string. bash parses a line as a whole
 * before it runs any of it, so the template parses the set-up once and each copy only runs it,
 * and a script's line numbers (LINENO, errors) are its own, as in `bash -c SCRIPT`. The set-up is a function, removed before the script runs;
 * `set --` and the `eval` stay outside it (in a function they would act on its arguments and its
 * scope).
 *
 * bash's `cd` resolves a path by itself and then changes to it by name, so a directory swapped
 * for a symlink in between puts the shell elsewhere while $PWD still names the checked path. The
 * check therefore asks the kernel: as many `..` as the path has components below the scope,
 * resolved from where the shell really is, must be the scope itself (`-ef`: same device and
 * inode). All builtins: no fork on the way.
 */
#define SHELL_UNIT_SETUP                                                                          \
    "__ahma_setup() { "                                                                           \
    "IFS= read -r -d '' __ahma_go <&3 || exit 125; " /* no NUL: the request is incomplete */     \
    "mapfile -d '' -t __ahma_req <&4; "    /* cwd, =NAME=VALUE entries, mode (shell), script */   \
    "exec 3<&- 4<&-; "                                                                            \
    "(( ${#__ahma_req[@]} >= 3 )) && [[ ${__ahma_req[-2]} == shell ]] || exit 125; "              \
    "cd -P -- \"${__ahma_req[0]}\" || exit 125; "                                                 \
    "if [[ -n $__ahma_scope ]]; then "                                                            \
    "__ahma_below=${__ahma_req[0]#\"$__ahma_scope\"}; __ahma_up=.; "                              \
    "if [[ $__ahma_below == \"${__ahma_req[0]}\" ||"                                             \
    " ( -n $__ahma_below && $__ahma_below != /* ) ]]; then "                                      \
    "__ahma_up=/nonexistent/; " /* not beneath the scope by name */                               \
    "elif [[ -n $__ahma_below ]]; then "                                                          \
    "__ahma_below=${__ahma_below//[^\\/]/}; printf -v __ahma_up '%*s' ${#__ahma_below} ''; "      \
    "__ahma_up=${__ahma_up// /../}; "                                                             \
    "fi; "                                                                                        \
    "if ! [[ $__ahma_up -ef $__ahma_scope ]]; then "                                              \
    "echo \"ahma-sandbox: ${__ahma_req[0]} is not inside the scope $__ahma_scope\""               \
    " \"(did it change after it was checked?)\" >&2; exit 125; "                                  \
    "fi; "                                                                                        \
    "fi; "                                                                                        \
    "__ahma_script=${__ahma_req[-1]}; for __ahma_env in"                                          \
    " \"${__ahma_req[@]:1:${#__ahma_req[@]}-3}\"; do export \"${__ahma_env#=}\" || exit 125; done; " \
    "unset __ahma_go __ahma_req __ahma_scope __ahma_below __ahma_up __ahma_env; }; "

/* After the set-up (and, in the template, after `ahma_unit` returned in B): fresh positional
 * parameters, RANDOM seed and SECONDS, even in a copy of the template; then the script. */
#define SHELL_UNIT_RUN                                                                            \
    "__ahma_setup; unset -f __ahma_setup; set --; RANDOM=${SRANDOM:-$$}; SECONDS=0; "             \
    "eval \"unset __ahma_script; $__ahma_script\""

/* The template's pid while it runs (it is a child of the zygote), else -1. */
extern pid_t template_pid;

/*
 * Starts the template when the shell is bash and ahma-unit.so lies beside this executable;
 * otherwise (or when it fails) shell units are forked and started the classic way.
 */
void start_template(pid_t zygote);

/* clone_from_template() lost the template after handing it the descriptors. */
#define TEMPLATE_FATE_UNKNOWN (-2)

/*
 * Has the template clone a unit whose supervisor gets these descriptors; returns the supervisor's
 * pid (a child of the zygote); -1 when the template cannot (fork a classic unit with the same
 * descriptors); TEMPLATE_FATE_UNKNOWN when it received them but gave no valid answer (a unit of
 * its may hold them: use new ones).
 */
pid_t clone_from_template(int go_r, int body, int out_w);

/* The template was reaped, or must go (shutdown): stop using it. */
void template_gone(int reaped);

#endif
