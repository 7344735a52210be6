#!/usr/bin/env bash
# Install the etcd binaries the lab and the tests use:
#   3.4: Debian 12 packages etcd-server + etcd-client, installed system-wide (/usr/bin/etcd).
#   3.5: Debian sid packages, downloaded with a private apt source list and extracted into
#        .ferry-cache/etcd/3.5/ under the repository. Never installed system-wide: sid
#        packages would drag the system towards sid.
# Idempotent: does nothing for a version that is already present. Needs root for apt.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache_root="${FERRY_CACHE_DIR:-$repo_root/.ferry-cache}/etcd"
want_minor_sid="3.5"
sid_dir="$cache_root/$want_minor_sid"

# etcd reads every ETCD_* variable as a flag; etcdctl aborts on ETCDCTL_ENDPOINTS + --endpoints.
# Keep the version probes below independent of the caller's environment.
for v in $(compgen -e | grep -E '^(ETCD|ETCDCTL)_' || true); do unset "$v"; done

log() { printf 'install-etcd: %s\n' "$*" >&2; }
die() { printf 'install-etcd: error: %s\n' "$*" >&2; exit 1; }

# as_root, sid_fetch, keep_licences, swap_in
# shellcheck source=lib/sid-fetch.sh
. "$repo_root/scripts/lib/sid-fetch.sh"

# --- 3.4 from Debian 12 --------------------------------------------------------------------
if [ ! -x /usr/bin/etcd ] || [ ! -x /usr/bin/etcdctl ]; then
  log "installing etcd-server and etcd-client from Debian (3.4)"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y etcd-server etcd-client
else
  log "3.4: /usr/bin/etcd already present"
fi

# --- 3.5 from Debian sid, extracted into the cache ----------------------------------------
if [ ! -x "$sid_dir/usr/bin/etcd" ] || [ ! -x "$sid_dir/usr/bin/etcdctl" ]; then
  mkdir -p "$cache_root"
  work="$(mktemp -d "$cache_root/.fetch.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  sid_fetch "$work" etcd-server etcd-client
  [ -x "$work/root/usr/bin/etcd" ] || die "sid packages did not contain usr/bin/etcd"

  got="$("$work/root/usr/bin/etcd" --version | awk '/^etcd Version:/ { print $3 }')"
  case "$got" in
    "$want_minor_sid".*) ;;
    *) die "Debian sid now ships etcd $got, not $want_minor_sid.x; fetch $want_minor_sid another way" ;;
  esac
  # Keep only the binaries and their licence.
  keep_licences "$work" etcd-server etcd-client
  mv "$work/root/usr/bin" "$work/keep/usr/bin"
  swap_in "$work" "$sid_dir"
  trap - EXIT
else
  log "3.5: $sid_dir/usr/bin/etcd already present"
fi

# --- report --------------------------------------------------------------------------------
print_version() {
  local label="$1" bin="$2"
  printf '%s: %s (%s)\n' "$label" "$("$bin" --version | awk '/^etcd Version:/ { print $3 }')" "$bin"
}
print_version "etcd 3.4" /usr/bin/etcd
print_version "etcd 3.5" "$sid_dir/usr/bin/etcd"
