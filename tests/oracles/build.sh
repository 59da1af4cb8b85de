#!/usr/bin/env bash
# Build (or find) the upstream programs the oracle tests (tests/oracles/) run, from the Go module proxy:
#   dpconfig              the NVIDIA device plugin's config loader (k8s-device-plugin api/config/v1), go/dpconfig
#   ctkinstaller          nvidia-ctk-installer's runtime configuration (nvidia-container-toolkit
#                         cmd/nvidia-ctk-installer/container/runtime), go/ctkinstaller
#   containerd-<minor>    upstream cmd/containerd, unchanged, one per containerd minor, go/containerd-<minor>
#   helm                  upstream cmd/helm v3, unchanged (kubernetes.core.helm runs it: the GPU Operator's chart on
#                         Kubernetes), go/helm
# Each is a pinned wrapper module (go.mod/go.sum) as tests/localcluster/build.sh and
# tests/monitoring/build_promtool.sh build theirs. Cached outside the repo, keyed by the upstream version (and, for
# the two programs of ours, a digest of their wrapper module, so an edit rebuilds them):
#   ${GPUOPS_CACHE_DIR:-~/.cache/gpuops-localcluster}/bin/<name>-v<version>[-<digest>]/<name>
# Concurrent builds (several checkouts, one cache) take an exclusive flock on cache/bin/.<name>-v<version>[-<digest>].lock
# per program and build into a temporary directory of their own (mktemp -d), as tests/localcluster/build.sh does;
# one that waited finds the program built and reuses it.
# Usage: build.sh [NAME...]            build what is missing; print "<name> <path>" per program on stdout
#        build.sh --locate [NAME...]   build nothing; print the same, exit 1 naming what is missing (the tests use this)
# NAMEs limit either to those programs (the integration test of the GPU Operator's chart builds or waits for helm
# alone while `make test` builds the rest beside the integration tests).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${GPUOPS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuops-localcluster}
export GOTOOLCHAIN=local
export GOFLAGS="${GOFLAGS:-} -mod=readonly"
locate=false
[ "${1:-}" = --locate ] && { locate=true; shift; }
only=("$@")

log() { echo "[build] $*" >&2; }

# name, wrapper module dir, upstream module path, package to build, cgo (0/1), digest (yes/no)
# helm first: `make test` builds these beside the integration tests, and one of those (test_gpu_operator_helm.py,
# among the first sent to a worker) waits for helm.
programs=(
  "helm go/helm helm.sh/helm/v3 helm.sh/helm/v3/cmd/helm 0 no"
  "dpconfig go/dpconfig github.com/NVIDIA/k8s-device-plugin . 0 yes"
  # go-nvml (imported by the installer's toolkit package) is cgo only; it dlopens libnvidia-ml at run time, so a
  # C compiler is needed to build, no NVIDIA library.
  "ctkinstaller go/ctkinstaller github.com/NVIDIA/nvidia-container-toolkit . 1 yes"
  "containerd-1.7 go/containerd-1.7 github.com/containerd/containerd github.com/containerd/containerd/cmd/containerd 0 no"
  "containerd-2.0 go/containerd-2.0 github.com/containerd/containerd/v2 github.com/containerd/containerd/v2/cmd/containerd 0 no"
  "containerd-2.1 go/containerd-2.1 github.com/containerd/containerd/v2 github.com/containerd/containerd/v2/cmd/containerd 0 no"
  "containerd-2.2 go/containerd-2.2 github.com/containerd/containerd/v2 github.com/containerd/containerd/v2/cmd/containerd 0 no"
)

# build <name> <wrapper module> <package> <cgo> <upstream> <version> <cache dir>, holding the program's lock.
build() {
  local name=$1 mod=$2 pkg=$3 cgo=$4 upstream=$5 version=$6 dir=$7 start
  if [ -x "$dir/$name" ]; then log "$name: built meanwhile by another build; reusing it"; return 0; fi
  log "building $name ($upstream $version)"
  start=$(date +%s)
  tmp=$(mktemp -d "$dir.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # -trimpath -s -w: no local paths, no symbol tables (smaller, faster link); cgo warnings of go-nvml's
  # generated code are not ours to fix, hence CGO_CFLAGS=-w. -N -l (no optimisation, no inlining, every package):
  # these programs run for milliseconds (a config dump, a chart install), and the compiler's optimising passes were
  # about a third of their cold build (containerd 1.7: 64 s -> 42 s, helm: 72 s -> 52 s, each alone on 2 cores
  # with an empty build cache); the same source, so the same behaviour.
  (cd "$here/$mod" && CGO_ENABLED=$cgo CGO_CFLAGS="-O2 -w" \
    go build -trimpath -gcflags=all="-N -l" -ldflags "-s -w" -o "$tmp/$name" "$pkg")
  chmod 755 "$tmp"
  rm -rf "$dir" && mv "$tmp" "$dir"
  log "$name built in $(( $(date +%s) - start ))s"
}

for n in "${only[@]}"; do
  printf '%s\n' "${programs[@]%% *}" | grep -qx -- "$n" \
    || { log "no oracle program named '$n' (one of: $(printf '%s ' "${programs[@]%% *}"))"; exit 2; }
done
missing=()
total_start=$(date +%s)
for entry in "${programs[@]}"; do
  read -r name mod upstream pkg cgo digest <<<"$entry"
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then continue; fi
  version=$(awk -v m="$upstream" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$here/$mod/go.mod")
  [ -n "$version" ] || { log "no $upstream requirement in $here/$mod/go.mod"; exit 1; }
  key=$name-$version
  if [ "$digest" = yes ]; then
    key=$key-$(cat "$here/$mod/go.mod" "$here/$mod/go.sum" "$here/$mod"/*.go | sha256sum | cut -c1-12)
  fi
  dir=$cache/bin/$key
  if [ ! -x "$dir/$name" ]; then
    if $locate; then
      missing+=("$name")
      echo "$name $dir/$name"
      continue
    fi
    command -v go >/dev/null || { log "go is required to build $name"; exit 1; }
    mkdir -p "$cache/bin"
    if command -v flock >/dev/null; then
      (
        flock 9
        build "$name" "$mod" "$pkg" "$cgo" "$upstream" "$version" "$dir"
      ) 9>>"$cache/bin/.$key.lock"
    else
      (build "$name" "$mod" "$pkg" "$cgo" "$upstream" "$version" "$dir")
    fi
  fi
  echo "$name $dir/$name"
done
if [ ${#missing[@]} -gt 0 ]; then
  log "not built: ${missing[*]} (run 'make binaries')"
  exit 1
fi
$locate || log "oracle programs ready in $(( $(date +%s) - total_start ))s"
