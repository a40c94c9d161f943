#!/usr/bin/env bash
# Runs the official MCP Inspector CLI against the built ahma-shell over stdio: tools/list, then a
# sandboxed_shell call (the server runs with --sync so the call returns the command's output), then,
# without --sync, an async call that answers inline and one that asks to block with execution_mode
# (SPEC §3: a one-shot client like the Inspector CLI gets the result in the call's response), and
# last the same in the 2026-07-28 era (--protocol-era modern).
#
# The Inspector 2.x needs Node >= 22.19; ahma-shell targets Node 20. A pinned Node 22 binary is
# taken from the npm package node-linux-<arch> and the Inspector is installed next to it (both by
# node22.sh), in a cache directory this script creates (INSPECTOR_CHECK_CACHE, default
# ${TMPDIR:-/tmp}/ahma-inspector-cache). Nothing is installed globally. The server itself runs on
# the node found on PATH (override with INSPECTOR_CHECK_SERVER_NODE).
#
# Exit codes: 0 passed; 1 the check failed; 77 skipped (nothing cached and the npm registry is
# unreachable).
set -euo pipefail

INSPECTOR_VERSION=2.12.0
SKIP=77

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
package_dir=$(dirname "$here")
server_bin="$package_dir/bin/ahma-shell.js"
server_node=${INSPECTOR_CHECK_SERVER_NODE:-$(command -v node)}
cache=${INSPECTOR_CHECK_CACHE:-${TMPDIR:-/tmp}/ahma-inspector-cache}

fail() {
  echo "inspector-check: FAILED: $*" >&2
  exit 1
}

# shellcheck source=node22.sh
source "$here/node22.sh"
node22_init "$cache" inspector-check

[[ -f "$server_bin" && -f "$package_dir/dist/cli.js" ]] ||
  fail "$server_bin is not built; run: pnpm --filter @ahma/core --filter @ahma/shell-server build"

inspector_dir="$cache/inspector-$INSPECTOR_VERSION"
inspector="$inspector_dir/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"

if [[ ! -x "$node22" || ! -f "$inspector" ]]; then
  if ! registry_reachable; then
    echo "inspector-check: SKIPPED: the npm registry is unreachable and $cache holds no Inspector $INSPECTOR_VERSION / Node $NODE22_VERSION" >&2
    exit "$SKIP"
  fi
fi
node22_ensure
[[ -f "$inspector" ]] || node22_npm_install "$inspector_dir" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
[[ -f "$inspector" ]] || fail "the Inspector launcher is missing at $inspector"
inspector_version=$("$node22" "$inspector" --cli --version)
[[ "$inspector_version" == *"$INSPECTOR_VERSION"* ]] ||
  fail "expected Inspector $INSPECTOR_VERSION, got: $inspector_version"

# A throwaway sandbox scope outside /tmp, and a private HOME/TMPDIR/XDG_CACHE_HOME so neither the
# Inspector's state nor the server's logs land in the user's directories.
work=$(mktemp -d "${TMPDIR:-/tmp}/ahma-inspector-run.XXXXXX")
scope=$(mktemp -d /var/tmp/ahma-inspector-scope.XXXXXX)
trap 'rm -rf "$work" "$scope"' EXIT
mkdir -p "$work/home" "$work/tmp" "$work/cache"

inspect() {
  HOME="$work/home" timeout 60 "$node22" "$inspector" --cli \
    -e "XDG_CACHE_HOME=$work/cache" -e "TMPDIR=$work/tmp" -e "PATH=$PATH" \
    "$@" \
    -- "$server_node" "$server_bin" --mode stdio --sandbox-scope "$scope" "${server_flags[@]}"
}
server_flags=(--sync)

echo "inspector-check: MCP Inspector $inspector_version on Node $("$node22" --version); server on Node $("$server_node" --version)"

