# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure: wait for workloads to be ready, or for deleted objects to be gone, all at once.

The predicates are kubernetes.core's (DaemonSet, Deployment, StatefulSet, Pod;
a Job waits for its Complete condition); each object gets its own
kubernetes.core Waiter (looked at through ``kube.wait_backoff``: half a second apart at first, doubling up to
``wait_sleep``), and the waiters run side by side, so twenty
DaemonSets take as long as the slowest one, not the sum.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.waiter import (
    RESOURCE_PREDICATES,
    Waiter,
    custom_condition,
    resource_absent,
)

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import parallel_map, wait_backoff

JOB_COMPLETE = {"type": "Complete", "status": "True"}
WAITABLE = ("DaemonSet", "Deployment", "StatefulSet", "Pod", "Job", "ResourceQuota")


def status_line(item, obj):
    """'DaemonSet gpu/driver: 2/3 ready' from the object as read (a ResourceInstance)."""
    status = (obj.to_dict() if hasattr(obj, "to_dict") else obj or {}).get("status") or {}
    if item.kind == "DaemonSet":
        return "{0}: {1}/{2} ready".format(
            item.describe(), status.get("numberReady", 0), status.get("desiredNumberScheduled", "?")
        )
    if item.kind in ("Deployment", "StatefulSet"):
        want = ((obj.to_dict() if hasattr(obj, "to_dict") else obj or {}).get("spec") or {}).get("replicas", 1)
        ready = status.get("readyReplicas", 0)
        return "{0}: {1}/{2} ready".format(item.describe(), ready, want)
    if item.kind == "ResourceQuota":
        return "{0}: {1}".format(item.describe(), "in force" if quota_in_force(obj) else "not counted yet")
    if item.kind == "Job":
        return "{0}: {1} succeeded, {2} active".format(
            item.describe(), status.get("succeeded", 0), status.get("active", 0)
        )
    return "{0}: {1}".format(item.describe(), status.get("phase", "waiting"))


def ondelete_daemonset_ready(obj):
    """An OnDelete DaemonSet is ready when every node runs a ready pod, of any template revision.

    kubernetes.core's predicate also wants updatedNumberScheduled == desired, which an OnDelete DaemonSet reaches
    only when someone deletes the old pods (a driver is replaced by draining the node first, never by the
    controller); waiting for it would time out after every template change.
    """
    data = obj.to_dict() if hasattr(obj, "to_dict") else obj or {}
    status = data.get("status") or {}
    return bool(
        status.get("desiredNumberScheduled") is not None
        and status.get("numberReady") == status.get("desiredNumberScheduled")
        and status.get("observedGeneration") == (data.get("metadata") or {}).get("generation")
    )


def quota_in_force(obj):
    """Admission enforces a ResourceQuota only for the resources in its status.hard, which the quota controller
    copies from spec.hard (kubernetes pkg/controller/resourcequota ``syncResourceQuota``; the admission plugin
    checks status.hard). Until then, and late after an API server restart, it admits everything."""
    if obj is None:
        return False
    data = obj.to_dict() if hasattr(obj, "to_dict") else obj
    hard = (data.get("spec") or {}).get("hard") or {}
    counted = (data.get("status") or {}).get("hard") or {}
    return all(counted.get(name) == value for name, value in hard.items())


def _ready_predicate(item):
    if item.kind == "ResourceQuota":
        return quota_in_force
    if item.kind == "Job":
        return lambda obj: custom_condition(JOB_COMPLETE, obj)
    strategy = (((item.body or {}).get("spec") or {}).get("updateStrategy") or {}).get("type")
    if item.kind == "DaemonSet" and strategy == "OnDelete":
        return ondelete_daemonset_ready
    return RESOURCE_PREDICATES[item.kind]


def _watch(item, predicate, progress, absent):
    """The predicate, reporting each look (the last line of an object says how it ended).

    kubernetes.core's Waiter calls it with None when the object is not found, and when the API server has not answered
    a look yet (it raises that error once the predicate has spoken): kubernetes.core's own readiness predicates read
    ``.status`` and would fail on None ("'NoneType' object has no attribute 'status'", seen with the API server
    stopped during the toolkit's DaemonSet wait). Nothing there is not ready yet; for a deletion, gone."""

    def watched(obj):
        done = predicate(obj) if obj is not None or absent else False
        if absent:
            progress("{0}: {1}".format(item.describe(), "gone" if done else "still present"))
        elif obj is not None:
            progress(status_line(item, obj))
        return done

    return watched


def wait_all(client, items, timeout, sleep, progress, absent=False):
    """Wait for every item (ready, or gone when ``absent``); raise naming those that are not."""
    if absent:
        targets = [i for i in items if i.action == "deleted"]
    else:
        targets = [i for i in items if i.kind in WAITABLE and i.resource is not None]
    if not targets:
        return 0

    def wait_one(item):
        predicate = resource_absent if absent else _ready_predicate(item)
        waiter = Waiter(client, item.resource, _watch(item, predicate, progress, absent))
        # Short looks first: a DaemonSet ready two seconds after its creation ends the wait then, not at the
        # first 5 s poll (each of the stack's five DaemonSets cost 5 s in every converge).
        ok, dummy, elapsed = wait_backoff(waiter, timeout, sleep, name=item.name, namespace=item.namespace)
        return ok, elapsed

    results = parallel_map(wait_one, targets, min(32, len(targets)))
    late = []
    longest = 0
    for item, result, exc in results:
        if exc is not None:
            raise exc
        ok, elapsed = result
        longest = max(longest, elapsed)
        if not ok:
            late.append(item.describe())
    if late:
        raise GpuopsError(
            "{0} after {1}s: {2}. Read their events and pod states, or raise wait_timeout.".format(
                "still present" if absent else "not ready", timeout, ", ".join(late)
            ),
            param="wait_timeout",
            progress=progress.events,
            late=late,
        )
    return longest
