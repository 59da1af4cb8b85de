# -*- coding: utf-8 -*-
"""Node fixtures shaped like real GPU nodes (their NFD + GFD labels), shared by the nfd_labels tests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

NFD = "feature.node.kubernetes.io/"
VENDOR_LABEL = NFD + "pci-10de.present"  # deviceLabelFields: [vendor] (Red Hat NFD, GPU Operator's NFD)
CLASS_3D_LABEL = NFD + "pci-0302_10de.present"  # [class, vendor], 3D controller (upstream NFD default)
CLASS_VGA_LABEL = NFD + "pci-0300_10de.present"  # [class, vendor], VGA controller
GPU_LABEL_FORMS = (VENDOR_LABEL, CLASS_3D_LABEL, CLASS_VGA_LABEL)


def node(name, labels=None, ready=True, allocatable=None):
    obj = {
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }
    if allocatable is not None:
        obj["status"]["allocatable"] = {"nvidia.com/gpu": str(allocatable)}
    return obj


# Labels of an OpenShift 4.6 AWS node with a T4 (NFD + GFD), as a published walkthrough shows them.
SEED_004 = {
    "feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true",
    "feature.node.kubernetes.io/kernel-selinux.enabled": "true",
    "feature.node.kubernetes.io/kernel-version.full": "4.18.0-193.29.1.el8_2.x86_64",
    "feature.node.kubernetes.io/kernel-version.major": "4",
    "feature.node.kubernetes.io/kernel-version.minor": "18",
    "feature.node.kubernetes.io/kernel-version.revision": "0",
    "feature.node.kubernetes.io/pci-10de.present": "true",
    "feature.node.kubernetes.io/pci-1d0f.present": "true",
    "feature.node.kubernetes.io/system-os_release.ID": "rhcos",
    "feature.node.kubernetes.io/system-os_release.VERSION_ID": "4.6",
    "feature.node.kubernetes.io/system-os_release.VERSION_ID.major": "4",
    "feature.node.kubernetes.io/system-os_release.VERSION_ID.minor": "6",
    "nvidia.com/cuda.driver.major": "450",
    "nvidia.com/cuda.driver.minor": "80",
    "nvidia.com/cuda.driver.rev": "02",
    "nvidia.com/cuda.runtime.major": "11",
    "nvidia.com/cuda.runtime.minor": "0",
    "nvidia.com/gfd.timestamp": "1608307957",
    "nvidia.com/gpu.compute.major": "7",
    "nvidia.com/gpu.compute.minor": "5",
    "nvidia.com/gpu.count": "1",
    "nvidia.com/gpu.family": "turing",
    "nvidia.com/gpu.machine": "g4dn.xlarge",
    "nvidia.com/gpu.memory": "15109",
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.product": "Tesla-T4",
    "node.kubernetes.io/instance-type": "g4dn.xlarge",
    "topology.kubernetes.io/zone": "us-east-2a",
}


def with_gpu_label(labels, form):
    """``labels`` with the vendor-only NFD GPU label replaced by ``form`` (as NFD's deviceLabelFields decide)."""
    result = dict((k, v) for k, v in labels.items() if k not in GPU_LABEL_FORMS)
    result[form] = "true"
    return result


# GFD on an A100 node in MIG mixed strategy (GFD README "MIG strategy: mixed" labels).
A100_MIG_MIXED = dict(
    with_gpu_label(SEED_004, CLASS_3D_LABEL),
    **{
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.memory": "40960",
        "nvidia.com/gpu.family": "ampere",
        "nvidia.com/mig.capable": "true",
        "nvidia.com/mig.strategy": "mixed",
        "nvidia.com/mig-1g.5gb.count": "14",
        "nvidia.com/mig-1g.5gb.memory": "4864",
        "nvidia.com/mig-3g.20gb.count": "2",
    },
)

# GFD on a T4 node with time-slicing (4 replicas, renameByDefault: true).
T4_TIME_SLICED = dict(
    SEED_004,
    **{
        "nvidia.com/gpu.product": "Tesla-T4",  # renamed resource: GFD does not append -SHARED
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
        "nvidia.com/mig.capable": "false",
    },
)
