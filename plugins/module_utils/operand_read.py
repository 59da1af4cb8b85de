# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""operand_pods: a DaemonSet's pod on each GPU node and its state in words, read in one task.

The pods are read raw (no ResourceInstance wrapping) and only the per-node verdict
(``operand_pods.operand_pod_states``) comes back: at 100 GPU nodes a k8s_info of the
pods returned a megabyte that every later task of the play carried along.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import list_gpu_nodes
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    core_api,
    list_items,
    name_of,
    read_log,
    read_until,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods import (
    SETTLE_SECONDS,
    operand_pod_states,
    ready_endpoint_nodes,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import (
    check_dns_label,
    check_dns_subdomain,
    check_selector,
)


def check_params(params, prefix=""):
    """The options, checked: (namespace, selector, node_names or None, log_lines). ``prefix`` names them where
    they are suboptions (k8s_ensure's ``operand_pods.``)."""
    namespace = check_dns_label(params.get("namespace"), prefix + "namespace", "namespace name")
    selector = check_selector(params.get("selector"), prefix + "selector")
    if not selector:
        raise GpuopsError(
            "is required: the label selector of the DaemonSet's pods, e.g. 'app=nvidia-dcgm-exporter'.",
            param=prefix + "selector",
        )
    names = params.get("node_names")
    if names is not None:
        bad = [n for n in names if not isinstance(n, str) or not n]
        if bad:
            raise GpuopsError("must be a list of node names, got {0!r}.".format(bad[0]), param=prefix + "node_names")
    lines = params.get("log_lines") or 0
    if lines < 0:
        raise GpuopsError("must be 0 (no logs) or more, got {0}.".format(lines), param=prefix + "log_lines")
    if params.get("service"):
        check_dns_subdomain(params["service"], prefix + "service", "Service name")
    return namespace, selector, names, lines


def summary(states, what):
    ready = [s for s in states if s["ready"]]
    return "{0} ready on {1} of {2} node(s){3}".format(
        what,
        len(ready),
        len(states),
        "; not on " + ", ".join(s["node"] for s in states if not s["ready"]) if len(ready) < len(states) else "",
    )


def failing_container(pod):
    """The first container that is not ready (a pod with a sidecar needs the name to read a log), or None."""
    for status in ((pod or {}).get("status") or {}).get("containerStatuses") or []:
        if not status.get("ready"):
            return status.get("name")
    return None


def _tail(core, pod, namespace, lines, container=None):
    try:
        text = read_log(core, pod, namespace, tail=lines, container=container)
    except Exception:  # a pod that never started has no log: its state says why
        return []
    return [line for line in (text or "").splitlines() if line.strip()][-lines:]


def read_states(client, svc, namespace, selector, names, clock=time.monotonic, pause=time.sleep):
    """(pods, per-node states), read again every 2 s (up to SETTLE_SECONDS) while a pod is only settling."""
    resource = svc.find_resource("Pod", "v1", fail=True)

    def read():
        pods = list_items(client, resource, namespace=namespace, label_selector=selector, param="selector")
        return pods, operand_pod_states(pods, names)

    return read_until(
        read, lambda found: not any(s["settling"] for s in found[1]), SETTLE_SECONDS, 2, clock=clock, pause=pause
    )


def run(module, client, svc):
    return dict(report(client, svc, module.params), changed=False)


def report(client, svc, params):
    """operand_pods' result (without ``changed``) for ``params`` (args.OPERAND_POD_OPTIONS)."""
    namespace, selector, names, lines = check_params(params)
    service = params.get("service")
    node_res = svc.find_resource("Node", "v1", fail=True)
    if names is None:
        names = [name_of(n) for n in list_gpu_nodes(client, node_res)]
    pods, states = read_states(client, svc, namespace, selector, names)
    if lines:
        core = core_api(client)
        by_name = dict((name_of(p), p) for p in pods)
        for state in states:
            if state["pod"] and not state["ready"]:
                container = failing_container(by_name.get(state["pod"]))
                state["log_lines"] = _tail(core, state["pod"], namespace, lines, container)
    for state in states:
        if not state["ready"]:
            # Imported here: the signatures (about 70 KB) are compiled only by a run that has a pod to explain.
            from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.match import match_lines

            # The known failures its state message and log show (module_utils/diagnose, each from a public report).
            state["causes"] = match_lines([state["state"] or ""] + state.get("log_lines", []))
    result = {
        "nodes": states,
        "not_ready": [s for s in states if not s["ready"]],
        "pods": len(pods),
        "summary": summary(states, "{0} pods in {1},".format(selector, namespace)),
    }
    if service:
        result["endpoint_nodes"] = endpoint_nodes(
            client, svc, namespace, service, [s["node"] for s in states if s["ready"]]
        )
    return result


# The EndpointSlice controller follows pod readiness within a second, but after an API server restart its watches
# come back late: client-go's reflector waits between failed list/watch attempts with a backoff that doubles from
# 0.8 s to a 30 s cap, jittered up to twice that, and resets only after 2 minutes without a failure
# (tools/cache/reflector.go, NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0), client-go v0.34). After
# repeated restarts that is up to 60 s (seen: a 30 s wait ran out). The endpoints of ready pods are waited for
# this long before they count as missing.
ENDPOINT_SECONDS = 65


def endpoint_nodes(client, svc, namespace, service, ready_nodes, clock=time.monotonic, pause=time.sleep):
    """The nodes with a ready endpoint of ``service``, read again (up to ENDPOINT_SECONDS) while a node of
    ``ready_nodes`` (those with a ready pod) has none yet."""
    resource = svc.find_resource("EndpointSlice", "discovery.k8s.io/v1", fail=True)

    def read():
        label = "kubernetes.io/service-name=" + service
        return ready_endpoint_nodes(list_items(client, resource, namespace=namespace, label_selector=label))

    return read_until(read, lambda nodes: set(ready_nodes) <= set(nodes), ENDPOINT_SECONDS, 1, clock=clock, pause=pause)
