# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The device_plugin role on the plain Kubernetes profile (``k8s_cluster``: gpu-0 Tesla-T4, gpu-1 NVIDIA-A10G).

Set up once per module: check mode of this role on the fresh cluster (zero writes), then the earlier states made by
hand with the simulator's minimal manifests (namespace, nfd-worker, a driver per node, toolkit, GFD: the other roles'
work, cheaper than running them). Then: bad inputs
(each named in preflight, zero writes); time-slicing 4 -> allocatable 4 x GPU count and GFD's sharing labels; a
no-op re-run (zero writes); a ConfigMap edited by hand is NOT picked up by the running plugins (a real plugin reads
its config at start); re-run with 2 -> picked up with no manual step (the checksum rolls the DaemonSet); a node's
config label followed by config-manager without a re-run; a node the DaemonSet excludes is named; absent twice.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import time

import pytest
from conftest import changed_tasks, failed_message, run_bad_inputs, run_role, task_results

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import catalog, manifests  # noqa: E402
from simopenshift.kube import CONFIGMAPS, DAEMONSETS, NAMESPACES, NODES, PODS, labels_of  # noqa: E402
from simopenshift.testing import (
    Client,
    ensure_runtime_class,
    remove_runtime_class,
    start_nfd_worker,
    wait_for,
)  # noqa: E402

pytestmark = pytest.mark.integration

NS = "nvidia-gpu-driver"
DS = "nvidia-device-plugin-daemonset"
CM = "nvidia-device-plugin-config"
CONFIG_LABEL = "nvidia.com/device-plugin.config"
GPU_NODES = ("gpu-0", "gpu-1")
KUBERNETES = {"preflight_platform": {"openshift": False, "cloud": "none"}}
BASE = dict(KUBERNETES, device_plugin_wait_timeout=60, gpuops_expected_gpu_nodes=2)
NFD = "feature.node.kubernetes.io/"


def result_of(out):
    found = None
    for _name, res in task_results(out):
        facts = res.get("ansible_facts") or {}
        if "device_plugin_result" in facts:
            found = facts["device_plugin_result"]
    return found


def allocatable(kube, node, resource=catalog.GPU_RESOURCE):
    return ((kube.get(NODES, node).get("status") or {}).get("allocatable") or {}).get(resource)


def gpu_count(kube, node):
    """GPUs of the node's simulated hardware (what GFD's nvidia.com/gpu.count says)."""
    return catalog.NodeHardware.for_node(kube.get(NODES, node)).gpu_count


def plugin_pods(kube):
    return [
        p
        for p in kube.list(PODS, NS)[0]
        if labels_of(p).get("app") == DS and not p["metadata"].get("deletionTimestamp")
    ]


def ensure_ok(out):
    assert failed_message(out) is None, failed_message(out)


def gpu_label(kube, node):
    """The NFD GPU label (one of its three forms) the node carries, or None."""
    labels = labels_of(kube.get(NODES, node))
    return next(
        (
            NFD + g + ".present"
            for g in ("pci-10de", "pci-0302_10de", "pci-0300_10de")
            if labels.get(NFD + g + ".present") == "true"
        ),
        None,
    )


