# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""site.yml on plain Kubernetes with bare GPU nodes (two GPU models, two kernels): nothing pre-installed.

Run as platform teams run it: with only the collection's least-privilege ServiceAccount (playbooks/rbac.yml), its
bearer token and the cluster CA, no kubeconfig; the audit log then shows no request refused and every rule of the
installer's ClusterRoles needed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from conftest import assert_rerun_writes_nothing, check_burn_in, run_site, state_lines
from gpu_nodes import gpu_job
from rbac_checks import DRIVER_ROLLOUT, EVICTION, Installer

pytestmark = pytest.mark.integration


def test_site_on_plain_kubernetes_bare_gpu_nodes_to_validated_gpus(k8s_cluster, tmp_path):
    from kubernetes import client

    core = client.CoreV1Api(k8s_cluster.api)
    apps = client.AppsV1Api(k8s_cluster.api)
    gpu_nodes = [n for n in core.list_node().items if (n.metadata.annotations or {}).get("sim.gpuops.io/gpu-count")]
    gpu_nodes = gpu_nodes or [
        n for n in core.list_node().items if "g4dn" in str(n.metadata.labels) or "g5" in str(n.metadata.labels)
    ]
    kernels = sorted(set(n.status.node_info.kernel_version for n in gpu_nodes))
    assert len(kernels) >= 2, kernels
    # Bare: no NFD label and no nvidia.com/gpu before the run.
    for n in gpu_nodes:
        assert "nvidia.com/gpu" not in (n.status.allocatable or {})
        assert not any(k.startswith("feature.node.kubernetes.io/") for k in (n.metadata.labels or {}))

    reports = str(tmp_path)
    extra = {"gpuops_reports_dir": reports, "gpuops_expected_gpu_nodes": len(gpu_nodes)}
    installer = Installer(k8s_cluster, run_site)
    as_installer = installer.env
    try:
        first = run_site(k8s_cluster, extra_vars=extra, env=as_installer)
        text = "\n".join(state_lines(first))
        assert "gpu_machineset: skipped" in text and "entitlement: skipped" in text, text[-2000:]
        ds = apps.list_daemon_set_for_all_namespaces(label_selector="app.kubernetes.io/component=nvidia-driver").items
        ds = ds or [
            d
            for d in apps.list_daemon_set_for_all_namespaces().items
            if (d.spec.template.metadata.labels or {}).get("app.kubernetes.io/component") == "nvidia-driver"
        ]
        assert len(ds) == len(kernels), [d.metadata.name for d in ds]
        for d in ds:
            assert d.status.number_ready == d.status.desired_number_scheduled >= 1, d.metadata.name
            container = d.spec.template.spec.containers[0]
            # NVIDIA's runtime-compiled image of the node's OS (any kernel), compiled on the node at start
            assert container.image.startswith("nvcr.io/nvidia/driver:595.91.07-ubuntu"), container.image
            assert container.args == ["init"], container.args
        # containerd (1.7 here) loads the toolkit's drop-in only through its host path
        toolkit_env = apps.read_namespaced_daemon_set("nvidia-container-toolkit-daemonset", "nvidia-gpu-driver")
        toolkit_env = {e.name: e.value for e in toolkit_env.spec.template.spec.containers[0].env}
        assert toolkit_env["RUNTIME_DROP_IN_CONFIG_HOST_PATH"] == "/etc/containerd/conf.d/99-nvidia.toml"
        # The toolkit found containerd on the GPU nodes and configures it (the OpenShift tests cover CRI-O).
        toolkit = apps.read_namespaced_daemon_set("nvidia-container-toolkit-daemonset", "nvidia-gpu-driver")
        env = {e.name: e.value for e in toolkit.spec.template.spec.containers[0].env}
        assert env["RUNTIME"] == "containerd" and "CONTAINERD_SOCKET" in env and "CRIO_CONFIG" not in env, env
        assert toolkit.status.number_ready == toolkit.status.desired_number_scheduled == len(gpu_nodes)
        with open(os.path.join(reports, "timeline.json")) as f:
            timeline = json.load(f)
        assert sorted(r["node"] for r in timeline["nodes"]) == sorted(n.metadata.name for n in gpu_nodes)
        for row in timeline["nodes"]:
            steps = ("node_ready", "driver_ready", "toolkit_ready", "allocatable", "validated")
            assert all(row["steps"][k] for k in steps), row
        # Every GPU node advertises its GPUs and passed validation (workloads, nvidia-smi, metrics).
        for n in core.list_node().items:
            if n.metadata.name in [g.metadata.name for g in gpu_nodes]:
                want = (n.metadata.annotations or {}).get("sim.gpuops.io/gpu-count", "1")
                assert (n.status.allocatable or {}).get("nvidia.com/gpu") == want, n.metadata.name
        with open(os.path.join(reports, "gpu-validation.json")) as f:
            report = json.load(f)
        assert report["failures"] == [] and report["summary"]["failed"] == 0, report["failures"]
        assert len(report["nodes"]) == len(gpu_nodes)

        installer.record_grants()
        assert_rerun_writes_nothing(k8s_cluster, extra_vars=extra, env=as_installer, user=installer.username)
        # Every state's own no-op path (the ledger off): nothing written either.
        forced = assert_rerun_writes_nothing(
            k8s_cluster, extra_vars=dict(extra, gpuops_ledger="false"), env=as_installer, user=installer.username
        )
        assert "ledger: runs nfd: forced (gpuops_ledger is off)" in state_lines(forced)
        # The validation forced, with the burn-in, as the installer.
        check_burn_in(k8s_cluster, extra, reports, [n.metadata.name for n in gpu_nodes], env=as_installer)
        run_site(k8s_cluster, playbook="diagnose.yml", extra_vars=extra, env=as_installer)
        check_driver_upgrade(k8s_cluster, core, gpu_nodes, extra, as_installer, installer.username)
    finally:
        try:
            run_site(k8s_cluster, playbook="teardown.yml", env=as_installer)
        finally:
            installer.remove()
    # The driver rollout's rules too (the upgrade above took that path, evicting a GPU job on each node).
    installer.assert_least_privilege("kubernetes", paths=DRIVER_ROLLOUT + EVICTION)
    # Back to bare GPU nodes: no NFD label, no GPU resource, no taint of ours.
    for n in core.list_node().items:
        if n.metadata.name in [g.metadata.name for g in gpu_nodes]:
            assert "nvidia.com/gpu" not in (n.status.allocatable or {}), n.metadata.name
            assert not any(
                k.startswith(("feature.node.kubernetes.io/", "nvidia.com/")) for k in n.metadata.labels or {}
            )


