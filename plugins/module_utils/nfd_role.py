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

from ansible_collections.gpuops.cluster.plugins.module_utils import validators
from ansible_collections.gpuops.cluster.plugins.module_utils.olm import AlmExampleError, example_kinds
from ansible_collections.gpuops.cluster.plugins.module_utils.role_inputs import IMAGE_RE, is_whole

FIELD_MANAGER = "gpuops.cluster"
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")


def _get(obj, *path, **kw):
    """obj[path[0]][path[1]]... with ``default`` (None) for a missing or null step."""
    for key in path:
        if not isinstance(obj, dict) or obj.get(key) is None:
            return kw.get("default")
        obj = obj[key]
    return obj


def _names(objects):
    return [_get(o, "metadata", "name", default="") for o in objects or []]


def _true_conditions(status):
    return [c for c in (status or {}).get("conditions") or [] if c.get("status") == "True"]


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


def olm_inputs(found, channel, settings):
    """The channel to subscribe to (``channel``, else the package's default), and what is wrong with the OLM
    inputs (OpenShift, before any write).

    ``found`` holds what preflight read: ``catalogs`` (the CatalogSources of the catalog namespace), ``packages``
    (the PackageManifests of nfd_catalog_source) and ``groups`` (the OperatorGroups of the namespace). A missing
    catalog hides the package and channel problems it causes.
    """
    source, source_ns, package = settings["catalog_source"], settings["catalog_source_namespace"], settings["package"]
    channel = channel or ""
    problems = []
    catalogs = _names(found.get("catalogs"))
    offered = [p for p in found.get("packages") or [] if _get(p, "metadata", "name") == package]
    if source not in catalogs:
        problems.append(
            "nfd: nfd_catalog_source '{0}' is not a CatalogSource in {1} (nfd_catalog_source_namespace); there: "
            "{2}.".format(source, source_ns, ", ".join(sorted(catalogs)) or "none")
        )
    elif not offered:
        problems.append(
            "nfd: nfd_package '{0}' is not offered by CatalogSource {1}/{2} (it offers: {3}).".format(
                package, source_ns, source, ", ".join(sorted(_names(found.get("packages")))) or "nothing"
            )
        )
    else:
        status = offered[0].get("status") or {}
        channel = channel or status.get("defaultChannel") or ""
        channels = [c.get("name") for c in status.get("channels") or []]
        if channel not in channels:
            problems.append(
                "nfd: nfd_channel '{0}' is not offered by package {1} in {2} (channels: {3}; default: {4}); set "
                "nfd_channel to one of them or leave it empty for the default.".format(
                    channel, package, source, ", ".join(channels) or "none", status.get("defaultChannel", "none")
                )
            )
    namespace = settings["namespace"]
    others = [n for n in _names(found.get("groups")) if n != namespace]
    if others:
        problems.append(
            "nfd: nfd_namespace {0} already holds OperatorGroup {1}; OLM fails a CSV in a namespace with more than "
            "one OperatorGroup (TooManyOperatorGroups). Delete it, or choose another nfd_namespace.".format(
                namespace, ", ".join(others)
            )
        )
    return {"channel": channel, "problems": problems}


# ---------------------------------------------------------------------- apply


def subscription_state(subscriptions, manager=FIELD_MANAGER):
    """Where OLM stands with the Subscription (the list k8s_info read: none or one).

    ``resolution_failed``: the ResolutionFailed conditions set since the role's last write to the Subscription (its
    field manager's time in managedFields); an older one is stale, OLM has not looked at the new spec yet.
    ``settled``: OLM chose a CSV, or said it cannot.
    """
    subscriptions = subscriptions or []
    since = max(
        [
            entry.get("time") or ""
            for sub in subscriptions
            for entry in _get(sub, "metadata", "managedFields", default=[])
            if entry.get("manager") == manager
        ]
        or [""]
    )
    failed = [
        c
        for sub in subscriptions
        for c in _get(sub, "status", "conditions", default=[])
        if c.get("type") == "ResolutionFailed"
        and c.get("status") == "True"
        and (c.get("lastTransitionTime") or "") >= since
    ]
    status = (subscriptions[0].get("status") if subscriptions else None) or {}
    current = [s for s in (_get(sub, "status", "currentCSV") for sub in subscriptions) if s]
    return {
        "status": status,
        "current_csv": status.get("currentCSV") or "",
        "resolution_failed": failed,
        "settled": bool(current or failed),
    }


def _csv_kinds(csv):
    try:
        return example_kinds(_get(csv, "metadata", "annotations", "alm-examples", default="[]"))
    except AlmExampleError as exc:
        return ["(unreadable: {0})".format(exc)]