echo "inspector-check: --method tools/list"
list_output=$(inspect --method tools/list 2>"$work/list.err") || {
  cat "$work/list.err" >&2
  fail "tools/list exited non-zero"
}
grep -q '"name": "sandboxed_shell"' <<<"$list_output" || {
  printf '%s\n' "$list_output" >&2
  fail "tools/list does not list sandboxed_shell"
}
for tool in status await cancel; do
  grep -q "\"name\": \"$tool\"" <<<"$list_output" || fail "tools/list does not list $tool"
done
printf '%s\n' "$list_output" | grep '"name": "' | sed 's/^ */  /'

echo "inspector-check: --method tools/call --tool-name sandboxed_shell --tool-arg command='echo inspector-ok'"
call_output=$(inspect --method tools/call --tool-name sandboxed_shell --tool-arg "command=echo inspector-ok" 2>"$work/call.err") || {
  cat "$work/call.err" >&2
  fail "tools/call exited non-zero"
}
printf '%s\n' "$call_output"
grep -q 'inspector-ok' <<<"$call_output" || fail "the sandboxed_shell call did not return inspector-ok"
grep -q '"status": "completed"' <<<"$call_output" || fail "the sandboxed_shell call did not complete"
grep -q '"isError": false' <<<"$call_output" || fail "the sandboxed_shell call reported an error"

server_flags=()
echo "inspector-check: (async) --method tools/call --tool-name sandboxed_shell --tool-arg command='echo inline-ok'"
inline_output=$(inspect --method tools/call --tool-name sandboxed_shell --tool-arg "command=echo inline-ok" 2>"$work/inline.err") || {
  cat "$work/inline.err" >&2
  fail "the async tools/call exited non-zero"
}
grep -q 'inline-ok' <<<"$inline_output" || fail "the quick async call did not answer inline: $inline_output"

echo "inspector-check: (async) sandboxed_shell 'sleep 6; echo blocked-ok' with execution_mode=Synchronous"
blocking_output=$(inspect --method tools/call --tool-name sandboxed_shell \
  --tool-arg "command=sleep 6; echo blocked-ok" --tool-arg "execution_mode=Synchronous" 2>"$work/blocking.err") || {
  cat "$work/blocking.err" >&2
  fail "the execution_mode=Synchronous tools/call exited non-zero"
}
grep -q 'blocked-ok' <<<"$blocking_output" || fail "execution_mode=Synchronous did not block for the result: $blocking_output"

# The 2026-07-28 era (SPEC §12): the Inspector opens with server/discover, every request carries
# the _meta envelope. A command outlasting the inline wait still answers with its output (through
# a task, or the call kept open), never a `started` whose push this era cannot carry.
server_flags=(--inline-wait 1)
echo "inspector-check: --protocol-era modern --method tools/list"
modern_list=$(inspect --protocol-era modern --method tools/list 2>"$work/modern-list.err") || {
  cat "$work/modern-list.err" >&2
  fail "tools/list in the 2026-07-28 era exited non-zero"
}
grep -q '"name": "sandboxed_shell"' <<<"$modern_list" || fail "the 2026-07-28 tools/list lacks sandboxed_shell"
echo "inspector-check: --protocol-era modern sandboxed_shell 'sleep 3; echo modern-ok' (longer than the inline wait)"
modern_call=$(inspect --protocol-era modern --method tools/call --tool-name sandboxed_shell \
  --tool-arg "command=sleep 3; echo modern-ok" 2>"$work/modern-call.err") || {
  cat "$work/modern-call.err" >&2
  fail "tools/call in the 2026-07-28 era exited non-zero"
}
printf '%s\n' "$modern_call"
grep -q 'modern-ok' <<<"$modern_call" || fail "the 2026-07-28 call did not deliver its output: $modern_call"
grep -q '"status": "completed"' <<<"$modern_call" || fail "the 2026-07-28 call did not complete"

echo "inspector-check: OK"
