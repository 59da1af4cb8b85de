# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""DCGM exporter metrics end to end on the simulator (``k8s_cluster``: bare gpu-0 T4 and gpu-1 A10G).

The simulation's minimal NVIDIA DaemonSets (driver, toolkit, device plugin, GFD, dcgm-exporter) and the
exporter's Service go into a namespace of this module; the GPU node agent brings them up. Then, the way a
user's controller reads them: ``/metrics`` through the API server's pod proxy and service proxy (the
exporter pods listen on their own pod IPs, in the pod network the launcher routed locally), in dcgm-exporter's
exposition format; ``gpu_validate`` with checks [metrics] passes through both; an exporter down on one node
(crash-looping, and a NotReady node) fails the check naming that node. The namespace goes at the end, and
with the device plugin and GFD gone the nodes are bare again.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import os
import re
import sys
import uuid

import pytest
from conftest import run_playbook
from kubernetes import client
from kubernetes.client.rest import ApiException

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import control, manifests  # noqa: E402
from simopenshift.testing import Client, ensure_runtime_class, parse_exposition  # noqa: E402
from waiting import wait_until  # noqa: E402

pytestmark = pytest.mark.integration

GPU_NODES = {"gpu-0": ("Tesla T4", "g4dn.xlarge"), "gpu-1": ("NVIDIA A10G", "g5.xlarge")}
SELECTOR = "app=nvidia-dcgm-exporter"
DEFAULT_FIELDS = 25  # non-label rows of dcgm-exporter's etc/default-counters.csv (4.5.3-4.8.2)
DRIVER_IMAGE = "nvcr.io/nvidia/driver:550.90.07"  # compiles on the node: any kernel


def namespace_gone(core, name):
    try:
        core.read_namespace(name)
    except ApiException as exc:
        return exc.status == 404
    return False


def on_gpu_nodes(ds):
    """Place a simulation DaemonSet on the two bare GPU nodes (by instance type: they have no NFD label)."""
    spec = ds["spec"]["template"]["spec"]
    spec.pop("nodeSelector", None)
    spec["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "node.kubernetes.io/instance-type",
                                "operator": "In",
                                "values": sorted(t for _m, t in GPU_NODES.values()),
                            }
                        ]
                    }
                ]
            }
        }
    }
    return ds


class Env(object):
    pass


def exporter_pods(env):
    pods = env.core.list_namespaced_pod(env.ns, label_selector=SELECTOR).items
    return dict((p.spec.node_name, p) for p in pods if p.spec.node_name and not p.metadata.deletion_timestamp)


def ready(pod):
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def pod_proxy(env, pod, path="metrics"):
    return env.core.connect_get_namespaced_pod_proxy_with_path(pod.metadata.name + ":9400", env.ns, path)


def service_proxy(env, path="metrics"):
    return env.core.connect_get_namespaced_service_proxy_with_path("nvidia-dcgm-exporter:9400", env.ns, path)


def gpu_validate(cluster, env, **kw):
    args = {
        "checks": ["metrics"],
        "node_names": sorted(GPU_NODES),
        "namespace": env.ns,
        "metrics_namespace": env.ns,
        "metrics_selector": SELECTOR,
        "fail_on_error": False,
        "wait_timeout": 30,
    }
    args.update(kw)
    out = run_playbook(cluster, [{"name": "validate", "gpuops.cluster.gpu_validate": args}])
    result = out["plays"][0]["tasks"][-1]["hosts"]["localhost"]
    assert not result.get("failed"), result
    return result, dict((n["node"], n["checks"]["metrics"]) for n in result["nodes"])


