# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The nfd role's decisions and messages, without I/O (the filters of plugins/filter/nfd.py).

Preflight: the inputs argument_specs cannot check, and the OLM inputs against what the cluster offers.
Apply (OpenShift): where OLM stands (the Subscription's CSV, the CSV's phase) and what to tell the user.
Verify: why the expected GPU nodes are not labelled, or one line per GPU node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils import olm, validators
from ansible_collections.gpuops.cluster.plugins.module_utils.olm import dig as _get
from ansible_collections.gpuops.cluster.plugins.module_utils.olm import names as _names
from ansible_collections.gpuops.cluster.plugins.module_utils.olm import true_conditions as _true_conditions
from ansible_collections.gpuops.cluster.plugins.module_utils.role_inputs import IMAGE_RE, is_whole

FIELD_MANAGER = olm.FIELD_MANAGER
# Where OLM stands with the operator: module_utils/olm.py, shared with the gpu_operator role.
olm_inputs = olm.olm_inputs
olm_outcome = olm.olm_outcome
subscription_state = olm.subscription_state
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")


# ------------------------------------------------------------------ preflight


def input_problems(values, namespace, openshift, default_namespaces):
    """What is wrong with the role's inputs beyond argument_specs, one message per problem.

    ``values`` maps nfd_namespace, nfd_expected_gpu_nodes, nfd_wait_timeout, nfd_wait_sleep, nfd_image_registry,
    nfd_image_name and nfd_version to their values; ``namespace`` is the namespace they resolve to and
    ``default_namespaces`` the (OpenShift, Kubernetes) defaults of an empty nfd_namespace.
    """
    out = []
    if not isinstance(namespace, str) or validators.dns_label_problem(namespace):
        out.append(
            "nfd: nfd_namespace '{0}' is not a valid namespace name (a DNS-1123 label: at most 63 lower-case "
            "letters, digits and '-', starting and ending with a letter or digit); fix it, or leave it empty for "
            "{1} (OpenShift) / {2} (Kubernetes).".format(values.get("nfd_namespace"), *default_namespaces)
        )
    expected = values.get("nfd_expected_gpu_nodes")
    if not is_whole(expected):
        out.append(
            "nfd: nfd_expected_gpu_nodes '{0}' must be a whole number >= 0 (the GPU nodes NFD must label on "
            "Kubernetes; 0 only reports them).".format(expected)
        )
    timeout, sleep = values.get("nfd_wait_timeout"), values.get("nfd_wait_sleep")
    if not (is_whole(timeout, 1) and is_whole(sleep, 1) and int(sleep) <= int(timeout)):
        out.append(
            "nfd: nfd_wait_timeout ({0}) and nfd_wait_sleep ({1}) must be whole seconds >= 1, with nfd_wait_sleep "
            "<= nfd_wait_timeout.".format(timeout, sleep)
        )
    if not openshift:
        parts = [values.get(k) for k in ("nfd_image_registry", "nfd_image_name", "nfd_version")]
        image = "{0}/{1}:{2}".format(*parts)
        if not IMAGE_RE.match(image):
            out.append(
                "nfd: nfd_image_registry '{0}', nfd_image_name '{1}' and nfd_version '{2}' give '{3}', which is not "
                "a valid image reference ([registry[:port]/]lower-case/path:tag); fix the variable that is "
                "wrong.".format(parts[0], parts[1], parts[2], image)
            )
    return out


# --------------------------------------------------------------------- verify


def _is_available(instance):
    return any(c.get("type") == "Available" for c in _true_conditions(instance.get("status")))


def _unavailable(instances, name, settings):
    """Why the NodeFeatureDiscovery is not Available, or '' when it is (OpenShift)."""
    instance = (instances or [{}])[0]
    if _is_available(instance):
        return ""
    conditions = (instance.get("status") or {}).get("conditions") or []
    return "nfd: NodeFeatureDiscovery {0}/{1}: not Available after {2}s ({3}: {4})".format(
        settings["namespace"],
        name,
        settings["wait_timeout"],
        ", ".join(c.get("type") for c in _true_conditions(instance.get("status"))) or "no condition",
        "; ".join(c.get("message") for c in conditions if c.get("message")),
    )


