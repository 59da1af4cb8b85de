# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""upgrade_preflight's judgement, as pure functions: per target release and GPU pool, whether the GPUs come back
after the upgrade (go / no-go) and why.

The model is the Kernel Module Management operator's PreflightValidationOCP (build and check the modules for the
target release's kernel before the upgrade) plus what OpenShift itself gates minor upgrades on (Upgradeable=False
conditions, APIs the target removes, as ``oc get apirequestcounts`` shows them) and NVIDIA's support statements.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.module_type import compute_capability
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.pools import selector_matches
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import condition, dig
from ansible_collections.gpuops.cluster.plugins.module_utils.openshift_releases import (
    BAD_RELEASES,
    kubernetes_minor,
    minor_of,
    operands_supported,
)

OK, WARN, FAIL = "ok", "warn", "fail"
GO, NO_GO = "GO", "NO-GO"

# Driver branches and GPU architectures, by CUDA compute capability. NVIDIA's Unix driver feature deprecation
# schedule: "The release 580 series will be the last to support GPUs based on the Maxwell, Pascal, and Volta
# architectures" (and R470 the last for Kepler); Blackwell is supported from the R570 branch.
LAST_BRANCH = ((5.0, 470, "Kepler"), (7.5, 580, "Maxwell, Pascal and Volta"))
FIRST_BRANCH = ((10.0, 570, "Blackwell"),)


def branch_of(driver_version):
    try:
        return int(str(driver_version).split(".", 1)[0])
    except ValueError:
        return None


def driver_supports(driver_version, products):
    """(status, words): whether the driver branch drives every GPU product of the pool."""
    branch = branch_of(driver_version)
    problems, unknown = [], []
    for product in sorted(set(p for p in products if p)):
        cc = compute_capability(product)
        if cc is None:
            unknown.append(product)
            continue
        for below, last, family in LAST_BRANCH:
            if cc < below and branch and branch > last:
                problems.append("{0} ({1}) needs a driver of branch {2} or older".format(product, family, last))
                break
        for at_least, first, family in FIRST_BRANCH:
            if cc >= at_least and branch and branch < first:
                problems.append("{0} ({1}) needs a driver of branch {2} or newer".format(product, family, first))
    if problems:
        return FAIL, "driver {0}: {1}".format(driver_version, "; ".join(problems))
    if unknown or not products:
        return WARN, "driver {0}: GPU model unknown ({1}), not checked".format(
            driver_version, ", ".join(unknown) or "no GFD product label"
        )
    return OK, "driver {0} supports {1}".format(driver_version, ", ".join(sorted(set(products))))


def pools_of(nodes, pools):
    """{pool name: [node names]}: the MachineConfigPool each GPU node belongs to (a custom pool before worker,
    as the MCO assigns them), or '-' when the cluster shows no pool."""
    out = {}
    custom = [p for p in pools if dig(p, ("metadata", "name")) not in ("worker", "master")]
    worker = [p for p in pools if dig(p, ("metadata", "name")) == "worker"]
    for node in nodes:
        labels = dig(node, ("metadata", "labels")) or {}
        chosen = next((p for p in custom + worker if selector_matches(dig(p, ("spec", "nodeSelector")), labels)), None)
        name = dig(chosen, ("metadata", "name")) if chosen else "-"
        out.setdefault(name, []).append(dig(node, ("metadata", "name")))
    return out


def current_version(cluster_version):
    desired = dig(cluster_version, ("status", "desired", "version"))
    if desired:
        return desired
    for entry in dig(cluster_version, ("status", "history")) or []:
        if entry.get("state") == "Completed":
            return entry.get("version")
    return None


def available(cluster_version):
    """{version: update entry} of the update service's recommendations, and whether the cluster retrieved any."""
    updates = dig(cluster_version, ("status", "availableUpdates")) or []
    retrieved = (condition(cluster_version, "RetrievedUpdates") or {}).get("status") == "True"
    return dict((u.get("version"), u) for u in updates if u.get("version")), retrieved


def conditional(cluster_version, version):
    """The not-recommended conditional update of ``version``: [risk names], or None."""
    for entry in dig(cluster_version, ("status", "conditionalUpdates")) or []:
        if dig(entry, ("release", "version")) != version:
            continue
        recommended = next((c for c in entry.get("conditions") or [] if c.get("type") == "Recommended"), {})
        if recommended.get("status") != "True":
            return [r.get("name") for r in entry.get("risks") or [] if r.get("name")] or ["unnamed risk"]
    return None


