# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""nfd_labels: one list request, an optional wait, then merge patches only where needed.

The wait is kubernetes.core's Waiter with a predicate over the node facts; the
patches go out in parallel (kube.parallel_map) through kubernetes.core's
K8SClient, read back with json.loads instead of ResourceInstance wrapping
(which costs more CPU than the request itself when 500 nodes come back).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time

from ansible.module_utils.common.text.converters import to_text
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.waiter import Waiter

from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    GpuopsError,
    Progress,
    describe_api_error,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import list_union, union_by_name
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    name_of,
    parallel_map,
    pool_size,
    status_of,
    wait_backoff,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd.facts import (
    describe_gpu_label,
    node_facts,
    summarize,
    wait_status,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd.params import check_params
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd.plan import label_diff, merge_nodes, plan, select


def wait(client, resource, plan_, progress):
    """Wait until the selected nodes satisfy ``wait_for``; raise GpuopsError on timeout."""
    state = {"message": ""}

    def predicate(response):
        if response is None:
            return False
        if state.get("response") is response:  # Waiter.wait asks again about the same answer before it returns
            return state["done"]
        listed = response.to_dict().get("items") or []
        if len(plan_["selectors"]) > 1:
            # gpu_nodes_only: the Waiter read the first GPU label form, the others are read here
            listed = union_by_name(listed, list_nodes(client, resource, plan_, plan_["selectors"][1:]))
        nodes, dummy = select(listed, plan_["node_names"])
        facts = [node_facts(n, plan_["gpu_label"]) for n in nodes]
        done, message = wait_status(facts, plan_["wait_for"], plan_["gpu_label"])
        state.update(message=message, response=response, done=done)
        progress(message)
        return done

    # NFD labels a node a second or two after its worker starts: short looks first (wait_backoff)
    ok, dummy, elapsed = wait_backoff(
        Waiter(client, resource, predicate),
        plan_["wait_timeout"],
        plan_["wait_sleep"],
        label_selectors=[plan_["selectors"][0]] if plan_["selectors"][0] else None,
    )
    if not ok:
        raise GpuopsError(
            "timed out after {0}s waiting for {1}: {2}. Check that the NodeFeatureDiscovery instance runs "
            "and the nodes have NVIDIA GPUs, or raise wait_timeout.".format(
                plan_["wait_timeout"],
                ", ".join("{0}>={1}".format(k, v) for k, v in sorted(plan_["wait_for"].items())),
                state["message"],
            ),
            param="wait_timeout",
            progress=progress.events,
        )
    return elapsed


def patch_all(client, resource, planned, workers):
    """Send the merge patches in parallel. Returns ({name: new node}, {name: error}, [gone])."""

    def one(item):
        name, patch, dummy = item
        body = {"metadata": {"labels": patch}}
        response = client.patch(resource, body, name=name, serialize=False, content_type="application/merge-patch+json")
        return json.loads(to_text(response.data))

    results, errors, gone = {}, {}, []
    for item, node, exc in parallel_map(one, planned, workers):
        name = item[0]
        if exc is None:
            results[name] = node
        elif status_of(exc) == 404:
            gone.append(name)
        else:
            errors[name] = describe_api_error(exc) if status_of(exc) else to_text(exc)
    return results, errors, gone


def names_preview(names, limit=20):
    names = sorted(n for n in names if n)
    if not names:
        return "none"
    more = len(names) - limit
    return ", ".join(names[:limit]) + (" and {0} more".format(more) if more > 0 else "")


def list_nodes(client, resource, plan_, selectors=None):
    """The nodes of the selection: one list request, or one per GPU label form (gpu_nodes_only)."""
    selectors = plan_["selectors"] if selectors is None else selectors
    return list_union(client, resource, selectors, param=plan_["selector_param"])


def selected_nodes(client, resource, plan_):
    """The nodes to read and label; unknown names and empty selections fail."""
    listed = list_nodes(client, resource, plan_)
    nodes, missing = select(listed, plan_["node_names"])
    if missing:
        where = " matching the selector" if plan_["selector"] else ""
        if plan_["gpu_only"]:
            where += " among the GPU nodes (gpu_nodes_only)"
        raise GpuopsError(
            "no Node named {0}{1}. Fix the names; existing nodes{1}: {2}.".format(
                ", ".join(missing),
                where,
                names_preview(name_of(n) for n in listed),
            ),
            param="node_names",
        )
    if plan_["changes"] and not nodes and plan_["gpu_only"]:
        raise GpuopsError(
            "no node{0} is a GPU node ({1}), so no label can be set. Run NFD first (the nfd role), or drop "
            "gpu_nodes_only and select the nodes.".format(
                " matching '{0}'".format(plan_["selector"]) if plan_["selector"] else "",
                describe_gpu_label(plan_["gpu_label"]),
            ),
            param="gpu_nodes_only",
        )
    if plan_["changes"] and not nodes:
        raise GpuopsError(
            "'{0}' matches no Node, so no label can be set. Check the selector with "
            "'kubectl get nodes -l \"{0}\"'.".format(plan_["selector"]),
            param=plan_["selector_param"],
        )
    return nodes


def apply_changes(module, client, resource, plan_, planned):
    """Patch (or in check mode predict) the planned nodes; {name: node from the server}."""
    if module.check_mode:
        return {}
    workers = min(plan_["parallel"], pool_size(client))
    updated, errors, gone = patch_all(client, resource, planned, workers)
    if gone:
        module.warn("nodes deleted while labelling: {0}".format(", ".join(sorted(gone))))
    if errors:
        shown = sorted(errors.items())[:5]
        raise GpuopsError(
            "labelling failed on {0} of {1} nodes ({2} labelled): {3}".format(
                len(errors), len(planned), len(updated), "; ".join("{0}: {1}".format(k, v) for k, v in shown)
            ),
            changed=bool(updated),
            changed_nodes=sorted(updated),
        )
    return updated


def run(module, client, svc):
    """nfd_labels: facts from NFD / GFD labels, optional wait, batched label edits."""
    started = time.monotonic()
    plan_ = check_params(module.params)
    resource = svc.find_resource("Node", "v1", fail=True)
    progress = Progress(module)
    result = {"changed": False}

    if plan_["wait_for"]:
        if module.check_mode:
            # as kubernetes.core does: no waiting in check mode (what is waited for may not be deployed yet)
            progress("wait_for skipped in check mode")
        else:
            wait(client, resource, plan_, progress)
        result["progress"] = progress.events

    nodes = selected_nodes(client, resource, plan_)
    planned = plan(nodes, plan_["changes"]) if plan_["changes"] else []
    if planned:
        updated = apply_changes(module, client, resource, plan_, planned)
        nodes = merge_nodes(nodes, planned, updated)
        result["changed"] = True
    if module._diff and plan_["changes"]:
        result["diff"] = label_diff(planned)

    facts = [node_facts(n, plan_["gpu_label"]) for n in nodes]
    changed_names = set(name for name, dummy, dummy2 in planned)
    for f in facts:
        f["changed"] = f["name"] in changed_names
    grouped = summarize(facts)
    result.update(grouped)
    result["nodes"] = facts
    result["changed_nodes"] = sorted(changed_names)
    result["duration"] = round(time.monotonic() - started, 3)
    result["ansible_facts"] = {"gpuops_nfd": dict(grouped, nodes=facts)}
    return result
