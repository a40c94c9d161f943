#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios)
# against ahma-shell over Streamable HTTP (SPEC §6): starts the built
#   ahma-shell --mode http --http-host 127.0.0.1 --http-no-auth --http-port 0 --sandbox-scope <a temp dir>
# reads the URL from its `listening on http://HOST:PORT/mcp` line on stderr, runs the scenarios of
# one protocol era with its baseline, then stops the server with SIGTERM and checks that it (and its
# process group) is gone. CONFORMANCE_CHECK_ERA chooses the era:
#   2025 (default)  the active suite at 2025-11-25, baseline conformance/expected-failures.yml
#   2026            the whole suite at 2026-07-28 and every scenario of the SEP-2663 tasks extension,
#                   baseline conformance/expected-failures-2026-07-28.yml; the server serves the
#                   fixture tools of test/fixtures/conformance-tools with --inline-wait 0
#
# The suite needs Node >= 22 (it imports fs.globSync); ahma-shell targets Node 20. The pinned
# Node 22 and the suite are installed by node22.sh into a cache directory this script creates
# (CONFORMANCE_CHECK_CACHE, default ${TMPDIR:-/tmp}/ahma-conformance-cache). Nothing is installed
# globally. The server runs on the node found on PATH (CONFORMANCE_CHECK_SERVER_NODE).
#
# Overrides, to run the harness against another server:
#   CONFORMANCE_CHECK_SERVER_CMD  a command line, run as `exec <it>` by bash in its own session;
#                                 it must print `listening on http://…` on stderr. The exported
#                                 CONFORMANCE_CHECK_SCOPE is a fresh empty directory it may use.
#   CONFORMANCE_CHECK_BASELINE    the expected-failures file (default conformance/expected-failures.yml)
#
# Exit codes: 0 passed (every failure is listed in the baseline, and no listed scenario passes);
# 1 the check failed; 77 skipped: nothing cached and the npm registry is unreachable.
set -euo pipefail

CONFORMANCE_VERSION=0.2.0-alpha.12
# The SEP-2663 scenarios: the suite runs an extension's scenarios only when named.
TASK_SCENARIOS=(tasks-lifecycle tasks-capability-negotiation tasks-wire-fields
  tasks-request-state-removal tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope
  tasks-status-notifications tasks-required-task-error tasks-mrtr-composition)
SKIP=77
START_TIMEOUT_S=30
RUN_TIMEOUT_S=600
STOP_TIMEOUT_S=10

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
package_dir=$(dirname "$here")
server_bin="$package_dir/bin/ahma-shell.js"
server_node=${CONFORMANCE_CHECK_SERVER_NODE:-$(command -v node)}
cache=${CONFORMANCE_CHECK_CACHE:-${TMPDIR:-/tmp}/ahma-conformance-cache}
server_cmd=${CONFORMANCE_CHECK_SERVER_CMD:-}
era=${CONFORMANCE_CHECK_ERA:-2025}
case "$era" in
  2025)
    # The revision the scenarios run at: without it the suite also runs the scenarios of the
    # stateless 2026-07-28 revision, at that wire version (the 2026 run below covers them).
    runs=("--suite active --spec-version 2025-11-25")
    default_baseline=expected-failures.yml
    server_args=()
    ;;
  2026)
    runs=("--suite all --spec-version 2026-07-28")
    for scenario in "${TASK_SCENARIOS[@]}"; do runs+=("--scenario $scenario"); done
    default_baseline=expected-failures-2026-07-28.yml
    server_args=(--tools-dir "$package_dir/test/fixtures/conformance-tools" --inline-wait 0)
    ;;
  *) echo "conformance-check: CONFORMANCE_CHECK_ERA must be 2025 or 2026, not $era" >&2 && exit 1 ;;
esac
baseline=${CONFORMANCE_CHECK_BASELINE:-$package_dir/conformance/$default_baseline}

fail() {
  echo "conformance-check: FAILED: $*" >&2
  exit 1
}
skip() {
  echo "conformance-check: SKIPPED: $*" >&2
  exit "$SKIP"
}

# shellcheck source=node22.sh
source "$here/node22.sh"
node22_init "$cache" conformance-check