def gates(cluster_version, operators, current, target):
    """(status, words) of OpenShift's Upgradeable conditions: they block minor upgrades, not z-streams."""
    minor_up = (minor_of(target) or (0, 0)) > (minor_of(current) or (0, 0))
    blocked = []
    for obj in [cluster_version] + list(operators):
        cond = condition(obj, "Upgradeable")
        if cond and cond.get("status") == "False":
            who = "ClusterVersion" if obj is cluster_version else "ClusterOperator " + dig(obj, ("metadata", "name"))
            blocked.append("{0}: Upgradeable=False ({1}: {2})".format(who, cond.get("reason"), cond.get("message")))
    if not blocked:
        return OK, "no Upgradeable=False condition"
    return (FAIL if minor_up else WARN), "; ".join(blocked) + ("" if minor_up else " (a z-stream update is allowed)")


def removed_apis(request_counts, current, target):
    """(status, words): APIs in use (APIRequestCount, last 24 h) that the target's Kubernetes removes."""
    now, then = kubernetes_minor(current), kubernetes_minor(target)
    if then is None:
        return WARN, "the target's Kubernetes version is unknown: removed APIs not checked"
    used = []
    for obj in request_counts:
        removed = dig(obj, ("status", "removedInRelease"))
        count = dig(obj, ("status", "requestCount")) or 0
        parts = minor_of(removed)
        if not parts or not count or parts > then or (now and parts <= now):
            continue
        used.append(
            "{0} (removed in Kubernetes {1}, {2} requests in 24 h)".format(obj["metadata"]["name"], removed, count)
        )
    if used:
        return FAIL, "APIs the target removes are still used: " + "; ".join(sorted(used))
    return OK, "no API the target removes is in use"


def release_checks(target, current, cluster_version, operators, request_counts, served):
    """[(name, status, words)] that hold for the whole cluster at one target."""
    offered, retrieved = available(cluster_version)
    checks = []
    risks = conditional(cluster_version, target)
    if target in offered:
        checks.append(("update", OK, "{0} is an available update of {1}".format(target, current)))
    elif risks:
        checks.append(
            ("update", WARN, "{0} is a conditional update, not recommended: {1}".format(target, ", ".join(risks)))
        )
    elif retrieved:
        checks.append(("update", FAIL, "{0} is not an available update of {1} on this channel".format(target, current)))
    else:
        checks.append(
            ("update", WARN, "the cluster retrieved no updates: whether {0} is offered is unknown".format(target))
        )
    if target in BAD_RELEASES:
        checks.append(("release", FAIL, "OpenShift {0}: {1}".format(target, BAD_RELEASES[target])))
    checks.append(("gates",) + gates(cluster_version, operators, current, target))
    if served:
        checks.append(("apis",) + removed_apis(request_counts, current, target))
    else:
        checks.append(("apis", WARN, "APIRequestCount is not served: removed APIs not checked"))
    supported, words = operands_supported(target)
    checks.append(("operands", OK if supported else WARN, words))
    return checks


def image_check(state, tag, dtk_known):
    """(status, words) of the driver image for the target kernel: ready (built from the inputs the driver state will
    use), building, failed, or missing."""
    if state.get("not_built"):
        return WARN, state["not_built"]
    if state.get("ready") and state.get("unchecked"):
        return WARN, "image {0} present, but its inputs could not be compared: {1}".format(tag, state["unchecked"])
    if state.get("ready"):
        return OK, "image {0} ready".format(tag)
    if state.get("building"):
        return FAIL, "image {0} building ({1})".format(tag, state["building"])
    if state.get("failed"):
        return FAIL, "image {0}: {1}".format(tag, state["failed"])
    if state.get("would_build"):
        return FAIL, "image {0} {1} (would build now)".format(tag, state.get("why") or "missing")
    if not dtk_known:
        return FAIL, (
            "image {0} missing, and the target's Driver Toolkit image is unknown: give it in driver_toolkit_images "
            "(driver_ocp_upgrade_toolkit_images) from `oc adm release info <release image> --image-for=driver-toolkit`, "
            "and build".format(tag)
        )
    return FAIL, "image {0} {1}: build it before the upgrade".format(tag, state.get("why") or "missing")


def verdict(checks):
    failed = [c for c in checks if c[1] == FAIL]
    warned = [c for c in checks if c[1] == WARN]
    return (NO_GO if failed else GO), failed, warned


def table(rows):
    """Text lines: per target and pool the verdict and the checks that did not pass."""
    header = ("target", "pool", "nodes", "kernel", "image", "verdict", "why")
    lines = [header]
    for r in rows:
        why = "; ".join("{0}: {1}".format(n, w) for n, s, w in r["checks"] if s != OK) or "all checks pass"
        lines.append(
            (r["target"], r["pool"], str(len(r["nodes"])), r["kernel"] or "?", r["image_status"], r["verdict"], why)
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header) - 1)]
    return [
        "  ".join([str(v).ljust(w) for v, w in zip(line[:-1], widths)] + [str(line[-1])]).rstrip() for line in lines
    ]