def _subscription_problem(sub, settings, check_mode):
    where = "nfd: Subscription {0}/{1}".format(settings["namespace"], settings["subscription"])
    if sub["resolution_failed"]:
        first = sub["resolution_failed"][0]
        return "{0}: ResolutionFailed ({1}): {2}".format(where, first.get("reason", ""), first.get("message", ""))
    if check_mode:
        return ""
    conditions = "; ".join(
        "{0}: {1}".format(c.get("type"), c.get("message", "")) for c in _true_conditions(sub["status"])
    )
    return (
        "{0}: no CSV chosen after {1}s (state {2}; conditions: {3}). Check the catalog pods in {4}, or raise "
        "nfd_wait_timeout.".format(
            where,
            settings["wait_timeout"],
            sub["status"].get("state", "none"),
            conditions or "none",
            settings["catalog_source_namespace"],
        )
    )


def _csv_problem(name, csv, sub_status, settings, check_mode):
    where = "nfd: ClusterServiceVersion {0}/{1}".format(settings["namespace"], name)
    status = csv.get("status") or {}
    phase = status.get("phase") or ""
    if phase == "Succeeded":
        kinds = _csv_kinds(csv)
        if settings["kind"] in kinds:
            return ""
        return "{0}: its alm-examples list {1}, no {2}; this operator version is not one the role knows.".format(
            where, ", ".join(kinds) or "nothing", settings["kind"]
        )
    if check_mode and phase != "Failed":
        return ""
    if not csv:
        return "{0}: not created after {1}s (InstallPlan {2})".format(
            where, settings["wait_timeout"], _get(sub_status, "installPlanRef", "name", default="none")
        )
    late = "" if phase == "Failed" else " - still not Succeeded after {0}s".format(settings["wait_timeout"])
    return "{0}: {1} ({2}): {3}{4}".format(
        where, status.get("phase", "no phase"), status.get("reason", ""), status.get("message", ""), late
    )


def _note(name, csv, created, settings, check_mode):
    if not name:
        return (
            "nfd: would subscribe to {package}/{channel} from {catalog_source} in {namespace} (OperatorGroup "
            "{namespace}, approval {approval}); the NodeFeatureDiscovery CR is built once the CSV exists.".format(
                **settings
            )
        )
    status = csv.get("status") or {}
    if status.get("phase") != "Succeeded":
        return (
            "nfd: would wait for ClusterServiceVersion {0}/{1} ({2}); the NodeFeatureDiscovery CR is built once it has "
            "Succeeded.".format(settings["namespace"], name, status.get("phase", "not created yet"))
        )
    phases = " -> ".join(c.get("phase", "?") for c in status.get("conditions") or [])
    made = created[0] if created else {}
    return "nfd: {0}/{1} -> {2} Succeeded ({3}; {4}); NodeFeatureDiscovery {5}/{6} {7}{8}".format(
        settings["package"],
        settings["channel"],
        name,
        phases,
        status.get("reason", ""),
        settings["namespace"],
        made.get("name", "?"),
        made.get("action", "not applied"),
        " (check mode)" if check_mode else "",
    )


def olm_outcome(read, settings, channel, check_mode=False):
    """Where the operator's installation through OLM stands, from what the role read.

    ``read``: ``subscription`` (the Subscription as read, a list), ``csv`` (its current CSV as read: a list, of
    which the one named by the Subscription counts) and
    ``created`` (the objects of the NodeFeatureDiscovery's k8s_ensure). ``settings``: namespace, subscription,
    package, catalog_source, catalog_source_namespace, approval, kind and wait_timeout; ``channel`` the one
    subscribed to.

    Returns ``settled`` (the Subscription wait is over), ``csv_name``, ``csv`` (that CSV, {} when not read),
    ``csv_settled`` (the CSV wait is over),
    ``ready`` (the CSV Succeeded and offers the kind: build the custom resource), ``problem`` (why the run stops;
    empty when it goes on) and ``note`` (what OLM did, or in check mode would do).
    """
    settings = dict(settings, channel=channel)
    sub = subscription_state(read.get("subscription"))
    name = sub["current_csv"]
    csv = next((c for c in read.get("csv") or [] if _get(c, "metadata", "name") == name), {}) if name else {}
    phase = _get(csv, "status", "phase", default="")
    if name:
        problem = _csv_problem(name, csv, sub["status"], settings, check_mode)
    else:
        problem = _subscription_problem(sub, settings, check_mode)
    return {
        "settled": sub["settled"],
        "csv_name": name,
        "csv": csv,
        "csv_settled": phase in ("Succeeded", "Failed"),
        "ready": bool(name) and phase == "Succeeded" and not problem,
        "problem": problem,
        "note": _note(name, csv, read.get("created") or [], settings, check_mode),
    }


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
