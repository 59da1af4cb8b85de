# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Worker MachineSet -> GPU MachineSet, as done by hand in the OpenShift GPU guide.

Pure functions first (provider detection, the clone, names, the merge patch,
instance type checks, Machine readiness), then the AWS offering check (boto3)
and ``run()``, the machineset_clone module.

The clone (what seed 000 does with ``oc get -o json`` and an editor):

* a new name wherever the name appears: ``metadata.name`` and the
  ``machine.openshift.io/cluster-api-machineset`` label in ``spec.selector`` and
  ``spec.template.metadata.labels``;
* the instance type in the provider's own field (AWS ``instanceType``, Azure
  ``vmSize``, GCP ``machineType``);
* ``status`` and server-set metadata dropped, as well as the annotations the
  machine-api controllers derive from the *source* instance type (vCPU,
  memory, GPU count - they would be wrong for the GPU type) and the source's
  autoscaler bookkeeping;
* replicas, node labels (``spec.template.spec.metadata.labels``), taints and
  MachineSet labels / annotations from the module parameters;
* the marker label ``app.kubernetes.io/managed-by=gpuops.cluster`` and the
  annotation ``gpuops.cluster/source-machineset``: ``state=absent`` deletes
  only MachineSets that carry the marker.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import string
import time

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils import catalog
from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    GpuopsError,
    Progress,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import (
    DNS1123_SUBDOMAIN_RE,
    label_key_problem,
    label_value_problem,
    normalize_label_value,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import check_labels as validate_labels

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import diff_objects
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.waiter import Waiter
except ImportError:  # pragma: no cover - reported by common.new_module
    diff_objects = None
    Waiter = None

try:
    import boto3
    import botocore.exceptions

    HAS_BOTO3 = True
except ImportError:
    HAS_BOTO3 = False


API_VERSION = "machine.openshift.io/v1beta1"
KIND = "MachineSet"
DEFAULT_NAMESPACE = "openshift-machine-api"

LABEL_CLUSTER = "machine.openshift.io/cluster-api-cluster"
LABEL_MACHINESET = "machine.openshift.io/cluster-api-machineset"
LABEL_ROLE = "machine.openshift.io/cluster-api-machine-role"
LABEL_TYPE = "machine.openshift.io/cluster-api-machine-type"

MANAGED_LABEL = "app.kubernetes.io/managed-by"
MANAGED_VALUE = "gpuops.cluster"
SOURCE_ANNOTATION = "gpuops.cluster/source-machineset"

DEFAULT_NAME_PATTERN = "{infra}-gpu-{suffix}"
NAME_FIELDS = ("source", "infra", "role", "zone", "region", "suffix", "instance_type")
NAME_MAX = 63  # the name is also the value of the cluster-api-machineset label

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

SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "selfLink",
    "managedFields",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "ownerReferences",
    "finalizers",
    "generateName",
)

# Set by machine-api / autoscaler controllers from the source's instance type or
# for the source's MachineAutoscaler: never carried over to the clone.
DROPPED_ANNOTATIONS = (
    "machine.openshift.io/vCPU",
    "machine.openshift.io/memoryMb",
    "machine.openshift.io/GPU",
    "machine.openshift.io/maxPods",
    "capacity.cluster-autoscaler.kubernetes.io/labels",
    "capacity.cluster-autoscaler.kubernetes.io/taints",
    "autoscaling.openshift.io/machineautoscaler",
    "kubectl.kubernetes.io/last-applied-configuration",
)
DROPPED_ANNOTATION_PREFIXES = ("machine.openshift.io/cluster-api-autoscaler-node-group-",)


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------


def _get(obj, path, default=None):
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return default
        obj = obj[key]
    return obj


def _ensure(obj, path):
    for key in path:
        if not isinstance(obj.get(key), dict):
            obj[key] = {}
        obj = obj[key]
    return obj


def _name(obj):
    return _get(obj, ("metadata", "name"))


def _names(objs):
    names = sorted(_name(o) for o in objs if _name(o))
    return ", ".join(names) if names else "none"


def is_managed(machineset):
    return _get(machineset, ("metadata", "labels", MANAGED_LABEL)) == MANAGED_VALUE


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch: ``patch`` applied to a copy of ``target``."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def prune(obj):
    """A copy without null values and empty objects (they mean "absent" to the API server).

    The seed's ``oc get -o json`` carries ``creationTimestamp: null`` in the
    template; kept in a desired object, a null would read as "delete this
    field" in a merge patch, and an empty map may be dropped by the server,
    making every run look like a change.
    """
    if isinstance(obj, dict):
        result = {}
        for key, value in obj.items():
            value = prune(value)
            if value is None or value == {}:
                continue
            result[key] = value
        return result
    if isinstance(obj, list):
        return [prune(item) for item in obj]
    return obj


