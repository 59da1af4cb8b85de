# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""site.yml over a fleet: one inventory host per cluster, three local clusters at once (one OpenShift, two
Kubernetes), each with its own connection variables, one of them failing in the middle of the run.

Its wall time against one cluster alone is measured by tests/bench/bench_fleet.py, not here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import yaml
from ansible_env import collection_env
from conftest import ROOT, extra_cluster
from kubernetes import client
from localcluster.cluster import TOKENS

SUMMARY_TASK = "Fleet - how each cluster ended"


def fleet_inventory(tmp_path, hosts):
    """An inventory directory: the local inventory's group_vars, and one host per cluster in gpuops_clusters."""
    inv = tmp_path / "inventory"
    shutil.copytree(os.path.join(ROOT, "inventories", "local", "group_vars"), str(inv / "group_vars"))
    doc = {
        "all": {
            "children": {
                "gpuops_clusters": {
                    "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                    "hosts": hosts,
                }
            }
        }
    }
    (inv / "hosts.yml").write_text(yaml.safe_dump(doc))
    return str(inv)


def run_fleet(tmp_path, inventory, extra_args=None):
    """ansible-playbook site.yml over the inventory, from tmp_path (the reports' default base), with no kubeconfig of
    its own: each host reaches its cluster through its variables only."""
    env = collection_env(
        "", {"K8S_AUTH_KUBECONFIG": None, "KUBECONFIG": None, "HOME": str(tmp_path), "PWD": str(tmp_path)}
    )
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory, "--forks", "3"]
    cmd += [os.path.join(ROOT, "playbooks", "site.yml")] + (extra_args or [])
    proc = subprocess.run(
        cmd, env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=1800, check=False
    )
    out = proc.stdout.decode("utf-8", "replace")
    return proc.returncode, out, json.loads(out[out.find("{") :])


def summary_of(result):
    tasks = [t for t in result["plays"][0]["tasks"] if t["task"]["name"] == SUMMARY_TASK]
    assert len(tasks) == 1, [t["task"]["name"] for t in result["plays"][0]["tasks"]][-10:]
    (res,) = [r for r in tasks[0]["hosts"].values() if not r.get("skipped")]
    return res["msg"]


def failure_of(result, host):
    """The message the run stopped this host with."""
    for task in reversed(result["plays"][0]["tasks"]):
        res = task["hosts"].get(host) or {}
        if task["task"]["name"] == "Stop with the failure" and res.get("failed"):
            return res["msg"]
    return None


def gpu_nodes_of(api):
    """The nodes that advertise GPUs (after the converge)."""
    nodes = client.CoreV1Api(api).list_node().items
    return sorted(n.metadata.name for n in nodes if int((n.status.allocatable or {}).get("nvidia.com/gpu", "0")) > 0)


