#!/usr/bin/env bash
# The monitoring role's alerts through promtool: render the rules from the role's one template (the same the
# PrometheusRule is made from), `promtool check rules`, then `promtool test rules tests/monitoring/alerts.test.yml`
# (one test per alert: fires, then clears). promtool is built once from the Go module proxy and cached
# (tests/monitoring/build_promtool.sh; PROMTOOL=/path uses yours).
# Usage: tests/monitoring/run_promtool.sh   (from anywhere; exit status 0 when every check and test passes)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
promtool=$("$here/build_promtool.sh")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

venv_bin=${GPUOPS_VENV_BIN:-$root/.venv/bin}
# The collection as installed for the tests (.build/ansible_collections/gpuops/cluster -> the checkout).
mkdir -p "$root/.build/ansible_collections/gpuops"
[ -e "$root/.build/ansible_collections/gpuops/cluster" ] || ln -s "$root" "$root/.build/ansible_collections/gpuops/cluster"
ANSIBLE_COLLECTIONS_PATH=$root/.build ANSIBLE_NOCOLOR=1 "$venv_bin/ansible-playbook" \
  "$here/render_rules.yml" -e "monitoring_rules_file=$work/gpu-alerts.rules.yml" >"$work/render.log" 2>&1 \
  || { cat "$work/render.log" >&2; echo "run_promtool: rendering the rules failed" >&2; exit 1; }
cp "$here/alerts.test.yml" "$work/"
echo "[promtool] $("$promtool" --version 2>&1 | head -1)"
"$promtool" check rules "$work/gpu-alerts.rules.yml"
"$promtool" test rules "$work/alerts.test.yml"
