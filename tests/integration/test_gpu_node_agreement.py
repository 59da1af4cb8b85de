# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""nfd_labels, gpu_validate, driver_container_build, gpu_timeline and operand_pods agree on which nodes are GPU nodes.

For each of the three labels NFD can put on an NVIDIA GPU node
(gpu_nodes.NVIDIA_PCI_LABELS), the simulated cluster's GPU nodes are labelled
that way and the modules, with no node_selector (so the one GPU-node
definition decides), must report the same node set; nfd_labels with
``gpu_nodes_only``, gpu_validate, driver_container_build and gpu_timeline read
it server-side (one list per form), nfd_labels without it reads every node:

- ``pci-10de.present``: the simulated NFD with the OpenShift default worker
  config (``deviceLabelFields: [vendor]``);
- ``pci-0302_10de.present``: the same NFD with ``deviceLabelFields: [class, vendor]``
  in the NodeFeatureDiscovery CR's worker config (a T4 is a 3D controller);
- ``pci-0300_10de.present`` (a GPU that shows as a VGA controller): the simulator
  has no such GPU, so NFD is told to skip display devices (no NVIDIA label of
  its own) and the nodes get the label through the admin API.

Before the fix nfd_labels counted only ``pci-10de.present``: its ``wait_for``
timed out on the other two forms while gpu_validate and
driver_container_build found the nodes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import uuid

import pytest
from gpu_nodes import NFD, RHCOS_416, GpuNodes, kernel_of
from kubernetes import client
from kubernetes.client.rest import ApiException
from waiting import wait_until

pytestmark = pytest.mark.integration

VENDOR = NFD + "pci-10de.present"
CLASS_3D = NFD + "pci-0302_10de.present"
CLASS_VGA = NFD + "pci-0300_10de.present"
FORMS = (VENDOR, CLASS_3D, CLASS_VGA)
NFD_API = ("nfd.openshift.io", "v1", "nodefeaturediscoveries")
FEATURE_ANNOTATION = "nfd.node.kubernetes.io/feature-labels"


def worker_conf(fields, classes=("0200", "03", "12")):
    lines = ["sources:", "  pci:", "    deviceClassWhitelist:"]
    lines += ['      - "{0}"'.format(c) for c in classes]
    lines += ["    deviceLabelFields:"] + ['      - "{0}"'.format(f) for f in fields]
    return "\n".join(lines) + "\n"


# form -> (nfd-worker.conf, label the GPU nodes through the admin API)
SETUPS = {
    VENDOR: (worker_conf(["vendor"]), False),
    CLASS_3D: (worker_conf(["class", "vendor"]), False),
    CLASS_VGA: (worker_conf(["class", "vendor"], classes=("0200", "12")), True),
}


def remove_nfd_crs(custom):
    for cr in custom.list_cluster_custom_object(*NFD_API)["items"]:
        try:
            custom.delete_namespaced_custom_object(
                *NFD_API[:2], cr["metadata"]["namespace"], NFD_API[2], cr["metadata"]["name"]
            )
        except ApiException as exc:
            if exc.status != 404:
                raise
    wait_until(lambda: not custom.list_cluster_custom_object(*NFD_API)["items"], 60, what="old NFD CRs gone")


@pytest.fixture(scope="module")
def setup(cluster):
    """2 GPU nodes and 1 CPU node (kwok) without NFD labels, and a NodeFeatureDiscovery CR of our own."""
    core = client.CoreV1Api(cluster.api)
    custom = client.CustomObjectsApi(cluster.api)
    remove_nfd_crs(custom)
    made = GpuNodes(cluster.api)
    tag = uuid.uuid4().hex[:8]
    dummy, gpu = made.make(2, tag=tag, prefix="agree-gpu", build=RHCOS_416)
    dummy, cpu = made.make(1, tag=tag, prefix="agree-cpu", build=RHCOS_416, instance_type="m5.xlarge", taints=[])
    for name in gpu + cpu:  # what node_body wrote as if NFD had run: NFD owns these labels from now on
        stale = dict((k, None) for k in core.read_node(name).metadata.labels if k.startswith(NFD))
        core.patch_node(name, {"metadata": {"labels": stale}})
    namespace = "agree-" + tag
    core.create_namespace({"metadata": {"name": namespace}})
    body = {
        "apiVersion": "nfd.openshift.io/v1",
        "kind": "NodeFeatureDiscovery",
        "metadata": {"name": "nfd-instance", "namespace": namespace},
        "spec": {"prunerOnDelete": True, "workerConfig": {"configData": SETUPS[VENDOR][0]}},
    }
    custom.create_namespaced_custom_object(*NFD_API[:2], namespace, NFD_API[2], body)
    try:
        yield {"core": core, "custom": custom, "tag": tag, "gpu": gpu, "cpu": cpu, "namespace": namespace}
    finally:
        remove_nfd_crs(custom)
        made.cleanup()
        core.delete_namespace(namespace)


