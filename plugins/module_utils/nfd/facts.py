# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What the NFD and GFD labels of a node say: per-node facts, grouping, wait status.

Pure functions over Node dicts. Whether a node is a GPU node is
gpu_nodes.is_gpu_node (the three NFD label forms) unless the user named one
label of their own (``gpu_label``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import (
    NFD_PREFIX,
    NVIDIA_PCI_LABELS,
    is_gpu_node,
    node_labels,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import condition_true, dig, name_of

KERNEL_PREFIX = NFD_PREFIX + "kernel-version."
OS_RELEASE_PREFIX = NFD_PREFIX + "system-os_release."
GFD_PREFIX = "nvidia.com/"
GFD_PRODUCT = "nvidia.com/gpu.product"
# nvidia.com/mig-<profile>.count, e.g. nvidia.com/mig-1g.10gb.count (GFD, MIG mixed strategy)
MIG_PROFILE_PREFIX = "nvidia.com/mig-"
MIG_PROFILE_SUFFIX = ".count"

INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def _int_or_none(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _first(labels, keys):
    for key in keys:
        if labels.get(key):
            return labels[key]
    return None


def _dotted(labels, base, parts):
    values = [labels.get(base + part) for part in parts]
    if not values[0]:
        return None
    return ".".join(v for v in values if v)


def _with_prefix(labels, prefix):
    return dict((key[len(prefix) :], value) for key, value in labels.items() if key.startswith(prefix))


def is_gpu(labels, gpu_label=None):
    """A GPU node: one of the three NFD forms, or ``gpu_label``=true when the user named one."""
    if gpu_label:
        return str(labels.get(gpu_label, "")).lower() == "true"
    return is_gpu_node(labels)


def describe_gpu_label(gpu_label=None):
    """How the GPU label reads in messages."""
    if gpu_label:
        return gpu_label + "=true"
    short = [key[len(NFD_PREFIX) :] for key in NVIDIA_PCI_LABELS[1:]]
    return "{0} (or {1})=true".format(NVIDIA_PCI_LABELS[0], ", ".join(short))


def _sharing_facts(labels):
    """MIG and GPU sharing labels GFD publishes, only those present."""
    facts = {}
    if "nvidia.com/mig.capable" in labels:
        facts["mig_capable"] = labels["nvidia.com/mig.capable"] == "true"
    if labels.get("nvidia.com/mig.strategy"):
        facts["mig_strategy"] = labels["nvidia.com/mig.strategy"]
    mig_devices = {}
    for key, value in labels.items():
        if key.startswith(MIG_PROFILE_PREFIX) and key.endswith(MIG_PROFILE_SUFFIX):
            mig_devices[key[len(MIG_PROFILE_PREFIX) : -len(MIG_PROFILE_SUFFIX)]] = _int_or_none(value)
    if mig_devices:
        facts["mig_devices"] = mig_devices
    if "nvidia.com/gpu.replicas" in labels:
        facts["replicas"] = _int_or_none(labels["nvidia.com/gpu.replicas"])
    if labels.get("nvidia.com/gpu.sharing-strategy"):
        facts["sharing_strategy"] = labels["nvidia.com/gpu.sharing-strategy"]
    return facts


def _cuda_versions(labels):
    driver = labels.get("nvidia.com/cuda.driver-version.full") or _dotted(
        labels, "nvidia.com/cuda.driver.", ("major", "minor", "rev")
    )
    if not driver:
        driver = _dotted(labels, "nvidia.com/cuda.driver-version.", ("major", "minor", "revision"))
    runtime = labels.get("nvidia.com/cuda.runtime-version.full") or _dotted(
        labels, "nvidia.com/cuda.runtime.", ("major", "minor")
    )
    if not runtime:
        runtime = _dotted(labels, "nvidia.com/cuda.runtime-version.", ("major", "minor"))
    return driver, runtime


def gfd_facts(labels):
    """The GPU Feature Discovery labels of one node as a dict ({} without GFD)."""
    if not any(k.startswith(GFD_PREFIX + "gpu.") or k.startswith(GFD_PREFIX + "cuda.") for k in labels):
        return {}
    driver, runtime = _cuda_versions(labels)
    facts = {
        "present": labels.get("nvidia.com/gpu.present") == "true",
        "product": labels.get(GFD_PRODUCT),
        "count": _int_or_none(labels.get("nvidia.com/gpu.count")),
        "memory": _int_or_none(labels.get("nvidia.com/gpu.memory")),
        "family": labels.get("nvidia.com/gpu.family"),
        "compute_capability": _dotted(labels, "nvidia.com/gpu.compute.", ("major", "minor")),
        "cuda_driver": driver,
        "cuda_runtime": runtime,
        "machine": labels.get("nvidia.com/gpu.machine"),
    }
    facts.update(_sharing_facts(labels))
    return facts


def node_facts(node, gpu_label=None):
    """What NFD and GFD say about one Node object (a dict)."""
    labels = node_labels(node)
    kernel = _with_prefix(labels, KERNEL_PREFIX)
    return {
        "name": name_of(node),
        "gpu": is_gpu(labels, gpu_label),
        "ready": condition_true(node, "Ready"),
        "instance_type": _first(labels, INSTANCE_TYPE_LABELS),
        "zone": _first(labels, ZONE_LABELS),
        "kernel_version": kernel.get("full"),
        "kernel": kernel,
        "os_release": _with_prefix(labels, OS_RELEASE_PREFIX),
        "gfd": gfd_facts(labels),
        "allocatable_gpus": _int_or_none(dig(node, ("status", "allocatable", "nvidia.com/gpu"))),
        # The kubelet's runtime (cri-o://1.29.5, containerd://1.7.20): the toolkit configures that one.
        "container_runtime": dig(node, ("status", "nodeInfo", "containerRuntimeVersion")) or None,
    }


def _os_build(os_release):
    ids = (os_release.get("ID"), os_release.get("VERSION_ID"))
    return os_release.get("OSTREE_VERSION") or "-".join(v for v in ids if v) or "unknown"


def summarize(facts):
    """Group the per-node facts: GPU nodes, kernel versions, OS builds, products."""
    gpu = [f for f in facts if f["gpu"]]
    kernel_versions, os_versions, products = {}, {}, {}
    gfd_nodes = 0
    for f in gpu:
        kernel_versions.setdefault(f["kernel_version"] or "unknown", []).append(f["name"])
        os_versions.setdefault(_os_build(f["os_release"]), []).append(f["name"])
        product = f["gfd"].get("product")
        if product:
            gfd_nodes += 1
            products[product] = products.get(product, 0) + 1
    for groups in (kernel_versions, os_versions):
        for names in groups.values():
            names.sort()
    return {
        "gpu_nodes": sorted(f["name"] for f in gpu),
        "kernel_versions": kernel_versions,
        "os_versions": os_versions,
        "summary": {
            "nodes": len(facts),
            "gpu_nodes": len(gpu),
            "gfd_nodes": gfd_nodes,
            "products": products,
            "kernel_versions": len(kernel_versions),
        },
    }


def wait_status(facts, wait_for, gpu_label=None):
    """(done, message) for a ``wait_for`` dict against the current node facts."""
    gpu = [f for f in facts if f["gpu"]]
    gfd = [f for f in gpu if f["gfd"].get("product")]
    parts = []
    done = True
    want = wait_for.get("gpu_nodes")
    if want is not None:
        parts.append("{0}/{1} nodes labelled {2}".format(len(gpu), want, describe_gpu_label(gpu_label)))
        done = done and len(gpu) >= want
    want = wait_for.get("gfd_nodes")
    if want is not None:
        parts.append("{0}/{1} GPU nodes with {2}".format(len(gfd), want, GFD_PRODUCT))
        done = done and len(gfd) >= want
    return done, "; ".join(parts) + " ({0} nodes seen)".format(len(facts))
