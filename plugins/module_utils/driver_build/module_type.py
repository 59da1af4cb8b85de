# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_container_build: which kernel modules (open or proprietary) an image is built with (pure).

The choice follows the GPUs of the nodes the image is for, not the node the build
runs on: nvidia-installer picks from the GPUs it sees (NVIDIA/nvidia-installer
kernel.c ``valid_kernel_module_types``: a GPU that requires the open modules wins;
else a GPU the open modules do not support forces proprietary; else open is the
default), and a build pod usually runs on a node without a GPU. So the build
passes ``--kernel-module-type`` itself, decided here the installer's way from the
GPU models of the nodes: the GFD label ``nvidia.com/gpu.product`` when a node has
one, else the cloud instance type's GPU from the catalog. Nodes whose GPU is
unknown fall back to the driver branch, as the driver container does
(NVIDIA/gpu-driver-container ``_resolve_kernel_type_from_driver_branch``:
proprietary before R560, open from R560).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils import catalog
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
# CUDA compute capability by GPU product prefix (NVIDIA CUDA GPUs list). The open modules support
# Turing (7.5) and later; Blackwell (10.x, 12.x) supports only the open modules.
_COMPUTE = (
    ("Tesla-K80", 3.7),
    ("Tesla-M60", 5.2),
    ("Tesla-P", 6.0),
    ("Tesla-V100", 7.0),
    ("Tesla-T4", 7.5),
    ("NVIDIA-A100", 8.0),
    ("NVIDIA-A10", 8.6),
    ("NVIDIA-A30", 8.0),
    ("NVIDIA-L40", 8.9),
    ("NVIDIA-L4", 8.9),
    ("NVIDIA-H100", 9.0),
    ("NVIDIA-H200", 9.0),
    ("NVIDIA-GH200", 9.0),
    ("NVIDIA-B200", 10.0),
    ("NVIDIA-GB200", 10.0),
    ("NVIDIA-B300", 10.3),
    ("NVIDIA-RTX-PRO-6000-Blackwell", 12.0),
)
OPEN_MIN = 7.5
OPEN_ONLY_MIN = 10.0
OPEN_DEFAULT_BRANCH = 560


def compute_capability(product):
    """Compute capability of a GPU product string as GFD labels it, or None when unknown."""
    product = (product or "").replace("-SHARED", "")
    for prefix, value in _COMPUTE:
        if product.startswith(prefix):
            return value
    return None


def _provider(node):
    provider_id = ((node.get("spec") or {}).get("providerID") or "").split("://", 1)[0]
    return {"aws": "aws", "azure": "azure", "gce": "gcp"}.get(provider_id)


def node_gpu_product(node):
    """The GPU product of a node: GFD's label, else its cloud instance type's GPU, else None."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    if labels.get(GPU_PRODUCT_LABEL):
        return labels[GPU_PRODUCT_LABEL]
    itype = next((labels[k] for k in INSTANCE_TYPE_LABELS if labels.get(k)), None)
    providers = [_provider(node)] if _provider(node) else list(catalog.PROVIDERS)
    for provider in providers:
        entry = catalog.lookup(provider, itype)
        if entry and entry.get("gpu_model"):
            return entry["gpu_model"]
    return None


def branch_default(driver_version):
    try:
        branch = int(str(driver_version).split(".", 1)[0])
    except ValueError:
        return "open"
    return "open" if branch >= OPEN_DEFAULT_BRANCH else "proprietary"


def decide(requested, products, driver_version, where):
    """(module type, why) for nodes with the GPU ``products`` (None for unknown ones).

    ``requested`` open/proprietary is kept unless a GPU cannot run it (named error);
    auto follows nvidia-installer's own rule over the known GPUs.
    """
    known = dict((p, compute_capability(p)) for p in products if p and compute_capability(p) is not None)
    needs_open = sorted(p for p, cc in known.items() if cc >= OPEN_ONLY_MIN)
    no_open = sorted(p for p, cc in known.items() if cc < OPEN_MIN)
    if needs_open and no_open:
        raise GpuopsError(
            "{0} mix GPUs that need the open kernel modules ({1}) with GPUs the open modules do not support "
            "({2}); one driver image cannot serve both. Put them on different kernels or node selections.".format(
                where, ", ".join(needs_open), ", ".join(no_open)
            ),
            param="kernel_module_type",
        )
    if requested == "proprietary" and needs_open:
        raise GpuopsError(
            "kernel_module_type proprietary cannot drive {0} on {1}: they need the open kernel modules. "
            "Use kernel_module_type: open (or auto).".format(", ".join(needs_open), where),
            param="kernel_module_type",
        )
    if requested == "open" and no_open:
        raise GpuopsError(
            "kernel_module_type open cannot drive {0} on {1}: the open modules support Turing and later "
            "only. Use kernel_module_type: proprietary (or auto).".format(", ".join(no_open), where),
            param="kernel_module_type",
        )
    if requested in ("open", "proprietary"):
        return requested, "asked"
    if needs_open:
        return "open", "GPUs that need the open modules: " + ", ".join(needs_open)
    if no_open:
        return "proprietary", "GPUs the open modules do not support: " + ", ".join(no_open)
    if known and len(known) == len([p for p in products if p]) and all(products):
        return "open", "every GPU supports the open modules (" + ", ".join(sorted(known)) + ")"
    kind = branch_default(driver_version)
    return kind, "GPU model unknown on some nodes: the driver branch's default ({0})".format(kind)
