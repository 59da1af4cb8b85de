#!/usr/bin/env bash
# ansible-test sanity on a clean copy of the collection, laid out as
# ansible_collections/gpuops/cluster with kubernetes.core beside it (ansible-test
# does not see collections in site-packages).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/.venv/bin
dest=$root/.build/sanity/ansible_collections
coll=$dest/gpuops/cluster

rm -rf "$coll" && mkdir -p "$coll"
# Tracked files plus new ones not ignored: what would be committed. Left out: NVIDIA's Helm chart the local
# cluster serves (tests/localcluster/charts, see its SOURCES.md): Go templates named .yaml, which yamllint cannot
# parse, and third-party files that are neither shipped nor ours to restyle.
(cd "$root" && git ls-files -z --cached --others --exclude-standard -- . ':!tests/localcluster/charts' \
   | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done | xargs -0 cp --parents -t "$coll")

if [ ! -d "$dest/kubernetes/core" ]; then
  k8s_core=$("$bin/python" -c 'import ansible_collections.kubernetes.core as m, os; print(os.path.dirname(m.__file__) if m.__file__ else list(m.__path__)[0])')
  "$bin/ansible-galaxy" collection install --offline --force -p "$root/.build/sanity" "$k8s_core" >/dev/null
fi

# ansible-test --venv bootstraps pip from a URL we cannot reach; it uses this
# cache file instead when present. ensurepip + PyPI does the same job.
ver=$(sed -n "s/^ *pip='\([0-9.]*\)',.*/\1/p" "$("$bin/python" -c 'import ansible_test, os; print(os.path.dirname(ansible_test.__file__))')/_internal/python_requirements.py" | head -1 | tr . _)
cache=$HOME/.ansible/test/cache
mkdir -p "$cache"
cat > "$cache/get_pip_$ver.py" <<'PY'
import subprocess, sys
subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"])
subprocess.check_call([sys.executable, "-m", "pip", "install", "--disable-pip-version-check"] + [a for a in sys.argv[1:] if not a.startswith("--no-")])
PY

cd "$coll"
# ansible-test lists files with git from the nearest repository; without one of
# its own the copy would be seen through this checkout, where .build/ is ignored.
git init -q . && git add -A && git -c user.name=sanity -c user.email=sanity@localhost commit -qm sanity
command -v shellcheck >/dev/null || { echo "sanity needs shellcheck: apt-get install shellcheck" >&2; exit 1; }
"$bin/ansible-test" sanity --venv --python 3.11 "$@"
