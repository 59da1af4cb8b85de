# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_timeline: read what the timeline needs in one process, then build it (module_utils/timeline).

Only the GPU nodes are read (one list per NFD label form), the Machines only when asked (``machines``:
the caller knows whether the cluster has the machine API), and the pods of the GPU stack by their
component label (the GPU Operator's toolkit and device plugin pods by their app label); the nfd-worker
pods (one list per form of their labels) only when a GPU node's
managedFields cannot say when it was labelled. The raw responses are parsed
without ResourceInstance wrapping. On 1,000 nodes this is one task of about a second where three
k8s_info reads of every Node and pod took ten.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time

from ansible_collections.gpuops.cluster.plugins.module_utils import follow
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import list_gpu_nodes
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import dig, get_item, list_items, name_of
from ansible_collections.gpuops.cluster.plugins.module_utils.reports import check_report_path, write_atomic
from ansible_collections.gpuops.cluster.plugins.module_utils.timeline import (
    COMPONENT_LABEL,
    NFD_WORKER_SELECTORS,
    OPERATOR_APP_STEPS,
    POD_STEPS,
    build,
    needs_nfd_worker,
)

POD_SELECTOR = "{0} in ({1})".format(COMPONENT_LABEL, ",".join(sorted(POD_STEPS)))
OPERATOR_POD_SELECTOR = "app in ({0})".format(",".join(sorted(OPERATOR_APP_STEPS)))


def _good_mark(mark):
    if not isinstance(mark, dict) or not mark.get("at"):
        return False
    if mark.get("event") == "skipped":
        states = mark.get("states")
        return isinstance(states, list) and len(states) > 0 and all(isinstance(s, str) and s for s in states)
    return mark.get("event") in ("start", "end") and bool(mark.get("state"))


def check_marks(marks):
    """The marks as the playbook records them: each with state, event (start or end) and at, or the states the
    ledger skipped (event skipped, states, at)."""
    for index, mark in enumerate(marks or []):
        if not _good_mark(mark):
            raise GpuopsError(
                "item {0} must be a dict with state, event (start or end) and at (ISO 8601), or with event skipped, "
                "states (a non-empty list of state names) and at, got {1!r}.".format(index, mark),
                param="marks",
            )
    return list(marks or [])


def nfd_worker_pods(client, pod_res, nodes, pods):
    """The nfd-worker pods on the GPU nodes that need them (``timeline.needs_nfd_worker``); no request when none does."""
    by_node = {}
    for pod in pods:
        by_node.setdefault(dig(pod, ("spec", "nodeName")), []).append(pod)
    wanted = set(name_of(n) for n in nodes if needs_nfd_worker(n, by_node.get(name_of(n), [])))
    if not wanted:
        return []
    workers = []
    for selector in NFD_WORKER_SELECTORS:
        workers.extend(
            p for p in list_items(client, pod_res, label_selector=selector) if dig(p, ("spec", "nodeName")) in wanted
        )
    return workers


def read(client, svc, machines, machine_namespace):
    """(GPU nodes, Machines, GPU stack pods, nfd-worker pods on the GPU nodes that need them) as plain dicts."""
    node_res = svc.find_resource("Node", "v1", fail=True)
    pod_res = svc.find_resource("Pod", "v1", fail=True)
    pods = list_items(client, pod_res, label_selector=POD_SELECTOR)
    pods += list_items(
        client, pod_res, label_selector=OPERATOR_POD_SELECTOR
    )  # the GPU Operator's (gpuops_stack operator)
    nodes = list_gpu_nodes(client, node_res)
    # a node that runs a GPU stack pod belongs in the timeline even without the NFD label (rare: read it by name)
    known = set(name_of(n) for n in nodes)
    for name in sorted(set(dig(p, ("spec", "nodeName")) for p in pods) - known - {None}):
        node = get_item(client, node_res, name)
        if node:
            nodes.append(node)
    workers = nfd_worker_pods(client, pod_res, nodes, pods)
    # looked up only when asked: a kind the cluster lacks makes the client refresh its discovery
    machine_res = svc.find_resource("Machine", "machine.openshift.io/v1beta1") if machines else None
    return nodes, list_items(client, machine_res, namespace=machine_namespace) if machine_res else [], pods, workers


def _ledger():
    from ansible_collections.gpuops.cluster.plugins.module_utils import ledger

    return "gpuops.cluster.state_ledger", ledger.argument_spec, ledger.check_recorded, ledger.run


# gpu_timeline's follower: the ledger's record at the end of a run, in the same module run (site.yml's last two
# steps, one module start).
FOLLOWERS = (("state_ledger", _ledger),)


def run(module, client, svc):
    started = time.monotonic()
    params = module.params
    # Checked before any read or write, as k8s_ensure checks its followers.
    recorded = follow.check(params, FOLLOWERS)
    marks = check_marks(params.get("marks"))
    report = check_report_path(params.get("report_json"), "report_json")
    nodes, machines, pods, workers = read(client, svc, params["machines"], params["machine_namespace"])
    timeline = build(marks, nodes, machines, pods + workers, params.get("validated") or {})
    if report and not module.check_mode:
        # As ansible.builtin.to_nice_json writes it.
        write_atomic(report, json.dumps(timeline, indent=4, sort_keys=True, separators=(",", ": ")) + "\n")
    elif report:
        report = None  # check mode writes nothing
    result = {
        "changed": False,
        "timeline": timeline,
        "report": report,
        "read": {"gpu_nodes": len(nodes), "machines": len(machines), "pods": len(pods), "nfd_workers": len(workers)},
        "state_ledger": None,
    }
    follow.run(module, client, svc, recorded, result, FOLLOWERS)
    result["duration"] = round(time.monotonic() - started, 3)
    return result