@pytest.fixture(scope="module")
def stack(k8s_cluster):
    """The earlier states made cheaply by hand: the namespace, the simulator's nfd-worker, one driver DaemonSet per
    node (precompiled for its kernel), the toolkit and GFD (other roles' work, not under test here). Check mode of
    this role runs first, on the fresh cluster. Everything is removed afterwards, NFD and GFD labels included."""
    kube = Client(k8s_cluster.api)
    # Check mode on the fresh cluster (no namespace, no NFD label): runs to the end, says what it would do.
    mark = k8s_cluster.audit.mark()
    out = run_role(k8s_cluster, "device_plugin", dict(KUBERNETES, device_plugin_time_slicing_replicas=4), check=True)
    ensure_ok(out)
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []
    said = " ".join(
        str(r.get("msg")) for n, r in task_results(out) if n.endswith("Say what the state would do (check mode)")
    )
    assert "device_plugin: would run the device plugin DaemonSet %s" % DS in said, said
    made_runtime_class = False
    try:
        start_nfd_worker(kube, NS)
        wait_for(lambda: all(gpu_label(kube, n) for n in GPU_NODES), 60, what="NFD labels on the GPU nodes")
        label = gpu_label(kube, "gpu-0")
        for i, node in enumerate(GPU_NODES):
            info = kube.get(NODES, node)["status"]["nodeInfo"]
            os_tag = "ubuntu" + info["osImage"].split()[1].rsplit(".", 1)[0]  # Ubuntu 22.04.4 LTS -> ubuntu22.04
            image = "nvcr.io/nvidia/driver:595-%s-%s" % (
                info["kernelVersion"],
                os_tag,
            )  # precompiled, as the driver role
            ds = manifests.driver(
                NS, name="sim-driver-%d" % i, image=image, node_selector={"kubernetes.io/hostname": node}
            )
            kube.create(DAEMONSETS, ds)
        kube.create(DAEMONSETS, manifests.toolkit(NS, node_selector={label: "true"}))
        # The toolkit role's RuntimeClass: the plugin and vectorAdd pods name it (the API server rejects a pod whose
        # RuntimeClass does not exist).
        made_runtime_class = ensure_runtime_class(kube)
        kube.create(DAEMONSETS, manifests.gpu_feature_discovery(NS, node_selector={label: "true"}))
        yield kube
    finally:
        remove_runtime_class(kube, made_runtime_class)
        for node in GPU_NODES:
            if CONFIG_LABEL in labels_of(kube.get(NODES, node)):
                kube.patch(NODES, node, {"metadata": {"labels": {CONFIG_LABEL: None}}})
        if kube.get(DAEMONSETS, DS, NS) is not None or kube.get(CONFIGMAPS, CM, NS) is not None:
            run_role(k8s_cluster, "device_plugin", dict(KUBERNETES, device_plugin_state="absent"))
        kube.delete(NAMESPACES, NS)
        wait_for(lambda: kube.get(NAMESPACES, NS) is None, 90, what="namespace gone")
        wait_for(
            lambda: not any(k.startswith("nvidia.com/gpu.") for n in GPU_NODES for k in labels_of(kube.get(NODES, n))),
            30,
            what="GFD labels gone",
        )
        for node in kube.list(NODES)[0]:
            drop = {k: None for k in labels_of(node) if k.startswith(NFD)}
            notes = {
                k: None for k in node["metadata"].get("annotations") or {} if k.startswith("nfd.node.kubernetes.io/")
            }
            if drop or notes:
                kube.patch(NODES, node["metadata"]["name"], {"metadata": {"labels": drop, "annotations": notes}})


# (variables, start of the message): argument specs refuse wrong types/choices before any task, preflight the rest.
ARGSPEC = "Validation of arguments failed:\nvalue of "
BAD_INPUTS = [
    ({"device_plugin_time_slicing_replicas": 0}, "device_plugin: device_plugin_time_slicing_replicas must be"),
    ({"device_plugin_time_slicing_replicas": "four"}, ARGSPEC[:-10]),
    ({"device_plugin_mig_strategy": "auto"}, ARGSPEC + "device_plugin_mig_strategy must be one of"),
    ({"device_plugin_device_list_strategy": "envvar,magic"}, "device_plugin: device_plugin_device_list_strategy"),
    (
        {"device_plugin_configs": {"a": {"version": "v1"}}, "device_plugin_default_config": "b"},
        "device_plugin: device_plugin_default_config b is not a key of device_plugin_configs (a)",
    ),
    (
        {"device_plugin_configs": {"a": {"version": "v2"}}, "device_plugin_default_config": "a"},
        "device_plugin: device_plugin_configs: a: not a version v1 config",
    ),
    (
        {
            "device_plugin_configs": {
                "a": {"version": "v1", "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu"}]}}}
            },
            "device_plugin_default_config": "a",
        },
        "device_plugin: device_plugin_configs: a: sharing.timeSlicing.resources[0] needs a name"
        " (nvidia.com/ and lowercase letters, digits, - and .) and replicas >= 2",
    ),
    (
        {
            "device_plugin_configs": {"a": {"version": "v1", "flags": {"migStrategy": "auto"}}},
            "device_plugin_default_config": "a",
        },
        "device_plugin: device_plugin_configs: a: flags.migStrategy must be",
    ),
    (
        {"device_plugin_configs": {"default": {"version": "v1"}}, "device_plugin_time_slicing_replicas": 4},
        "device_plugin: device_plugin_time_slicing_replicas (4) and device_plugin_configs are exclusive",
    ),
    ({"device_plugin_namespace": "GPU"}, "device_plugin: device_plugin_namespace must be"),
    ({"device_plugin_version": "v0.20.0 latest"}, "device_plugin: device_plugin_version must be"),
    ({"device_plugin_wait_timeout": 1}, "device_plugin: device_plugin_wait_timeout must be"),
]


