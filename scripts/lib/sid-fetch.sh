# Sourced by install-etcd.sh and install-moto.sh: fetch Debian sid packages without adding sid to
# the machine. The caller defines log() and die(). Nothing here installs system-wide except
# as_root's callers' own apt-get of stable packages.

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root to run: $* (re-run as root or install sudo)"
  fi
}

# sid_fetch WORK PKG...: download PKG... from Debian sid with a private apt source list, state and
# cache under WORK, and extract them all into WORK/root. WORK must exist and be empty.
sid_fetch() {
  local work="$1"; shift
  local system_sources="/etc/apt/sources.list.d/debian.sources"
  [ -r "$system_sources" ] || die "$system_sources not found: cannot derive a sid source list"
  command -v dpkg-deb >/dev/null || die "dpkg-deb not found (this script expects Debian)"
  mkdir -p "$work/lists/partial" "$work/debs" "$work/root" "$work/cache/archives/partial"

  # Keep the machine's own URIs and keyring; only the main archive has a sid suite
  # (debian-security has none), so drop stanzas that point at a security archive.
  awk -v RS='' -v ORS='\n\n' '
    /URIs:[^\n]*security/ { next }
    { gsub(/Suites:[^\n]*/, "Suites: sid"); print }
  ' "$system_sources" >"$work/sid.sources"
  grep -q '^Suites: sid' "$work/sid.sources" || die "no usable stanza in $system_sources"

  local apt_opts=(
    -o "Dir::Etc::SourceList=$work/sid.sources"
    -o "Dir::Etc::SourceParts=/nonexistent"
    -o "Dir::State::Lists=$work/lists"
    -o "Dir::Cache=$work/cache"
    -o "Debug::NoLocking=1"
    -o "APT::Sandbox::User=root"
  )
  log "fetching the Debian sid package index (private lists in $work/lists)"
  apt-get "${apt_opts[@]}" update >&2
  # By name, without a pinned version: sid moves.
  log "downloading $* from sid"
  (cd "$work/debs" && apt-get "${apt_opts[@]}" download "$@" >&2)
  local deb
  for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
}

# keep_licences WORK PKG...: move each package's copyright file from WORK/root into WORK/keep.
# The packages' other docs (Markdown, JSON) stay behind: repository-wide tools such as
# `biome check .` would otherwise pick them up.
keep_licences() {
  local work="$1"; shift
  local pkg
  mkdir -p "$work/keep/usr/share/doc"
  for pkg in "$@"; do
    if [ -f "$work/root/usr/share/doc/$pkg/copyright" ]; then
      mkdir -p "$work/keep/usr/share/doc/$pkg"
      mv "$work/root/usr/share/doc/$pkg/copyright" "$work/keep/usr/share/doc/$pkg/copyright"
    fi
  done
}

# swap_in WORK DEST: replace DEST with WORK/keep at once, so a half-extracted cache is never
# mistaken for a good one.
swap_in() {
  rm -rf "$2"
  mv "$1/keep" "$2"
  rm -rf "$1"
}