def label_nodes(setup, form):
    """Drive NFD (and, for the VGA form, the admin API) until our GPU nodes carry exactly ``form``."""
    core, custom = setup["core"], setup["custom"]
    conf, by_hand = SETUPS[form]
    patch = {"spec": {"workerConfig": {"configData": conf}}}
    custom.patch_namespaced_custom_object(*NFD_API[:2], setup["namespace"], NFD_API[2], "nfd-instance", patch)

    def nvidia_labels(name):
        labels = core.read_node(name).metadata.labels or {}
        return sorted(k for k in FORMS if labels.get(k) == "true")

    def nfd_skips_display_devices():
        # nfd-worker ran with the new config: its feature list has the kernel and no NVIDIA device
        features = [(core.read_node(n).metadata.annotations or {}).get(FEATURE_ANNOTATION) for n in setup["gpu"]]
        return all(f and "kernel-version.full" in f and "10de" not in f for f in features)

    if by_hand:
        wait_until(nfd_skips_display_devices, 60, what="nfd-worker to relabel without display devices")
        for name in setup["gpu"]:
            core.patch_node(name, {"metadata": {"labels": {form: "true"}}})
    else:  # a VGA label an earlier run put there by hand is not NFD's to remove
        for name in setup["gpu"]:
            core.patch_node(name, {"metadata": {"labels": {CLASS_VGA: None}}})
    wait_until(
        lambda: all(nvidia_labels(n) == [form] for n in setup["gpu"]) and nvidia_labels(setup["cpu"][0]) == [],
        60,
        what="GPU nodes labelled only {0}".format(form),
    )


def names_from_validate(result, report_path):
    """The nodes gpu_validate checked: from its result, else from its JSON report."""
    entries = result.get("nodes")
    if entries is None and os.path.exists(report_path):
        with open(report_path) as f:
            entries = json.load(f).get("nodes")
    assert entries is not None, result
    return sorted((e.get("node") or e.get("name")) if isinstance(e, dict) else e for e in entries)


@pytest.mark.parametrize("form", FORMS, ids=["vendor", "class-3d", "class-vga"])
def test_modules_agree_on_gpu_nodes(cluster, ansible_task, setup, form, tmp_path):
    label_nodes(setup, form)
    mine = sorted(setup["gpu"])

    ours = ansible_task(
        "gpuops.cluster.nfd_labels", {"wait_for": {"gpu_nodes": len(mine)}, "wait_timeout": 30, "wait_sleep": 1}
    )
    assert not ours.get("failed"), ours
    nfd_set = sorted(ours["gpu_nodes"])
    assert set(mine) <= set(nfd_set) and setup["cpu"][0] not in nfd_set, nfd_set
    assert set(mine) <= set(ours["kernel_versions"][kernel_of(RHCOS_416)])

    report = str(tmp_path / "validate.json")
    validated = ansible_task("gpuops.cluster.gpu_validate", {"checks": ["allocatable"], "report_json": report})
    validate_set = names_from_validate(validated, report)

    build = ansible_task(
        "gpuops.cluster.driver_container_build",
        {"driver_version": "550.90.07", "namespace": setup["namespace"], "strategy": "driver-toolkit"},
        check=True,
    )
    assert not build.get("failed"), build
    build_set = sorted(n for kernel in build["kernels"].values() for n in kernel["nodes"])

    # the server-side reads (one list per form) find the same nodes as the full read
    only = ansible_task("gpuops.cluster.nfd_labels", {"gpu_nodes_only": True})
    assert not only.get("failed"), only
    assert only["gpu_nodes"] == nfd_set and [n["name"] for n in only["nodes"]] == nfd_set, form
    timeline = ansible_task("gpuops.cluster.gpu_timeline", {"machines": False})
    assert not timeline.get("failed"), timeline
    assert sorted(r["node"] for r in timeline["timeline"]["nodes"]) == nfd_set, form
    assert timeline["read"]["gpu_nodes"] == len(nfd_set) and timeline["changed"] is False
    operands = ansible_task("gpuops.cluster.operand_pods", {"namespace": "default", "selector": "app=none"})
    assert not operands.get("failed"), operands
    assert [n["node"] for n in operands["nodes"]] == nfd_set, form

    assert validate_set == nfd_set, (form, validated.get("msg"))
    assert build_set == nfd_set, form
