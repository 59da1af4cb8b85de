# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The whole GPU path of the simulation, as seeds 000, 002 and 004 walk it.

Clone a worker MachineSet into a GPU MachineSet by hand, scale it, let NFD find
the GPU, run the driver / toolkit / device plugin / GFD DaemonSets, check the
node advertises the instance type's GPUs, validate with vectorAdd and
nvidia-smi (logs through pods/log), then upgrade the node's kernel and watch
the stale driver fail and a per-kernel driver take over (the SRO pattern of
seed 001).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import uuid

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import catalog, control, manifests  # noqa: E402
from simopenshift.kube import DAEMONSETS, NAMESPACES, NODES, PODS, SERVICEACCOUNTS, labels_of  # noqa: E402
from simopenshift.testing import (  # noqa: E402
    allocatable,
    allow_privileged,
    capacity,
    clone_machineset,
    container_status,
    delete_machineset,
    ensure_nfd,
    ensure_runtime_class,
    node_label,
    pod_log,
    ready_nodes_of,
    wait_for,
    worker_machinesets,
)

pytestmark = pytest.mark.integration

NEW_KERNEL = "5.14.0-427.50.1.el9_4.x86_64"  # RHCOS 417.94.202409121747-0 (data/rhcos-builds.csv)
OLD_KERNEL = catalog.cluster_build().kernel
NFD = "feature.node.kubernetes.io/"


@pytest.fixture
def gpu_ns(kube):
    name = "sim-gpu-" + uuid.uuid4().hex[:6]
    kube.create(NAMESPACES, {"metadata": {"name": name}})
    wait_for(lambda: kube.get(SERVICEACCOUNTS, "default", name), 30, what="default ServiceAccount")
    # The manifests run privileged / hostPID / hostPath pods as the default SA: SCC admission wants the binding.
    allow_privileged(kube, name)
    yield name
    kube.delete(NAMESPACES, name)


def make_gpu_machineset(kube, instance_type, replicas):
    source = worker_machinesets(kube)[0]
    name = "%s-gpu-%s-%s" % (
        source["metadata"]["name"].rsplit("-worker-", 1)[0],
        instance_type.replace(".", ""),
        uuid.uuid4().hex[:4],
    )
    clone_machineset(
        kube,
        source,
        name,
        instance_type,
        replicas=replicas,
        node_labels={"node-role.kubernetes.io/gpu": ""},
        taints=[{"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"}],
    )
    return name


