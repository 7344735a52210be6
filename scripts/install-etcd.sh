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
system_sources="/etc/apt/sources.list.d/debian.sources"

# etcd reads every ETCD_* variable as a flag; etcdctl aborts on ETCDCTL_ENDPOINTS + --endpoints.
# Keep the version probes below independent of the caller's environment.
for v in $(compgen -e | grep -E '^(ETCD|ETCDCTL)_' || true); do unset "$v"; done

log() { printf 'install-etcd: %s\n' "$*" >&2; }
die() { printf 'install-etcd: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root to run: $* (re-run as root or install sudo)"
  fi
}

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
  [ -r "$system_sources" ] || die "$system_sources not found: cannot derive a sid source list"
  command -v dpkg-deb >/dev/null || die "dpkg-deb not found (this script expects Debian)"
  mkdir -p "$cache_root"
  work="$(mktemp -d "$cache_root/.fetch.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/lists/partial" "$work/debs" "$work/root"

  # Keep the machine's own URIs and keyring; only the main archive has a sid suite
  # (debian-security has none), so drop stanzas that point at a security archive.
  awk -v RS='' -v ORS='\n\n' '
    /URIs:[^\n]*security/ { next }
    { gsub(/Suites:[^\n]*/, "Suites: sid"); print }
  ' "$system_sources" >"$work/sid.sources"
  grep -q '^Suites: sid' "$work/sid.sources" || die "no usable stanza in $system_sources"

  apt_opts=(
    -o "Dir::Etc::SourceList=$work/sid.sources"
    -o "Dir::Etc::SourceParts=/nonexistent"
    -o "Dir::State::Lists=$work/lists"
    -o "Dir::Cache=$work/cache"
    -o "Debug::NoLocking=1"
    -o "APT::Sandbox::User=root"
  )
  mkdir -p "$work/cache/archives/partial"
  log "fetching the Debian sid package index (private lists in $work/lists)"
  apt-get "${apt_opts[@]}" update >&2
  # By name, without a pinned version: sid moves.
  log "downloading etcd-server and etcd-client from sid"
  (cd "$work/debs" && apt-get "${apt_opts[@]}" download etcd-server etcd-client >&2)
  for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
  [ -x "$work/root/usr/bin/etcd" ] || die "sid packages did not contain usr/bin/etcd"

  got="$("$work/root/usr/bin/etcd" --version | awk '/^etcd Version:/ { print $3 }')"
  case "$got" in
    "$want_minor_sid".*) ;;
    *) die "Debian sid now ships etcd $got, not $want_minor_sid.x; fetch $want_minor_sid another way" ;;
  esac
  # Keep only the binaries and their licence: the packages' docs (Markdown, JSON) would otherwise
  # be picked up by repository-wide tools such as `biome check .`.
  mkdir -p "$work/keep/usr/share/doc"
  mv "$work/root/usr/bin" "$work/keep/usr/bin"
  for pkg in etcd-server etcd-client; do
    if [ -f "$work/root/usr/share/doc/$pkg/copyright" ]; then
      mkdir -p "$work/keep/usr/share/doc/$pkg"
      mv "$work/root/usr/share/doc/$pkg/copyright" "$work/keep/usr/share/doc/$pkg/copyright"
    fi
  done
  # Swap in the complete tree at once so a half-extracted cache is never mistaken for a good one.
  rm -rf "$sid_dir"
  mv "$work/keep" "$sid_dir"
  rm -rf "$work"
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
