#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Benchmark: gpuops.cluster.gpu_validate on 1 and on N (default 50) simulated GPU nodes.

Not a timed test: it prints both durations and their ratio, and exits 1 when
the ratio is above --max-ratio (default 2.0, the acceptance bound: the module
creates all pods first and polls them together, so 50 nodes must not take much
longer than one).

    .venv/bin/python tests/bench/bench_gpu_validate.py [--nodes 50] [--repeat 2]

It uses the local cluster in GPUOPS_LOCALCLUSTER_DIR (default .localcluster)
when it runs with the simulated GPU node agent, else starts one (profile
openshift) and stops it afterwards. The nodes are pre-provisioned GPU nodes
(they advertise nvidia.com/gpu and have a host driver), so the run measures
gpu_validate itself: checks allocatable and vectoradd (--checks to change). Both the
module's own duration (summary.duration) and the wall time of
ansible-playbook are reported; the ratio is taken on the module's duration
(the ~2 s of ansible-playbook start-up are the same for both).
"""

from __future__ import absolute_import, division, print_function

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

from ansible_env import no_json_message, run_tasks  # noqa: E402
from gpu_nodes import SET_LABEL, GpuNodes, delete_namespace, make_namespace  # noqa: E402
from localcluster.cluster import DEFAULT_WORKDIR, LocalCluster  # noqa: E402

CHECKS = ["allocatable", "vectoradd"]


def ensure_collection_link():
    link = os.path.join(ROOT, ".build", "ansible_collections", "gpuops", "cluster")
    if not os.path.lexists(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(ROOT, link)


def run_module(kubeconfig, args):
    """One gpu_validate task through ansible-playbook; returns (result, wall seconds)."""
    task = {"name": "gpu_validate", "gpuops.cluster.gpu_validate": args, "ignore_errors": True}
    out, proc, wall = run_tasks(kubeconfig, [task])
    if out is None:
        raise SystemExit(no_json_message(proc))
    return out["plays"][0]["tasks"][-1]["hosts"]["localhost"], wall


def measure(kubeconfig, args, label):
    result, wall = run_module(kubeconfig, args)
    if result.get("failed") or not result.get("passed"):
        raise SystemExit("{0}: gpu_validate failed: {1}".format(label, result.get("msg") or result.get("failures")))
    duration = result["summary"]["duration"]
    t = result["summary"].get("timings") or {}
    print(
        "  {0:<10} nodes={1:<3} module {2:6.2f}s (pods created after {3}s, all finished after {4}s)   ansible-playbook {5:6.2f}s".format(
            label, result["summary"]["nodes"], duration, t.get("pods_created"), t.get("pods_finished"), wall
        )
    )
    return duration, wall


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=1, help="measure each size this many times, keep the best")
    parser.add_argument("--max-ratio", type=float, default=2.0)
    parser.add_argument(
        "--checks",
        default=",".join(CHECKS),
        help="comma-separated checks (default: %(default)s, one vectorAdd pod per node; add nvidia_smi for two)",
    )
    parser.add_argument("--workdir", default=os.environ.get("GPUOPS_LOCALCLUSTER_DIR", DEFAULT_WORKDIR))
    opts = parser.parse_args(argv)

    ensure_collection_link()
    lc = LocalCluster(opts.workdir)
    started = False
    if not (lc.api_ready() and lc.pid_of("sim-controllers")):
        if lc.api_ready():
            raise SystemExit(
                "the cluster in {0} runs without the simulated GPU node agent (sim-controllers); "
                "start one with `cluster.py up --profile openshift` or use another --workdir".format(opts.workdir)
            )
        lc.up(profile="openshift")
        started = True
    api = lc.api_client()
    namespace = make_namespace(api, "bench")
    nodes = GpuNodes(api)
    try:
        tag, names = nodes.make(opts.nodes, prefix="bench", preprovisioned=True)
        checks = [c.strip() for c in opts.checks.split(",") if c.strip()]
        print(
            "gpu_validate benchmark: {0} simulated GPU nodes (set {1}), checks {2}".format(
                len(names), tag, ", ".join(checks)
            )
        )
        base = {"namespace": namespace, "checks": checks, "wait_timeout": 300, "wait_sleep": 1}
        one = dict(base, nodes=[names[0]])
        many = dict(base, node_selector={SET_LABEL: tag})
        measure(lc.kubeconfig, one, "warm-up")
        small = min(measure(lc.kubeconfig, one, "1 node") for dummy in range(opts.repeat))
        large = min(measure(lc.kubeconfig, many, "{0} nodes".format(opts.nodes)) for dummy in range(opts.repeat))
        ratio = large[0] / small[0] if small[0] else float("inf")
        wall_ratio = large[1] / small[1] if small[1] else float("inf")
        print(
            "1 node: {0:.2f}s   {1} nodes: {2:.2f}s   ratio {3:.2f} (module duration; ansible-playbook wall ratio {4:.2f}); "
            "bound {5:.1f}: {6}".format(
                small[0],
                opts.nodes,
                large[0],
                ratio,
                wall_ratio,
                opts.max_ratio,
                "OK" if ratio <= opts.max_ratio else "TOO SLOW",
            )
        )
        return 0 if ratio <= opts.max_ratio else 1
    finally:
        nodes.cleanup()
        delete_namespace(api, namespace)
        if started and not os.environ.get("GPUOPS_KEEP_CLUSTER"):
            lc.down()


if __name__ == "__main__":
    sys.exit(main())
