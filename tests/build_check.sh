#!/usr/bin/env bash
# Build the collection tarball, install it offline into an empty path, and
# check that ansible-galaxy and ansible-doc see it and every module's docs render.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/.venv/bin
out=$root/.build/dist
inst=$root/.build/install-check
rm -rf "$out" "$inst" && mkdir -p "$out" "$inst"
version=$(sed -n 's/^version: *//p' "$root/galaxy.yml")

# Build from a copy of what git would commit, so stray local files never ship.
src=$root/.build/build-src
rm -rf "$src" && mkdir -p "$src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
   [ -e "$f" ] && printf '%s\0' "$f"; done | xargs -0 cp --parents -t "$src")
"$bin/ansible-galaxy" collection build --force --output-path "$out" "$src"
tarball=$out/gpuops-cluster-$version.tar.gz
[ -f "$tarball" ] || { echo "no tarball $tarball" >&2; exit 1; }
echo "tarball: $(du -h "$tarball" | cut -f1) $(tar tzf "$tarball" | wc -l) files"
if tar tzf "$tarball" | grep -E '(^|/)(\.venv|\.localcluster|\.build|tests/output|tests/localcluster|tests/integration)/' ; then
  echo "tarball contains build outputs or the simulator" >&2; exit 1
fi
# Shipped files must not point at documents that are not shipped (the project's
# design notes and source documents live outside the collection).
unpacked=$root/.build/unpacked && rm -rf "$unpacked" && mkdir -p "$unpacked" && tar xzf "$tarball" -C "$unpacked"
if grep -rnE '\.\./shared/|design\.md|\bseeds? [0-9]{3}\b|\bseeds\b' "$unpacked"; then
  echo "shipped files refer to documents that are not in the collection" >&2; exit 1
fi

# kubernetes.core (the dependency) is in site-packages from the ansible package.
export ANSIBLE_COLLECTIONS_PATH=$inst
"$bin/ansible-galaxy" collection install --offline -p "$inst" "$tarball"
"$bin/ansible-galaxy" collection list gpuops.cluster | grep -q "gpuops.cluster *$version"
mods=$("$bin/ansible-doc" -t module -l gpuops.cluster | awk '{print $1}')
echo "ansible-doc lists: $(echo "$mods" | tr '\n' ' ')"
for m in machineset_clone nfd_labels driver_container_build gpu_validate k8s_ensure; do
  if [ -f "$root/plugins/modules/$m.py" ]; then
    echo "$mods" | grep -qx "gpuops.cluster.$m" || { echo "ansible-doc does not list gpuops.cluster.$m" >&2; exit 1; }
    "$bin/ansible-doc" "gpuops.cluster.$m" >/dev/null
  fi
done
if [ -n "$(find "$root/roles" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ]; then "$bin/ansible-doc" -t role -l gpuops.cluster >/dev/null; fi
echo "build-collection: ok ($tarball installs offline; ansible-doc renders)"
