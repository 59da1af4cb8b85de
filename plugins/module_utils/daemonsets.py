# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What the DaemonSet controller decides, as pure functions: which nodes a DaemonSet runs on, and which template
revision a pod of it runs. Shared by diagnose (a pod missing on a node) and the driver rollout (an outdated driver,
operands that leave a node paused for a driver reload)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.checks import untolerated_taints
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import dig

# Taints the DaemonSet controller tolerates for every daemon pod by itself (pkg/controller/daemon/util
# AddOrUpdateDaemonPodTolerations): a cordoned or pressured node keeps its daemons.
DAEMONSET_TOLERATED = (
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/unschedulable",
)
REVISION_LABEL = "controller-revision-hash"


def expression_matches(expr, labels):
    """One NodeSelectorRequirement (In, NotIn, Exists, DoesNotExist, Gt, Lt) against the node's labels."""
    key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and values:
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def affinity_matches(pod_spec, labels):
    """The pod's nodeSelector and required node affinity (terms ORed, expressions ANDed) against node labels."""
    if any(labels.get(k) != v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    terms = dig(
        pod_spec, ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    )
    if not terms:
        return True
    return any(all(expression_matches(e, labels) for e in term.get("matchExpressions") or []) for term in terms)


def daemonset_wants(ds, node):
    """(wanted, why not): whether the DaemonSet should run a pod on the node (its nodeSelector, required node
    affinity and the node's NoSchedule/NoExecute taints, less those the controller tolerates by itself)."""
    spec = dig(ds, ("spec", "template", "spec")) or {}
    if not affinity_matches(spec, dig(node, ("metadata", "labels")) or {}):
        return False, None
    for taint in untolerated_taints(node, spec.get("tolerations") or []):
        if taint.get("key") not in DAEMONSET_TOLERATED:
            return False, "taint {0}={1}:{2} is not tolerated".format(
                taint.get("key"), taint.get("value") or "", taint.get("effect")
            )
    return True, None


def current_revision(ds, revisions):
    """The hash of the DaemonSet's newest ControllerRevision (the value of its up-to-date pods'
    controller-revision-hash label), or None. As NVIDIA's upgrade controller reads it (k8s-operator-libs
    pkg/upgrade/pod_manager.go GetDaemonsetControllerRevisionHash): the revisions named after the DaemonSet and
    owned by it, the highest ``revision``, its name without the ``<daemonset>-`` prefix."""
    name, uid = dig(ds, ("metadata", "name")), dig(ds, ("metadata", "uid"))
    prefix = "{0}-".format(name)
    own = []
    for rev in revisions:
        owners = dig(rev, ("metadata", "ownerReferences")) or []
        if not (dig(rev, ("metadata", "name")) or "").startswith(prefix):
            continue
        if owners and uid and not any(o.get("uid") == uid for o in owners):
            continue
        own.append(rev)
    if not own:
        return None
    newest = max(own, key=lambda r: int(r.get("revision") or 0))
    return newest["metadata"]["name"][len(prefix) :]


def pod_revision(pod):
    return (dig(pod, ("metadata", "labels")) or {}).get(REVISION_LABEL)


def owner_daemonset(pod):
    """Name of the DaemonSet that owns the pod, or None."""
    for ref in dig(pod, ("metadata", "ownerReferences")) or []:
        if ref.get("kind") == "DaemonSet" and ref.get("controller", True):
            return ref.get("name")
    return None
