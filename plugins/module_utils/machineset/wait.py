# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Waiting for the GPU MachineSets: Machines Running with Ready Nodes (or Machines gone), with progress.

The polling is kubernetes.core's ``Waiter`` on the Machines of the GPU
MachineSets; the predicate reads each Machine's Node (``kube.node_ready``) and
records one progress line per change.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.waiter import Waiter

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    dig,
    get_item,
    name_of,
    node_ready,
    wait_backoff,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.model import (
    API_VERSION,
    LABEL_MACHINESET,
    names,
)


def _failure(machine):
    """(Machine name, cause): errorReason and errorMessage as machine-api reports them."""
    reason, message = dig(machine, ("status", "errorReason")), dig(machine, ("status", "errorMessage"))
    if reason and message:
        return name_of(machine), "{0}: {1}".format(reason, message)
    return name_of(machine), message or reason or "phase Failed"


def machines_status(want, machines, nodes_ready):
    """Where the Machines of the GPU MachineSets stand.

    ``want``: {MachineSet name: replicas}; ``machines``: Machine dicts;
    ``nodes_ready``: {node name: bool}. Returns (done, failed, message) where
    failed lists (machine, reason) for Machines in phase Failed.
    """
    done, failed, parts = True, [], []
    for ms in sorted(want):
        mine = [
            m
            for m in machines
            if dig(m, ("metadata", "labels", LABEL_MACHINESET)) == ms and not dig(m, ("metadata", "deletionTimestamp"))
        ]
        running = [m for m in mine if dig(m, ("status", "phase")) == "Running"]
        ready = [m for m in running if nodes_ready.get(dig(m, ("status", "nodeRef", "name")))]
        failed.extend(_failure(m) for m in mine if dig(m, ("status", "phase")) == "Failed")
        replicas = want[ms]
        done = done and len(mine) == replicas and len(ready) == replicas
        parts.append(
            "{0}: {1}/{2} Machines Running, {3}/{2} Nodes Ready".format(ms, len(running), replicas, len(ready))
        )
    return done, failed, "; ".join(parts)


def machines_gone(ms_names, machines):
    left = [m for m in machines if dig(m, ("metadata", "labels", LABEL_MACHINESET)) in ms_names]
    return not left, "{0} Machines left ({1})".format(len(left), names(left))


def machines_of(ms_names):
    """The label selector of the Machines of these MachineSets."""
    return "{0} in ({1})".format(LABEL_MACHINESET, ",".join(sorted(ms_names)))


def _predicate(client, node_res, want, absent, state, progress):
    def is_ready(name):
        node = get_item(client, node_res, name)
        return bool(node) and node_ready(node)[0]

    def predicate(response):
        machines = (response.to_dict().get("items") or []) if response is not None else []
        if absent:
            done, message = machines_gone(set(want), machines)
            failed = []
        else:
            refs = set(dig(m, ("status", "nodeRef", "name")) for m in machines)
            done, failed, message = machines_status(want, machines, dict((n, is_ready(n)) for n in refs if n))
        state.update(done=done, failed=failed, message=message)
        progress(message)
        return done or bool(failed)

    return predicate


def wait_machines(client, svc, namespace, want, timeout, sleep, progress, absent=False):
    """Wait until ``want`` ({MachineSet: replicas}) is met (or its Machines are gone); elapsed seconds."""
    machine_res = svc.find_resource("Machine", API_VERSION, fail=True)
    node_res = svc.find_resource("Node", "v1", fail=True)
    state = {"done": False, "failed": [], "message": ""}
    waiter = Waiter(client, machine_res, _predicate(client, node_res, want, absent, state, progress))
    dummy, dummy2, elapsed = wait_backoff(
        waiter, timeout, sleep, namespace=namespace, label_selectors=[machines_of(want)]
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
