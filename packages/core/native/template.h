/*
 * The template shell (template.c): one warm bash, with the ahma-unit.so builtin loaded, that
 * clones the pool's shell units so they need no bash start-up of their own.
 */
#ifndef AHMA_SANDBOX_TEMPLATE_H
#define AHMA_SANDBOX_TEMPLATE_H

#include <sys/types.h>

/*
 * The script a shell unit's B runs, in a copy of the template or in a bash of its own: wait for
 * the go byte, read the request, change to its directory, export its environment entries, run its
 * script. Expects `__ahma_scope` set (empty: no check of the directory).
 *
 * The request is cwd, zero or more `=NAME=VALUE` entries (names checked by the zygote, none of
 * them ours: `__ahma_*` is refused), the mode, the script. `export "NAME=VALUE"` takes the value
 * as it is: nothing in it is expanded or run. The entries are exported on the line that takes the
 * script, so the bootstrap keeps its number of lines: a script's line numbers (LINENO, errors)
 * follow the line of the eval at its end.
 *
 * bash's `cd` resolves a path by itself and then changes to it by name, so a directory swapped
 * for a symlink in between puts the shell elsewhere while $PWD still names the checked path. The
 * check therefore asks the kernel: as many `..` as the path has components below the scope,
 * resolved from where the shell really is, must be the scope itself (`-ef`: same device and
 * inode). All builtins: no fork on the way.
 */
#define SHELL_UNIT_BOOTSTRAP                                                                      \
    "IFS= read -r -d '' __ahma_go <&3 || exit 125\n" /* no NUL: the request is incomplete */     \
    "set --; RANDOM=${SRANDOM:-$$}; SECONDS=0\n" /* fresh, even in a copy of the template */      \
    "mapfile -d '' -t __ahma_req <&4\n"    /* cwd, =NAME=VALUE entries, mode (shell), script */   \
    "exec 3<&- 4<&-\n"                                                                            \
    "(( ${#__ahma_req[@]} >= 3 )) && [[ ${__ahma_req[-2]} == shell ]] || exit 125\n"              \
    "cd -P -- \"${__ahma_req[0]}\" || exit 125\n"                                                 \
    "if [[ -n $__ahma_scope ]]; then\n"                                                           \
    "  __ahma_below=${__ahma_req[0]#\"$__ahma_scope\"}; __ahma_up=.\n"                            \
    "  if [[ $__ahma_below == \"${__ahma_req[0]}\" ||"                                           \
    " ( -n $__ahma_below && $__ahma_below != /* ) ]]; then\n"                                     \
    "    __ahma_up=/nonexistent/\n" /* not beneath the scope by name */                          \
    "  elif [[ -n $__ahma_below ]]; then\n"                                                       \
    "    __ahma_below=${__ahma_below//[^\\/]/}; printf -v __ahma_up '%*s' ${#__ahma_below} ''\n"  \
    "    __ahma_up=${__ahma_up// /../}\n"                                                         \
    "  fi\n"                                                                                      \
    "  if ! [[ $__ahma_up -ef $__ahma_scope ]]; then\n"                                           \
    "    echo \"ahma-sandbox: ${__ahma_req[0]} is not inside the scope $__ahma_scope\""           \
    " \"(did it change after it was checked?)\" >&2; exit 125\n"                                  \
    "  fi\n"                                                                                      \
    "fi\n"                                                                                        \
    "__ahma_script=${__ahma_req[-1]}; for __ahma_env in"                                          \
    " \"${__ahma_req[@]:1:${#__ahma_req[@]}-3}\"; do export \"${__ahma_env#=}\" || exit 125; done\n" \
    "unset __ahma_go __ahma_req __ahma_scope __ahma_below __ahma_up __ahma_env\n"                 \
    "eval \"unset __ahma_script; $__ahma_script\"\n"

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