def _node_problem(node, candidates, settings):
    """(is a GPU node, why a candidate is not one or None)."""
    labels = _get(node, "metadata", "labels", default={})
    name = _get(node, "metadata", "name", default="")
    is_gpu = any(labels.get(key) == "true" for key in settings["gpu_labels"])
    if candidates is None:
        candidate = not any(key in labels for key in CONTROL_PLANE_LABELS)
    else:
        candidate = name in candidates
    if is_gpu or not candidate:
        return is_gpu, None
    has_nfd = any(key.startswith(settings["label_prefix"]) for key in labels)
    return False, "node {0} (kernel {1}): {2}".format(
        name,
        _get(node, "status", "nodeInfo", "kernelVersion", default="?"),
        (
            "labelled by NFD but no NVIDIA PCI device label"
            if has_nfd
            else "no NFD label at all (is an nfd-worker pod running there?)"
        ),
    )


def unlabelled(read, settings, expected, instance=""):
    """Why NFD did not label the expected GPU nodes in time.

    ``read``: ``nodes`` (every Node), ``machines`` (the Machines of the GPU MachineSets, OpenShift) and ``instances``
    (the NodeFeatureDiscovery, OpenShift). On OpenShift a NodeFeatureDiscovery that is not Available is the reason;
    otherwise the message names each candidate node without the GPU label (OpenShift: the nodes of the GPU
    Machines; Kubernetes: every node but the control plane) and why, and the Machines without a Node yet.
    ``settings``: openshift, namespace, wait_timeout, gpu_labels, label_prefix; ``expected``: count and source
    (expected_gpu_nodes); ``instance``: the NodeFeatureDiscovery's name.
    """
    if settings["openshift"]:
        reason = _unavailable(read.get("instances"), instance, settings)
        if reason:
            return reason
    machines = read.get("machines") or []
    candidates = [_get(m, "status", "nodeRef", "name") for m in machines] if settings["openshift"] else None
    candidates = [c for c in candidates if c] if candidates is not None else None
    unbound = [_get(m, "metadata", "name") for m in machines if _get(m, "status", "nodeRef") is None]
    labelled, missing = [], []
    for node in sorted(read.get("nodes") or [], key=lambda n: _get(n, "metadata", "name", default="")):
        is_gpu, why = _node_problem(node, candidates, settings)
        if is_gpu:
            labelled.append(_get(node, "metadata", "name"))
        elif why:
            missing.append(why)
    return "nfd: {0} of {1} expected GPU nodes ({2}) labelled by NFD after {3}s{4}; without {5}: {6}{7}.".format(
        len(labelled),
        expected["count"],
        expected["source"],
        settings["wait_timeout"],
        " ({0})".format(", ".join(labelled)) if labelled else "",
        settings["gpu_labels"][0],
        "; ".join(missing) if missing else "no candidate node found",
        "; Machines without a Node yet: {0}".format(", ".join(unbound)) if settings["openshift"] and unbound else "",
    )


def gpu_node_lines(result, expected_from):
    """What nfd_result says, for the log: a summary line, then one line per GPU node (OS, kernel, instance type)."""
    nodes = result.get("gpu_nodes") or []
    lines = [
        "nfd: {0} GPU node(s) labelled (expected {1}, from {2}); kernels: {3}".format(
            len(nodes),
            result.get("expected_gpu_nodes"),
            expected_from,
            ", ".join(sorted(result.get("kernel_versions") or {})) or "none",
        )
    ]
    for node in nodes:
        release = node.get("os_release") or {}
        lines.append(
            "nfd: {0}: {1} {2}, kernel {3}, {4}".format(
                node.get("name"),
                release.get("ID", "?"),
                release.get("VERSION_ID", ""),
                node.get("kernel_version") or "?",
                node.get("instance_type") or "unknown instance type",
            )
        )
    return lines


def expected_gpu_nodes(machinesets, configured, openshift):
    """How many GPU nodes NFD must label, and where that number comes from.

    OpenShift: the sum of the GPU MachineSets' replicas; Kubernetes: nfd_expected_gpu_nodes.
    """
    if not openshift:
        return {"count": int(configured), "source": "nfd_expected_gpu_nodes"}
    return {
        "count": sum(int(_get(m, "spec", "replicas", default=0)) for m in machinesets or []),
        "source": "the replicas of GPU MachineSets " + ", ".join(_names(machinesets)),
    }
