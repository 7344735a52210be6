#!/usr/bin/env bash
# Install Debian's chromium for the HTML report's browser test (src/audit/reporters/browser.real.test.ts).
# Idempotent: does nothing when /usr/bin/chromium is already there. Needs root (or sudo) for apt.
set -euo pipefail

log() { printf 'install-chromium: %s\n' "$*" >&2; }
die() { printf 'install-chromium: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root to run: $* (re-run as root or install sudo)"
  fi
}

if [ ! -x /usr/bin/chromium ]; then
  log "installing chromium from Debian"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
else
  log "/usr/bin/chromium already present"
fi
[ -x /usr/bin/chromium ] || die "apt-get finished but /usr/bin/chromium is missing"
printf 'chromium: %s\n' "$(/usr/bin/chromium --version 2>/dev/null || echo 'version unknown')"
