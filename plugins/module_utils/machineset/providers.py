# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Provider-spec rules: does the instance type have NVIDIA GPUs, and what GCP needs to run them.

GCP (openshift/api GCPMachineProviderSpec): N1 machine types get GPUs only
attached through ``gpus`` (a list of ``{count, type}``; the GCP API calls the
same thing ``guestAccelerators``); A2 / A3 / G2 types bring their own. A VM
with GPUs cannot be live-migrated, so ``onHostMaintenance`` must be
``Terminate`` (the machine-api webhook rejects ``Migrate`` for them). The
clone inherits the source's ``Migrate``: it is set to ``Terminate`` and the
result says so; a ``Migrate`` asked for in ``provider_spec`` is refused.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils import catalog
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError

GCP_HOST_MAINTENANCE = ("Migrate", "Terminate")
GPUS_EXAMPLE = "gpus: [{count: 1, type: nvidia-tesla-t4}]"


def _attachable():
    return ", ".join(catalog.GCP_ATTACHABLE_GPU_TYPES)


def _gpu_count(gpu):
    """The count of one gpus[] entry (1 when left out); GpuopsError for a bad type or count."""
    if not isinstance(gpu, dict) or gpu.get("type") not in catalog.GCP_ATTACHABLE_GPU_TYPES:
        raise GpuopsError(
            "gpus type '{0}' is not one of {1}.".format(
                gpu.get("type") if isinstance(gpu, dict) else gpu, _attachable()
            ),
            param="provider_spec",
        )
    try:
        number = int(gpu.get("count", 1))
    except (TypeError, ValueError):
        number = 0
    if number < 1:
        raise GpuopsError("gpus count must be 1 or more.", param="provider_spec")
    return number


def check_provider_spec(provider_spec):
    """GCP field names and values in the provider_spec parameter, before any source is read."""
    if "guestAccelerators" in provider_spec:
        raise GpuopsError(
            "sets guestAccelerators, the GCP API's name; the OpenShift GCPMachineProviderSpec calls it gpus: give "
            "provider_spec.{0} (types: {1}) with an N1 machine type, or an A2 / A3 / G2 type that comes with "
            "its GPUs.".format(GPUS_EXAMPLE, _attachable()),
            param="provider_spec",
        )
    gpus = provider_spec.get("gpus")
    if gpus is not None:
        if not isinstance(gpus, list) or not gpus:
            raise GpuopsError("gpus must be a non-empty list like {0}.".format(GPUS_EXAMPLE), param="provider_spec")
        for gpu in gpus:
            _gpu_count(gpu)
    maintenance = provider_spec.get("onHostMaintenance")
    if maintenance is not None and maintenance not in GCP_HOST_MAINTENANCE:
        raise GpuopsError(
            "onHostMaintenance '{0}' is not one of {1}.".format(maintenance, ", ".join(GCP_HOST_MAINTENANCE)),
            param="provider_spec",
        )


def gcp_gets_gpus(machine_type, value):
    """True when the GCP VM will have GPUs: an A2 / A3 / G2 type, or gpus attached."""
    return bool(value.get("gpus")) or any((machine_type or "").startswith(f) for f in catalog.GCP_BUNDLED_GPU_FAMILIES)


def gcp_host_maintenance(value, machine_type, provider_spec):
    """Set ``onHostMaintenance: Terminate`` on a GCP value that gets GPUs; notes for the result.

    The clone inherits the source's setting (a worker usually has Migrate or
    none, meaning Migrate): it is changed and said. ``Migrate`` asked for in
    provider_spec is refused: the VM could never be created.
    """
    if not gcp_gets_gpus(machine_type, value):
        return []
    if provider_spec.get("onHostMaintenance") == "Migrate":
        raise GpuopsError(
            "onHostMaintenance: Migrate cannot be used with '{0}'{1}: GCP cannot live-migrate a VM with GPUs and the "
            "machine-api webhook rejects Migrate for it. Remove it (the module sets Terminate) or set "
            "Terminate.".format(machine_type, " with gpus" if value.get("gpus") else ""),
            param="provider_spec",
        )
    current = value.get("onHostMaintenance")
    if current == "Terminate":
        return []
    value["onHostMaintenance"] = "Terminate"
    return [
        "onHostMaintenance set to Terminate (the source has {0}): GCP VMs with GPUs cannot be live-migrated and "
        "the machine-api webhook rejects Migrate for them".format(current or "none, i.e. Migrate")
    ]


