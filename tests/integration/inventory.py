# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""An inventory of every kind the collection touches, to prove teardown returns the cluster to what it was.

Taken before site.yml and after teardown.yml; the two must be equal. What is left out, and why:

* Pods, Events, Leases, Endpoints/EndpointSlices: controllers' own churn (a deleted Namespace takes its
  pods with it, and the Namespaces are compared);
* ``rendered-*`` MachineConfigs: the MCO keeps old rendered configs on a real cluster too; the pools'
  current rendered config IS compared, so removing the entitlement must bring the same hash back;
* object metadata other than names, labels, annotations we set (``gpuops.cluster``), taints and spec
  fields we set: resourceVersions and timestamps change whenever anything writes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

# (apiVersion, kind): every kind a role of the collection creates or changes.
KINDS = (
    ("v1", "Namespace"),
    ("v1", "ServiceAccount"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("v1", "ResourceQuota"),
    ("v1", "LimitRange"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "Deployment"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("node.k8s.io/v1", "RuntimeClass"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
    ("machine.openshift.io/v1beta1", "MachineSet"),
    ("machine.openshift.io/v1beta1", "Machine"),
    ("machineconfiguration.openshift.io/v1", "MachineConfig"),
    ("autoscaling.openshift.io/v1beta1", "MachineAutoscaler"),
    ("autoscaling.openshift.io/v1", "ClusterAutoscaler"),
    ("operators.coreos.com/v1", "OperatorGroup"),
    ("operators.coreos.com/v1alpha1", "Subscription"),
    ("operators.coreos.com/v1alpha1", "ClusterServiceVersion"),
    ("operators.coreos.com/v1alpha1", "InstallPlan"),
    ("nfd.openshift.io/v1", "NodeFeatureDiscovery"),
    ("nfd.k8s-sigs.io/v1alpha1", "NodeFeatureRule"),
    ("image.openshift.io/v1", "ImageStream"),
    ("build.openshift.io/v1", "BuildConfig"),
    ("build.openshift.io/v1", "Build"),
)


def _key(obj):
    meta = obj["metadata"]
    return "{0}/{1}".format(meta.get("namespace") or "", meta["name"])


def _ours(mapping):
    return dict((k, v) for k, v in (mapping or {}).items() if "gpuops" in k)


def _summary(kind, obj):
    meta = obj["metadata"]
    out = {"labels": dict(meta.get("labels") or {}), "annotations": _ours(meta.get("annotations"))}
    spec = obj.get("spec") or {}
    if kind == "Node":
        out["taints"] = sorted((t.get("key"), t.get("value"), t.get("effect")) for t in spec.get("taints") or [])
        out["unschedulable"] = bool(spec.get("unschedulable"))
        status = obj.get("status") or {}
        out["gpu_resources"] = dict(
            (k, v) for k, v in (status.get("allocatable") or {}).items() if k.startswith("nvidia.com/")
        )
    elif kind == "MachineSet":
        out["replicas"] = spec.get("replicas")
        out["template_taints"] = (((spec.get("template") or {}).get("spec") or {}).get("taints")) or []
    elif kind == "MachineConfigPool":
        out["rendered"] = ((spec.get("configuration") or {}).get("name")) or ""
        out["maxUnavailable"] = spec.get("maxUnavailable")
    elif kind in ("ConfigMap", "Secret"):
        out["keys"] = sorted((obj.get("data") or {}).keys())
    return out


def served_items(dyn, api_version, kind, namespace=None):
    """The objects of a kind, or None when the cluster does not serve it. A 404 on the list counts as not served:
    discovery may come from the client's cache file (per API server address, shared by every process), which still
    lists a CRD that a test, or the cluster reset, has deleted since."""
    try:
        resource = dyn.resources.get(api_version=api_version, kind=kind)
        return resource.get(namespace=namespace).to_dict().get("items") or []
    except (ResourceNotFoundError, NotFoundError):
        return None


def inventory(api_client):
    """{kind: {namespace/name: summary}} of every kind the collection touches that the cluster serves."""
    dyn = DynamicClient(api_client)
    kinds = list(KINDS) + [("v1", "Node"), ("machineconfiguration.openshift.io/v1", "MachineConfigPool")]
    out = {}
    for api_version, kind in kinds:
        items = served_items(dyn, api_version, kind)
        if items is None:
            continue
        entries = {}
        for obj in items:
            if kind == "MachineConfig" and obj["metadata"]["name"].startswith("rendered-"):
                continue
            entries[_key(obj)] = _summary(kind, obj)
        out[kind] = entries
    return out


def differences(before, after):
    """Human-readable lines: what is in one inventory and not in the other, or differs."""
    lines = []
    for kind in sorted(set(before) | set(after)):
        a, b = before.get(kind, {}), after.get(kind, {})
        for key in sorted(set(a) | set(b)):
            if key not in b:
                lines.append("{0} {1}: gone".format(kind, key))
            elif key not in a:
                lines.append("{0} {1}: left behind".format(kind, key))
            elif a[key] != b[key]:
                changed = dict((f, (a[key].get(f), b[key].get(f))) for f in a[key] if a[key].get(f) != b[key].get(f))
                lines.append("{0} {1}: changed {2}".format(kind, key, changed))
    return lines
