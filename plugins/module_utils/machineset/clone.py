# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The clone (what the manual OpenShift procedure does with ``oc get -o json`` and an editor) and the patch that keeps it current.

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
* the managed-by label (``common.MANAGED_BY_LABEL``) and the annotation
  ``gpuops.cluster/source-machineset``: ``state=absent`` deletes only
  MachineSets that carry the label, and a name is never handed to a second source.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.common import MANAGED_BY, MANAGED_BY_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    create_merge_patch,
    dig,
    merge_patch,
    name_of,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.capacity import (
    CAPACITY_ANNOTATIONS,
    kept_on_update,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.model import (
    API_VERSION,
    KIND,
    LABEL_MACHINESET,
    PROVIDERS,
    SOURCE_ANNOTATION,
    detect_provider,
    provider_value,
)

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


def _ensure(obj, path):
    for key in path:
        if not isinstance(obj.get(key), dict):
            obj[key] = {}
        obj = obj[key]
    return obj


def prune(obj):
    """A copy without null values and empty objects (they mean "absent" to the API server).

    A MachineSet from ``oc get -o json`` carries ``creationTimestamp: null`` in the
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


def _clone_metadata(source, name, plan):
    metadata = _clean_metadata(source.get("metadata"))
    metadata["name"] = name
    metadata["labels"] = dict(metadata.get("labels") or {}, **plan["labels"])
    metadata["labels"][MANAGED_BY_LABEL] = MANAGED_BY
    metadata["annotations"] = dict(metadata.get("annotations") or {}, **plan["annotations"])
    metadata["annotations"][SOURCE_ANNOTATION] = name_of(source)
    return metadata


def _set_template_spec(template_spec, plan, field):
    """Node labels (None removes an inherited one), taints, provider_spec and the instance type."""
    node_labels = merge_patch(dig(template_spec, ("metadata", "labels")) or {}, plan["node_labels"])
    if node_labels:
        _ensure(template_spec, ("metadata",))["labels"] = node_labels
    else:
        (template_spec.get("metadata") or {}).pop("labels", None)
    if plan["taints"]:
        template_spec["taints"] = copy.deepcopy(plan["taints"])
    elif plan["taints"] is not None:
        template_spec.pop("taints", None)
    value = _ensure(template_spec, ("providerSpec", "value"))
    if plan["provider_spec"]:
        template_spec["providerSpec"]["value"] = value = merge_patch(value, plan["provider_spec"])
    value[field] = plan["instance_type"]


def clone(source, name, plan, provider=None):
    """The desired GPU MachineSet for one source MachineSet (a new dict)."""
    provider = provider or detect_provider(source)
    spec = copy.deepcopy(source.get("spec") or {})
    spec["replicas"] = plan["replicas"]
    _ensure(spec, ("selector", "matchLabels"))[LABEL_MACHINESET] = name
    _ensure(spec, ("template", "metadata", "labels"))[LABEL_MACHINESET] = name
    _set_template_spec(_ensure(spec, ("template", "spec")), plan, PROVIDERS[provider]["field"])
    return prune(
        {
            "apiVersion": source.get("apiVersion") or API_VERSION,
            "kind": KIND,
            "metadata": _clone_metadata(source, name, plan),
            "spec": spec,
        }
    )


def _instance_type(machineset):
    value = provider_value(machineset)
    return tuple(value.get(info["field"]) for info in PROVIDERS.values())


def update_patch(existing, desired):
    """The merge patch that brings ``existing`` to ``desired`` ({} when nothing differs).

    Fields the server or other controllers add (status, defaults, machine-api
    annotations, autoscaler annotations) are left alone; what this module owns
    is enforced: the node labels map and the taints list exactly, everything
    else in ``desired`` by value, except the scale-from-zero annotations: they
    are rewritten when the instance type changes and filled in when missing,
    and otherwise left to the machine-api controller (``capacity``).
    """
    annotations = dict(
        (k, v) for k, v in (desired["metadata"].get("annotations") or {}).items() if k not in CAPACITY_ANNOTATIONS
    )
    annotations.update(
        kept_on_update(
            dig(existing, ("metadata", "annotations")),
            desired["metadata"].get("annotations") or {},
            _instance_type(existing) != _instance_type(desired),
        )
    )
    wanted = {
        "metadata": {
            "labels": desired["metadata"].get("labels") or {},
            "annotations": annotations,
        },
        "spec": copy.deepcopy(desired["spec"]),
    }
    path = ("spec", "template", "spec", "metadata", "labels")
    current_nodes = dig(existing, path) or {}
    want_nodes = dig(desired, path) or {}
    removed = dict((k, None) for k in current_nodes if k not in want_nodes)
    if removed:
        _ensure(wanted, path[:-1])
        labels = wanted["spec"]["template"]["spec"]["metadata"].get("labels") or {}
        labels.update(removed)
        wanted["spec"]["template"]["spec"]["metadata"]["labels"] = labels
    if dig(existing, ("spec", "template", "spec", "taints")) and not dig(
        desired, ("spec", "template", "spec", "taints")
    ):
        _ensure(wanted, ("spec", "template", "spec"))["taints"] = None
    predicted = merge_patch(existing, wanted)
    return create_merge_patch(existing, predicted), predicted