[[ -f "$baseline" ]] || fail "no baseline at $baseline"
if [[ -z "$server_cmd" ]]; then
  [[ -f "$server_bin" && -f "$package_dir/dist/cli.js" ]] ||
    fail "$server_bin is not built; run: pnpm --filter @ahma/core --filter @ahma/shell-server build"
fi

# A throwaway sandbox scope outside /tmp, and private HOME/TMPDIR/XDG_* for the server and the
# suite, so no log or state lands in the user's directories.
work=$(mktemp -d "${TMPDIR:-/tmp}/ahma-conformance-run.XXXXXX")
scope=$(mktemp -d /var/tmp/ahma-conformance-scope.XXXXXX)
mkdir -p "$work/home" "$work/tmp" "$work/cache" "$work/state"
server_pid=
started_groups=()

# Is any process of the server's process group still alive (zombies aside)?
group_alive() {
  ps -eo pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'
}
cleanup() {
  local group
  for group in "${started_groups[@]}"; do
    group_alive "$group" && kill -KILL -- "-$group" 2>/dev/null
  done
  rm -rf "$work" "$scope"
}
trap cleanup EXIT

# Starts the server in its own session (so its process group can be checked and killed as one),
# and sets server_pid and url, or returns 1 if it exited before printing its URL.
start_server() {
  local -a cmd=("$@")
  : >"$work/server.err"
  HOME="$work/home" TMPDIR="$work/tmp" XDG_CACHE_HOME="$work/cache" XDG_STATE_HOME="$work/state" \
    CONFORMANCE_CHECK_SCOPE="$scope" \
    setsid "${cmd[@]}" </dev/null >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
  started_groups+=("$server_pid")
  local deadline=$((SECONDS + START_TIMEOUT_S))
  url=
  while ((SECONDS < deadline)); do
    url=$(grep -o -m1 'listening on http://[^[:space:]]*' "$work/server.err" | sed 's/^listening on //') || true
    [[ -n "$url" ]] && return 0
    if ! kill -0 "$server_pid" 2>/dev/null || [[ "$(ps -o stat= -p "$server_pid")" == Z* ]]; then
      wait "$server_pid" 2>/dev/null || true
      server_pid=
      return 1
    fi
    sleep 0.1
  done
  cat "$work/server.err" >&2
  fail "the server printed no 'listening on http://…' line within ${START_TIMEOUT_S}s"
}

if [[ -n "$server_cmd" ]]; then
  server_desc="CONFORMANCE_CHECK_SERVER_CMD: $server_cmd"
  start_server bash -c "exec $server_cmd" || {
    cat "$work/server.err" >&2
    fail "the server exited before printing its URL ($server_desc)"
  }
else
  # --http-no-auth: the suite's server scenarios send no Authorization header (R8.10's token is
  # tested by the e2e suite); loopback only, as the flag insists.
  ahma=("$server_node" "$server_bin" --mode http --http-host 127.0.0.1 --http-no-auth "${server_args[@]}")
  server_desc="${ahma[*]} --http-port 0 --sandbox-scope $scope"
  if ! start_server "${ahma[@]}" --http-port 0 --sandbox-scope "$scope"; then
    cat "$work/server.err" >&2
    fail "the server exited before printing its URL ($server_desc)"
  fi
fi
[[ "$(ps -o pgid= -p "$server_pid" | tr -d ' ')" == "$server_pid" ]] ||
  fail "the server (pid $server_pid) is not the leader of its own process group"

conformance_dir="$cache/conformance-$CONFORMANCE_VERSION"
conformance="$conformance_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ ! -x "$node22" || ! -f "$conformance" ]]; then
  registry_reachable ||
    skip "the npm registry is unreachable and $cache holds no conformance $CONFORMANCE_VERSION / Node $NODE22_VERSION"
fi
node22_ensure
[[ -f "$conformance" ]] || node22_npm_install "$conformance_dir" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
[[ -f "$conformance" ]] || fail "the conformance CLI is missing at $conformance"
conformance_version=$("$node22" "$conformance" --version)
[[ "$conformance_version" == "$CONFORMANCE_VERSION" ]] ||
  fail "expected conformance $CONFORMANCE_VERSION, got: $conformance_version"