def create_merge_patch(source, target):
    """The smallest RFC 7386 merge patch turning ``source`` into ``target``."""
    patch = {}
    for key in source:
        if key not in target:
            patch[key] = None
    for key, value in target.items():
        if key not in source:
            patch[key] = copy.deepcopy(value)
        elif isinstance(value, dict) and isinstance(source[key], dict):
            sub = create_merge_patch(source[key], value)
            if sub:
                patch[key] = sub
        elif value != source[key]:
            patch[key] = copy.deepcopy(value)
    return patch


# --------------------------------------------------------------------------
# Reading MachineSets
# --------------------------------------------------------------------------


def provider_value(machineset):
    return _get(machineset, ("spec", "template", "spec", "providerSpec", "value")) or {}


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
            _name(machineset), kind or "unknown", ", ".join(k for info in PROVIDERS.values() for k in info["kinds"])
        ),
        param="source",
    )


def describe(machineset, provider=None):
    """name, provider, zone, region, instance type, replicas, infra, role of a MachineSet."""
    provider = provider or detect_provider(machineset)
    info = PROVIDERS[provider]
    value = provider_value(machineset)
    template_labels = _get(machineset, ("spec", "template", "metadata", "labels")) or {}
    return {
        "name": _name(machineset),
        "provider": provider,
        "zone": to_text(_get(value, info["zone"]) or "") or None,
        "region": _get(value, info["region"]),
        "instance_type": value.get(info["field"]),
        "replicas": _get(machineset, ("spec", "replicas")),
        "infra": _get(machineset, ("metadata", "labels", LABEL_CLUSTER)) or template_labels.get(LABEL_CLUSTER),
        "role": template_labels.get(LABEL_ROLE),
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
    labels = _get(machineset, ("spec", "template", "metadata", "labels")) or {}
    return labels.get(LABEL_ROLE) == "worker" and not is_managed(machineset) and not has_gpu_type(machineset)


def _zone_of(machineset):
    for info in PROVIDERS.values():
        if provider_value(machineset).get("kind") in info["kinds"]:
            return to_text(_get(provider_value(machineset), info["zone"]) or "")
    return ""


def select_sources(machinesets, namespace, source=None, all_workers=False, zones=None):
    """The source MachineSets the parameters ask for, or a GpuopsError listing what exists."""
    if source:
        found = [m for m in machinesets if _name(m) == source]
        if not found:
            raise GpuopsError(
                "no MachineSet named '{0}' in namespace {1}. Existing MachineSets: {2}.".format(
                    source, namespace, _names(machinesets)
                ),
                param="source",
            )
        if is_managed(found[0]):
            raise GpuopsError(
                "'{0}' was itself created by gpuops.cluster; clone a worker MachineSet instead ({1}).".format(
                    source, _names([m for m in machinesets if is_worker(m)])
                ),
                param="source",
            )
        selected = found
    elif all_workers:
        selected = [m for m in machinesets if is_worker(m)]
        if not selected:
            raise GpuopsError(
                "found no worker MachineSet (template label {0}=worker) in namespace {1}. Existing "
                "MachineSets: {2}. Name one with source.".format(LABEL_ROLE, namespace, _names(machinesets)),
                param="all_workers",
            )
    else:
        return []
    if zones:
        kept = [m for m in selected if _zone_of(m) in zones]
        if not kept:
            raise GpuopsError(
                "none of the source MachineSets is in zone(s) {0}; their zones are: {1}.".format(
                    ", ".join(zones),
                    ", ".join(sorted(set("{0} ({1})".format(_zone_of(m) or "none", _name(m)) for m in selected))),
                ),
                param="zones",
            )
        selected = kept
    return sorted(selected, key=_name)


# --------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------


def name_problem(name):
    if not name:
        return "the name is empty"
    if len(name) > NAME_MAX:
        return "'{0}' is {1} characters long; MachineSet names are also label values, limited to {2}".format(
            name, len(name), NAME_MAX
        )
    if not DNS1123_SUBDOMAIN_RE.match(name) or "." in name:
        return (
            "'{0}' must hold only lowercase letters, digits and '-', starting and ending with a letter or digit".format(
                name
            )
        )
    return None


def pattern_fields(pattern):
    """The placeholders used in ``pattern``; GpuopsError for unknown or malformed ones."""
    try:
        fields = [f for dummy, f, dummy2, dummy3 in string.Formatter().parse(pattern) if f is not None]
    except ValueError as exc:
        raise GpuopsError(
            "'{0}' is not a valid pattern ({1}); use placeholders like {{infra}}-gpu-{{zone}}.".format(pattern, exc),
            param="name_pattern",
        )
    bad = [f for f in fields if f not in NAME_FIELDS]
    if bad:
        raise GpuopsError(
            "unknown placeholder(s) {0} in '{1}'; use {2}.".format(
                ", ".join("{" + b + "}" for b in bad), pattern, ", ".join("{" + f + "}" for f in NAME_FIELDS)
            ),
            param="name_pattern",
        )
    return fields


def name_values(machineset, instance_type):
    """Values of the name_pattern placeholders for one source MachineSet."""
    info = describe(machineset)
    source = info["name"]
    infra = info["infra"] or ""
    role = info["role"] or ""
    zone = info["zone"] or ""
    suffix = zone
    for prefix in ("{0}-{1}-".format(infra, role), "{0}-".format(infra)):
        if infra and source.startswith(prefix) and len(source) > len(prefix):
            suffix = source[len(prefix) :]
            break
    return {
        "source": source,
        "infra": infra,
        "role": role,
        "zone": zone.lower(),
        "region": (info["region"] or "").lower(),
        "suffix": suffix,
        "instance_type": (instance_type or "").lower().replace(".", "-").replace("_", "-"),
    }


def target_name(machineset, pattern, instance_type):
    values = name_values(machineset, instance_type)
    empty = [f for f in pattern_fields(pattern) if not values[f]]
    if empty:
        raise GpuopsError(
            "MachineSet {0} has no value for {1} (infra comes from the {2} label, zone from the providerSpec); "
            "use a pattern without it or give name.".format(
                values["source"], ", ".join("{" + f + "}" for f in empty), LABEL_CLUSTER
            ),
            param="name_pattern",
        )
    return pattern.format(**values)


def target_names(sources, name, pattern, instance_type):
    """[(source, target name)], checked for validity and collisions."""
    if name and len(sources) > 1:
        raise GpuopsError(
            "one name ('{0}') for {1} source MachineSets ({2}); use name_pattern (e.g. '{3}') to get one GPU "
            "MachineSet per source.".format(name, len(sources), _names(sources), DEFAULT_NAME_PATTERN),
            param="name",
        )
    pairs = []
    for source in sources:
        target = name or target_name(source, pattern, instance_type)
        problem = name_problem(target)
        if problem:
            raise GpuopsError(
                "{0}. Choose a shorter or valid name.".format(problem), param="name" if name else "name_pattern"
            )
        pairs.append((source, target))
    seen = {}
    for source, target in pairs:
        if target in seen:
            raise GpuopsError(
                "'{0}' gives the same name '{1}' for {2} and {3}; add {{zone}} or {{suffix}} to the pattern.".format(
                    pattern, target, seen[target], _name(source)
                ),
                param="name_pattern",
            )
        seen[target] = _name(source)
        if target == _name(source):
            raise GpuopsError(
                "the GPU MachineSet name '{0}' equals its source's name; choose another.".format(target),
                param="name" if name else "name_pattern",
            )
    return pairs


# --------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------


def validate_taints(taints):
    """Normalized taints (key, value, effect) or GpuopsError naming the bad one."""
    if taints is None:
        return None
    result, seen = [], set()
    for index, taint in enumerate(taints):
        where = "taints[{0}]".format(index)
        key = taint.get("key")
        problem = label_key_problem(key)
        if problem:
            raise GpuopsError("invalid taint key '{0}': {1}.".format(key, problem), param=where)
        effect = taint.get("effect")
        if effect not in TAINT_EFFECTS:
            raise GpuopsError("effect '{0}' is not one of {1}.".format(effect, ", ".join(TAINT_EFFECTS)), param=where)
        item = {"key": key, "effect": effect}
        value = taint.get("value")
        if value not in (None, ""):
            value = normalize_label_value(value)
            problem = label_value_problem(value)
            if problem:
                raise GpuopsError("invalid value for taint '{0}': {1}.".format(key, problem), param=where)
            item["value"] = value
        if (key, effect) in seen:
            raise GpuopsError("taint {0}:{1} is listed twice.".format(key, effect), param="taints")
        seen.add((key, effect))
        result.append(item)
    return result


def validate_annotations(annotations):
    result = {}
    for key, value in (annotations or {}).items():
        problem = label_key_problem(key)
        if problem:
            raise GpuopsError("invalid annotation key '{0}': {1}.".format(key, problem), param="annotations")
        if value is None:
            raise GpuopsError("annotation '{0}' has no value; give a string.".format(key), param="annotations")
        result[key] = normalize_label_value(value)
    return result


def validate_params(params):
    """Everything that can be checked before talking to the API."""
    state = params.get("state") or "present"
    source = params.get("source")
    all_workers = bool(params.get("all_workers"))
    name = params.get("name")
    instance_type = params.get("instance_type")
    if source is not None and not source.strip():
        raise GpuopsError("is empty; give the name of a worker MachineSet.", param="source")
    if state == "present":
        if not source and not all_workers:
            raise GpuopsError("give source (a MachineSet name) or all_workers=true.", param="source")
        if not instance_type or not instance_type.strip():
            raise GpuopsError(
                "is required with state=present (e.g. g4dn.xlarge, Standard_NC4as_T4_v3, a2-highgpu-1g).",
                param="instance_type",
            )
    elif not source and not all_workers and not name:
        raise GpuopsError(
            "state=absent needs name, source or all_workers to know which GPU MachineSets to remove.", param="name"
        )
    if name is not None:
        problem = name_problem(name)
        if problem:
            raise GpuopsError("{0}.".format(problem), param="name")
    pattern = params.get("name_pattern") or DEFAULT_NAME_PATTERN
    pattern_fields(pattern)
    replicas = params.get("replicas")
    if replicas is None or replicas < 0:
        raise GpuopsError("must be 0 or more, got {0}.".format(replicas), param="replicas")
    labels = validate_labels(params.get("labels"), "labels", allow_remove=False)
    if labels.get(MANAGED_LABEL, MANAGED_VALUE) != MANAGED_VALUE:
        raise GpuopsError(
            "'{0}' marks the MachineSets this module owns; do not set it.".format(MANAGED_LABEL), param="labels"
        )
    node_labels = validate_labels(params.get("node_labels"), "node_labels", allow_remove=True)
    annotations = validate_annotations(params.get("annotations"))
    taints = validate_taints(params.get("taints"))
    provider_spec = params.get("provider_spec") or {}
    for provider, info in PROVIDERS.items():
        if info["field"] in provider_spec:
            raise GpuopsError(
                "sets {0}; give the instance type in instance_type instead.".format(info["field"]),
                param="provider_spec",
            )
    sleep = params.get("wait_sleep")
    timeout = params.get("wait_timeout")
    if sleep is None or sleep < 1:
        raise GpuopsError("must be at least 1 second, got {0}.".format(sleep), param="wait_sleep")
    if params.get("wait") and (timeout is None or timeout < max(sleep, 10)):
        raise GpuopsError(
            "{0}s is too small: a cloud machine takes minutes to boot and join; give at least {1}s "
            "(900 is typical on AWS).".format(timeout, max(sleep, 10)),
            param="wait_timeout",
        )
    zones = params.get("zones") or None
    return {
        "state": state,
        "namespace": params.get("namespace") or DEFAULT_NAMESPACE,
        "source": source,
        "all_workers": all_workers,
        "zones": zones,
        "name": name,
        "name_pattern": pattern,
        "instance_type": instance_type.strip() if instance_type else None,
        "replicas": replicas,
        "labels": labels,
        "node_labels": node_labels,
        "annotations": annotations,
        "taints": taints,
        "provider_spec": provider_spec,
        "allow_unknown": bool(params.get("allow_unknown_instance_type")),
        "validate": bool(params.get("validate_instance_type")),
        "wait": bool(params.get("wait")),
        "wait_timeout": timeout,
        "wait_sleep": sleep,
    }


# --------------------------------------------------------------------------
# Instance types
# --------------------------------------------------------------------------


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
    count = 0
    for gpu in gpus:
        if gpu.get("type") not in catalog.GCP_ATTACHABLE_GPU_TYPES:
            raise GpuopsError(
                "gpus type '{0}' is not one of {1}.".format(
                    gpu.get("type"), ", ".join(catalog.GCP_ATTACHABLE_GPU_TYPES)
                ),
                param="provider_spec",
            )
        try:
            number = int(gpu.get("count", 1))
        except (TypeError, ValueError):
            number = 0
        if number < 1:
            raise GpuopsError("gpus count must be 1 or more.", param="provider_spec")
        count += number
    if value.get("onHostMaintenance") != "Terminate":
        raise GpuopsError(
            "GCP instances with attached GPUs need onHostMaintenance: Terminate in provider_spec.",
            param="provider_spec",
        )
    return {"gpu_count": count, "gpu_model": gpus[0].get("type"), "source": "gcp-attached"}


def check_instance_type(provider, instance_type, value, allow_unknown=False, validated=None):
    """GPU facts for the instance type, or GpuopsError when it has no (known) GPU.

    Order: GPUs attached on GCP N1; the cloud API answer when
    validate_instance_type ran (it refused types without NVIDIA GPUs already);
    the catalog (known GPU types pass, known types without GPU are refused);
    else unknown types are refused unless allow_unknown_instance_type.
    """
    if provider == "gcp":
        attached = gcp_attached_gpus(value, instance_type)
        if attached:
            return dict(attached, instance_type=instance_type)
    if validated is not None:
        return validated
    entry = catalog.lookup(provider, instance_type)
    if entry is not None:
        if entry["gpu_count"] > 0:
            return dict(entry, source="catalog")
        raise GpuopsError(
            "'{0}' has no GPU ({1} instance type without GPUs). Use a GPU type such as {2}.".format(
                instance_type,
                provider.upper() if provider != "azure" else "Azure",
                ", ".join(catalog.suggest(provider, instance_type)),
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


def aws_check(ec2, instance_type, zones):
    """Ask EC2 whether ``instance_type`` exists, has NVIDIA GPUs and is offered in ``zones``."""
    try:
        found = ec2.describe_instance_types(InstanceTypes=[instance_type]).get("InstanceTypes") or []
    except botocore.exceptions.ClientError as exc:
        code = exc.response.get("Error", {}).get("Code")
        if code in ("InvalidInstanceType", "InvalidParameterValue"):
            raise GpuopsError(
                "AWS reports that instance type '{0}' does not exist in region {1}. Known GPU types: "
                "{2}.".format(instance_type, ec2.meta.region_name, ", ".join(catalog.suggest("aws", instance_type))),
                param="instance_type",
            )
        raise
    if not found:
        raise GpuopsError(
            "AWS reports that instance type '{0}' does not exist in region {1}.".format(
                instance_type, ec2.meta.region_name
            ),
            param="instance_type",
        )
    info = found[0]
    gpus = [g for g in (info.get("GpuInfo") or {}).get("Gpus") or [] if g.get("Manufacturer") == "NVIDIA"]
    if not gpus:
        raise GpuopsError(
            "AWS reports no NVIDIA GPU on '{0}'. Use a GPU type such as {1}.".format(
                instance_type, ", ".join(catalog.suggest("aws", instance_type))
            ),
            param="instance_type",
        )
    offered = set()
    paginator = ec2.get_paginator("describe_instance_type_offerings")
    for page in paginator.paginate(
        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": [instance_type]}]
    ):
        for offer in page.get("InstanceTypeOfferings") or []:
            offered.add(offer.get("Location"))
    missing = sorted(z for z in set(zones) if z not in offered)
    if missing:
        raise GpuopsError(
            "'{0}' is not offered in availability zone(s) {1} of region {2}; it is offered in: {3}. Restrict the "
            "sources with zones, or choose another instance_type.".format(
                instance_type, ", ".join(missing), ec2.meta.region_name, ", ".join(sorted(offered)) or "no zone"
            ),
            param="instance_type",
        )
    return {
        "instance_type": instance_type,
        "gpu_count": sum(int(g.get("Count") or 0) for g in gpus),
        "gpu_model": gpus[0].get("Name"),
        "gpu_memory_mib": (gpus[0].get("MemoryInfo") or {}).get("SizeInMiB"),
        "vcpu": (info.get("VCpuInfo") or {}).get("DefaultVCpus"),
        "memory_mib": (info.get("MemoryInfo") or {}).get("SizeInMiB"),
        "offered_zones": sorted(offered),
        "source": "aws",
    }


def aws_validate(plan, region_zones, session_factory=None):
    """Run aws_check per region; boto3 problems become messages naming the parameter."""
    if not HAS_BOTO3:
        raise GpuopsError(
            "needs the boto3 Python library on the host running the module (pip install boto3).",
            param="validate_instance_type",
        )
    session_factory = session_factory or (lambda: boto3.session.Session(profile_name=plan.get("aws_profile")))
    result = None
    try:
        session = session_factory()
        for region in sorted(region_zones):
            ec2 = session.client("ec2", region_name=region, endpoint_url=plan.get("aws_endpoint_url"))
            result = aws_check(ec2, plan["instance_type"], region_zones[region])
    except botocore.exceptions.ProfileNotFound as exc:
        raise GpuopsError("{0}; name a profile from ~/.aws/config.".format(exc), param="aws_profile")
    except botocore.exceptions.NoCredentialsError:
        raise GpuopsError(
            "found no AWS credentials to check the instance type; set AWS_ACCESS_KEY_ID / "
            "AWS_SECRET_ACCESS_KEY or aws_profile, or set validate_instance_type=false.",
            param="validate_instance_type",
        )
    except botocore.exceptions.EndpointConnectionError as exc:
        raise GpuopsError(
            "cannot reach the EC2 API ({0}); check aws_endpoint_url / network, or set "
            "validate_instance_type=false.".format(exc),
            param="validate_instance_type",
        )
    except botocore.exceptions.ClientError as exc:
        raise GpuopsError(
            "the EC2 API refused the instance type check: {0}. Grant ec2:DescribeInstanceTypes and "
            "ec2:DescribeInstanceTypeOfferings, or set validate_instance_type=false.".format(exc),
            param="validate_instance_type",
        )
    return result


# --------------------------------------------------------------------------
# The clone
# --------------------------------------------------------------------------


def _clean_metadata(metadata):
    metadata = copy.deepcopy(metadata or {})
    for key in SERVER_METADATA:
        metadata.pop(key, None)
    annotations = metadata.get("annotations") or {}
    kept = dict(
        (k, v)
        for k, v in annotations.items()
        if k not in DROPPED_ANNOTATIONS and not any(k.startswith(p) for p in DROPPED_ANNOTATION_PREFIXES)
    )
    if kept:
        metadata["annotations"] = kept
    else:
        metadata.pop("annotations", None)
    return metadata


def clone(source, name, plan, provider=None):
    """The desired GPU MachineSet for one source MachineSet (a new dict)."""
    provider = provider or detect_provider(source)
    field = PROVIDERS[provider]["field"]
    metadata = _clean_metadata(source.get("metadata"))
    metadata["name"] = name
    labels = dict(metadata.get("labels") or {})
    labels.update(plan["labels"])
    labels[MANAGED_LABEL] = MANAGED_VALUE
    metadata["labels"] = labels
    annotations = dict(metadata.get("annotations") or {})
    annotations.update(plan["annotations"])
    annotations[SOURCE_ANNOTATION] = _name(source)
    metadata["annotations"] = annotations

    spec = copy.deepcopy(source.get("spec") or {})
    spec["replicas"] = plan["replicas"]
    _ensure(spec, ("selector", "matchLabels"))[LABEL_MACHINESET] = name
    _ensure(spec, ("template", "metadata", "labels"))[LABEL_MACHINESET] = name
    template_spec = _ensure(spec, ("template", "spec"))
    node_labels = dict(_get(template_spec, ("metadata", "labels")) or {})
    for key, value in plan["node_labels"].items():
        if value is None:
            node_labels.pop(key, None)
        else:
            node_labels[key] = value
    if node_labels:
        _ensure(template_spec, ("metadata",))["labels"] = node_labels
    else:
        (template_spec.get("metadata") or {}).pop("labels", None)
    if plan["taints"] is not None:
        if plan["taints"]:
            template_spec["taints"] = copy.deepcopy(plan["taints"])
        else:
            template_spec.pop("taints", None)
    value = _ensure(template_spec, ("providerSpec", "value"))
    if plan["provider_spec"]:
        template_spec["providerSpec"]["value"] = value = merge_patch(value, plan["provider_spec"])
    value[field] = plan["instance_type"]

    return prune(
        {"apiVersion": source.get("apiVersion") or API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}
    )


def update_patch(existing, desired):
    """The merge patch that brings ``existing`` to ``desired`` ({} when nothing differs).

    Fields the server or other controllers add (status, defaults, machine-api
    annotations, autoscaler annotations) are left alone; what this module owns
    is enforced: the node labels map and the taints list exactly, everything
    else in ``desired`` by value.
    """
    wanted = {
        "metadata": {
            "labels": desired["metadata"].get("labels") or {},
            "annotations": desired["metadata"].get("annotations") or {},
        },
        "spec": copy.deepcopy(desired["spec"]),
    }
    path = ("spec", "template", "spec", "metadata", "labels")
    current_nodes = _get(existing, path) or {}
    want_nodes = _get(desired, path) or {}
    removed = dict((k, None) for k in current_nodes if k not in want_nodes)
    if removed:
        _ensure(wanted, path[:-1])
        labels = wanted["spec"]["template"]["spec"]["metadata"].get("labels") or {}
        labels.update(removed)
        wanted["spec"]["template"]["spec"]["metadata"]["labels"] = labels
    if _get(existing, ("spec", "template", "spec", "taints")) and not _get(
        desired, ("spec", "template", "spec", "taints")
    ):
        _ensure(wanted, ("spec", "template", "spec"))["taints"] = None
    predicted = merge_patch(existing, wanted)
    return create_merge_patch(existing, predicted), predicted


def for_diff(obj):
    """An object without the noise (managedFields) for --diff output."""
    obj = copy.deepcopy(obj or {})
    (obj.get("metadata") or {}).pop("managedFields", None)
    return obj


# --------------------------------------------------------------------------
# Waiting for Machines and Nodes
# --------------------------------------------------------------------------


def machines_status(want, machines, node_ready):
    """Where the Machines of the GPU MachineSets stand.

    ``want``: {MachineSet name: replicas}; ``machines``: Machine dicts;
    ``node_ready``: {node name: bool}. Returns (done, failed, message) where
    failed lists (machine, reason) for Machines in phase Failed.
    """
    done, failed, parts = True, [], []
    for ms in sorted(want):
        mine = [
            m
            for m in machines
            if _get(m, ("metadata", "labels", LABEL_MACHINESET)) == ms
            and not _get(m, ("metadata", "deletionTimestamp"))
        ]
        running = [m for m in mine if _get(m, ("status", "phase")) == "Running"]
        ready = [m for m in running if node_ready.get(_get(m, ("status", "nodeRef", "name")))]
        for m in mine:
            if _get(m, ("status", "phase")) == "Failed":
                failed.append(
                    (
                        _name(m),
                        _get(m, ("status", "errorMessage")) or _get(m, ("status", "errorReason")) or "phase Failed",
                    )
                )
        replicas = want[ms]
        ok = len(mine) == replicas and len(ready) == replicas
        done = done and ok
        parts.append(
            "{0}: {1}/{2} Machines Running, {3}/{2} Nodes Ready".format(ms, len(running), replicas, len(ready))
        )
    return done, failed, "; ".join(parts)


def machines_gone(names, machines):
    left = [m for m in machines if _get(m, ("metadata", "labels", LABEL_MACHINESET)) in names]
    return not left, "{0} Machines left ({1})".format(len(left), _names(left))


def _selector(names):
    return "{0} in ({1})".format(LABEL_MACHINESET, ",".join(sorted(names)))


def wait_machines(client, svc, namespace, want, timeout, sleep, progress, absent=False):
    machine_res = svc.find_resource("Machine", API_VERSION, fail=True)
    node_res = svc.find_resource("Node", "v1", fail=True)
    state = {"done": False, "failed": [], "message": ""}

    def node_ready(name):
        try:
            node = client.get(node_res, name=name).to_dict()
        except Exception as exc:
            if getattr(exc, "status", None) == 404:
                return False
            raise
        for cond in (node.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "Ready":
                return cond.get("status") == "True"
        return False

    def predicate(response):
        machines = (response.to_dict().get("items") or []) if response is not None else []
        if absent:
            done, message = machines_gone(set(want), machines)
            failed = []
        else:
            refs = set(_get(m, ("status", "nodeRef", "name")) for m in machines)
            ready = dict((n, node_ready(n)) for n in refs if n)
            done, failed, message = machines_status(want, machines, ready)
        state.update(done=done, failed=failed, message=message)
        progress(message)
        return done or bool(failed)

    waiter = Waiter(client, machine_res, predicate)
    dummy, dummy2, elapsed = waiter.wait(
        timeout=timeout, sleep=sleep, namespace=namespace, label_selectors=[_selector(want)]
    )
    if state["failed"]:
        raise GpuopsError(
            "Machine(s) failed: {0}. Check the instance type quota / capacity in the zone, then delete the failed "
            "Machines.".format("; ".join("{0}: {1}".format(m, r) for m, r in state["failed"])),
            param="instance_type",
            progress=progress.events,
        )
    if not state["done"]:
        raise GpuopsError(
            "timed out after {0}s waiting for {1}: {2}. Raise wait_timeout or look at "
            "'oc get machines -n {3}'.".format(
                timeout,
                "Machines to be deleted" if absent else "Machines Running and Nodes Ready",
                state["message"],
                namespace,
            ),
            param="wait_timeout",
            progress=progress.events,
        )
    return elapsed


# --------------------------------------------------------------------------
# The module
# --------------------------------------------------------------------------


def _list_machinesets(client, resource, namespace):
    items = client.get(resource, namespace=namespace).to_dict().get("items") or []
    for item in items:
        item.setdefault("apiVersion", API_VERSION)
        item.setdefault("kind", KIND)
    return items


def _item(obj, source_name, action, gpu=None):
    info = describe(obj) if obj else {}
    return {
        "name": _name(obj),
        "source": source_name,
        "provider": info.get("provider"),
        "zone": info.get("zone"),
        "region": info.get("region"),
        "instance_type": info.get("instance_type"),
        "replicas": info.get("replicas"),
        "action": action,
        "changed": action in ("created", "updated", "deleted"),
        "gpu": gpu or {},
    }


def _plan_present(plan, sources, existing_by_name, client_params):
    pairs = target_names(sources, plan["name"], plan["name_pattern"], plan["instance_type"])
    for dummy, target in pairs:
        current = existing_by_name.get(target)
        if current is not None and not is_managed(current):
            raise GpuopsError(
                "a MachineSet named '{0}' already exists and was not created by gpuops.cluster (no {1}={2} label); "
                "choose another name, or add that label to let this module manage it.".format(
                    target, MANAGED_LABEL, MANAGED_VALUE
                ),
                param="name" if plan["name"] else "name_pattern",
            )
    providers = {}
    region_zones = {}
    for source, dummy in pairs:
        provider = detect_provider(source)
        providers[_name(source)] = provider
        info = describe(source, provider)
        if provider == "aws":
            region_zones.setdefault(info["region"] or "", set()).add(info["zone"])
    validated = None
    if plan["validate"]:
        other = sorted(set(p for p in providers.values() if p != "aws"))
        if other:
            raise GpuopsError(
                "checks instance types through the AWS API only; the source MachineSets are on {0}. "
                "Set validate_instance_type=false.".format(", ".join(other)),
                param="validate_instance_type",
            )
        validated = aws_validate(dict(plan, **client_params), region_zones)
    desired = []
    for source, target in pairs:
        provider = providers[_name(source)]
        want = clone(source, target, plan, provider)
        value = provider_value(want)
        gpu = check_instance_type(provider, plan["instance_type"], value, plan["allow_unknown"], validated)
        desired.append((source, want, gpu))
    return desired


def run(module, client, svc):
    """machineset_clone: create / update / delete GPU MachineSets cloned from worker MachineSets."""
    started = time.monotonic()
    plan = validate_params(module.params)
    namespace = plan["namespace"]
    resource = svc.find_resource(KIND, API_VERSION)
    if resource is None:
        raise GpuopsError(
            "this cluster does not serve {0} {1} (the OpenShift Machine API), so there is nothing to clone. "
            "machineset_clone needs an OpenShift 4 cluster with machine-api (IPI on AWS, Azure or GCP); on other "
            "clusters add GPU nodes with the tool that provisions your nodes.".format(API_VERSION, KIND),
        )
    machinesets = _list_machinesets(client, resource, namespace)
    by_name = dict((_name(m), m) for m in machinesets)
    sources = select_sources(machinesets, namespace, plan["source"], plan["all_workers"], plan["zones"])
    extra = {"aws_profile": module.params.get("aws_profile"), "aws_endpoint_url": module.params.get("aws_endpoint_url")}

    items, diffs_before, diffs_after, warnings = [], {}, {}, []
    writes = []  # (action, name, body)
    if plan["state"] == "present":
        for source, want, gpu in _plan_present(plan, sources, by_name, extra):
            name = _name(want)
            if gpu.get("source") == "unchecked" and not warnings:
                warnings.append(
                    "instance type {0} is not in the GPU catalog and was not checked "
                    "(allow_unknown_instance_type=true); make sure it has NVIDIA GPUs".format(plan["instance_type"])
                )
            current = by_name.get(name)
            if current is None:
                writes.append(("create", name, want))
                items.append(_item(want, _name(source), "created", gpu))
                diffs_before[name], diffs_after[name] = {}, for_diff(want)
                continue
            patch, predicted = update_patch(current, want)
            if patch:
                writes.append(("patch", name, patch))
                items.append(_item(predicted, _name(source), "updated", gpu))
                dummy, diff = diff_objects(for_diff(current), for_diff(predicted))
                diffs_before[name], diffs_after[name] = diff.get("before", {}), diff.get("after", {})
            else:
                items.append(_item(current, _name(source), "unchanged", gpu))
    else:
        if sources:
            pairs = target_names(sources, plan["name"], plan["name_pattern"], plan["instance_type"])
            targets = [(t, _name(s)) for s, t in pairs]
        else:
            targets = [(plan["name"], None)]
        for name, source_name in targets:
            current = by_name.get(name)
            if current is None:
                items.append({"name": name, "source": source_name, "action": "absent", "changed": False})
            elif not is_managed(current):
                warnings.append(
                    "left MachineSet {0} alone: it was not created by gpuops.cluster (no {1}={2} "
                    "label)".format(name, MANAGED_LABEL, MANAGED_VALUE)
                )
                items.append(dict(_item(current, source_name, "skipped")))
            else:
                writes.append(("delete", name, None))
                items.append(
                    _item(
                        current, source_name or _get(current, ("metadata", "annotations", SOURCE_ANNOTATION)), "deleted"
                    )
                )
                diffs_before[name], diffs_after[name] = for_diff(current), {}

    result = {"changed": bool(writes), "namespace": namespace}
    if not module.check_mode:
        objects = {}
        for action, name, body in writes:
            if action == "create":
                objects[name] = svc.create(resource, body)[0]
            elif action == "patch":
                objects[name] = svc.patch_resource(resource, body, name, namespace, merge_type="merge")[0]
            else:
                svc.delete(resource, {"metadata": {"name": name, "namespace": namespace}}, by_name[name])
        for item in items:
            if item["name"] in objects:
                item["replicas"] = _get(objects[item["name"]], ("spec", "replicas"))
        if plan["wait"] and items:
            progress = Progress(module)
            if plan["state"] == "present":
                want = dict((i["name"], i["replicas"] or 0) for i in items)
                wait_machines(client, svc, namespace, want, plan["wait_timeout"], plan["wait_sleep"], progress)
            else:
                gone = [i["name"] for i in items if i["action"] in ("deleted", "absent")]
                if gone:
                    wait_machines(
                        client,
                        svc,
                        namespace,
                        dict((n, 0) for n in gone),
                        plan["wait_timeout"],
                        plan["wait_sleep"],
                        progress,
                        absent=True,
                    )
            result["progress"] = progress.events
    if module._diff:
        result["diff"] = {"before": diffs_before, "after": diffs_after}
    result["machinesets"] = items
    result["duration"] = round(time.monotonic() - started, 3)
    for warning in warnings:
        module.warn(warning)
    return result
