# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Benchmark: label N simulated nodes with gpuops.cluster.nfd_labels in one task.

Creates N kwok-managed Nodes on a running local cluster (``cluster.py up``),
runs the module through ansible-playbook three times (label, same again,
remove) and prints the wall time of each run plus the module's own duration.
Not a test: it prints numbers (and whether the first run met the --budget,
15 s by default, the issue's target); it exits 1 only when a run fails.

    .venv/bin/python tests/bench/bench_nfd_labels.py [--nodes 500] [--kubeconfig .localcluster/kubeconfig]
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from ansible_env import no_json_message, run_tasks  # noqa: E402

SELECTOR_KEY = "gpuops-bench.io/node"
NFD_GPU = "feature.node.kubernetes.io/pci-10de.present"


def api_client(kubeconfig, pool):
    from kubernetes import client, config

    cfg = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    cfg.connection_pool_maxsize = pool
    return client.ApiClient(cfg)


def node_body(name):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                SELECTOR_KEY: "true",
                NFD_GPU: "true",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "type": "kwok",
                "feature.node.kubernetes.io/kernel-version.full": "5.14.0-427.22.1.el9_4.x86_64",
                "nvidia.com/gpu.product": "Tesla-T4",
                "nvidia.com/gpu.count": "1",
            },
        },
        "spec": {"taints": [{"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
        },
    }


def create_nodes(core, names, workers=16):
    from kubernetes.client.rest import ApiException

    def one(name):
        try:
            core.create_node(node_body(name))
        except ApiException as exc:
            if exc.status != 409:
                raise

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, names))


def delete_nodes(core, names, workers=16):
    from kubernetes.client.rest import ApiException

    def one(name):
        try:
            core.delete_node(name)
        except ApiException as exc:
            if exc.status != 404:
                raise

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, names))


def wait_ready(core, count, selector, timeout=180):
    """Wait until kwok has initialised the simulated nodes (its status writes would compete with ours)."""
    deadline = time.monotonic() + timeout
    ready = 0
    while time.monotonic() < deadline:
        ready = sum(
            1
            for n in core.list_node(label_selector=selector).items
            if any(c.type == "Ready" and c.status == "True" for c in (n.status.conditions or []))
        )
        if ready >= count:
            return ready
        time.sleep(1)
    return ready


def run_task(kubeconfig, args, check=False):
    task = {"name": "nfd_labels", "gpuops.cluster.nfd_labels": args, "register": "r"}
    out, proc, wall = run_tasks(kubeconfig, [task], check=check)
    if out is None:
        return wall, {"failed": True, "msg": no_json_message(proc)}
    return wall, out["plays"][0]["tasks"][0]["hosts"]["localhost"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=500)
    p.add_argument(
        "--kubeconfig",
        default=os.environ.get("K8S_AUTH_KUBECONFIG") or os.path.join(ROOT, ".localcluster", "kubeconfig"),
    )
    p.add_argument("--parallel", type=int, default=16, help="nfd_labels parallel option")
    p.add_argument("--budget", type=float, default=15.0, help="seconds the first labelling run may take")
    p.add_argument("--keep", action="store_true", help="leave the simulated nodes in the cluster")
    a = p.parse_args(argv)

    import conftest  # noqa: F401 - links the collection into .build/ansible_collections
    from kubernetes import client

    core = client.CoreV1Api(api_client(a.kubeconfig, 32))
    names = ["bench-node-{0:04d}".format(i) for i in range(a.nodes)]
    t0 = time.monotonic()
    create_nodes(core, names)
    print("created {0} nodes in {1:.1f}s".format(len(names), time.monotonic() - t0), flush=True)
    selector = SELECTOR_KEY + "=true"
    t0 = time.monotonic()
    ready = wait_ready(core, len(names), selector)
    print("{0} nodes Ready (kwok) after {1:.1f}s more".format(ready, time.monotonic() - t0), flush=True)
    node_selector = {SELECTOR_KEY: "true"}
    labels = {
        "node-role.kubernetes.io/gpu": "",
        "gpuops-bench.io/pool": "training",
        "nvidia.com/gpu.deploy.driver": "true",
    }
    failed = False
    try:
        runs = [
            ("label (first run)", dict(node_selector=node_selector, labels=labels, parallel=a.parallel), False),
            ("label (second run, no-op)", dict(node_selector=node_selector, labels=labels, parallel=a.parallel), False),
            ("remove (check mode)", dict(node_selector=node_selector, labels=labels, state="absent"), True),
            ("remove", dict(node_selector=node_selector, labels=labels, state="absent", parallel=a.parallel), False),
        ]
        first = None
        for title, args, check in runs:
            wall, result = run_task(a.kubeconfig, args, check=check)
            if result.get("failed"):
                failed = True
                print("{0}: FAILED: {1}".format(title, result.get("msg")))
                continue
            first = wall if first is None else first
            print(
                "{0:28s} wall {1:6.2f}s  module {2:6.2f}s  nodes {3}  changed {4}".format(
                    title, wall, result.get("duration", 0), result["summary"]["nodes"], len(result["changed_nodes"])
                ),
                flush=True,
            )
        if first is not None:
            verdict = "within" if first <= a.budget else "OVER"
            print(
                "first labelling run of {0} nodes: {1:.2f}s ({2} the {3:.0f}s budget)".format(
                    a.nodes, first, verdict, a.budget
                )
            )
    finally:
        if not a.keep:
            t0 = time.monotonic()
            delete_nodes(core, names)
            print("deleted {0} nodes in {1:.1f}s".format(len(names), time.monotonic() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
