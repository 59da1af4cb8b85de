# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""operand_pods on the real control plane: a DaemonSet's pod per node, the node without one named;
bad input names the option; check mode reads the same.

The failure path with log lines (a crash-looping pod) runs through the container_toolkit role's
test of a toolkit configured for the wrong runtime.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import threading
import time

import pytest
from kubernetes import client
from waiting import wait_until

pytestmark = pytest.mark.integration


def _workers(core):
    nodes = core.list_node(label_selector="node-role.kubernetes.io/worker").items
    return sorted(n.metadata.name for n in nodes)[:2]


def test_each_node_gets_its_pod_or_none_and_bad_input_names_the_option(cluster, namespace, ansible_task):
    core = client.CoreV1Api(cluster.api)
    apps = client.AppsV1Api(cluster.api)
    on, off = _workers(core)
    labels = {"app": "probe-operand"}
    apps.create_namespaced_daemon_set(
        namespace,
        {
            "metadata": {"name": "probe-operand"},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        # by node name: the hostname label of an OpenShift node is its short name
                        "affinity": {
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [
                                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [on]}]}
                                    ]
                                }
                            }
                        },
                        "tolerations": [{"operator": "Exists"}],
                        "containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.9"}],
                    },
                },
            },
        },
    )
    pod = wait_until(
        lambda: [
            p
            for p in core.list_namespaced_pod(namespace, label_selector="app=probe-operand").items
            if any(c.type == "Ready" and c.status == "True" for c in (p.status.conditions or []))
        ],
        60,
        what="the probe pod ready",
    )[0]

    args = {"namespace": namespace, "selector": "app=probe-operand", "node_names": [on, off]}
    for check in (False, True):
        res = ansible_task("gpuops.cluster.operand_pods", args, check=check)
        assert not res.get("failed") and res["changed"] is False, res
        assert [(n["node"], n["pod"], n["ready"]) for n in res["nodes"]] == [
            (on, pod.metadata.name, True),
            (off, None, False),
        ]
        assert res["nodes"][0]["state"] == "Running, ready" and res["nodes"][1]["state"] == "no pod"
        # A node without a ready pod gets the known failures its state shows (none for "no pod").
        assert "causes" not in res["nodes"][0] and res["nodes"][1]["causes"] == []
        assert [n["node"] for n in res["not_ready"]] == [off] and res["pods"] == 1
        assert "ready on 1 of 2 node(s); not on " + off in res["summary"]

    # With a Service: the nodes with a ready endpoint (the EndpointSlice controller's, not ours).
    core.create_namespaced_service(
        namespace, {"metadata": {"name": "probe-operand"}, "spec": {"selector": labels, "ports": [{"port": 9400}]}}
    )

    def with_endpoint():
        res = ansible_task("gpuops.cluster.operand_pods", dict(args, service="probe-operand"))
        return res if res.get("endpoint_nodes") else None

    res = wait_until(with_endpoint, 60, what="a ready endpoint of the probe Service")
    assert res["endpoint_nodes"] == [on] and "endpoint_nodes" not in ansible_task("gpuops.cluster.operand_pods", args)

    for bad, param, words in (
        ({"selector": "app in ("}, "selector", "selector"),
        ({"namespace": "Not_A_Namespace"}, "namespace", "namespace"),
        ({"log_lines": -1}, "log_lines", "0 (no logs) or more"),
        ({"service": "Bad_Service"}, "service", "Service name"),
    ):
        res = ansible_task("gpuops.cluster.operand_pods", dict(args, **bad))
        assert res.get("failed") and res.get("param") == param, res
        assert res["msg"].startswith(param + ":") and words in res["msg"], res["msg"]

    # The node lifecycle controller marks a pod not ready when its node missed heartbeats (MarkPodsNotReady flips
    # only the pod's Ready condition); its kubelet sets it back once it reaches the API again. Played on the real
    # API with kwok (the pod's kubelet) stopped meanwhile: the verdict waits for the kubelet instead of failing a
    # healthy node.
    name, kwok = pod.metadata.name, cluster.lc.pid_of("kwok")
    os.kill(kwok, signal.SIGSTOP)
    try:
        live = core.read_namespaced_pod_status(name, namespace)
        for cond in live.status.conditions:
            if cond.type == "Ready":
                cond.status = "False"
        core.replace_namespaced_pod_status(name, namespace, live)
        marked = core.read_namespaced_pod(name, namespace)
        assert [c.status for c in marked.status.conditions if c.type == "Ready"] == ["False"]
        kubelet = threading.Timer(4, os.kill, [kwok, signal.SIGCONT])
        started = time.monotonic()
        kubelet.start()
        res = ansible_task("gpuops.cluster.operand_pods", args)
    finally:
        os.kill(kwok, signal.SIGCONT)
    assert res["nodes"][0]["ready"] and not res["nodes"][0]["settling"], res["nodes"]
    assert time.monotonic() - started >= 4, "the module read the pod ready before its kubelet came back"
