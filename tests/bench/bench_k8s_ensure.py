# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Benchmark: gpuops.cluster.k8s_ensure converging N objects in one task.

On a running local cluster (``cluster.py up``): one Namespace, N ConfigMaps,
N/10 ServiceAccounts and Services; runs the module through ansible-playbook
four times (create, no-op re-run, one object changed, absent) and prints the
wall time, the module's own duration and the write requests of each run,
counted in the apiserver audit log. Not a test: it prints numbers; it exits 1
only when a run fails.

    .venv/bin/python tests/bench/bench_k8s_ensure.py [--objects 200] [--workdir .localcluster]
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import os
import sys
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "localcluster"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from ansible_env import no_json_message, run_tasks  # noqa: E402


def manifests(ns, n, marker):
    objs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}]
    objs += [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm-%d" % i, "namespace": ns},
            "data": {"i": str(i), "marker": marker},
        }
        for i in range(n)
    ]
    objs += [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa-%d" % i, "namespace": ns}}
        for i in range(max(1, n // 10))
    ]
    objs += [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc-%d" % i, "namespace": ns},
            "spec": {"selector": {"app": "x"}, "ports": [{"port": 9400}]},
        }
        for i in range(max(1, n // 10))
    ]
    return objs


def run(kubeconfig, objs, state="present"):
    task = {"name": "ensure", "gpuops.cluster.k8s_ensure": {"definitions": objs, "state": state, "owner": "bench"}}
    out, proc, wall = run_tasks(kubeconfig, [task])
    if out is None:
        sys.exit(no_json_message(proc))
    result = out["plays"][0]["tasks"][0]["hosts"]["localhost"]
    if proc.returncode != 0:
        print(result.get("msg"), file=sys.stderr)
        sys.exit(1)
    return wall, result


def main():
    from localcluster.audit import AuditLog
    from localcluster.cluster import LocalCluster

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--objects", type=int, default=200, help="ConfigMaps (plus 10%% ServiceAccounts and Services)")
    p.add_argument("--workdir", default=os.path.join(ROOT, ".localcluster"))
    a = p.parse_args()
    lc = LocalCluster(a.workdir)
    audit = AuditLog(lc.audit_log, lc.api_client(), user="admin")
    ns = "bench-" + uuid.uuid4().hex[:6]
    objs = manifests(ns, a.objects, "a")
    changed = manifests(ns, a.objects, "a")
    changed[1]["data"]["marker"] = "b"
    print(
        "k8s_ensure, {0} objects (1 Namespace, {1} ConfigMaps, {2} ServiceAccounts, {2} Services)".format(
            len(objs), a.objects, max(1, a.objects // 10)
        )
    )
    print("{0:<22} {1:>8} {2:>10} {3:>8}".format("run", "wall s", "module s", "writes"))
    for label, defs, state in (
        ("first converge", objs, "present"),
        ("no-op re-run", objs, "present"),
        ("one object changed", changed, "present"),
        ("absent", changed, "absent"),
    ):
        mark = audit.mark()
        wall, result = run(lc.kubeconfig, defs, state)
        writes = len(audit.writes_since(mark))
        print("{0:<22} {1:>8.1f} {2:>10.1f} {3:>8}".format(label, wall, result.get("duration", 0), writes))


if __name__ == "__main__":
    main()
