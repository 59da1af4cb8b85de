# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What a GPU node should advertise, read from GPU Feature Discovery's labels (pure).

* no MIG: ``nvidia.com/gpu`` = ``gpu.count`` x ``gpu.replicas`` (time-slicing);
  with ``renameByDefault: true`` the resource is ``nvidia.com/gpu.shared`` (GFD
  then leaves ``gpu.product`` without its ``-SHARED`` suffix);
* MIG ``single``: GFD overrides ``gpu.count`` with the number of MIG devices and
  ``nvidia.com/gpu`` counts them;
* MIG ``mixed``: ``gpu.count`` stays the number of physical GPUs; each profile is
  its own resource ``nvidia.com/mig-<profile>`` (``nvidia.com/mig-<profile>.count``)
  and ``nvidia.com/gpu`` counts only the GPUs without MIG (at most ``gpu.count``).

The exporter reports one set of series per physical GPU: ``physical_gpus``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    GFD_COUNT,
    GFD_MIG_STRATEGY,
    GFD_PRODUCT,
    GFD_REPLICAS,
    GFD_SHARING,
    GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
    SHARED_RESOURCE,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import dig

MIG_COUNT_RE = re.compile(r"^nvidia\.com/(mig-[^/]+)\.count$")
MIG_PRODUCT_RE = re.compile(r"-MIG-([0-9]+)g\.[0-9]+gb$")
GFD_SLICES_GI = "nvidia.com/gpu.slices.gi"
# Compute (GPU instance) slices of the largest MIG GPUs (A100, H100, H200, B200: 7g is the whole GPU); a GPU holds
# at most 7 // slices instances of one profile (NVIDIA MIG user guide, "Supported MIG Profiles").
MAX_GI_SLICES = 7


def to_int(value, default=None):
    try:
        return int(to_text(value))
    except (TypeError, ValueError):
        return default


def node_labels(node):
    return dig(node, ("metadata", "labels")) or {}


def allocatable(node, resource):
    return to_int((dig(node, ("status", "allocatable")) or {}).get(resource), 0)


def mig_strategy(node):
    return node_labels(node).get(GFD_MIG_STRATEGY) or "none"


def mig_profiles(node):
    """{resource: count} from GFD's per-profile labels (MIG mixed)."""
    out = {}
    for key, value in node_labels(node).items():
        match = MIG_COUNT_RE.match(key)
        if match:
            out["nvidia.com/" + match.group(1)] = to_int(value, 0)
    return out


def shared_renamed(node):
    """True when time-slicing advertises ``nvidia.com/gpu.shared`` (renameByDefault / rename)."""
    status = node.get("status") or {}
    if any(SHARED_RESOURCE in (status.get(k) or {}) for k in ("allocatable", "capacity")):
        return True
    labels = node_labels(node)
    sharing = labels.get(GFD_SHARING) not in (None, "", "none")
    replicas = to_int(labels.get(GFD_REPLICAS), 1) or 1
    return sharing and replicas > 1 and not (labels.get(GFD_PRODUCT) or "").endswith("-SHARED")


def expectations(node, override=None):
    """[{resource, want, max, source}]: what the node must advertise (want None: at least 1 / at most max)."""
    labels = node_labels(node)
    count = to_int(labels.get(GFD_COUNT))
    replicas = to_int(labels.get(GFD_REPLICAS), 1) or 1
    if mig_strategy(node) == "mixed":
        rows = [
            {"resource": res, "want": want, "max": None, "source": res + ".count"}
            for res, want in sorted(mig_profiles(node).items())
        ]
        full = {
            "resource": GPU_RESOURCE,
            "want": override,
            "max": None,
            "source": "expected_gpus" if override else None,
        }
        if not override and count is not None:
            full.update(max=count, source="{0}, GPUs without MIG".format(GFD_COUNT))
        return [full] + rows
    resource = SHARED_RESOURCE if shared_renamed(node) else GPU_RESOURCE
    row = {"resource": resource, "want": None, "max": None, "source": None}
    if override:
        row.update(want=override, source="expected_gpus")
    elif count is not None:
        source = GFD_COUNT if replicas == 1 else "{0} x {1}".format(GFD_COUNT, GFD_REPLICAS)
        if mig_strategy(node) == "single":
            source += ", MIG single: MIG devices"
        row.update(want=count * replicas, source=source)
    return [row]


def expected_gpus(node, override=None):
    """(expected count of the main resource or None, where it came from)."""
    row = expectations(node, override)[0]
    return row["want"], row["source"]


def mig_single_min_gpus(node):
    """MIG single: the fewest physical GPUs that hold GFD's ``gpu.count`` MIG devices, else None.

    GFD replaces ``gpu.count`` by the MIG devices; each has ``gpu.slices.gi`` compute slices (or the ``-MIG-<n>g.``
    of ``gpu.product``) and a GPU has at most 7, so it holds at most ``7 // slices`` of them: a lower bound that a
    layout with fewer devices per GPU (A30, memory-bound profiles) only raises.
    """
    labels = node_labels(node)
    count = to_int(labels.get(GFD_COUNT))
    slices = to_int(labels.get(GFD_SLICES_GI))
    if slices is None:
        match = MIG_PRODUCT_RE.search(labels.get(GFD_PRODUCT) or "")
        slices = to_int(match.group(1)) if match else None
    if not count or not slices or slices < 1:
        return None
    per_gpu = max(1, MAX_GI_SLICES // slices)
    return -(-count // per_gpu)


def physical_gpus(node, override=None):
    """Physical GPUs (one exporter series set each); MIG single: the fewest that hold its MIG devices."""
    labels = node_labels(node)
    strategy = mig_strategy(node)
    count = to_int(labels.get(GFD_COUNT))
    if strategy == "single":
        return mig_single_min_gpus(node)
    if count is not None:
        return count
    if override and strategy == "none" and (to_int(labels.get(GFD_REPLICAS), 1) or 1) <= 1:
        return override
    return None


def burnin_request(node):
    """(resource, count) a burn-in pod requests - every whole GPU of the node - or (None, why it cannot run there).

    DCGM's diagnostics need whole GPUs: a MIG geometry "prevents access to the entire GPU" (dcgmi's own refusal,
    NVIDIA/DCGM#70), and a time-sliced or MPS-shared GPU's replicas are one device.
    """
    if mig_strategy(node) != "none" or mig_profiles(node):
        return None, "the node's GPUs are MIG-partitioned (DCGM diagnostics need whole GPUs)"
    labels = node_labels(node)
    if labels.get(GFD_SHARING) not in (None, "", "none") or (to_int(labels.get(GFD_REPLICAS), 1) or 1) > 1:
        return None, "the node's GPUs are shared ({0}); a burn-in needs them whole".format(
            labels.get(GFD_SHARING) or "replicas " + labels.get(GFD_REPLICAS)
        )
    count = allocatable(node, GPU_RESOURCE)
    if count < 1:
        return None, "the node advertises no {0}".format(GPU_RESOURCE)
    return GPU_RESOURCE, count


def workload_resource(node):
    """The resource a validation pod requests on this node: a full GPU, a shared one, else a MIG device."""
    for resource in [GPU_RESOURCE, SHARED_RESOURCE] + sorted(mig_profiles(node)):
        if allocatable(node, resource) >= 1:
            return resource
    for resource in sorted((dig(node, ("status", "allocatable")) or {})):
        if resource.startswith(MIG_RESOURCE_PREFIX) and allocatable(node, resource) >= 1:
            return resource
    return None
