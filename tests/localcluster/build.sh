#!/usr/bin/env bash
# Build (or find) the local control-plane binaries: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kwok; with --kubectl also kubectl.
#
# kubectl is for people looking at a cluster (make cluster-up, make demo), not for the tests: no test or module
# runs it, and leaving it out of `make test` spares a cold machine its 197 packages of its own and a link.
#
# Binaries are cached outside the repo, keyed by version:
#   ${GPUOPS_CACHE_DIR:-~/.cache/gpuops-localcluster}/bin/<component>-v<version>/
# A user who already has them can point at them instead of building:
#   KUBEBUILDER_ASSETS=/dir  (etcd, kube-apiserver; the rest are still needed)
#   GPUOPS_BIN_DIR=/dir      (the five; kubectl too with --kubectl)
# Prints the directory holding the binaries (symlinks) on stdout.
#
# Builds of several checkouts may share the cache at the same time: each component is built under an
# exclusive flock (cache/bin/.<component>-v<version>.lock) into a temporary directory of its own
# (mktemp -d next to the target) and moved into place when complete; a build that waited for the lock
# finds the binaries there and reuses them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
. "$here/versions.env"
cache=${GPUOPS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuops-localcluster}
export GOTOOLCHAIN=local CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -mod=readonly"

log() { echo "[build] $*" >&2; }

with_kubectl=false
case "${1:-}" in
  --kubectl) with_kubectl=true ;;
  "") ;;
  *) log "usage: build.sh [--kubectl]"; exit 2 ;;
esac

# locked <lock name> <command...>: run the command holding an exclusive flock on $cache/bin/.<name>.lock.
locked() {
  local lock=$cache/bin/.$1.lock; shift
  mkdir -p "$cache/bin"
  if ! command -v flock >/dev/null; then
    log "flock not found (util-linux): building without the cache lock"
    ("$@")
    return
  fi
  (
    flock 9
    "$@"
  ) 9>>"$lock"
}

# install_dir <temporary dir> <target dir>: put a finished build in place.
install_dir() {
  chmod 755 "$1"
  rm -rf "$2" && mv "$1" "$2"
}

need() {
  command -v go >/dev/null || { log "go is required to build the control plane (or set GPUOPS_BIN_DIR)"; exit 1; }
}

k8s_dir=$cache/bin/kubernetes-v$KUBERNETES_VERSION
kubectl_dir=$cache/bin/kubectl-v$KUBERNETES_VERSION
etcd_dir=$cache/bin/etcd-v$ETCD_VERSION
kwok_dir=$cache/bin/kwok-v$KWOK_VERSION
out=$cache/bin/current-k$KUBERNETES_VERSION-e$ETCD_VERSION-w$KWOK_VERSION

timed() { # name, command...
  local name=$1 start; shift
  start=$(date +%s)
  "$@"
  log "$name built in $(( $(date +%s) - start ))s"
}

# go_build_k8s <dir> <command...>: the Kubernetes commands, into <dir>, stamped with the version.
go_build_k8s() {
  local dir=$1 minor d ld p cmds=()
  shift
  minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
  d=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  ld="-s -w"
  # The version must be the exact real semver: 1.34 derives its emulation
  # version from gitVersion.
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=v$KUBERNETES_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=$d"
  done
  for p in "$@"; do cmds+=("k8s.io/kubernetes/cmd/$p"); done
  (cd "$here/go/kubernetes" && go build -trimpath -ldflags "$ld" -o "$dir/" "${cmds[@]}")
}

