#!/usr/bin/env bash
# Install Debian's prometheus for the tests of the run's SLO gates (src/adapters/prometheus/slo.real.test.ts). The tests start
# their own instance on 127.0.0.1; the package's service is not started here (no systemd) and
# nothing needs it to run. Idempotent. Needs root (or sudo) for apt.
set -euo pipefail

log() { printf 'install-prometheus: %s\n' "$*" >&2; }
die() { printf 'install-prometheus: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root to run: $* (re-run as root or install sudo)"
  fi
}

bin=/usr/bin/prometheus
if [ ! -x "$bin" ]; then
  log "installing prometheus from Debian"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus
else
  log "$bin already present"
fi
[ -x "$bin" ] || die "apt-get finished but $bin is missing"
printf 'prometheus: %s\n' "$("$bin" --version 2>&1 | head -1)"