def test_gpu_machineset_to_validated_gpus_and_kernel_upgrade(cluster, kube, gpu_ns):
    ms = make_gpu_machineset(kube, "g4dn.xlarge", replicas=1)
    try:
        (node,) = ready_nodes_of(kube, ms, 1, timeout=60)
        name = node["metadata"]["name"]
        labels = labels_of(node)
        # What the kubelet and cloud node controller register for a g4dn.xlarge.
        assert labels["node.kubernetes.io/instance-type"] == "g4dn.xlarge"
        assert labels["topology.kubernetes.io/zone"] == "us-east-2a"
        assert "node-role.kubernetes.io/worker" in labels and "node-role.kubernetes.io/gpu" in labels
        assert {"key": "nvidia.com/gpu", "effect": "NoSchedule"}.items() <= node["spec"]["taints"][0].items()
        assert node["status"]["capacity"]["cpu"] == "4"
        assert node["status"]["nodeInfo"]["kernelVersion"] == OLD_KERNEL
        # No device plugin yet: the GPU is invisible to the scheduler.
        assert capacity(kube, name) is None and allocatable(kube, name) is None

        ensure_nfd(kube)
        wait_for(
            lambda: node_label(kube, name, NFD + "pci-10de.present") == "true",
            30,
            what="NFD pci-10de.present on the GPU node",
        )
        assert node_label(kube, name, NFD + "kernel-version.full") == OLD_KERNEL

        ensure_runtime_class(kube)
        old_driver = manifests.driver(gpu_ns, name="nvidia-driver-precompiled", kernel=OLD_KERNEL)
        for body in (
            old_driver,
            manifests.toolkit(gpu_ns),
            manifests.device_plugin(gpu_ns),
            manifests.gpu_feature_discovery(gpu_ns),
        ):
            kube.create(DAEMONSETS, body)
        wait_for(lambda: allocatable(kube, name) == "1", 40, what="nvidia.com/gpu allocatable 1")
        assert capacity(kube, name) == "1"

        gfd = "nvidia.com/"
        wait_for(lambda: node_label(kube, name, gfd + "gpu.product") == "Tesla-T4", 20, what="GFD labels")
        node_labels = labels_of(kube.get(NODES, name))
        assert node_labels[gfd + "gpu.count"] == "1"
        assert node_labels[gfd + "gpu.memory"] == "15109"  # seed 004, g4dn.xlarge
        assert node_labels[gfd + "gpu.family"] == "turing"
        assert (node_labels[gfd + "gpu.compute.major"], node_labels[gfd + "gpu.compute.minor"]) == ("7", "5")
        assert node_labels[gfd + "gpu.machine"] == "g4dn.xlarge"
        assert (
            node_labels[gfd + "cuda.driver.major"],
            node_labels[gfd + "cuda.driver.minor"],
            node_labels[gfd + "cuda.driver.rev"],
        ) == ("550", "90", "07")
        assert (node_labels[gfd + "cuda.runtime.major"], node_labels[gfd + "cuda.runtime.minor"]) == ("12", "4")

        kube.create(PODS, manifests.validation_pod(gpu_ns, "vectoradd"))
        kube.create(PODS, manifests.validation_pod(gpu_ns, "nvidia-smi", command=["nvidia-smi"]))
        for pod in ("vectoradd", "nvidia-smi"):
            wait_for(
                lambda: (kube.get(PODS, pod, gpu_ns).get("status") or {}).get("phase") == "Succeeded",
                30,
                what="%s Succeeded" % pod,
            )
            assert kube.get(PODS, pod, gpu_ns)["spec"]["nodeName"] == name
        assert "Test PASSED" in pod_log(cluster.api, "vectoradd", gpu_ns)
        smi = pod_log(cluster.api, "nvidia-smi", gpu_ns)
        assert "Driver Version: 550.90.07" in smi and "CUDA Version: 12.4" in smi and "Tesla T4" in smi

        # Kernel upgrade (an OpenShift 4.16 -> 4.17 node update): NFD relabels,
        # the precompiled 4.16 driver no longer loads.
        control.upgrade_kernel(cluster.api, name, NEW_KERNEL)
        wait_for(
            lambda: node_label(kube, name, NFD + "kernel-version.full") == NEW_KERNEL,
            20,
            what="NFD kernel label follows the upgrade",
        )
        assert node_label(kube, name, NFD + "system-os_release.OSTREE_VERSION") == "417.94.202409121747-0"
        assert node_label(kube, name, NFD + "system-os_release.VERSION_ID") == "4.17"

        def crashing():
            pods = [
                p
                for p in kube.list(PODS, gpu_ns)[0]
                if p["metadata"]["labels"].get("app") == old_driver["metadata"]["name"]
            ]
            status = container_status(pods[0]) if pods else {}
            waiting = (status.get("state") or {}).get("waiting") or {}
            return (
                pods[0] if waiting.get("reason") == "CrashLoopBackOff" and status.get("restartCount", 0) >= 2 else None
            )

        stale = wait_for(crashing, 30, what="stale driver pod in CrashLoopBackOff with restarts")
        assert container_status(stale)["ready"] is False
        assert "Module nvidia not found in directory /lib/modules/%s" % NEW_KERNEL in pod_log(
            cluster.api, stale["metadata"]["name"], gpu_ns
        )
        # The device plugin reports its GPUs unhealthy: nothing allocatable.
        wait_for(lambda: allocatable(kube, name) == "0", 20, what="allocatable 0 with a broken driver")

        kube.create(PODS, manifests.validation_pod(gpu_ns, "vectoradd-broken"))
        wait_for(
            lambda: (kube.get(PODS, "vectoradd-broken", gpu_ns).get("status") or {}).get("phase") == "Pending",
            10,
            what="validation pod unschedulable while nothing is allocatable",
        )

        # The SRO answer: one driver DaemonSet per kernel, selected by the NFD kernel label.
        kube.delete(DAEMONSETS, old_driver["metadata"]["name"], gpu_ns)
        kube.create(
            DAEMONSETS,
            manifests.driver(
                gpu_ns,
                name="nvidia-driver-new-kernel",
                kernel=NEW_KERNEL,
                node_selector={NFD + "kernel-version.full": NEW_KERNEL},
            ),
        )
        wait_for(lambda: allocatable(kube, name) == "1", 40, what="allocatable back to 1 with the new driver")
        wait_for(
            lambda: (kube.get(PODS, "vectoradd-broken", gpu_ns).get("status") or {}).get("phase") == "Succeeded",
            30,
            what="the waiting validation pod runs once GPUs are back",
        )
    finally:
        delete_machineset(kube, ms)


def test_multi_gpu_instance_advertises_its_gpu_count(cluster, kube, gpu_ns):
    ms = make_gpu_machineset(kube, "p3.8xlarge", replicas=1)
    ns = gpu_ns
    try:
        (node,) = ready_nodes_of(kube, ms, 1, timeout=60)
        name = node["metadata"]["name"]
        ensure_nfd(kube)
        wait_for(lambda: node_label(kube, name, NFD + "pci-10de.present") == "true", 30, what="NFD label")
        # p3 is Xen-based: seed 000 shows pci-1013.present next to pci-10de on a p3.
        assert node_label(kube, name, NFD + "pci-1013.present") == "true"
        ensure_runtime_class(kube)
        for body in (
            manifests.driver(ns, name="drv-p3"),
            manifests.toolkit(ns),
            manifests.device_plugin(ns),
            manifests.gpu_feature_discovery(ns),
        ):
            kube.create(DAEMONSETS, body)
        wait_for(lambda: allocatable(kube, name) == "4", 40, what="nvidia.com/gpu allocatable 4 on p3.8xlarge")
        wait_for(lambda: node_label(kube, name, "nvidia.com/gpu.count") == "4", 20, what="GFD gpu.count 4")
        assert node_label(kube, name, "nvidia.com/gpu.product") == "Tesla-V100-SXM2-16GB"
        assert node_label(kube, name, "nvidia.com/gpu.family") == "volta"
        kube.create(PODS, manifests.validation_pod(ns, "smi-4", command=["nvidia-smi"], gpus=4))
        wait_for(
            lambda: (kube.get(PODS, "smi-4", ns).get("status") or {}).get("phase") == "Succeeded",
            30,
            what="4-GPU nvidia-smi pod Succeeded",
        )
        table = pod_log(cluster.api, "smi-4", ns)
        # R550's wider Name column prints the whole product name (the 79-column pre-R525 table cut it).
        assert table.count("Tesla V100-SXM2-16GB") == 4
    finally:
        delete_machineset(kube, ms)
    # Scale-down removed the machine and its node: nothing advertises the GPUs any more.
    assert kube.get(NODES, name) is None
