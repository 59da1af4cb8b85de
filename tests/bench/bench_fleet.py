# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Benchmark: site.yml over a fleet of three clusters at once, against each cluster alone.

Three local clusters (one OpenShift profile, two plain Kubernetes with two bare GPU nodes each), started afresh for
each phase:

* ``alone``: site.yml converges each cluster by itself, one after the other (an inventory of one host each);
* ``fleet``: site.yml converges the three at once (one inventory, one host per cluster, ``--forks 3``).

Prints each run's wall time, the fleet's against the slowest cluster alone and against the three one after the other,
and the fleet summary table. Figures are printed, not asserted; the script exits 1 only when a run fails.

    .venv/bin/python tests/bench/bench_fleet.py
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "localcluster"))

from ansible_env import collection_env  # noqa: E402
from localcluster.cluster import LocalCluster  # noqa: E402

CLUSTERS = (
    ("ocp-east", "openshift", {}, {}),
    ("k8s-west", "kubernetes", {"gpu_nodes": 2, "gpu_node_mode": "bare"}, {"gpuops_expected_gpu_nodes": 2}),
    ("k8s-lab", "kubernetes", {"gpu_nodes": 2, "gpu_node_mode": "bare"}, {"gpuops_expected_gpu_nodes": 2}),
)


def start():
    out = {}
    for name, profile, up, dummy in CLUSTERS:
        lc = LocalCluster(os.path.join(ROOT, ".localcluster-bench-" + name))
        lc.down(quiet=True)
        lc.up(profile=profile, **up)
        out[name] = lc
    return out


def stop(clusters):
    for lc in clusters.values():
        lc.down(quiet=True)


def site(workdir, clusters, names):
    """site.yml over an inventory of ``names``; returns (seconds, result)."""
    inv = os.path.join(workdir, "inventory-" + "-".join(names))
    shutil.copytree(os.path.join(ROOT, "inventories", "local", "group_vars"), os.path.join(inv, "group_vars"))
    hosts = dict((name, dict(extra, gpuops_kubeconfig=clusters[name].kubeconfig)) for name, _p, _u, extra in CLUSTERS)
    doc = {
        "all": {
            "children": {
                "gpuops_clusters": {
                    "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                    "hosts": dict((n, hosts[n]) for n in names),
                }
            }
        }
    }
    with open(os.path.join(inv, "hosts.yml"), "w") as handle:
        yaml.safe_dump(doc, handle)
    env = collection_env("", {"K8S_AUTH_KUBECONFIG": None, "PWD": workdir})
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inv, "--forks", str(len(names))]
    cmd.append(os.path.join(ROOT, "playbooks", "site.yml"))
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    seconds = time.time() - t0
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        sys.stderr.write(out[-4000:] + proc.stderr.decode("utf-8", "replace")[-2000:])
        raise SystemExit("site.yml over {0} failed (rc {1})".format(", ".join(names), proc.returncode))
    return seconds, json.loads(out[out.find("{") :])


def main():
    workdir = tempfile.mkdtemp(prefix="bench-fleet-")
    names = [c[0] for c in CLUSTERS]
    alone = {}
    clusters = start()
    try:
        for name in names:
            alone[name], dummy = site(workdir, clusters, [name])
            print("alone  {0:<10} {1:7.1f} s".format(name, alone[name]))
    finally:
        stop(clusters)
    clusters = start()
    try:
        fleet, result = site(workdir, clusters, names)
    finally:
        stop(clusters)
    print("fleet  {0:<10} {1:7.1f} s  (3 clusters at once, --forks 3)".format("all", fleet))
    slowest = max(alone.values())
    print(
        "fleet / slowest alone: {0:.2f}   fleet / the three one after the other: {1:.2f}".format(
            fleet / slowest, fleet / sum(alone.values())
        )
    )
    for task in result["plays"][0]["tasks"]:
        if task["task"]["name"] == "Fleet - how each cluster ended":
            for res in task["hosts"].values():
                if not res.get("skipped"):
                    print("\n".join(res["msg"]))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
