# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The container_toolkit and gpu_feature_discovery roles on the simulated OpenShift 4.16 cluster.

One set-up for both (they share it): a g4dn.xlarge GPU node, NFD, and the driver role. Then, for each role: bad
inputs (named in preflight, zero writes), check mode (zero writes, says what it would do), converge, a no-op re-run
(zero writes), a named failure (the toolkit configured for containerd on a CRI-O node crash-loops with the
installer's error; GFD left on the NodeFeature API on OpenShift publishes no labels), GFD with the device plugin's
sharing ConfigMap (replicas labels), absent twice.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import uuid

import pytest
from conftest import changed_tasks, failed_message, run_bad_inputs, run_playbook, run_role, task_results

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, catalog, manifests, testing  # noqa: E402
from simopenshift.kube import CONFIGMAPS, DAEMONSETS, NAMESPACES, PODS, Resource, labels_of  # noqa: E402
from simopenshift.testing import (  # noqa: E402
    Client,
    clone_machineset,
    delete_machineset,
    node_label,
    pod_log,
    ready_nodes_of,
    wait_for,
    worker_machinesets,
)

pytestmark = pytest.mark.integration
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
CLUSTERROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole")
CLUSTERROLEBINDINGS = Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding")
RUNTIMECLASSES = Resource("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass")

NS = "nvidia-gpu-driver"
TOOLKIT_DS = "nvidia-container-toolkit-daemonset"
GFD_DS = "gpu-feature-discovery"
NFD = "feature.node.kubernetes.io/"
KERNEL_LABEL = NFD + "kernel-version.full"
KERNEL = catalog.release_build("4.16").kernel
NFD_CR = "nfd-instance"
NFD_NS = "openshift-nfd"
TK_FAST = {"container_toolkit_wait_timeout": 10}
GFD_FAST = {"gpu_feature_discovery_wait_timeout": 10}
PLATFORMS = {}
FRESH = {}


def role(cluster, name, role_vars=None, check=False):
    """Run a role; the platform fact of the first run is handed to the next ones (as site.yml's preflight does)."""
    role_vars = dict(role_vars or {})
    if cluster.workdir in PLATFORMS:
        role_vars["preflight_platform"] = PLATFORMS[cluster.workdir]
    out = run_role(cluster, name, role_vars, check=check)
    for task, res in task_results(out):
        platform = (res.get("ansible_facts") or {}).get("preflight_platform")
        if task.endswith("Record the detected platform for later states") and platform:
            PLATFORMS[cluster.workdir] = platform
    return out


def writes(cluster, mark, dry_runs=False):
    return cluster.audit.writes_since(mark, include_dry_run=dry_runs)


def fact(out, name):
    found = None
    for _task, res in task_results(out):
        if name in (res.get("ansible_facts") or {}):
            found = res["ansible_facts"][name]
    return found


def debug_lines(out, task):
    for name, res in task_results(out):
        if name.endswith(" : " + task):
            msg = res.get("msg")
            return msg if isinstance(msg, list) else [msg]
    return []


def env_of(ds):
    container = ds["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value") for e in container.get("env") or []}


def pods_of(kube, app, node):
    return [
        p
        for p in kube.list(PODS, NS)[0]
        if labels_of(p).get("app") == app
        and p["spec"].get("nodeName") == node
        and not p["metadata"].get("deletionTimestamp")
    ]


def ready(pods):
    return bool(pods) and all(c.get("ready") for p in pods for c in p.get("status", {}).get("containerStatuses") or [])


def both(cluster, role_vars=None, check=False, names=("gpu_feature_discovery", "container_toolkit")):
    """Both roles in one playbook (one ansible-playbook start), with the detected platform."""
    tasks = [
        {
            "name": "role under test",
            "ansible.builtin.include_role": {"name": "gpuops.cluster." + name},
            "vars": dict(
                (role_vars or {}).get(name) or {},
                **({"preflight_platform": PLATFORMS[cluster.workdir]} if cluster.workdir in PLATFORMS else {}),
            ),
        }
        for name in names
    ]
    out = run_playbook(cluster, tasks, check=check)
    for task, res in task_results(out):
        platform = (res.get("ansible_facts") or {}).get("preflight_platform")
        if task.endswith("Record the detected platform for later states") and platform:
            PLATFORMS[cluster.workdir] = platform
    return out