@pytest.fixture(scope="module")
def env(k8s_cluster):
    e = Env()
    e.api = k8s_cluster.api
    e.core = client.CoreV1Api(e.api)
    e.ns = "sim-dcgm-" + uuid.uuid4().hex[:6]
    e.cidr = k8s_cluster.lc.read_state().get("pod_cidr")
    e.core.create_namespace({"metadata": {"name": e.ns}})
    apps = client.AppsV1Api(e.api)
    ensure_runtime_class(Client(e.api))
    try:
        for ds in (
            manifests.driver(e.ns, image=DRIVER_IMAGE),
            manifests.toolkit(e.ns),
            manifests.device_plugin(e.ns),
            manifests.gpu_feature_discovery(e.ns),
            manifests.dcgm_exporter(e.ns),
        ):
            apps.create_namespaced_daemon_set(e.ns, on_gpu_nodes(ds))
        e.core.create_namespaced_service(e.ns, manifests.dcgm_exporter_service(e.ns))
        wait_until(
            lambda: set(exporter_pods(e)) == set(GPU_NODES) and all(ready(p) for p in exporter_pods(e).values()),
            90,
            what="dcgm-exporter Ready on both GPU nodes",
        )
        yield e
    finally:
        for node in GPU_NODES:
            control.exporter_up(e.api, node)
            control.repair_node(e.api, node)
        e.core.delete_namespace(e.ns)
        wait_until(lambda: namespace_gone(e.core, e.ns), 90, what="namespace %s deleted" % e.ns)
        wait_until(
            lambda: all("nvidia.com/gpu" not in (e.core.read_node(n).status.capacity or {}) for n in GPU_NODES),
            60,
            what="GPU nodes bare again",
        )


def test_pod_proxy_serves_the_exporters_format_for_each_node(env):
    assert env.cidr, "the launcher routed no pod network (root / CAP_NET_ADMIN needed for this test)"
    network = ipaddress.ip_network(env.cidr)
    for node, pod in sorted(exporter_pods(env).items()):
        assert ipaddress.ip_address(pod.status.pod_ip) in network, (node, pod.status.pod_ip)
        families = parse_exposition(pod_proxy(env, pod))
        assert len(families) == DEFAULT_FIELDS
        assert families["DCGM_FI_DEV_GPU_TEMP"]["help"] == "GPU temperature (in C)."
        assert families["DCGM_FI_DEV_GPU_TEMP"]["type"] == "gauge"
        model, _itype = GPU_NODES[node]
        for name, family in families.items():
            assert len(family["samples"]) == 1, (node, name)  # one GPU per node
            labels, value = family["samples"][0]
            assert labels["Hostname"] == node  # image 3.3.5-3.4.1: the capitalised label
            assert labels["modelName"] == model and labels["gpu"] == "0" and labels["device"] == "nvidia0"
            assert re.match(r"^GPU-[0-9a-f-]{36}$", labels["UUID"]) and labels["pci_bus_id"] == "00000000:00:1E.0"
            assert labels["DCGM_FI_DRIVER_VERSION"] == "550.90.07"
        memory = [families["DCGM_FI_DEV_FB_" + k]["samples"][0][1] for k in ("USED", "FREE", "RESERVED")]
        gpu_memory = int(env.core.read_node(node).metadata.labels["nvidia.com/gpu.memory"])
        assert sum(memory) == gpu_memory
        assert pod_proxy(env, pod, "health") == "OK"


def test_service_proxy_reaches_every_nodes_exporter_through_real_endpoints(env):
    endpoints = env.core.read_namespaced_endpoints("nvidia-dcgm-exporter", env.ns)
    ips = sorted(a.ip for s in endpoints.subsets or [] for a in s.addresses or [])
    assert ips == sorted(p.status.pod_ip for p in exporter_pods(env).values())
    seen = set()
    for _attempt in range(30):
        families = parse_exposition(service_proxy(env))
        seen |= set(s[0]["Hostname"] for s in families["DCGM_FI_DEV_GPU_TEMP"]["samples"])
        if seen == set(GPU_NODES):
            break
    assert seen == set(GPU_NODES)


def test_gpu_validate_metrics_passes_via_pod_and_service(k8s_cluster, env):
    for via in ("pod", "service"):
        result, checks = gpu_validate(k8s_cluster, env, metrics_via=via)
        assert result["passed"] is True, (via, checks)
        for node in GPU_NODES:
            assert checks[node]["status"] == "pass", (via, node, checks[node])
            assert checks[node]["message"].startswith("DCGM_FI_DEV_GPU_TEMP for 1 GPU(s)"), checks[node]


