# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The plain Kubernetes profile's node factory: bare GPU nodes (hardware, kernel, OS; nothing NVIDIA)
and the ready-made ones of ``--gpu-node-mode ready``; what the simulated nfd-worker makes of a bare node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest
from simopenshift import catalog, nfd

sys.path.insert(0, os.path.dirname(os.path.dirname(catalog.DATA_DIR)))  # tests/localcluster
import cluster  # noqa: E402

PREFIX = nfd.PREFIX
UPSTREAM_GPU_CONF = """sources:
  pci:
    deviceClassWhitelist: ["02", "0200", "0207", "0300", "0302"]
    deviceLabelFields: [vendor]
"""


def by_name(nodes):
    return {n["metadata"]["name"]: n for n in nodes}


def test_bare_gpu_nodes_have_hardware_kernel_and_os_but_nothing_nvidia():
    nodes = by_name(cluster.kubernetes_nodes(workers=3, gpu_nodes=2))
    assert sorted(nodes) == sorted(
        ["control-plane-0", "control-plane-1", "control-plane-2", "worker-0", "worker-1", "worker-2", "gpu-0", "gpu-1"]
    )
    gpu = [nodes["gpu-0"], nodes["gpu-1"]]
    for node in gpu:
        labels = node["metadata"]["labels"]
        assert not [k for k in labels if k.startswith(PREFIX) or k.startswith("nvidia.com/")]
        assert catalog.GPU_RESOURCE not in node["status"]["capacity"]
        assert catalog.GPU_RESOURCE not in node["status"]["allocatable"]
        assert node["spec"]["taints"] == []
        assert labels["node-role.kubernetes.io/worker"] == ""
        assert labels["topology.kubernetes.io/region"] == "us-east-2"
    # Two models from the instance-type table, two Ubuntu releases with their kernels.
    hw = [catalog.NodeHardware.for_node(n) for n in gpu]
    assert [(h.instance_type.name, h.gpu_count, h.gpu_product) for h in hw] == [
        ("g4dn.xlarge", 1, "Tesla-T4"),
        ("g5.xlarge", 1, "NVIDIA-A10G"),
    ]
    infos = [n["status"]["nodeInfo"] for n in gpu]
    assert [(i["osImage"], i["kernelVersion"]) for i in infos] == [
        ("Ubuntu 22.04.4 LTS", "5.15.0-119-generic"),
        ("Ubuntu 24.04.1 LTS", "6.8.0-45-generic"),
    ]
    assert [catalog.parse_os_image(i["osImage"]) for i in infos] == [
        {"ID": "ubuntu", "VERSION_ID": "22.04"},
        {"ID": "ubuntu", "VERSION_ID": "24.04"},
    ]
    # CPU and memory are the instance type's (g4dn.xlarge and g5.xlarge: 4 vCPU, 16 GiB).
    assert [(n["status"]["capacity"]["cpu"], n["status"]["capacity"]["memory"]) for n in gpu] == [("4", "16384Mi")] * 2
    # The CPU nodes report an OS too; kwok keeps what is set (its stage uses `or`).
    assert nodes["worker-0"]["status"]["nodeInfo"]["osImage"] == "Ubuntu 22.04.4 LTS"
    assert catalog.NodeHardware.for_node(nodes["worker-0"]).has_gpu is False


def test_more_bare_nodes_cycle_models_and_kernels_independently():
    gpu = [n for n in cluster.kubernetes_nodes(0, 4) if n["metadata"]["name"].startswith("gpu-")]
    pairs = [
        (n["metadata"]["labels"]["node.kubernetes.io/instance-type"], n["status"]["nodeInfo"]["kernelVersion"])
        for n in gpu
    ]
    assert pairs == [
        ("g4dn.xlarge", "5.15.0-119-generic"),
        ("g5.xlarge", "6.8.0-45-generic"),
        ("g4dn.xlarge", "5.15.0-119-generic"),
        ("g5.xlarge", "6.8.0-45-generic"),
    ]
    assert len(set(n["status"]["nodeInfo"]["systemUUID"] for n in gpu)) == 4


