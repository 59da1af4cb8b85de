#!/usr/bin/env bash
# Build (or find) promtool, the Prometheus rule checker, from the Go module proxy.
#
# `go install github.com/prometheus/prometheus/cmd/promtool@vX` is refused (prometheus's go.mod has exclude
# directives), so a pinned wrapper module, tests/localcluster/go/promtool (go.mod/go.sum, `tool` directive),
# requires github.com/prometheus/prometheus and builds its cmd/promtool, as tests/localcluster/build.sh builds
# the control plane. Cached outside the repo, keyed by version:
#   ${GPUOPS_CACHE_DIR:-~/.cache/gpuops-localcluster}/bin/promtool-<version>/promtool
# A user who already has promtool can point at it instead: PROMTOOL=/path/to/promtool.
# Prints the path of the promtool binary on stdout.
# Concurrent builds (several checkouts, one cache) take an exclusive flock on cache/bin/.promtool-<key>.lock and
# build into a temporary directory of their own (mktemp -d), as tests/localcluster/build.sh does; one that waited
# finds promtool built and reuses it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mod=$here/../localcluster/go/promtool
cache=${GPUOPS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuops-localcluster}
export GOTOOLCHAIN=local CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -mod=readonly"

log() { echo "[build] $*" >&2; }

if [ -n "${PROMTOOL:-}" ]; then
  [ -x "$PROMTOOL" ] || { log "PROMTOOL=$PROMTOOL is not executable"; exit 1; }
  echo "$PROMTOOL"
  exit 0
fi

version=$(awk '$1 == "github.com/prometheus/prometheus" { print $2 }' "$mod/go.mod")
[ -n "$version" ] || { log "no github.com/prometheus/prometheus requirement in $mod/go.mod"; exit 1; }
# remove_all_sd: no service-discovery plugins (the cloud SDKs), which rule checks and tests never use; a cold
# build takes ~3 min on 2 cores instead of ~13 min of CPU.
tags=remove_all_sd
dir=$cache/bin/promtool-$version-$tags
build() {
  local start
  if [ -x "$dir/promtool" ]; then log "promtool: built meanwhile by another build; reusing it"; return 0; fi
  log "building promtool $version (cold build: a few minutes on 2 cores)"
  start=$(date +%s)
  tmp=$(mktemp -d "$dir.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # -N -l (no optimisation, no inlining): promtool checks and tests a few rules in a second either way, and the
  # optimising passes were a quarter of its cold build (92 s -> 70 s alone on 2 cores, empty build cache).
  (cd "$mod" && go build -tags "$tags" -trimpath -gcflags=all="-N -l" -ldflags "-s -w" -o "$tmp/promtool" \
    github.com/prometheus/prometheus/cmd/promtool)
  chmod 755 "$tmp"
  rm -rf "$dir" && mv "$tmp" "$dir"
  log "promtool built in $(( $(date +%s) - start ))s"
}
if [ ! -x "$dir/promtool" ]; then
  command -v go >/dev/null || { log "go is required to build promtool (or set PROMTOOL)"; exit 1; }
  mkdir -p "$cache/bin"
  if command -v flock >/dev/null; then
    (
      flock 9
      build
    ) 9>>"$cache/bin/.$(basename "$dir").lock"
  else
    (build)
  fi
fi
echo "$dir/promtool"