ABSENT = {
    "gpu_feature_discovery": {"gpu_feature_discovery_state": "absent"},
    "container_toolkit": {"container_toolkit_state": "absent"},
}


def nfd_cr(prune):
    return {
        "apiVersion": apis.NODEFEATUREDISCOVERIES.api_version,
        "kind": "NodeFeatureDiscovery",
        "metadata": {"name": NFD_CR, "namespace": NFD_NS},
        "spec": {
            "operand": {"image": "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:v4.16"},
            "prunerOnDelete": prune,
        },
    }


def drop_nfd_cr(kube):
    if kube.get(apis.NODEFEATUREDISCOVERIES, NFD_CR, NFD_NS) is None:
        return
    kube.patch(apis.NODEFEATUREDISCOVERIES, NFD_CR, {"spec": {"prunerOnDelete": True}}, NFD_NS)
    kube.delete(apis.NODEFEATUREDISCOVERIES, NFD_CR, NFD_NS)
    wait_for(lambda: kube.get(apis.NODEFEATUREDISCOVERIES, NFD_CR, NFD_NS) is None, 30, what="NFD CR gone")


def driver_stand_in(name):
    """A driver DaemonSet that loads on the node's kernel: the toolkit and GFD need a ready driver, not the driver role
    (its builds cost a minute; test_role_driver covers it, molecule runs the roles in a row)."""
    ds = manifests.driver(
        NS, name="tk-gfd-driver", kernel=KERNEL, node_selector={"kubernetes.io/hostname": name.split(".")[0]}
    )
    ds["spec"]["template"]["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    return ds


@pytest.fixture(scope="module")
def gpu(cluster):
    """One tainted g4dn.xlarge GPU node labelled by NFD, the GPU stack namespace with a ready driver; all removed
    afterwards (the namespace too: the driver role's test that follows starts without it)."""
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile")
    kube = Client(cluster.api)
    assert kube.get(NAMESPACES, NS) is None, "the GPU stack namespace belongs to another test"
    source = worker_machinesets(kube)[0]
    ms = "%s-gpu-tk-%s" % (source["metadata"]["name"].rsplit("-worker-", 1)[0], uuid.uuid4().hex[:4])
    clone_machineset(
        kube,
        source,
        ms,
        "g4dn.xlarge",
        replicas=1,
        node_labels={"node-role.kubernetes.io/gpu": ""},
        taints=[{"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"}],
    )
    saved = kube.get(apis.NODEFEATUREDISCOVERIES, NFD_CR, NFD_NS)
    try:
        if saved is None:
            testing.ensure_namespace(kube, NFD_NS)
            kube.create(apis.NODEFEATUREDISCOVERIES, nfd_cr(prune=True))
        (node,) = ready_nodes_of(kube, ms, 1, timeout=90)
        name = node["metadata"]["name"]
        wait_for(lambda: node_label(kube, name, KERNEL_LABEL) == KERNEL, 60, what="NFD kernel label")
        # Check mode on the fresh cluster (no GPU stack namespace yet), both roles in one run; asserted below.
        mark = cluster.audit.mark()
        FRESH["out"] = both(cluster, check=True, names=("container_toolkit", "gpu_feature_discovery"))
        FRESH["writes"] = writes(cluster, mark, dry_runs=True)
        namespace = {"metadata": {"name": NS, "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}}
        kube.create(NAMESPACES, namespace)
        testing.allow_privileged(kube, NS)  # the stand-in runs privileged as the default SA (SCC admission)
        kube.create(DAEMONSETS, driver_stand_in(name))
        wait_for(lambda: ready(pods_of(kube, "tk-gfd-driver", name)), 60, what="driver stand-in ready")
        yield kube, name
    finally:
        try:
            both(cluster, ABSENT)
        except AssertionError:  # the cluster is cleaned up below whatever the roles did
            pass
        for kind, obj in (
            (RUNTIMECLASSES, "nvidia"),
            (CLUSTERROLES, "nvidia-gpu-feature-discovery"),
            (CLUSTERROLEBINDINGS, "nvidia-gpu-feature-discovery"),
        ):
            if kube.get(kind, obj) is not None:
                kube.delete(kind, obj)
        if kube.get(NAMESPACES, NS) is not None:
            kube.delete(NAMESPACES, NS)
        # The namespace goes before its node: a pod on a deleted node stays Terminating until the pod GC's
        # 40 s quarantine of orphaned pods is over (kube-controller-manager pkg/controller/podgc), which held
        # this teardown 51-91 s.
        wait_for(lambda: kube.get(NAMESPACES, NS) is None, 90, what="GPU stack namespace gone")
        delete_machineset(kube, ms)
        if saved is None:
            drop_nfd_cr(kube)


ARGSPEC = "Validation of arguments failed:\nvalue of "
BAD_INPUTS = [
    (
        "container_toolkit",
        {"container_toolkit_runtime": "docker"},
        ARGSPEC + "container_toolkit_runtime must be one of",
    ),
    (
        "container_toolkit",
        {"container_toolkit_containerd_config": "etc/containerd/config.toml"},
        "container_toolkit: container_toolkit_containerd_config, _containerd_dropin",
    ),
    (
        "container_toolkit",
        {"container_toolkit_containerd_socket": "/run/containerd/../containerd.sock"},
        "container_toolkit: container_toolkit_containerd_config, _containerd_dropin",
    ),
    ("container_toolkit", {"container_toolkit_namespace": "GPU"}, "container_toolkit: container_toolkit_namespace"),
    ("container_toolkit", {"container_toolkit_version": "v1.20.0:x"}, "container_toolkit: container_toolkit_version"),
    ("container_toolkit", {"container_toolkit_wait_timeout": 0}, "container_toolkit: container_toolkit_wait_timeout"),
    (
        "gpu_feature_discovery",
        {"gpu_feature_discovery_sleep_interval": "60"},
        "gpu_feature_discovery: gpu_feature_discovery_sleep_interval must be a Go duration",
    ),
    (
        "gpu_feature_discovery",
        {"gpu_feature_discovery_node_feature_api": "maybe"},
        "gpu_feature_discovery: gpu_feature_discovery_node_feature_api must be auto, true or false",
    ),
    (
        "gpu_feature_discovery",
        {"gpu_feature_discovery_config_default": "any"},
        "gpu_feature_discovery: gpu_feature_discovery_config_default must be",
    ),
    (
        "gpu_feature_discovery",
        {"gpu_feature_discovery_config_map": "no-such-config"},
        "gpu_feature_discovery: gpu_feature_discovery_config_map no-such-config does not exist",
    ),
    (
        "gpu_feature_discovery",
        {"gpu_feature_discovery_mig_strategy": "all"},
        ARGSPEC + "gpu_feature_discovery_mig_strategy must be one of",
    ),
]
PREFLIGHT_STOPS = (
    "Stop on a bad container toolkit input",
    "Stop on a bad GPU feature discovery input",
    "Check the GPU nodes, the namespace and the sharing ConfigMap exist",
)


def test_check_mode_on_the_fresh_cluster_writes_nothing(cluster, gpu):
    _kube, node = gpu
    out = FRESH["out"]
    assert failed_message(out) is None
    assert FRESH["writes"] == []
    said = [
        str(res.get("msg"))
        for name, res in task_results(out)
        if name.endswith("Say what the state would do (check mode)") and not res.get("skipped")
    ]
    assert len(said) == 2, said
    assert (
        "container_toolkit: would run DaemonSet %s in %s configuring crio (CDI on) on %s" % (TOOLKIT_DS, NS, node)
        in said[0]
    )
    assert "namespace %s is made by the driver role first" % NS in said[0]
    assert said[1].startswith("gpu_feature_discovery: would run DaemonSet %s" % GFD_DS), said
    assert "USE_NODE_FEATURE_API=false" in said[1]


def test_check_mode_writes_nothing_and_says_what_it_would_do(cluster, gpu):
    kube, node = gpu
    assert kube.get(DAEMONSETS, TOOLKIT_DS, NS) is None and kube.get(DAEMONSETS, GFD_DS, NS) is None
    mark = cluster.audit.mark()
    # The first run detects the platform (kept for the later runs, as site.yml's preflight does).
    out = role(cluster, "container_toolkit", check=True)
    assert failed_message(out) is None
    out2 = both(cluster, check=True, names=("gpu_feature_discovery",))
    assert failed_message(out2) is None
    assert writes(cluster, mark, dry_runs=True) == []
    assert kube.get(DAEMONSETS, TOOLKIT_DS, NS) is None and kube.get(DAEMONSETS, GFD_DS, NS) is None
    shown = " ".join(str(m) for m in debug_lines(out, "Show the rollout"))
    assert "container_toolkit: crio, CDI on, 1 GPU node(s)" in shown and "DaemonSet %s" % TOOLKIT_DS in shown
    shown = " ".join(str(m) for m in debug_lines(out2, "Show the rollout"))
    assert "gpu_feature_discovery: USE_NODE_FEATURE_API=false, sharing config none, 1 GPU node(s)" in shown


def test_bad_inputs_fail_in_preflight_with_zero_writes(cluster, gpu):
    mark = cluster.audit.mark()
    out, failures = run_bad_inputs(
        cluster, [(role, dict(bad, preflight_platform=PLATFORMS[cluster.workdir])) for role, bad, _msg in BAD_INPUTS]
    )
    assert len(failures) == len(BAD_INPUTS), failures
    for (name, msg), (_role, bad, expected) in zip(failures, BAD_INPUTS):
        assert msg.startswith(expected), (bad, msg)
        assert name.endswith(PREFLIGHT_STOPS) or msg.startswith(ARGSPEC), (bad, name)
    ran = [name for name, _res in task_results(out)]
    assert not [n for n in ran if "Ensure the" in n], ran
    assert writes(cluster, mark, dry_runs=True) == []


def test_toolkit_converges_for_crio_then_noop(cluster, gpu):
    kube, node = gpu
    out = role(cluster, "container_toolkit", TK_FAST)
    assert failed_message(out) is None
    ds = kube.get(DAEMONSETS, TOOLKIT_DS, NS)
    env = env_of(ds)
    assert env["RUNTIME"] == "crio" and env["CRIO_CONFIG"] == "/runtime/config-dir/config.toml"
    assert (
        env["CRIO_CONFIG_MODE"] == "config" and env["RUNTIME_DROP_IN_CONFIG"] == "/runtime/config-dir.d/99-nvidia.conf"
    )
    assert env["CDI_ENABLED"] == "true" and env["NVIDIA_RUNTIME_SET_AS_DEFAULT"] == "false"
    assert env["NVIDIA_CONTAINER_RUNTIME_MODE"] == "cdi" and env["ROOT"] == "/usr/local/nvidia"
    assert "CONTAINERD_CONFIG" not in env
    spec = ds["spec"]["template"]["spec"]
    paths = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"]}
    assert paths["runtime-config"] == "/etc/crio" and paths["runtime-dropin"] == "/etc/crio/crio.conf.d"
    assert paths["crio-hooks"] == "/run/containers/oci/hooks.d" and paths["cdi-root"] == "/var/run/cdi"
    assert paths["host-root"] == "/" and paths["run-nvidia-toolkit"] == "/run/nvidia/toolkit"
    assert spec["hostPID"] is True and spec["priorityClassName"] == "system-node-critical"
    assert labels_of(ds["spec"]["template"])["app.kubernetes.io/component"] == "nvidia-container-toolkit"
    assert labels_of(ds)["app.kubernetes.io/managed-by"] == "gpuops.cluster"
    assert kube.get(RUNTIMECLASSES, "nvidia")["handler"] == "nvidia"
    scc = kube.get(ROLES, "nvidia-container-toolkit-privileged-scc", NS)
    assert scc["rules"][0]["resourceNames"] == ["privileged"] and scc["rules"][0]["verbs"] == ["use"]
    (pod,) = pods_of(kube, TOOLKIT_DS, node)
    assert "installed for runtime crio" in pod_log(cluster.api, pod["metadata"]["name"], NS)
    result = fact(out, "container_toolkit_result")
    assert result["ready"] is True and result["runtime"] == "crio" and result["ready_nodes"] == [node]
    assert result["image"] == "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0"

    mark = cluster.audit.mark()
    out = role(cluster, "container_toolkit", TK_FAST)
    assert failed_message(out) is None
    assert changed_tasks(out) == []
    assert writes(cluster, mark) == []
    # The apply step's k8s_ensure reported the toolkit pods: no operand_pods task of its own.
    ran = [
        res.get("invocation", {}).get("module_args", {}) for dummy, res in task_results(out) if not res.get("skipped")
    ]
    assert not any("log_lines" in args and "selector" in args for args in ran), ran
    assert fact(out, "container_toolkit_result")["ready_nodes"] == [node]


def test_toolkit_for_the_wrong_runtime_is_named_with_node_and_installer_error(cluster, gpu):
    kube, node = gpu
    out = role(cluster, "container_toolkit", dict(TK_FAST, container_toolkit_runtime="containerd"))
    msg = failed_message(out)
    assert msg.startswith(
        "container_toolkit: node %s (runtime %s, toolkit configured for containerd): pod %s-"
        % (node, catalog.CRIO_VERSION, TOOLKIT_DS)
    ), msg
    assert "CrashLoopBackOff" in msg and "unable to restart containerd" in msg and "containerd.sock" in msg
    env = env_of(kube.get(DAEMONSETS, TOOLKIT_DS, NS))
    assert env["CONTAINERD_CONFIG"] == "/runtime/config-dir/config.toml"
    assert env["CONTAINERD_SOCKET"] == "/runtime/sock-dir/containerd.sock" and "CRIO_CONFIG" not in env
    # Back to the node's runtime (auto): ready again.
    out = role(cluster, "container_toolkit", TK_FAST)
    assert failed_message(out) is None


def test_gfd_labels_verified_and_summarised_then_noop(cluster, gpu):
    kube, node = gpu
    out = role(cluster, "gpu_feature_discovery", GFD_FAST)
    assert failed_message(out) is None
    ds = kube.get(DAEMONSETS, GFD_DS, NS)
    env = env_of(ds)
    container = ds["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
    assert container["command"] == ["gpu-feature-discovery"]
    assert env["GFD_SLEEP_INTERVAL"] == "60s" and env["GFD_FAIL_ON_INIT_ERROR"] == "true"
    assert env["USE_NODE_FEATURE_API"] == "false"  # OpenShift: upstream requires it
    paths = {v["name"]: v["hostPath"]["path"] for v in ds["spec"]["template"]["spec"]["volumes"] if "hostPath" in v}
    assert paths["output-dir"] == "/etc/kubernetes/node-feature-discovery/features.d"
    assert labels_of(ds["spec"]["template"])["app.kubernetes.io/component"] == "gpu-feature-discovery"
    assert kube.get(ROLES, "nvidia-gpu-feature-discovery-privileged-scc", NS) is not None
    assert kube.get(CLUSTERROLES, "nvidia-gpu-feature-discovery") is not None
    assert node_label(kube, node, "nvidia.com/gpu.product") == "Tesla-T4"
    result = fact(out, "gpu_feature_discovery_result")
    assert result["ready"] is True and result["node_feature_api"] == "false"
    summary = result["nodes"][node]
    assert summary["product"] == "Tesla-T4" and summary["count"] == 1 and summary["memory_mib"] == 15109
    assert summary["driver"] == "550.90.07" and summary["replicas"] == 1 and summary["sharing"] == "none"
    table = debug_lines(out, "Show the GPU nodes")
    assert table[0] == "node | product | count | memory MiB | driver | replicas/sharing"
    assert "%s | Tesla-T4 | 1 | 15109 | 550.90.07 | 1/none" % node in table

    mark = cluster.audit.mark()
    out = role(cluster, "gpu_feature_discovery", GFD_FAST)
    assert failed_message(out) is None
    assert changed_tasks(out) == []
    assert writes(cluster, mark) == []


def test_gfd_on_the_node_feature_api_on_openshift_is_named(cluster, gpu):
    kube, node = gpu
    out = role(cluster, "gpu_feature_discovery", dict(GFD_FAST, gpu_feature_discovery_node_feature_api=True))
    msg = failed_message(out)
    assert msg.startswith(
        "gpu_feature_discovery: node %s: no nvidia.com/gpu.product, gpu.count, gpu.memory and cuda driver labels; "
        "pod %s-" % (node, GFD_DS)
    ), msg
    assert "Running, ready (USE_NODE_FEATURE_API=true: GFD writes a NodeFeature object" in msg
    assert "OpenShift needs gpu_feature_discovery_node_feature_api false" in msg
    assert node_label(kube, node, "nvidia.com/gpu.product") is None
    assert env_of(kube.get(DAEMONSETS, GFD_DS, NS))["USE_NODE_FEATURE_API"] == "true"


def test_gfd_with_the_device_plugin_sharing_config_publishes_replicas(cluster, gpu):
    kube, node = gpu
    kube.create(
        CONFIGMAPS,
        {
            "metadata": {"name": "tk-gfd-sharing", "namespace": NS},
            "data": {
                "ts4": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n",
                "none": "version: v1\n",
            },
        },
    )
    try:
        out = role(
            cluster,
            "gpu_feature_discovery",
            dict(
                GFD_FAST, gpu_feature_discovery_config_map="tk-gfd-sharing", gpu_feature_discovery_config_default="ts4"
            ),
        )
        assert failed_message(out) is None
        wait_for(lambda: node_label(kube, node, "nvidia.com/gpu.replicas") == "4", 20, what="GFD replicas label")
        assert node_label(kube, node, "nvidia.com/gpu.sharing-strategy") == "time-slicing"
        spec = kube.get(DAEMONSETS, GFD_DS, NS)["spec"]["template"]["spec"]
        assert [c["name"] for c in spec["containers"]] == ["gpu-feature-discovery", "config-manager"]
        summary = fact(out, "gpu_feature_discovery_result")["nodes"][node]
        assert summary["replicas"] == 4 and summary["sharing"] == "time-slicing"
        assert summary["product"] == "Tesla-T4-SHARED"
    finally:
        out = role(cluster, "gpu_feature_discovery", GFD_FAST)
        assert failed_message(out) is None
        kube.delete(CONFIGMAPS, "tk-gfd-sharing", NS)
    assert node_label(kube, node, "nvidia.com/gpu.replicas") == "1"


def test_absent_removes_both_and_twice_changes_nothing(cluster, gpu):
    kube, node = gpu
    out = both(cluster, ABSENT)
    assert failed_message(out) is None
    assert kube.get(DAEMONSETS, GFD_DS, NS) is None and kube.get(DAEMONSETS, TOOLKIT_DS, NS) is None
    assert kube.get(RUNTIMECLASSES, "nvidia") is None and kube.get(CLUSTERROLES, "nvidia-gpu-feature-discovery") is None
    assert kube.get(ROLES, "nvidia-container-toolkit-privileged-scc", NS) is None
    assert kube.get(NAMESPACES, NS) is not None  # the driver role's
    wait_for(lambda: node_label(kube, node, "nvidia.com/gpu.product") is None, 20, what="GFD labels gone with GFD")
    mark = cluster.audit.mark()
    out = both(cluster, ABSENT)
    assert failed_message(out) is None
    assert changed_tasks(out) == []
    assert writes(cluster, mark) == []
