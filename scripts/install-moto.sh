#!/usr/bin/env bash
# Install moto (an S3-compatible server) for the management-cluster backup tests and benchmark.
#   Its Debian 12 dependencies: installed system-wide with apt (stable packages).
#   moto itself and the botocore/boto3/s3transfer/antlr4 it needs at sid versions: Debian sid
#   packages downloaded with a private apt source list and extracted into .ferry-cache/moto/
#   under the repository. Never installed system-wide: sid packages would drag the system towards sid.
# Run with Debian's /usr/bin/python3 and PYTHONPATH=.ferry-cache/moto/usr/lib/python3/dist-packages
# (test-infra.md, moto row). Idempotent: does nothing when moto is already extracted and imports.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
moto_dir="${FERRY_CACHE_DIR:-$repo_root/.ferry-cache}/moto"
python=/usr/bin/python3
stable_deps=(python3-flask python3-flask-cors python3-werkzeug python3-xmltodict python3-cryptography
  python3-requests python3-dateutil python3-jmespath python3-urllib3 python3-yaml python3-jinja2
  python3-responses)
sid_pkgs=(python3-moto python3-botocore python3-boto3 python3-s3transfer python3-antlr4)

log() { printf 'install-moto: %s\n' "$*" >&2; }
die() { printf 'install-moto: error: %s\n' "$*" >&2; exit 1; }

# as_root, sid_fetch, keep_licences, swap_in
# shellcheck source=lib/sid-fetch.sh
. "$repo_root/scripts/lib/sid-fetch.sh"

moto_imports() {
  [ -x "$python" ] && PYTHONPATH="$moto_dir/usr/lib/python3/dist-packages" "$python" -c 'import moto.server' 2>/dev/null
}

if moto_imports; then
  log "moto already present in $moto_dir"
else
  # --- Debian 12 dependencies -------------------------------------------------------------
  missing=()
  for p in "${stable_deps[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ -x "$python" ] || missing+=(python3)
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing from Debian 12: ${missing[*]}"
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  fi

  # --- moto and friends from Debian sid, extracted into the cache ---------------------------
  mkdir -p "$(dirname "$moto_dir")"
  work="$(mktemp -d "$(dirname "$moto_dir")/.fetch-moto.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  sid_fetch "$work" "${sid_pkgs[@]}"
  [ -d "$work/root/usr/lib/python3/dist-packages/moto" ] || die "sid packages did not contain moto"
  # Keep only the Python packages and the licences.
  keep_licences "$work" "${sid_pkgs[@]}"
  mkdir -p "$work/keep/usr/lib/python3"
  mv "$work/root/usr/lib/python3/dist-packages" "$work/keep/usr/lib/python3/dist-packages"
  swap_in "$work" "$moto_dir"
  trap - EXIT
  moto_imports || die "moto was extracted into $moto_dir but 'import moto.server' fails with $python"
fi

# --- report --------------------------------------------------------------------------------
printf 'moto: %s (%s)\n' \
  "$(PYTHONPATH="$moto_dir/usr/lib/python3/dist-packages" "$python" -c 'import moto; print(moto.__version__)')" \
  "$moto_dir"