def test_site_over_three_clusters_at_once_one_failing(cluster, k8s_cluster, tmp_path):
    with extra_cluster("fleet", "kubernetes", gpu_nodes=2, gpu_node_mode="bare") as lab:
        # lab: a quota someone left in the GPU stack's namespace admits no pod; its driver state fails mid-run,
        # after preflight, NFD and the driver's namespace were written there.
        core = client.CoreV1Api(lab.api)
        core.create_namespace({"metadata": {"name": "nvidia-gpu-driver"}})
        core.create_namespaced_resource_quota(
            "nvidia-gpu-driver", {"metadata": {"name": "freeze"}, "spec": {"hard": {"pods": "0"}}}
        )
        admin_token = TOKENS["admin"][0]
        hosts = {
            # A kubeconfig per cluster ...
            "ocp-east": {"gpuops_kubeconfig": cluster.kubeconfig},
            # ... or the API server, a bearer token and the CA (what AWX would keep in a credential or a vault).
            "k8s-west": {
                "gpuops_api_host": k8s_cluster.server,
                "gpuops_api_key": admin_token,
                "gpuops_ca_cert": k8s_cluster.ca_cert,
                "gpuops_expected_gpu_nodes": 2,
            },
            "k8s-lab": {"gpuops_kubeconfig": lab.kubeconfig, "gpuops_expected_gpu_nodes": 2, "driver_wait_timeout": 30},
        }
        inventory = fleet_inventory(tmp_path, hosts)
        rc, text, result = run_fleet(tmp_path, inventory)
        assert rc == 2, text[-3000:]
        assert admin_token not in text

        # One cluster's failure did not stop the others: both ran every state and validated.
        stats = result["stats"]
        why = dict((host, failure_of(result, host)) for host in stats)
        assert stats["ocp-east"]["failures"] == 0 and stats["k8s-west"]["failures"] == 0, (stats, why, text[-3000:])
        assert stats["k8s-lab"]["failures"] == 1, stats
        assert failure_of(result, "k8s-lab").startswith("driver failed ("), failure_of(result, "k8s-lab")
        assert failure_of(result, "ocp-east") is None and failure_of(result, "k8s-west") is None

        # Reports and timelines per cluster, under the directory ansible-playbook ran in.
        for host, api in (("ocp-east", cluster.api), ("k8s-west", k8s_cluster.api)):
            base = tmp_path / "reports" / host
            report = json.loads((base / "gpu-validation.json").read_text())
            assert report["summary"]["result"] == "passed", report["failures"]
            assert sorted(n["node"] for n in report["nodes"]) == gpu_nodes_of(api), host
            timeline = json.loads((base / "timeline.json").read_text())
            assert timeline["states"][-1]["state"] == "gpu_validation" and timeline["nodes"], host
        assert not (tmp_path / "reports" / "k8s-lab" / "gpu-validation.json").exists()
        assert not (tmp_path / "reports" / "timeline.json").exists()

        # The summary table at the end: one row per cluster.
        table = summary_of(result)
        rows = dict((line.split()[0], line) for line in table[2:-1])
        assert sorted(rows) == ["k8s-lab", "k8s-west", "ocp-east"], table
        assert "OpenShift 4." in rows["ocp-east"] and "converged" in rows["ocp-east"], table
        assert "Kubernetes v1." in rows["k8s-west"] and "converged" in rows["k8s-west"], table
        assert "FAILED in driver" in rows["k8s-lab"] and "reports/k8s-lab" in rows["k8s-lab"], table
        assert "2/2 passed" in rows["k8s-west"], table
        assert table[-1] == "3 cluster(s): 2 converged, 1 failed (k8s-lab in driver)", table

        # The quota gone, the failed cluster alone re-runs (--limit) and converges.
        core.delete_namespaced_resource_quota("freeze", "nvidia-gpu-driver")
        # Its short driver wait (set only to fail fast above) gives way: the DaemonSet controller retries the pods
        # it could not create with a growing back-off (client-go's per-item rate limiter), tens of seconds by now.
        rc, text, result = run_fleet(tmp_path, inventory, ["--limit", "k8s-lab", "-e", "driver_wait_timeout=300"])
        assert rc == 0, text[-3000:]
        assert sorted(result["stats"]) == ["k8s-lab"]
        report = json.loads((tmp_path / "reports" / "k8s-lab" / "gpu-validation.json").read_text())
        assert sorted(n["node"] for n in report["nodes"]) == gpu_nodes_of(lab.api)

        # The whole fleet again, as a scheduled job runs it, with the longer driver wait for all: every cluster
        # converged, nothing changed (a wait is not what a state makes: no state re-runs for it), and not one write
        # in any of the three clusters' audit logs.
        marks = [
            (name, c, c.audit.mark())
            for name, c in (("ocp-east", cluster), ("k8s-west", k8s_cluster), ("k8s-lab", lab))
        ]
        rc, text, result = run_fleet(tmp_path, inventory, ["-e", "driver_wait_timeout=300"])
        assert rc == 0, text[-3000:]
        assert sorted(result["stats"]) == ["k8s-lab", "k8s-west", "ocp-east"]
        assert all(s["changed"] == 0 and s["failures"] == 0 for s in result["stats"].values()), result["stats"]
        assert summary_of(result)[-1] == "3 cluster(s): 3 converged, 0 failed", summary_of(result)
        for name, c, mark in marks:
            assert c.audit.writes_since(mark) == [], name