def prepare_value(provider, value, plan):
    """Provider-specific changes to the clone's providerSpec value (in place); notes for the result."""
    if provider == "gcp":
        return gcp_host_maintenance(value, plan["instance_type"], plan["provider_spec"])
    return []


def gcp_attached_gpus(value, machine_type):
    """GPUs attached through GCPMachineProviderSpec.gpus; GpuopsError when misconfigured."""
    gpus = value.get("gpus") or []
    if not gpus:
        return None
    if not any(machine_type.startswith(f) for f in catalog.GCP_ATTACHABLE_FAMILIES):
        raise GpuopsError(
            "provider_spec.gpus attaches GPUs, but only N1 machine types take attached GPUs on GCP ('{0}' is not "
            "N1). Use an A2/A3/G2 machine type without gpus, or an n1-* type.".format(machine_type),
            param="provider_spec",
        )
    count = sum(_gpu_count(gpu) for gpu in gpus)
    if value.get("onHostMaintenance") != "Terminate":
        raise GpuopsError(
            "GCP instances with attached GPUs need onHostMaintenance: Terminate in provider_spec.",
            param="provider_spec",
        )
    return {"gpu_count": count, "gpu_model": gpus[0].get("type"), "source": "gcp-attached"}


def _gcp_gpus(instance_type, value):
    """Facts of attached GPUs, None for other types; N1 without gpus is refused with how to attach them."""
    attached = gcp_attached_gpus(value, instance_type)
    if attached:
        return dict(attached, instance_type=instance_type)
    if any(instance_type.startswith(f) for f in catalog.GCP_ATTACHABLE_FAMILIES):
        raise GpuopsError(
            "'{0}' is an N1 machine type: N1 VMs have GPUs only when they are attached. Give provider_spec.{1} "
            "(types: {2}), or use a type that comes with its GPUs (A2 / A3 / G2, e.g. {3}).".format(
                instance_type, GPUS_EXAMPLE, _attachable(), ", ".join(catalog.gpu_instance_types("gcp")[:3])
            ),
            param="provider_spec",
        )
    return None


def _provider_label(provider):
    return "Azure" if provider == "azure" else provider.upper()


def check_instance_type(provider, instance_type, value, allow_unknown=False, validated=None):
    """GPU facts for the instance type, or GpuopsError when it has no (known) GPU.

    Order: GPUs attached on GCP N1 (an N1 type without them is refused); the
    cloud API answer when validate_instance_type ran (it refused types without
    NVIDIA GPUs already); the catalog (known GPU types pass, known types
    without GPU are refused); else unknown types are refused unless
    allow_unknown_instance_type.
    """
    if provider == "gcp":
        attached = _gcp_gpus(instance_type, value)
        if attached:
            return attached
    if validated is not None:
        return validated
    entry = catalog.lookup(provider, instance_type)
    if entry is not None:
        if entry["gpu_count"] > 0:
            return dict(entry, source="catalog")
        raise GpuopsError(
            "'{0}' has no GPU ({1} instance type without GPUs). Use a GPU type such as {2}.".format(
                instance_type, _provider_label(provider), ", ".join(catalog.suggest(provider, instance_type))
            ),
            param="instance_type",
        )
    if allow_unknown:
        return {"instance_type": instance_type, "gpu_count": None, "gpu_model": None, "source": "unchecked"}
    raise GpuopsError(
        "'{0}' is not a known {1} GPU instance type (known: {2}, ...). Check the spelling, set "
        "validate_instance_type=true to ask the AWS API, or allow_unknown_instance_type=true to use it "
        "unchecked.".format(instance_type, provider, ", ".join(catalog.suggest(provider, instance_type))),
        param="instance_type",
    )