def check_driver_upgrade(cluster, core, gpu_nodes, extra, as_installer, user):
    """A new driver_version while a GPU job runs on each GPU node: site.yml evicts the jobs and rolls the driver onto
    both GPU nodes (one DaemonSet per kernel), one node at a time, each validated before it serves again; then a
    re-run writes nothing."""
    jobs_ns = "train-jobs"
    core.create_namespace({"metadata": {"name": jobs_ns}})
    jobs = [gpu_job(core, jobs_ns, n.metadata.name) for n in gpu_nodes]
    try:
        mark = cluster.audit.mark()
        before = dict(
            (p.spec.node_name, p)
            for p in core.list_namespaced_pod(
                "nvidia-gpu-driver", label_selector="app.kubernetes.io/component=nvidia-driver"
            ).items
        )
        newer = dict(extra, driver_version="580.95.05")
        out = run_site(cluster, extra_vars=newer, env=as_installer)
        lines = state_lines(out)
        assert any(line.startswith("ledger: runs driver") for line in lines), lines
        # The rollout's table: one row per GPU node, the runtime-compiled image of the new version.
        table = [line.split() for line in lines if line.startswith("gpu-") and " upgraded " in line]
        assert sorted(row[0] for row in table) == sorted(n.metadata.name for n in gpu_nodes), lines
        assert all(
            row[2].startswith("595.91.07-ubuntu") and row[3].startswith("580.95.05-ubuntu") for row in table
        ), table
        after = dict(
            (p.spec.node_name, p)
            for p in core.list_namespaced_pod(
                "nvidia-gpu-driver", label_selector="app.kubernetes.io/component=nvidia-driver"
            ).items
        )
        for n in gpu_nodes:
            name = n.metadata.name
            pod = after[name]
            assert pod.metadata.uid != before[name].metadata.uid
            assert pod.spec.containers[0].image.startswith(
                "nvcr.io/nvidia/driver:580.95.05-ubuntu"
            ), pod.spec.containers[0].image
            assert pod.status.container_statuses[0].restart_count == 0  # no GPU client held the old driver
            node = core.read_node(name)
            assert not node.spec.unschedulable and "gpuops.cluster/driver-upgrade" not in (node.metadata.labels or {})
        # Each job left through the Eviction API (its PodDisruptionBudgets would have had their say), by the installer.
        evicted = sorted(
            set(
                (ev.get("objectRef") or {}).get("name")
                for ev in cluster.audit.events_since(mark)
                if ev.get("verb") == "create"
                and (ev.get("objectRef") or {}).get("subresource") == "eviction"
                and (ev.get("user") or {}).get("username") == user
                and (ev.get("responseStatus") or {}).get("code") in (200, 201)
            )
        )
        assert evicted == sorted(jobs), evicted
    finally:
        core.delete_namespace(jobs_ns)
    assert_rerun_writes_nothing(cluster, extra_vars=newer, env=as_installer, user=user)
