# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What a MachineSet is to machineset_clone: its labels, its provider, its zone, which ones are sources.

A GPU MachineSet made by this module carries the collection's managed-by
label (``common.MANAGED_BY_LABEL``) and the annotation ``SOURCE_ANNOTATION``
naming the worker MachineSet it was cloned from.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils import catalog
from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    MANAGED_BY,
    MANAGED_BY_LABEL,
    GpuopsError,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import dig, name_of

API_VERSION = "machine.openshift.io/v1beta1"
KIND = "MachineSet"
DEFAULT_NAMESPACE = "openshift-machine-api"

LABEL_CLUSTER = "machine.openshift.io/cluster-api-cluster"
LABEL_MACHINESET = "machine.openshift.io/cluster-api-machineset"
LABEL_ROLE = "machine.openshift.io/cluster-api-machine-role"

SOURCE_ANNOTATION = "gpuops.cluster/source-machineset"

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

PROVIDERS = {
    "aws": {
        "kinds": ("AWSMachineProviderConfig",),
        "field": "instanceType",
        "zone": ("placement", "availabilityZone"),
        "region": ("placement", "region"),
    },
    "azure": {
        "kinds": ("AzureMachineProviderSpec",),
        "field": "vmSize",
        "zone": ("zone",),
        "region": ("location",),
    },
    "gcp": {
        "kinds": ("GCPMachineProviderSpec",),
        "field": "machineType",
        "zone": ("zone",),
        "region": ("region",),
    },
}


def names(objs):
    """'a, b, c' (sorted) or 'none', for messages."""
    found = sorted(name_of(o) for o in objs if name_of(o))
    return ", ".join(found) if found else "none"


def is_managed(machineset):
    return dig(machineset, ("metadata", "labels", MANAGED_BY_LABEL)) == MANAGED_BY


def source_of(machineset):
    """The source MachineSet a GPU MachineSet was cloned from (its annotation), or None."""
    return dig(machineset, ("metadata", "annotations", SOURCE_ANNOTATION))


def provider_value(machineset):
    return dig(machineset, ("spec", "template", "spec", "providerSpec", "value")) or {}


def template_labels(machineset):
    return dig(machineset, ("spec", "template", "metadata", "labels")) or {}


def detect_provider(machineset):
    """'aws' | 'azure' | 'gcp' from the providerSpec kind; GpuopsError otherwise."""
    value = provider_value(machineset)
    kind = value.get("kind")
    for provider, info in PROVIDERS.items():
        if kind in info["kinds"]:
            return provider
    for provider, info in PROVIDERS.items():  # providerSpec without kind: look at the fields
        if info["field"] in value:
            return provider
    raise GpuopsError(
        "MachineSet {0} uses provider '{1}'; machineset_clone supports AWS, Azure and GCP MachineSets "
        "(providerSpec kinds {2}). Create GPU machines for this platform with its own tooling, or pick a "
        "source MachineSet on a supported cloud.".format(
            name_of(machineset),
            kind or "unknown",
            ", ".join(k for info in PROVIDERS.values() for k in info["kinds"]),
        ),
        param="source",
    )


def describe(machineset, provider=None):
    """name, provider, zone, region, instance type, replicas, infra, role of a MachineSet."""
    provider = provider or detect_provider(machineset)
    info = PROVIDERS[provider]
    value = provider_value(machineset)
    labels = template_labels(machineset)
    return {
        "name": name_of(machineset),
        "provider": provider,
        "zone": to_text(dig(value, info["zone"]) or "") or None,
        "region": dig(value, info["region"]),
        "instance_type": value.get(info["field"]),
        "replicas": dig(machineset, ("spec", "replicas")),
        "infra": dig(machineset, ("metadata", "labels", LABEL_CLUSTER)) or labels.get(LABEL_CLUSTER),
        "role": labels.get(LABEL_ROLE),
    }


def has_gpu_type(machineset):
    """True when the MachineSet already runs a known GPU instance type (a GPU MachineSet made by hand)."""
    try:
        info = describe(machineset)
    except GpuopsError:
        return False
    return bool(catalog.has_gpu(info["provider"], info["instance_type"]))


def is_worker(machineset):
    """A worker MachineSet to clone: role worker, not made by this module, not already on a GPU type."""
    return (
        template_labels(machineset).get(LABEL_ROLE) == "worker"
        and not is_managed(machineset)
        and not has_gpu_type(machineset)
    )


def zone_of(machineset):
    for info in PROVIDERS.values():
        if provider_value(machineset).get("kind") in info["kinds"]:
            return to_text(dig(provider_value(machineset), info["zone"]) or "")
    return ""


def _by_name(machinesets, namespace, source):
    found = [m for m in machinesets if name_of(m) == source]
    if not found:
        raise GpuopsError(
            "no MachineSet named '{0}' in namespace {1}. Existing MachineSets: {2}.".format(
                source, namespace, names(machinesets)
            ),
            param="source",
        )
    if is_managed(found[0]):
        raise GpuopsError(
            "'{0}' was itself created by gpuops.cluster; clone a worker MachineSet instead ({1}).".format(
                source, names([m for m in machinesets if is_worker(m)])
            ),
            param="source",
        )
    return found


def _workers(machinesets, namespace):
    selected = [m for m in machinesets if is_worker(m)]
    if not selected:
        raise GpuopsError(
            "found no worker MachineSet (template label {0}=worker) in namespace {1}. Existing "
            "MachineSets: {2}. Name one with source.".format(LABEL_ROLE, namespace, names(machinesets)),
            param="all_workers",
        )
    return selected


def _in_zones(selected, zones):
    kept = [m for m in selected if zone_of(m) in zones]
    if not kept:
        raise GpuopsError(
            "none of the source MachineSets is in zone(s) {0}; their zones are: {1}.".format(
                ", ".join(zones),
                ", ".join(sorted(set("{0} ({1})".format(zone_of(m) or "none", name_of(m)) for m in selected))),
            ),
            param="zones",
        )
    return kept


def select_sources(machinesets, namespace, source=None, all_workers=False, zones=None):
    """The source MachineSets the parameters ask for, or a GpuopsError listing what exists."""
    if source:
        selected = _by_name(machinesets, namespace, source)
    elif all_workers:
        selected = _workers(machinesets, namespace)
    else:
        return []
    if zones:
        selected = _in_zones(selected, zones)
    return sorted(selected, key=name_of)
