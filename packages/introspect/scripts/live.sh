#!/usr/bin/env bash
# SPEC §15 introspection, measured live (docs/introspection.md): the built ahma-introspect on real
# programs, each file validated and measured against the hand-written expected lists
# (test/live/installed.live.ts). The programs missing here are fetched from Debian with
# `apt-get download`, with the library packages they need that are not installed, and unpacked with
# `dpkg -x` into a private prefix under /var/tmp, which is on PATH and LD_LIBRARY_PATH for this
# check alone and removed afterwards: nothing is installed system-wide (a system-wide gh would
# change what other tests see, and the machine is reused). A program that cannot be had so is
# skipped by the check, which says why; the check fails when fewer than twelve are measured.
#
#   bash packages/introspect/scripts/live.sh      (after pnpm build; .ci/run runs it)
set -euo pipefail
cd "$(dirname "$0")/.."

# The programs whose expected lists document Debian 12's version, and the package of each. cargo,
# docker and kubectl are measured when installed (their lists document rustup's cargo 1.95, Docker's
# 28.2 and kubectl 1.32): Debian's are years older (1.65, 20.10, 1.20), so they are not fetched.
declare -A PACKAGE=(
  [grep]=grep [sed]=sed [tar]=tar [find]=findutils [curl]=curl [rsync]=rsync [jq]=jq
  [git]=git [rg]=ripgrep [gh]=gh
)

prefix="$(mktemp -d /var/tmp/ahma-live-programs.XXXXXX)"
trap 'rm -rf "$prefix"' EXIT
root="$prefix/root"
mkdir -p "$root" "$prefix/debs"

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# The not-installed library packages a package needs, and theirs (three levels): what its program
# links. Other dependencies (daemons, compilers, helpers) are not needed to print its help.
libraries() {
  apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances --no-pre-depends "$@" 2>/dev/null |
    sed -n 's/^ *Depends: \([a-z0-9][a-z0-9.+-]*\).*$/\1/p' | grep '^lib' | sort -u
}

wanted=()
for program in "${!PACKAGE[@]}"; do
  command -v "$program" >/dev/null 2>&1 || wanted+=("${PACKAGE[$program]}")
done
# `python3 -m pip`: a Python without pip gets Debian's pip, on PYTHONPATH (below) for this check.
fetch_pip=false
if command -v python3 >/dev/null 2>&1 && ! python3 -m pip --version >/dev/null 2>&1; then
  fetch_pip=true
  wanted+=(python3-pip python3-setuptools python3-wheel python3-distutils)
fi
if [ "${#wanted[@]}" -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "live: fetching ${wanted[*]} into $root (not installed)"
  if apt-get update -qq >/dev/null 2>&1; then
    packages=("${wanted[@]}")
    level=("${wanted[@]}")
    for _ in 1 2 3; do
      next=()
      for library in $(libraries "${level[@]}"); do
        installed "$library" && continue
        [[ " ${packages[*]} " == *" $library "* ]] && continue
        next+=("$library")
        packages+=("$library")
      done
      [ "${#next[@]}" -eq 0 ] && break
      level=("${next[@]}")
    done
    # apt's download user must be able to write there.
    chmod 755 "$prefix" "$prefix/debs"
    for package in "${packages[@]}"; do
      (cd "$prefix/debs" && apt-get download -qq "$package" >/dev/null 2>&1) ||
        echo "live: $package could not be downloaded: its program is skipped"
    done
    for deb in "$prefix"/debs/*.deb; do
      if [ -e "$deb" ]; then dpkg -x "$deb" "$root"; fi
    done
  else
    echo "live: apt-get update failed: the missing programs are skipped"
  fi
fi

libraries_path="$(find "$root" -name '*.so*' -printf '%h\n' 2>/dev/null | sort -u | paste -sd: -)"
export AHMA_LIVE_PREFIX="$root"
if [ "$fetch_pip" = true ]; then
  export PYTHONPATH="$root/usr/lib/python3/dist-packages${PYTHONPATH:+:$PYTHONPATH}"
fi
export PATH="$root/usr/bin:$root/bin:$PATH"
# Only when there are libraries: an empty entry would mean the working directory.
if [ -n "$libraries_path" ]; then
  export LD_LIBRARY_PATH="${libraries_path}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
for program in "${!PACKAGE[@]}"; do
  path="$(command -v "$program" || true)"
  if [ -n "$path" ] && ldd "$path" 2>/dev/null | grep -q 'not found'; then
    echo "live: $path lacks a library: $(ldd "$path" | grep 'not found' | tr -s ' \t' ' ')"
  fi
done
pnpm run test:live