def test_gpus_per_node_is_declared_on_bare_nodes_only_when_it_differs():
    plain = cluster.kubernetes_nodes(0, 1, gpu_capacity=1)[-1]
    assert catalog.ANN_GPU_COUNT not in plain["metadata"]["annotations"]
    four = cluster.kubernetes_nodes(0, 1, gpu_capacity=4)[-1]
    assert four["metadata"]["annotations"][catalog.ANN_GPU_COUNT] == "4"
    assert catalog.NodeHardware.for_node(four).gpu_count == 4


def test_ready_mode_keeps_the_ready_made_gpu_nodes():
    nodes = by_name(cluster.kubernetes_nodes(3, 2, gpu_capacity=2, gpu_node_mode="ready"))
    gpu = nodes["gpu-1"]
    assert gpu["status"]["capacity"][catalog.GPU_RESOURCE] == "2"
    assert gpu["metadata"]["labels"][PREFIX + "pci-10de.present"] == "true"
    assert gpu["metadata"]["labels"]["nvidia.com/gpu.present"] == "true"
    assert "node.kubernetes.io/instance-type" not in gpu["metadata"]["labels"]
    assert "nodeInfo" not in nodes["worker-0"]["status"]


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="gpu_node_mode"):
        cluster.kubernetes_nodes(3, 2, gpu_node_mode="half")


def test_cli_default_gives_bare_nodes(monkeypatch):
    seen = {}

    class Fake(object):
        def __init__(self, *args):
            pass

        def up(self, *args, **kwargs):
            seen.update(kwargs, args=args)
            return {}

    monkeypatch.setattr(cluster, "LocalCluster", Fake)
    monkeypatch.delenv("GPU_NODE_MODE", raising=False)
    assert cluster.main(["up", "--profile", "kubernetes", "--gpu-nodes", "2"]) == 0
    assert seen["gpu_node_mode"] == "bare" and seen["args"][:3] == ("kubernetes", 3, 2)
    assert cluster.main(["up", "--gpu-nodes", "2", "--gpu-node-mode", "ready"]) == 0
    assert seen["gpu_node_mode"] == "ready"


@pytest.mark.parametrize(
    "conf,gpu_label",
    [
        (UPSTREAM_GPU_CONF, "pci-10de.present"),
        (None, "pci-0302_10de.present"),  # upstream NFD's default deviceLabelFields [class, vendor]
    ],
)
def test_upstream_nfd_worker_labels_of_bare_nodes(conf, gpu_label):
    gpu = [n for n in cluster.kubernetes_nodes(0, 2) if n["metadata"]["name"].startswith("gpu-")]
    labels = [nfd.feature_labels(n, nfd.parse_worker_config(conf), openshift_fields=False) for n in gpu]
    for got in labels:
        assert got[PREFIX + gpu_label] == "true"
        assert got[PREFIX + "system-os_release.ID"] == "ubuntu"
        assert not [k for k in got if "OPENSHIFT" in k or "RHEL" in k or "selinux" in k]
    assert [
        (
            got[PREFIX + "system-os_release.VERSION_ID"],
            got[PREFIX + "system-os_release.VERSION_ID.major"],
            got[PREFIX + "kernel-version.full"],
            got[PREFIX + "kernel-version.major"],
            got[PREFIX + "kernel-version.minor"],
        )
        for got in labels
    ] == [("22.04", "22", "5.15.0-119-generic", "5", "15"), ("24.04", "24", "6.8.0-45-generic", "6", "8")]
    # The ENA NIC (class 0200) is whitelisted by the role's config only (upstream's default is 03, 0b40, 12).
    assert [PREFIX + "pci-1d0f.present" in got for got in labels] == [conf is not None] * 2


def test_worker_version_follows_the_upstream_image_tag():
    assert nfd.worker_version("registry.k8s.io/nfd/node-feature-discovery:v0.19.0") == "v0.19.0"
    assert nfd.worker_version("registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:v4.16") == "v4.16.0"
