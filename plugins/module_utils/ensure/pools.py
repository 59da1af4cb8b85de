# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure: wait until the MachineConfigs of the list are rolled out (or gone) on their pools.

A MachineConfig does nothing until the Machine Config Operator has rendered it
into the pool's configuration and every node of the pool has rebooted into it.
A pool has rolled out the list when

* it is ``Updated`` (all its machines updated and ready, none unavailable) on
  the configuration its spec asks for (``status.configuration.name`` ==
  ``spec.configuration.name``), and
* that rendered configuration holds the listed MachineConfigs that the pool
  selects (``status.configuration.source``) with their files as given (a
  MachineConfig changed in place has the same name: its content must be there),
  or, when they are being removed, holds none of them any more.

A pool with ``Degraded``, ``NodeDegraded`` or ``RenderDegraded`` True stops the
wait at once with its reason and message: it never finishes by itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    Outage,
    condition,
    condition_true,
    dig,
    get_item,
    list_items,
    name_of,
)

MCO_GROUP = "machineconfiguration.openshift.io"
MCO_VERSION = MCO_GROUP + "/v1"
DEGRADED_TYPES = ("RenderDegraded", "NodeDegraded", "Degraded")


def is_machineconfig(item):
    return item.kind == "MachineConfig" and item.api_version.split("/")[0] == MCO_GROUP


def selector_matches(selector, labels):
    """Kubernetes LabelSelector semantics (matchLabels and matchExpressions); an empty selector matches nothing."""
    if not selector:
        return False
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return bool(selector.get("matchLabels") or selector.get("matchExpressions"))


def files_of(machineconfig):
    """{path: contents.source} of a MachineConfig's Ignition files."""
    files = dig(machineconfig, ("spec", "config", "storage", "files")) or []
    return dict((f.get("path"), (f.get("contents") or {}).get("source")) for f in files)


def degraded_reason(pool):
    """'RenderDegraded: <message>' when the pool reports a degraded condition, else None."""
    for ctype in DEGRADED_TYPES:
        if condition_true(pool, ctype):
            cond = condition(pool, ctype) or {}
            reason = cond.get("reason") or ctype
            return "{0} ({1}): {2}".format(ctype, reason, cond.get("message") or "no message")
    return None


def progress_line(pool, note=""):
    status = pool.get("status") or {}
    line = "MachineConfigPool {0}: {1}/{2} updated, {3} updating, {4} ready".format(
        name_of(pool),
        status.get("updatedMachineCount", 0),
        status.get("machineCount", "?"),
        status.get("unavailableMachineCount", 0),
        status.get("readyMachineCount", 0),
    )
    return line + (" ({0})".format(note) if note else "")


def pool_state(pool, configs, rendered, present):
    """(done, note) for one pool; ``configs`` the listed MachineConfigs it selects, ``rendered`` its current config."""
    status = pool.get("status") or {}
    want = dig(pool, ("spec", "configuration", "name"))
    have = dig(pool, ("status", "configuration", "name"))
    sources = set(
        name_of(s) if "metadata" in s else s.get("name") for s in dig(status, ("configuration", "source")) or []
    )
    names = set(c["metadata"]["name"] for c in configs)
    if present:
        in_config = names <= sources and rendered is not None and _files_rendered(configs, rendered)
    else:
        in_config = not (names & sources)
    if not in_config:
        return False, "rendering the new configuration" if have == want else "rolling out " + str(want)
    counts_done = (
        status.get("machineCount") is not None
        and status.get("updatedMachineCount") == status.get("machineCount") == status.get("readyMachineCount")
        and not status.get("unavailableMachineCount")
    )
    generation_seen = (status.get("observedGeneration") or 0) >= ((pool.get("metadata") or {}).get("generation") or 0)
    done = bool(want) and want == have and counts_done and generation_seen and condition_true(pool, "Updated")
    return done, "" if done else "rolling out " + str(want)


def _files_rendered(configs, rendered):
    rendered_files = files_of(rendered)
    for config in configs:
        for path, source in files_of(config).items():
            if rendered_files.get(path) != source:
                return False
    return True


class PoolWatch(object):
    """Reads the pools and their rendered configs; one ``look`` per poll."""

    def __init__(self, client, configs, present):
        self.client = client
        self.configs = configs
        self.present = present
        self.pools_api = client.resource("MachineConfigPool", MCO_VERSION)
        self.mcs_api = client.resource("MachineConfig", MCO_VERSION)
        self.rendered = {}

    def rendered_config(self, name):
        # A rendered config's name is the hash of its content: it never changes once read.
        if name and self.rendered.get(name) is None:
            self.rendered[name] = get_item(self.client, self.mcs_api, name)
        return self.rendered.get(name)

    def look(self):
        """[(pool, selected configs, done, note)] for every pool that selects a listed MachineConfig."""
        out = []
        for pool in list_items(self.client, self.pools_api):
            selector = dig(pool, ("spec", "machineConfigSelector"))
            chosen = [c for c in self.configs if selector_matches(selector, dig(c, ("metadata", "labels")))]
            if not chosen:
                continue
            rendered = self.rendered_config(dig(pool, ("status", "configuration", "name")))
            done, note = pool_state(pool, chosen, rendered, self.present)
            out.append((pool, chosen, done, note))
        return out


def wait_pools(client, items, timeout, sleep, progress, present=True, clock=time.monotonic, pause=time.sleep):
    """Wait for the MachineConfigs in ``items`` to be rolled out (or removed) on every pool selecting them.

    Returns the seconds waited; raises GpuopsError for a degraded pool or at the timeout.
    """
    configs = [i.body for i in items if is_machineconfig(i)]
    if not configs:
        return 0
    watch = PoolWatch(client, configs, present)
    started = clock()
    outage = Outage(clock, client=client)  # a rollout takes many minutes: an API server restart is waited out
    while True:
        try:
            looks = watch.look()
            outage.answered()
        except Exception as exc:
            outage.failed(exc, timeout)
            if clock() - started >= timeout:
                raise
            pause(min(sleep, 2))
            continue
        for pool, chosen, done, note in looks:
            progress(progress_line(pool, note))
            reason = degraded_reason(pool)
            if reason:
                raise GpuopsError(
                    "MachineConfigPool {0} is degraded, {1}. Fix or delete the MachineConfig it names "
                    "(oc describe mcp {0}); the pool does not recover by itself.".format(name_of(pool), reason),
                    progress=progress.events,
                )
        if all(done for dummy, dummy2, done, dummy3 in looks):
            return clock() - started
        if clock() - started >= timeout:
            late = [
                "{0} ({1})".format(progress_line(p, n), ", ".join(name_of(c) for c in ch))
                for p, ch, d, n in looks
                if not d
            ]
            raise GpuopsError(
                "not updated after {0}s: {1}. Watch the pool (oc get mcp) and its nodes' "
                "machineconfiguration.openshift.io/state, or raise wait_timeout.".format(timeout, "; ".join(late)),
                param="wait_timeout",
                progress=progress.events,
                late=late,
            )
        pause(sleep)
