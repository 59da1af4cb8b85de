#!/usr/bin/env bash
# Build (or find) the local control-plane binaries: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl and kwok.
#
# Binaries are cached outside the repo, keyed by version:
#   ${GPUOPS_CACHE_DIR:-~/.cache/gpuops-localcluster}/bin/<component>-v<version>/
# A user who already has them can point at them instead of building:
#   KUBEBUILDER_ASSETS=/dir  (etcd, kube-apiserver; the rest are still needed)
#   GPUOPS_BIN_DIR=/dir      (all six)
# Prints the directory holding all six binaries (symlinks) on stdout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
. "$here/versions.env"
cache=${GPUOPS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuops-localcluster}
export GOTOOLCHAIN=local CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -mod=readonly"

log() { echo "[build] $*" >&2; }

need() {
  command -v go >/dev/null || { log "go is required to build the control plane (or set GPUOPS_BIN_DIR)"; exit 1; }
}

k8s_dir=$cache/bin/kubernetes-v$KUBERNETES_VERSION
etcd_dir=$cache/bin/etcd-v$ETCD_VERSION
kwok_dir=$cache/bin/kwok-v$KWOK_VERSION
out=$cache/bin/current-k$KUBERNETES_VERSION-e$ETCD_VERSION-w$KWOK_VERSION

timed() { # name, command...
  local name=$1 start; shift
  start=$(date +%s)
  "$@"
  log "$name built in $(( $(date +%s) - start ))s"
}

build_k8s() {
  local minor d ld
  minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
  d=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  ld="-s -w"
  # The version must be the exact real semver: 1.34 derives its emulation
  # version from gitVersion.
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=v$KUBERNETES_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=$d"
  done
  mkdir -p "$k8s_dir.tmp"
  (cd "$here/go/kubernetes" && go build -trimpath -ldflags "$ld" -o "$k8s_dir.tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
  rm -rf "$k8s_dir" && mv "$k8s_dir.tmp" "$k8s_dir"
}

build_etcd() {
  mkdir -p "$etcd_dir.tmp"
  (cd "$here/go/etcd" && go build -trimpath -ldflags "-s -w" -o "$etcd_dir.tmp/etcd" go.etcd.io/etcd/server/v3)
  rm -rf "$etcd_dir" && mv "$etcd_dir.tmp" "$etcd_dir"
}

build_kwok() {
  mkdir -p "$kwok_dir.tmp"
  (cd "$here/go/kwok" && go build -trimpath -ldflags "-s -w" -o "$kwok_dir.tmp/kwok" sigs.k8s.io/kwok/cmd/kwok)
  rm -rf "$kwok_dir" && mv "$kwok_dir.tmp" "$kwok_dir"
}

if [ -n "${GPUOPS_BIN_DIR:-}" ]; then
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
    [ -x "$GPUOPS_BIN_DIR/$b" ] || { log "GPUOPS_BIN_DIR=$GPUOPS_BIN_DIR has no executable '$b'"; exit 1; }
  done
  echo "$GPUOPS_BIN_DIR"
  exit 0
fi

# Binaries a user already has (envtest assets) replace the matching builds.
if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/kube-apiserver" ] && [ -x "$KUBEBUILDER_ASSETS/etcd" ]; then
  log "using etcd/kube-apiserver from KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
  etcd_dir=$KUBEBUILDER_ASSETS
fi

if [ ! -x "$k8s_dir/kube-apiserver" ] || [ ! -x "$k8s_dir/kubectl" ]; then need; log "building Kubernetes v$KUBERNETES_VERSION (cold build: tens of minutes on 2 cores)"; timed kubernetes build_k8s; fi
if [ ! -x "$etcd_dir/etcd" ]; then need; log "building etcd v$ETCD_VERSION"; timed etcd build_etcd; fi
if [ ! -x "$kwok_dir/kwok" ]; then need; log "building kwok v$KWOK_VERSION"; timed kwok build_kwok; fi

mkdir -p "$out"
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  k=$k8s_dir/$b
  if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ "$b" = kube-apiserver ] && [ -x "$KUBEBUILDER_ASSETS/$b" ]; then k=$KUBEBUILDER_ASSETS/$b; fi
  ln -sfn "$k" "$out/$b"
done
ln -sfn "$etcd_dir/etcd" "$out/etcd"
ln -sfn "$kwok_dir/kwok" "$out/kwok"
echo "$out"