def test_gpu_pod_series_carry_its_pod(env):
    pod = manifests.validation_pod(env.ns, "gpu-burn", command=("sleep", "infinity"), node_name="gpu-1")
    pod["spec"]["restartPolicy"] = "Always"
    pod["metadata"]["labels"] = {"app": "gpu-burn"}
    env.core.create_namespaced_pod(env.ns, pod)

    def labelled():
        labels = parse_exposition(pod_proxy(env, exporter_pods(env)["gpu-1"]))["DCGM_FI_DEV_GPU_UTIL"]["samples"][0]
        return labels if labels[0].get("pod") == "gpu-burn" else None

    labels, util = wait_until(labelled, 30, what="gpu-burn in gpu-1's series")
    assert labels["namespace"] == env.ns and labels["container"] == "cuda" and util > 0
    env.core.delete_namespaced_pod("gpu-burn", env.ns, grace_period_seconds=0)


def test_exporter_down_on_one_node_fails_naming_it(k8s_cluster, env):
    control.exporter_down(env.api, "gpu-1")
    try:
        wait_until(lambda: not ready(exporter_pods(env)["gpu-1"]), 30, what="gpu-1 exporter not Ready")
        pod = exporter_pods(env)["gpu-1"]
        with pytest.raises(ApiException) as err:
            pod_proxy(env, pod)
        # Refused once the listener is gone; reset when the proxy caught it closing (both: nothing serves).
        body = err.value.body or ""
        assert err.value.status in (502, 503) and ("connection refused" in body or "connection reset" in body), body
        result, checks = gpu_validate(k8s_cluster, env, metrics_via="pod")
        assert result["passed"] is False
        assert [f.split(":")[0] for f in result["failures"]] == ["gpu-1"], result["failures"]
        assert checks["gpu-0"]["status"] == "pass"
        assert checks["gpu-1"]["status"] == "unreachable"
        assert checks["gpu-1"]["message"].startswith(
            "metrics unreachable via pod proxy /api/v1/namespaces/{0}/pods/{1}:9400/proxy/metrics".format(
                env.ns, pod.metadata.name
            )
        ), checks["gpu-1"]
        # The Service's endpoints drop the not-Ready pod: gpu-1 is never seen through it.
        wait_until(
            lambda: len(
                [
                    a
                    for s in env.core.read_namespaced_endpoints("nvidia-dcgm-exporter", env.ns).subsets or []
                    for a in s.addresses or []
                ]
            )
            == 1,
            30,
            what="one ready endpoint",
        )
        result, checks = gpu_validate(k8s_cluster, env, metrics_via="service")
        assert result["passed"] is False and checks["gpu-0"]["status"] == "pass"
        assert checks["gpu-1"]["status"] != "pass" and "gpu-1" in checks["gpu-1"]["message"]
    finally:
        control.exporter_up(env.api, "gpu-1")
    wait_until(lambda: ready(exporter_pods(env)["gpu-1"]), 60, what="gpu-1 exporter Ready again")
    assert "DCGM_FI_DEV_GPU_TEMP{" in pod_proxy(env, exporter_pods(env)["gpu-1"])


def test_not_ready_node_stops_its_exporter(env):
    pod = exporter_pods(env)["gpu-0"]
    control.break_node(env.api, "gpu-0")
    try:

        def refused():
            try:
                pod_proxy(env, pod)
            except ApiException as exc:
                return exc.status in (502, 503)
            return False

        wait_until(refused, 30, what="gpu-0's exporter unreachable while the node is NotReady")
    finally:
        control.repair_node(env.api, "gpu-0")

    def back():
        try:
            return "DCGM_FI_DEV_GPU_TEMP{" in pod_proxy(env, exporter_pods(env)["gpu-0"])
        except ApiException:  # the node's stack is still coming back (toolkit, then the exporter's restart)
            return False

    wait_until(back, 60, what="gpu-0's exporter back")
