# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Benchmark: day two - a rolling driver upgrade, and an OpenShift upgrade preflight.

Each scenario on its own local cluster (started and stopped here):

* ``rollout`` (plain Kubernetes profile, ``--gpu-nodes`` bare GPU nodes, default 4): site.yml converges; one GPU
  job (``sleep infinity``) starts on every GPU node; site.yml runs again with a new ``driver_version`` and
  ``driver_upgrade_max_unavailable`` (default 1). Prints the wall time of that run, of its driver rollout
  (gpuops.cluster.driver_rollout) and of each node's wave (cordon to uncordon, validation included), and the
  writes of a re-run (it must be 0).
* ``preflight`` (OpenShift 4.16 profile, GPU MachineSet scaled to 2): site.yml converges; the update service offers
  4.17.0 (simulator lever); upgrade_preflight.yml judges it and builds the driver image for 4.17's kernel; the
  cluster upgrades (lever: ClusterVersion and the GPU nodes' RHCOS build); site.yml runs again. Prints the
  preflight's wall time, and the driver state's time after the upgrade with the image ready (no build).

* ``operator`` (OpenShift 4.16 profile, GPU MachineSet scaled to 2): site.yml with ``gpuops_stack: operator``
  converges (the GPU Operator through OLM, its ClusterPolicy ready, validation); a re-run (its writes: 0); the
  teardown. The same for the manual stack on a fresh cluster, for comparison. Prints the wall times and the states'.

Figures are printed, not asserted; the script exits 1 only when a run fails.

    .venv/bin/python tests/bench/bench_day_two.py [--scenario rollout|preflight|operator|all] [--gpu-nodes 4]
                                                  [--max-unavailable 1]
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "localcluster"))

from ansible_env import collection_env  # noqa: E402
from localcluster.audit import AuditLog  # noqa: E402
from localcluster.cluster import LocalCluster  # noqa: E402

ROLLOUT_TASK = "Replace outdated driver pods node by node (cordon, evict GPU pods, reload, validate, uncordon)"
DAEMONSETS_TASK = "Ensure the driver DaemonSets (one per kernel; those of kernels no node runs are pruned)"


def site(lc, extra_vars, playbook="site.yml"):
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        os.path.join(ROOT, "inventories", "local"),
        os.path.join(ROOT, "playbooks", playbook),
        "-e",
        json.dumps(extra_vars),
    ]
    t0 = time.time()
    proc = subprocess.run(
        cmd, env=collection_env(lc.kubeconfig), stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False
    )
    seconds = time.time() - t0
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        sys.stderr.write(out[-4000:] + proc.stderr.decode("utf-8", "replace")[-2000:])
        raise SystemExit("{0} failed (rc {1})".format(playbook, proc.returncode))
    return seconds, json.loads(out[out.find("{") :])


def rollout_result(result):
    """The rollout's result: the rollout task's when it ran on its own, else the DaemonSets' task's follower."""
    found = None
    for task in result["plays"][0]["tasks"]:
        res = task["hosts"].get("localhost") or {}
        if task["task"]["name"].endswith(ROLLOUT_TASK) and not res.get("skipped"):
            found = dict(res, ran_in="the rollout task")
        elif task["task"]["name"].endswith(DAEMONSETS_TASK) and "driver_rollout" in res:
            found = dict(res["driver_rollout"], ran_in="the DaemonSets' module run")
    if found is None:
        raise SystemExit("no driver rollout in the run")
    return found


def start_jobs(lc, names):
    from kubernetes import client

    core = client.CoreV1Api(lc.api_client())
    core.create_namespace({"metadata": {"name": "bench-jobs"}})
    for i, name in enumerate(names):
        core.create_namespaced_pod(
            "bench-jobs",
            {
                "metadata": {"name": "train-%d" % i},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": {"kubernetes.io/hostname": name},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                    "containers": [
                        {
                            "name": "train",
                            "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                            "command": ["sleep", "infinity"],
                            "resources": {"limits": {"nvidia.com/gpu": "1"}},
                        }
                    ],
                },
            },
        )
    deadline = time.time() + 120
    while time.time() < deadline:
        phases = [p.status.phase for p in core.list_namespaced_pod("bench-jobs").items]
        if phases.count("Running") == len(names):
            return
        time.sleep(1)
    raise SystemExit("the GPU jobs did not start: {0}".format(phases))


def rollout(args):
    lc = LocalCluster(os.path.join(ROOT, ".localcluster-bench-rollout"))
    lc.up(profile="kubernetes", workers=2, gpu_nodes=args.gpu_nodes, gpu_node_mode="bare")
    audit = AuditLog(lc.audit_log, lc.api_client(), user="admin")
    base = {
        "gpuops_expected_gpu_nodes": args.gpu_nodes,
        "gpuops_reports_dir": os.path.join(ROOT, "reports", "bench-rollout"),
    }
    try:
        seconds, result = site(lc, base)
        print("[rollout] converge {0:.1f}s".format(seconds), flush=True)
        from kubernetes import client

        nodes = client.CoreV1Api(lc.api_client()).list_node().items
        gpu = sorted(n.metadata.name for n in nodes if "nvidia.com/gpu" in (n.status.allocatable or {}))
        start_jobs(lc, gpu)
        upgrade = dict(base, driver_version=args.version, driver_upgrade_max_unavailable=args.max_unavailable)
        seconds, result = site(lc, upgrade)
        roll = rollout_result(result)
        print("[rollout] site.yml with driver_version {0}: {1:.1f}s, of which the rollout {2:.1f}s (in {3})".format(
            args.version, seconds, roll["seconds"], roll["ran_in"]))  # fmt: skip
        for line in roll["table"]:
            print("  " + line)
        mark = audit.mark()
        again, dummy = site(lc, upgrade)
        print("[rollout] re-run {0:.1f}s, writes {1}".format(again, len(audit.writes_since(mark))), flush=True)
    finally:
        lc.down()