echo "conformance-check: @modelcontextprotocol/conformance $conformance_version on Node $("$node22" --version)"
echo "conformance-check: server: $server_desc"
echo "conformance-check: server scenarios of the $era era against $url"
echo "conformance-check: baseline $baseline"

# The suite runs in the work directory, each scenario's checks saved in results/. Its report always
# has ANSI colours: they are stripped so it can be read back. Every run is judged by the baseline;
# the first that fails decides the status.
status=0
: >"$work/report.raw"
for run in "${runs[@]}"; do
  echo "=== conformance server ${run}" >>"$work/report.raw"
  set +e
  # shellcheck disable=SC2086 # each run is a few words of options, split on purpose
  (cd "$work" && HOME="$work/home" timeout "$RUN_TIMEOUT_S" \
    "$node22" "$conformance" server --url "$url" $run \
    --expected-failures "$baseline" --output-dir "$work/results") >>"$work/report.raw" 2>&1
  run_status=$?
  set -e
  ((status != 0)) || status=$run_status
done
sed 's/\x1b\[[0-9;]*m//g' "$work/report.raw" >"$work/report.txt"
cat "$work/report.txt"

# The server must have survived the whole suite, and must stop on SIGTERM, process group and all.
server_alive=1
kill -0 "$server_pid" 2>/dev/null && [[ "$(ps -o stat= -p "$server_pid")" != Z* ]] || server_alive=0
if ((server_alive)); then
  kill -TERM "$server_pid"
  deadline=$((SECONDS + STOP_TIMEOUT_S))
  while group_alive "$server_pid" && ((SECONDS < deadline)); do sleep 0.1; done
  if group_alive "$server_pid"; then
    ps -o pid=,stat=,args= -g "$server_pid" >&2 || true
    fail "the server's process group is still running ${STOP_TIMEOUT_S}s after SIGTERM"
  fi
  stop_status=0
  wait "$server_pid" 2>/dev/null || stop_status=$?
  echo "conformance-check: the server stopped on SIGTERM (exit status $stop_status)"
fi
server_pid=

((status != 124)) || fail "the suite did not finish within ${RUN_TIMEOUT_S}s"
if ((!server_alive)); then
  tail -n 40 "$work/server.err" >&2
  fail "the server died during the suite"
fi
# Scenarios: the `✓ name: …`/`✗ name: …` lines of the summary. Expected failures: the scenarios
# named by the report's `  ~ scenario[:check]` lines (a scenario may have several baselined checks).
# A run of one named scenario prints no summary: it counts as one.
scenarios=$(sed -n '/^=== SUMMARY ===$/,/^Total: /p' "$work/report.txt" | grep -cE '^(✓|✗) ') || true
scenarios=$((scenarios + ${#runs[@]} - 1))
expected=$(sed -n '/^Expected failures (in baseline):$/,/^$/p' "$work/report.txt" |
  sed -n 's/^  ~ \([^:]*\).*/\1/p' | sort -u | wc -l)
if ((status != 0)); then
  # The suite's report names failing scenarios only: list every failing check as a baseline entry
  # would name it, with its message.
  echo "conformance-check: failing checks (the baseline entry, then the suite's message):"
  "$node22" - "$work/results" <<'EOF' || true
const { readdirSync, readFileSync } = require('node:fs');
const dir = process.argv[2];
for (const name of readdirSync(dir).sort()) {
  const scenario = name.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
  for (const check of JSON.parse(readFileSync(`${dir}/${name}/checks.json`, 'utf8'))) {
    if (check.status !== 'FAILURE' && check.status !== 'WARNING') continue;
    const message = (check.errorMessage ?? '').split('\n')[0].slice(0, 200);
    console.log(`  ${scenario}:${check.id} (${check.status}) ${message}`);
  }
}
EOF
  tail -n 40 "$work/server.err" >&2
  fail "the suite exited with status $status: see 'Unexpected failures' and 'Stale baseline entries' above"
fi
((scenarios > 0)) || fail "no scenario ran (no === SUMMARY === in the report)"
echo "conformance-check: OK ($((scenarios - expected)) passed, $expected expected failures)"
