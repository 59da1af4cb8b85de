# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The cluster autoscaler's scale-from-zero annotations of a GPU MachineSet, for the GPU instance type.

A MachineSet at 0 replicas has no Node the cluster autoscaler could look at, so
it reads what a Node would bring from annotations on the MachineSet:
``machine.openshift.io/vCPU``, ``memoryMb`` (MiB) and ``GPU`` (openshift/
kubernetes-autoscaler ``clusterapi_utils.go``). The AWS machineset controller
(openshift/machine-api-provider-aws) rewrites them from ``instanceType`` on
each reconcile; other providers may not, and until the controller runs a clone
would carry the *source's* values (``GPU: "0"``), so an autoscaler scaling
from zero would never pick the GPU MachineSet for a pod asking for
``nvidia.com/gpu``. The clone therefore gets the values of the GPU instance
type, from the catalog (or the EC2 answer with ``validate_instance_type``).

On an existing MachineSet whose instance type does not change, values already
there are left to the machine-api controller (its numbers come from the cloud
API and may be more exact than the catalog's): the module only fills in
missing ones, and rewrites all of them when the instance type changes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils import catalog

ANN_VCPU = "machine.openshift.io/vCPU"
ANN_MEMORY = "machine.openshift.io/memoryMb"
ANN_GPU = "machine.openshift.io/GPU"
CAPACITY_ANNOTATIONS = (ANN_VCPU, ANN_MEMORY, ANN_GPU)


def _positive_int(value):
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def capacity_annotations(provider, instance_type, gpu):
    """(annotations, note): the scale-from-zero annotations for ``instance_type``.

    ``gpu`` is what check_instance_type found (catalog entry, EC2 answer, GCP
    attached GPUs or ``unchecked``). vCPU and memory come from ``gpu`` when it
    has them, else from the catalog entry of the instance type (a GCP N1 type
    with attached GPUs is in the catalog without GPUs). When a value is
    unknown, no annotation is set and the note says why.
    """
    gpu = gpu or {}
    entry = catalog.lookup(provider, instance_type) or {}
    vcpu = _positive_int(gpu.get("vcpu") if gpu.get("vcpu") is not None else entry.get("vcpu"))
    memory = _positive_int(gpu.get("memory_mib") if gpu.get("memory_mib") is not None else entry.get("memory_mib"))
    gpus = _positive_int(gpu.get("gpu_count"))
    missing = [n for n, v in (("vCPU", vcpu), ("memory", memory), ("GPU count", gpus)) if not v]
    if missing:
        return {}, (
            "scale-from-zero annotations not set: {0} of {1} unknown (not in the catalog); the machine-api "
            "controller sets them, if it knows the type".format(", ".join(missing), instance_type)
        )
    return {ANN_VCPU: str(vcpu), ANN_MEMORY: str(memory), ANN_GPU: str(gpus)}, None


def kept_on_update(existing_annotations, desired_annotations, instance_type_changes):
    """The capacity annotations an update enforces: all when the type changes, else only missing ones."""
    if instance_type_changes:
        return dict((k, v) for k, v in desired_annotations.items() if k in CAPACITY_ANNOTATIONS)
    existing = existing_annotations or {}
    return dict(
        (k, v) for k, v in desired_annotations.items() if k in CAPACITY_ANNOTATIONS and existing.get(k) in (None, "")
    )