def test_bad_inputs_fail_in_preflight_with_zero_writes(k8s_cluster, stack):
    mark = k8s_cluster.audit.mark()
    out, failures = run_bad_inputs(
        k8s_cluster, [("device_plugin", dict(KUBERNETES, **bad)) for bad, _msg in BAD_INPUTS]
    )
    assert len(failures) == len(BAD_INPUTS), failures
    for (name, msg), (bad, expected) in zip(failures, BAD_INPUTS):
        assert msg.startswith(expected), (bad, msg)
        assert name.endswith("Stop on a bad device plugin input") or msg.startswith(ARGSPEC[:-10]), (bad, name)
    assert not [n for n, _r in task_results(out) if "Ensure the device plugin" in n]
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []


def test_time_slicing_4_then_2_picked_up_without_manual_step(k8s_cluster, stack):
    kube = stack
    counts = {node: gpu_count(kube, node) for node in GPU_NODES}
    started = time.monotonic()
    out = run_role(k8s_cluster, "device_plugin", dict(BASE, device_plugin_time_slicing_replicas=4))
    converge_s = time.monotonic() - started
    ensure_ok(out)
    for node in GPU_NODES:
        assert allocatable(kube, node) == str(4 * counts[node]), node
        labels = labels_of(kube.get(NODES, node))
        assert labels["nvidia.com/gpu.replicas"] == "4" and labels["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
        assert labels["nvidia.com/gpu.product"].endswith("-SHARED")
    result = result_of(out)
    assert result["nodes"] == {node: 4 * counts[node] for node in GPU_NODES}
    assert result["configs"] == ["default"] and result["config_manager"] is True
    assert sorted(result["vectoradd"]) == sorted(GPU_NODES)  # the apply changed something: vectorAdd ran on each
    cm = kube.get(CONFIGMAPS, CM, NS)
    assert "replicas: 4" in cm["data"]["default"] and "version: v1" in cm["data"]["default"]
    checksum = kube.get(DAEMONSETS, DS, NS)["spec"]["template"]["metadata"]["annotations"]
    assert checksum["gpuops.cluster/device-plugin-config"] == result["config_checksum"]

    # Unchanged re-run: every task unchanged, zero writes (no vectorAdd pods either).
    mark = k8s_cluster.audit.mark()
    started = time.monotonic()
    out = run_role(k8s_cluster, "device_plugin", dict(BASE, device_plugin_time_slicing_replicas=4))
    noop_s = time.monotonic() - started
    ensure_ok(out)
    assert changed_tasks(out) == []
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []
    print("device_plugin: converge %.1fs, no-op re-run %.1fs, %d tasks" % (converge_s, noop_s, len(task_results(out))))

    # Without the mechanism: the ConfigMap edited by hand (replicas 2) - the running plugins keep what they read at
    # start, config-manager does not react to content (only to the node label): allocatable stays 4 x GPUs.
    data = dict(cm["data"], default=cm["data"]["default"].replace("replicas: 4", "replicas: 2"))
    kube.patch(CONFIGMAPS, CM, {"data": data}, NS)
    time.sleep(4)  # several config-manager delays and agent resyncs
    assert [allocatable(kube, node) for node in GPU_NODES] == [str(4 * counts[n]) for n in GPU_NODES]

    # With it: the role re-run with 2 rolls the DaemonSet (checksum) and allocatable follows, no manual step.
    out = run_role(k8s_cluster, "device_plugin", dict(BASE, device_plugin_time_slicing_replicas=2))
    ensure_ok(out)
    for node in GPU_NODES:
        assert allocatable(kube, node) == str(2 * counts[node]), node
        assert labels_of(kube.get(NODES, node))["nvidia.com/gpu.replicas"] == "2"
    assert result_of(out)["nodes"] == {node: 2 * counts[node] for node in GPU_NODES}


def test_node_label_selects_config_followed_by_config_manager(k8s_cluster, stack):
    kube = stack
    configs = {
        "default": {
            "version": "v1",
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
        },
        "shared-3": {
            "version": "v1",
            "sharing": {
                "timeSlicing": {"renameByDefault": True, "resources": [{"name": "nvidia.com/gpu", "replicas": 3}]}
            },
        },
    }
    ensure_ok(run_role(k8s_cluster, "device_plugin", dict(BASE, device_plugin_configs=configs)))
    assert sorted(kube.get(CONFIGMAPS, CM, NS)["data"]) == ["default", "shared-3"]
    pods = {p["metadata"]["name"] for p in plugin_pods(kube)}
    # The label alone, no re-run: config-manager switches gpu-1's plugin (renamed resource, 3 replicas), no restart.
    kube.patch(NODES, "gpu-1", {"metadata": {"labels": {CONFIG_LABEL: "shared-3"}}})
    wait_for(
        lambda: allocatable(kube, "gpu-1", "nvidia.com/gpu.shared") == str(3 * gpu_count(kube, "gpu-1")),
        20,
        what="gpu-1 on config shared-3",
    )
    assert allocatable(kube, "gpu-1") is None
    assert allocatable(kube, "gpu-0") == str(2 * gpu_count(kube, "gpu-0"))
    assert {p["metadata"]["name"] for p in plugin_pods(kube)} == pods  # no pod restarted
    # A label naming a config the role does not know: refused in preflight, naming the node, nothing written.
    kube.patch(NODES, "gpu-0", {"metadata": {"labels": {CONFIG_LABEL: "missing"}}})
    mark = k8s_cluster.audit.mark()
    out = run_role(k8s_cluster, "device_plugin", dict(BASE, device_plugin_configs=configs))
    assert failed_message(out).startswith("device_plugin: node(s) gpu-0=missing select a config"), failed_message(out)
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []
    for node in GPU_NODES:
        kube.patch(NODES, node, {"metadata": {"labels": {CONFIG_LABEL: None}}})


def test_node_without_plugin_pod_is_named_then_absent_twice(k8s_cluster, stack):
    kube = stack
    # The DaemonSet restricted to gpu-0: gpu-1 loses its plugin pod and its GPUs.
    out = run_role(
        k8s_cluster, "device_plugin", dict(BASE, device_plugin_node_selector={"kubernetes.io/hostname": "gpu-0"})
    )
    message = failed_message(out) or ""
    assert message.startswith("device_plugin: node gpu-1: allocatable nvidia.com/gpu"), message
    assert "no device-plugin pod on the node" in message and "gpu-0" not in message, message
    assert [p["spec"]["nodeName"] for p in plugin_pods(kube)] == ["gpu-0"]

    out = run_role(k8s_cluster, "device_plugin", dict(KUBERNETES, device_plugin_state="absent"))
    ensure_ok(out)
    assert kube.get(DAEMONSETS, DS, NS) is None and kube.get(CONFIGMAPS, CM, NS) is None
    wait_for(lambda: all(allocatable(kube, n) is None for n in GPU_NODES), 30, what="nvidia.com/gpu gone")
    mark = k8s_cluster.audit.mark()
    out = run_role(k8s_cluster, "device_plugin", dict(KUBERNETES, device_plugin_state="absent"))
    ensure_ok(out)
    assert changed_tasks(out) == []
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []
