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
system_sources="/etc/apt/sources.list.d/debian.sources"
python=/usr/bin/python3
stable_deps=(python3-flask python3-flask-cors python3-werkzeug python3-xmltodict python3-cryptography
  python3-requests python3-dateutil python3-jmespath python3-urllib3 python3-yaml python3-jinja2
  python3-responses)
sid_pkgs=(python3-moto python3-botocore python3-boto3 python3-s3transfer python3-antlr4)

log() { printf 'install-moto: %s\n' "$*" >&2; }
die() { printf 'install-moto: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root to run: $* (re-run as root or install sudo)"
  fi
}

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
  [ -r "$system_sources" ] || die "$system_sources not found: cannot derive a sid source list"
  command -v dpkg-deb >/dev/null || die "dpkg-deb not found (this script expects Debian)"
  mkdir -p "$(dirname "$moto_dir")"
  work="$(mktemp -d "$(dirname "$moto_dir")/.fetch-moto.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/lists/partial" "$work/debs" "$work/root" "$work/cache/archives/partial"
  # Same derivation as install-etcd.sh: the machine's URIs and keyring, suite sid, no security archive.
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
  log "fetching the Debian sid package index (private lists in $work/lists)"
  apt-get "${apt_opts[@]}" update >&2
  log "downloading ${sid_pkgs[*]} from sid"
  (cd "$work/debs" && apt-get "${apt_opts[@]}" download "${sid_pkgs[@]}" >&2)
  for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
  [ -d "$work/root/usr/lib/python3/dist-packages/moto" ] || die "sid packages did not contain moto"
  # Keep only the Python packages and the licences: the packages' docs would otherwise be picked
  # up by repository-wide tools such as `biome check .`.
  mkdir -p "$work/keep/usr/lib/python3" "$work/keep/usr/share/doc"
  mv "$work/root/usr/lib/python3/dist-packages" "$work/keep/usr/lib/python3/dist-packages"
  for pkg in "${sid_pkgs[@]}"; do
    if [ -f "$work/root/usr/share/doc/$pkg/copyright" ]; then
      mkdir -p "$work/keep/usr/share/doc/$pkg"
      mv "$work/root/usr/share/doc/$pkg/copyright" "$work/keep/usr/share/doc/$pkg/copyright"
    fi
  done
  # Swap in the complete tree at once so a half-extracted cache is never mistaken for a good one.
  rm -rf "$moto_dir"
  mv "$work/keep" "$moto_dir"
  rm -rf "$work"
  trap - EXIT
  moto_imports || die "moto was extracted into $moto_dir but 'import moto.server' fails with $python"
fi

# --- report --------------------------------------------------------------------------------
printf 'moto: %s (%s)\n' \
  "$(PYTHONPATH="$moto_dir/usr/lib/python3/dist-packages" "$python" -c 'import moto; print(moto.__version__)')" \
  "$moto_dir"