def driver_seconds(reports):
    with open(os.path.join(reports, "timeline.json")) as handle:
        return dict((s["state"], s["seconds"]) for s in json.load(handle)["states"]).get("driver") or 0


def count_builds(api):
    return len(api.list_namespaced_custom_object("build.openshift.io", "v1", "nvidia-gpu-driver", "builds")["items"])


def preflight():
    from kubernetes import client
    from simopenshift import catalog, control

    lc = LocalCluster(os.path.join(ROOT, ".localcluster-bench-preflight"))
    lc.up(profile="openshift")
    reports = os.path.join(ROOT, "reports", "bench-preflight")
    base = {"gpu_machineset_replicas": 2, "gpuops_reports_dir": reports}
    try:
        seconds, dummy = site(lc, base)
        print(
            "[preflight] converge {0:.1f}s, driver state {1:.1f}s (one build)".format(seconds, driver_seconds(reports))
        )
        builds = client.CustomObjectsApi(lc.api_client())
        target = "4.17.0"
        build = catalog.release_build(target)
        control.offer_updates(lc.api_client(), [target])
        dtk = {"driver_ocp_upgrade_toolkit_images": {target: catalog.dtk_image(build.build)}}
        seconds, result = site(lc, dtk, "upgrade_preflight.yml")
        print("[preflight] upgrade_preflight.yml (one build): {0:.1f}s".format(seconds))
        for task in result["plays"][0]["tasks"]:
            msg = task["hosts"].get("localhost", {}).get("msg")
            if isinstance(msg, list) and msg and str(msg[0]).startswith("target"):
                for line in msg:
                    print("  " + line)
        seconds, dummy = site(lc, dtk, "upgrade_preflight.yml")
        print("[preflight] again, image ready: {0:.1f}s".format(seconds), flush=True)
        core = client.CoreV1Api(lc.api_client())
        gpu = [n.metadata.name for n in core.list_node().items if "nvidia.com/gpu" in (n.status.allocatable or {})]
        control.upgrade_cluster(lc.api_client(), target, gpu)
        label = "feature.node.kubernetes.io/kernel-version.full"
        control.wait_for(
            lambda: all(core.read_node(n).metadata.labels.get(label) == build.kernel for n in gpu),
            120,
            what="NFD relabels the upgraded nodes",
        )
        before = count_builds(builds)
        seconds, dummy = site(lc, base)
        print("[preflight] site.yml after the upgrade {0:.1f}s, driver state {1:.1f}s, builds started: {2}".format(
            seconds, driver_seconds(reports), count_builds(builds) - before))  # fmt: skip
    finally:
        lc.down()


def stacks():
    for stack in ("operator", "manual"):
        lc = LocalCluster(os.path.join(ROOT, ".localcluster-bench-" + stack))
        lc.up(profile="openshift")
        reports = os.path.join(ROOT, "reports", "bench-" + stack)
        extra = {"gpu_machineset_replicas": 2, "gpuops_reports_dir": reports, "gpuops_stack": stack}
        audit = AuditLog(lc.audit_log, lc.api_client(), user="admin")
        try:
            seconds, dummy = site(lc, extra)
            with open(os.path.join(reports, "timeline.json")) as handle:
                states = ", ".join("{state} {seconds:.1f}s".format(**s) for s in json.load(handle)["states"])
            print("[{0}] converge of 2 GPU nodes: {1:.1f}s ({2})".format(stack, seconds, states))
            mark = audit.mark()
            seconds, dummy = site(lc, extra)
            print("[{0}] re-run: {1:.1f}s, {2} writes".format(stack, seconds, len(audit.writes_since(mark))))
            seconds, dummy = site(lc, {"gpuops_stack": stack}, "teardown.yml")
            print("[{0}] teardown: {1:.1f}s".format(stack, seconds), flush=True)
        finally:
            lc.down()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", choices=["rollout", "preflight", "operator", "all"], default="all")
    p.add_argument("--gpu-nodes", type=int, default=4)
    p.add_argument("--max-unavailable", default="1")
    p.add_argument("--version", default="580.95.05", help="the driver version rolled out")
    args = p.parse_args()
    if args.scenario in ("rollout", "all"):
        rollout(args)
    if args.scenario in ("preflight", "all"):
        preflight()
    if args.scenario in ("operator", "all"):
        stacks()


if __name__ == "__main__":
    main()