build_k8s() {
  tmp=$(mktemp -d "$k8s_dir.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  go_build_k8s "$tmp" kube-apiserver kube-controller-manager kube-scheduler
  install_dir "$tmp" "$k8s_dir"
}

build_kubectl() {
  tmp=$(mktemp -d "$kubectl_dir.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  go_build_k8s "$tmp" kubectl
  install_dir "$tmp" "$kubectl_dir"
}

build_etcd() {
  tmp=$(mktemp -d "$etcd_dir.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$here/go/etcd" && go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3)
  install_dir "$tmp" "$etcd_dir"
}

build_kwok() {
  tmp=$(mktemp -d "$kwok_dir.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$here/go/kwok" && go build -trimpath -ldflags "-s -w" -o "$tmp/kwok" sigs.k8s.io/kwok/cmd/kwok)
  install_dir "$tmp" "$kwok_dir"
}

wanted=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
$with_kubectl && wanted+=(kubectl)
if [ -n "${GPUOPS_BIN_DIR:-}" ]; then
  for b in "${wanted[@]}"; do
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

k8s_built() { [ -x "$k8s_dir/kube-apiserver" ] && [ -x "$k8s_dir/kube-controller-manager" ] && [ -x "$k8s_dir/kube-scheduler" ]; }
# A cache from before kubectl had a directory of its own holds it beside the other three.
[ -x "$kubectl_dir/kubectl" ] || { [ -x "$k8s_dir/kubectl" ] && kubectl_dir=$k8s_dir; }
kubectl_built() { [ -x "$kubectl_dir/kubectl" ]; }
etcd_built() { [ -x "$etcd_dir/etcd" ]; }
kwok_built() { [ -x "$kwok_dir/kwok" ]; }

# build_if_missing <lock name> <log name> <what> <is-built function> <build function>: build under the lock
# unless it is there, checking again once the lock is held (another checkout may have built it meanwhile).
build_if_missing() {
  "$4" && return 0
  need
  locked "$1" build_locked "$2" "$3" "$4" "$5"
}
build_locked() {
  if "$3"; then log "$2: built meanwhile by another build; reusing it"; return 0; fi
  log "building $2"
  timed "$1" "$4"
}

# etcd and kwok build next to Kubernetes (each in a subshell of its own, under its own lock): Kubernetes is the
# long one, and while it links (one core) the other core compiles them, instead of both waiting for it. (On a
# cold 2-core machine that also builds the oracles, Kubernetes stays the long pole: about 14 min either way.)
# A failure of any fails the script once all three have stopped. Kubernetes runs in the background too: called as
# `build_if_missing ... || rc=$?`, bash ignores errexit inside it, and a failed `go build` went on to install an empty
# directory and exit 0 ("kubernetes built in 0s").
build_if_missing "etcd-v$ETCD_VERSION" etcd "etcd v$ETCD_VERSION" etcd_built build_etcd & etcd_pid=$!
build_if_missing "kwok-v$KWOK_VERSION" kwok "kwok v$KWOK_VERSION" kwok_built build_kwok & kwok_pid=$!
build_if_missing "kubernetes-v$KUBERNETES_VERSION" kubernetes "Kubernetes v$KUBERNETES_VERSION (cold build: tens of minutes on 2 cores)" k8s_built build_k8s & k8s_pid=$!
rc=0
wait "$k8s_pid" || rc=$?
wait "$etcd_pid" || rc=$?
wait "$kwok_pid" || rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
if $with_kubectl; then
  build_if_missing "kubectl-v$KUBERNETES_VERSION" kubectl "kubectl v$KUBERNETES_VERSION" kubectl_built build_kubectl
fi

link_current() {
  local b k
  mkdir -p "$out"
  for b in kube-apiserver kube-controller-manager kube-scheduler; do
    k=$k8s_dir/$b
    if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ "$b" = kube-apiserver ] && [ -x "$KUBEBUILDER_ASSETS/$b" ]; then k=$KUBEBUILDER_ASSETS/$b; fi
    ln -sfn "$k" "$out/$b"
  done
  if kubectl_built; then ln -sfn "$kubectl_dir/kubectl" "$out/kubectl"; else rm -f "$out/kubectl"; fi
  ln -sfn "$etcd_dir/etcd" "$out/etcd"
  ln -sfn "$kwok_dir/kwok" "$out/kwok"
}
locked "$(basename "$out")" link_current
echo "$out"
