# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""MIG on simulated nodes: the MIG manager's geometry, the device plugin's resources, GFD's labels.

Driven as on a GPU Operator cluster:

* the node label ``nvidia.com/mig.config`` (what the MIG manager applies):
  ``all-disabled``, ``all-<profile>`` (e.g. ``all-1g.5gb``: every GPU split into
  as many such devices as fit) or ``all-balanced``; the MIG manager reports
  ``nvidia.com/mig.config.state`` ``success`` (or ``failed`` for a GPU model
  without MIG or a profile it does not have);
* the device plugin's ``MIG_STRATEGY`` environment variable (the GPU Operator
  sets it from ClusterPolicy ``mig.strategy``): ``single`` advertises every MIG
  device as ``nvidia.com/gpu``, ``mixed`` one resource per profile
  (``nvidia.com/mig-<profile>``) plus ``nvidia.com/gpu`` for GPUs without MIG;
* GPU Feature Discovery's labels as its README documents them for both strategies.

A100/H100/H200 have 7 compute slices and 8 memory eighths; the profile name is
``<slices>g.<memory>gb``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_STATE_LABEL = "nvidia.com/mig.config.state"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
GFD_PREFIX = "nvidia.com/"
# compute slices -> (devices per GPU, memory eighths)
SLICES = {1: (7, 1), 2: (3, 2), 3: (2, 4), 4: (1, 4), 7: (1, 8)}
BALANCED = {1: 2, 2: 1, 3: 1}


def profiles(memory_mib):
    """{profile name: (slices, devices per GPU, memory MiB)} of a MIG-capable GPU of that memory."""
    gb = int(round(memory_mib / 1024.0 / 8)) or 1
    return dict(
        ("{0}g.{1}gb".format(s, gb * eighths), (s, per_gpu, gb * eighths * 1024))
        for s, (per_gpu, eighths) in SLICES.items()
    )


def geometry(config, memory_mib):
    """{profile: devices per GPU} for a mig.config value; None when MIG is off; ValueError when invalid."""
    if not config or config == "all-disabled":
        return None
    known = profiles(memory_mib)
    if config == "all-balanced":
        by_slices = dict((v[0], k) for k, v in known.items())
        return dict((by_slices[s], n) for s, n in BALANCED.items())
    name = config[len("all-") :] if config.startswith("all-") else None
    if name not in known:
        raise ValueError("unknown MIG configuration {0!r}".format(config))
    return {name: known[name][1]}


class MigState(object):
    """The MIG layout of one node, as the device plugin and GFD see it."""

    def __init__(self, strategy, per_gpu, gpus, memory_mib):
        self.strategy = strategy
        self.per_gpu = per_gpu
        self.gpus = gpus
        self.known = profiles(memory_mib)

    def devices(self):
        return dict((p, n * self.gpus) for p, n in self.per_gpu.items())

    def resources(self):
        """{resource: count} the device plugin advertises."""
        if self.strategy == "single":
            return {"nvidia.com/gpu": sum(self.devices().values())}
        return dict((MIG_RESOURCE_PREFIX + p, n) for p, n in self.devices().items())

    def gfd_labels(self, labels):
        """GFD's labels: ``labels`` (the non-MIG ones) overridden / extended for the strategy."""
        out = dict(labels)
        out[GFD_PREFIX + "mig.strategy"] = self.strategy
        if self.strategy == "single":
            (profile,) = list(self.per_gpu)
            slices, _per_gpu, memory = self.known[profile]
            out[GFD_PREFIX + "gpu.product"] = labels[GFD_PREFIX + "gpu.product"] + "-MIG-" + profile
            out[GFD_PREFIX + "gpu.count"] = str(sum(self.devices().values()))
            out[GFD_PREFIX + "gpu.memory"] = str(memory)
            out[GFD_PREFIX + "gpu.slices.gi"] = str(slices)
            out[GFD_PREFIX + "gpu.slices.ci"] = str(slices)
            return out
        for profile, count in self.devices().items():
            slices, _per_gpu, memory = self.known[profile]
            key = GFD_PREFIX + "mig-" + profile
            out[key + ".count"] = str(count)
            out[key + ".memory"] = str(memory)
            out[key + ".slices.gi"] = str(slices)
            out[key + ".slices.ci"] = str(slices)
        return out


def mig_state(node_labels, model, gpus, memory_mib, strategy):
    """(MigState or None, mig.config.state label value or None)."""
    config = node_labels.get(MIG_CONFIG_LABEL)
    if not config:
        return None, None
    if not model or not model.mig_capable:
        return None, "failed"
    try:
        per_gpu = geometry(config, memory_mib)
    except ValueError:
        return None, "failed"
    if per_gpu is None or strategy not in ("single", "mixed"):
        return None, "success"
    if strategy == "single" and len(per_gpu) != 1:
        return None, "failed"  # single needs one profile on every GPU
    return MigState(strategy, per_gpu, gpus, memory_mib), "success"


def is_mig_label(key):
    return key.startswith(GFD_PREFIX + "mig-") or key in (
        GFD_PREFIX + "mig.strategy",
        GFD_PREFIX + "gpu.slices.gi",
        GFD_PREFIX + "gpu.slices.ci",
    )
