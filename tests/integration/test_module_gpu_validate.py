# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpuops.cluster.gpu_validate against the local control plane.

A node set gets the NVIDIA component DaemonSets (driver, toolkit, device
plugin, DCGM exporter); the simulated GPU node agent plays kubelet for them:
the driver loads when its image was built for the node's kernel, the device
plugin then publishes nvidia.com/gpu, validation pods Succeed with the
seed-000 output. One node runs another kernel than the driver image: its
driver crash-loops and it advertises no GPU.

Audit expectation (the module creates and deletes pods by nature): a run
reports changed=false, its only writes are one ``create`` and one ``delete``
per validation pod in the validation namespace (a ``deletecollection`` by run
label follows only if pods were still listed after that), and no pod of the
run is left afterwards; check mode and the read-only checks write nothing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal
import threading
import time
import xml.etree.ElementTree as ET

import pytest
from gpu_nodes import (
    RHCOS_416,
    RHCOS_417,
    SET_LABEL,
    GpuNodes,
    allocatable,
    daemonset,
    delete_namespace,
    delete_runtime_class,
    deploy,
    ensure_runtime_class,
    gpu_stack,
    kernel_of,
    make_namespace,
    new_tag,
    on_nvidia_runtime,
    wait_until,
)
from kubernetes import client
from simopenshift import control
from simopenshift.testing import Client as SimClient
from simopenshift.testing import allow_privileged

pytestmark = pytest.mark.integration

MODULE = "gpuops.cluster.gpu_validate"
HEALTH = "gpuops.test/health"
RUN_LABEL = "gpuops.cluster/validation-run"


class Stack(object):
    pass


@pytest.fixture(scope="module")
def stack(cluster):
    """3 healthy GPU nodes + 1 node whose kernel does not match the driver image, with the NVIDIA DaemonSets."""
    st = Stack()
    st.ns = make_namespace(cluster.api)
    allow_privileged(SimClient(cluster.api), st.ns)  # hostPath / privileged operands (SCC admission)
    st.nodes = GpuNodes(cluster.api)
    st.tag = new_tag()
    st.core = client.CoreV1Api(cluster.api)
    try:
        _tag, st.healthy = st.nodes.make(3, tag=st.tag, build=RHCOS_416, extra_labels={HEALTH: "ok"})
        _tag, broken = st.nodes.make(
            1, tag=st.tag, prefix="gpu-old", build=RHCOS_417, extra_labels={HEALTH: "kernel-mismatch"}
        )
        st.broken = broken[0]
        driver_image = "nvcr.io/nvidia/driver:550.90.07-{0}-rhcos4.16".format(kernel_of(RHCOS_416))
        st.made_runtime_class = ensure_runtime_class(cluster.api)
        deploy(cluster.api, gpu_stack(st.ns, st.tag, driver_image))
        wait_until(
            lambda: all(allocatable(st.core, n) == 1 for n in st.healthy),
            90,
            what="nvidia.com/gpu on the healthy nodes",
        )

        def broken_driver_crashing():
            pods = st.core.list_namespaced_pod(
                st.ns,
                label_selector="app.kubernetes.io/component=nvidia-driver",
                field_selector="spec.nodeName=" + st.broken,
            ).items
            return pods and any(
                cs.state.waiting and cs.state.waiting.reason == "CrashLoopBackOff"
                for cs in pods[0].status.container_statuses or []
            )

        wait_until(broken_driver_crashing, 60, what="driver CrashLoopBackOff on " + st.broken)
        yield st
    finally:
        delete_namespace(cluster.api, st.ns)
        st.nodes.cleanup()
        if getattr(st, "made_runtime_class", False):
            delete_runtime_class(cluster.api)


def base_args(st, **kw):
    args = {"namespace": st.ns, "node_selector": {SET_LABEL: st.tag, HEALTH: "ok"}, "wait_timeout": 60, "wait_sleep": 1}
    args.update(kw)
    return args


def validation_pods(st):
    return st.core.list_namespaced_pod(st.ns, label_selector=RUN_LABEL).items


def test_healthy_nodes_pass_and_nothing_is_left(cluster, stack, ansible_task, tmp_path):
    paths = {
        "report_json": str(tmp_path / "r.json"),
        "report_junit": str(tmp_path / "reports" / "run-1" / "r.xml"),  # a missing folder is made
        "report_markdown": str(tmp_path / "r.md"),
    }
    mark = cluster.audit.mark()
    result = ansible_task(
        MODULE, base_args(stack, checks=["allocatable", "driver", "vectoradd", "nvidia_smi"], **paths)
    )
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False and result["passed"] is True
    assert sorted(n["node"] for n in result["nodes"]) == sorted(stack.healthy)
    for node in result["nodes"]:
        checks = node["checks"]
        assert all(c["status"] == "pass" for c in checks.values()), node
        assert checks["vectoradd"]["message"] == "vectoradd: Test PASSED"
        assert checks["nvidia_smi"]["message"].startswith("nvidia-smi: driver 550.90.07")
        assert checks["allocatable"]["allocatable"] == 1
    writes = cluster.audit.writes_since(mark)
    creates = [w for w in writes if w["verb"] == "create"]
    others = [w for w in writes if w["verb"] != "create"]
    assert len(creates) == 2 * len(stack.healthy) and {(w["resource"], w["namespace"]) for w in creates} == {
        ("pods", stack.ns)
    }
    assert sorted(w["name"] for w in others) == sorted(w["name"] for w in creates)
    assert {(w["verb"], w["resource"], w["namespace"]) for w in others} == {("delete", "pods", stack.ns)}
    assert validation_pods(stack) == []
    report = json.load(open(paths["report_json"]))
    assert report["summary"]["result"] == "passed" and report["summary"]["nodes"] == 3
    suite = ET.parse(paths["report_junit"]).getroot().find("testsuite")
    assert suite.get("tests") == str(3 * 5) and suite.get("failures") == "0"
    assert "GPU validation: PASSED (3/3 nodes passed)" in open(paths["report_markdown"]).read()


def test_a_burn_in_reports_each_gpu_and_names_the_one_that_fails(cluster, stack, ansible_task, tmp_path):
    """DCGM's diagnostics on every GPU of each node: per-GPU results in the result and the JSON report; a GPU whose
    memory test fails (the simulator's lever; dcgmi exits 205 with its JSON) is named with DCGM's message."""
    report = str(tmp_path / "burn-in.json")
    args = base_args(stack, checks=["burnin"], burnin_level=2, wait_timeout=300, report_json=report)
    result = ansible_task(MODULE, args)
    assert not result.get("failed"), result.get("msg")
    for node in result["nodes"]:
        burn = node["checks"]["burnin"]
        assert burn["status"] == "pass", burn
        assert burn["message"] == "burn-in: dcgmi diag -r 2 (DCGM 4.6.0): 1 GPU(s) passed software, pcie, memory"
        assert burn["gpus"] == [{"gpu": "0", "result": "pass", "passed": ["memory", "pcie", "software"], "failed": []}]
    with open(report) as f:
        assert all(n["checks"]["burnin"]["gpus"][0]["result"] == "pass" for n in json.load(f)["nodes"])

    bad = sorted(stack.healthy)[0]
    control.dcgm_gpu_fails(cluster.api, bad, 0)
    try:
        result = ansible_task(MODULE, dict(args, fail_on_error=False))
    finally:
        control.dcgm_gpu_heals(cluster.api, bad)
    assert result["passed"] is False
    verdicts = dict((n["node"], n["checks"]["burnin"]) for n in result["nodes"])
    assert verdicts[bad]["status"] == "fail" and verdicts[bad]["gpus"][0]["result"] == "fail"
    assert "GPU 0 failed memory: A memory mismatch was detected on GPU 0" in verdicts[bad]["message"]
    assert all(v["status"] == "pass" for n, v in verdicts.items() if n != bad)
    assert validation_pods(stack) == []
    # Not enough time for the level asked: refused before any pod, naming wait_timeout.
    mark = cluster.audit.mark()
    refused = ansible_task(MODULE, dict(args, burnin_level=3, burnin_duration=120))
    assert refused.get("failed") and refused["msg"].startswith("wait_timeout: 300s is too short for a level 3 burn-in")
    assert cluster.audit.writes_since(mark) == []


def test_check_mode_writes_nothing(cluster, stack, ansible_task):
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, base_args(stack, checks=["allocatable", "driver", "vectoradd"]), check=True)
    assert not result.get("failed"), result.get("msg")
    assert cluster.audit.writes_since(mark) == []
    assert result["changed"] is False
    assert {n["checks"]["vectoradd"]["status"] for n in result["nodes"]} == {"skipped"}
    assert {n["checks"]["driver"]["status"] for n in result["nodes"]} == {"pass"}


def test_a_driver_pod_its_node_controller_marked_not_ready_is_read_again(cluster, stack, ansible_task):
    """After missed heartbeats (an API server restart) the node lifecycle controller marks the node's pods not ready;
    the kubelet sets them back once it reaches the API. Played with the simulated kubelet (the GPU node agent, in
    sim-controllers) stopped for 4 s: the driver check waits for it instead of failing a healthy node."""
    node = stack.healthy[0]
    driver = stack.core.list_namespaced_pod(
        stack.ns, label_selector="app.kubernetes.io/component=nvidia-driver", field_selector="spec.nodeName=" + node
    ).items[0]
    sim = cluster.lc.pid_of("sim-controllers")
    os.kill(sim, signal.SIGSTOP)
    try:
        live = stack.core.read_namespaced_pod_status(driver.metadata.name, stack.ns)
        for cond in live.status.conditions:
            if cond.type == "Ready":
                cond.status = "False"
        stack.core.replace_namespaced_pod_status(driver.metadata.name, stack.ns, live)
        kubelet = threading.Timer(4, os.kill, [sim, signal.SIGCONT])
        started = time.monotonic()
        kubelet.start()
        result = ansible_task(MODULE, base_args(stack, checks=["driver"]))
    finally:
        os.kill(sim, signal.SIGCONT)
    assert not result.get("failed") and result["passed"], result.get("msg")
    assert time.monotonic() - started >= 4, "the driver pod was read ready before its kubelet came back"


def test_failing_node_is_named_with_every_reason(cluster, stack, ansible_task, tmp_path):
    report_path = str(tmp_path / "fail.json")
    junit = str(tmp_path / "fail.xml")
    mark = cluster.audit.mark()
    result = ansible_task(
        MODULE, base_args(stack, node_selector={SET_LABEL: stack.tag}, report_json=report_path, report_junit=junit)
    )
    assert result.get("failed"), result
    msg = result["msg"]
    assert msg.startswith(
        "GPU validation failed on 1 of 4 GPU node(s) (checks: allocatable, driver, vectoradd): {0}: ".format(
            stack.broken
        )
    )
    # No driver, so no toolkit, so no nvidia runtime handler: the plugin's sandbox cannot be created (real node).
    assert "allocatable nvidia.com/gpu 0, expected at least 1; device-plugin pod Pending: ContainerCreating" in msg, msg
    assert "driver pod nvidia-driver-daemonset-" in msg and "CrashLoopBackOff (restarts" in msg
    assert "Module nvidia not found in directory /lib/modules/{0}".format(kernel_of(RHCOS_417)) in msg
    assert "Kernel modules in this image were built for {0}".format(kernel_of(RHCOS_416)) in msg
    assert "vectoradd not run" not in msg  # not run because allocatable failed: skipped, not a second failure
    for healthy in stack.healthy:
        assert healthy + ":" not in msg
    writes = cluster.audit.writes_since(mark)
    assert len([w for w in writes if w["verb"] == "create"]) == 3  # no pod for the node without GPUs
    assert validation_pods(stack) == []
    report = json.load(open(report_path))
    assert report["summary"]["failed"] == 1 and report["failures"][0].startswith(stack.broken + ": ")
    broken = [n for n in report["nodes"] if n["node"] == stack.broken][0]
    assert broken["checks"]["vectoradd"] == {
        "status": "skipped",
        "message": "vectoradd not run: the allocatable check failed, the pod could not be scheduled",
    }
    suite = ET.parse(junit).getroot().find("testsuite")
    assert int(suite.get("failures")) == 2  # allocatable and driver of the broken node
    assert int(suite.get("skipped")) == 1  # its vectoradd, with the reason


def test_metrics_of_a_crashed_exporter_are_reported_unreachable(cluster, stack, ansible_task):
    # The node's exporter crash-loops (the simulator's lever; without a routed pod network the result is the
    # same): the API server cannot dial the exporter pod, so the check must say "unreachable" (with the proxy
    # error), never pass. tests/integration/test_sim_exporter_metrics.py proves the passing side.
    node = stack.healthy[0]
    control.exporter_down(cluster.api, node)
    try:
        wait_until(
            lambda: not any(
                c.type == "Ready" and c.status == "True"
                for p in stack.core.list_namespaced_pod(
                    stack.ns,
                    label_selector="app.kubernetes.io/component=dcgm-exporter",
                    field_selector="spec.nodeName=" + node,
                ).items
                for c in p.status.conditions or []
            ),
            30,
            what="dcgm-exporter not Ready on " + node,
        )
        _unreachable_on(cluster, stack, ansible_task)
    finally:
        control.exporter_up(cluster.api, node)


def _unreachable_on(cluster, stack, ansible_task):
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, base_args(stack, checks=["metrics"], node_names=[stack.healthy[0]]))
    assert result.get("failed"), result
    assert cluster.audit.writes_since(mark) == []
    check = result["nodes"][0]["checks"]["metrics"]
    assert check["status"] == "unreachable", check
    assert check["message"].startswith(
        "metrics unreachable via pod proxy /api/v1/namespaces/{0}/pods/nvidia-dcgm-exporter-".format(stack.ns)
    )
    service = ansible_task(
        MODULE,
        base_args(stack, checks=["metrics"], node_names=[stack.healthy[0]], metrics_via="service", fail_on_error=False),
    )
    assert not service.get("failed") and service["passed"] is False
    assert service["nodes"][0]["checks"]["metrics"]["status"] == "unreachable"


def test_busy_gpu_times_out_with_scheduler_reason_and_cleans_up(cluster, stack, ansible_task):
    node = stack.healthy[0]
    hog = {
        "metadata": {"name": "gpu-hog", "labels": {"app": "gpu-hog"}},
        "spec": {
            "nodeName": node,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "train",
                    "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                    "resources": {"limits": {"nvidia.com/gpu": 1}},
                }
            ],
        },
    }
    stack.core.create_namespaced_pod(stack.ns, hog)
    try:
        wait_until(
            lambda: stack.core.read_namespaced_pod("gpu-hog", stack.ns).status.phase == "Running",
            30,
            what="GPU hog running",
        )
        result = ansible_task(MODULE, base_args(stack, checks=["vectoradd"], node_names=[node], wait_timeout=10))
        assert result.get("failed"), result
        assert "{0}: vectoradd pod still Pending: 0/".format(node) in result["msg"]
        assert "Insufficient nvidia.com/gpu" in result["msg"] and "after 10s" in result["msg"]
        assert validation_pods(stack) == []
    finally:
        stack.core.delete_namespaced_pod("gpu-hog", stack.ns, grace_period_seconds=0)


def test_untolerated_taint_fails_fast_then_tolerations_fix_it(cluster, stack, ansible_task):
    nodes = GpuNodes(cluster.api)
    try:
        tag, names = nodes.make(
            1,
            prefix="gpu-tainted",
            preprovisioned=True,
            taints=[{"key": "nodetype", "value": "gpu", "effect": "NoSchedule"}],
        )
        args = {
            "namespace": stack.ns,
            "node_selector": {SET_LABEL: tag},
            "checks": ["allocatable", "vectoradd"],
            "wait_timeout": 60,
            "wait_sleep": 1,
        }
        mark = cluster.audit.mark()
        result = ansible_task(MODULE, args)
        assert result.get("failed")
        assert result["msg"].endswith(
            "{0}: vectoradd not run: taint nodetype=gpu:NoSchedule is not tolerated; add it to tolerations".format(
                names[0]
            )
        )
        assert cluster.audit.writes_since(mark) == []
        args["tolerations"] = [{"key": "nodetype", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
        result = ansible_task(MODULE, args)
        assert not result.get("failed"), result.get("msg")
        assert result["nodes"][0]["checks"]["vectoradd"]["status"] == "pass"
    finally:
        nodes.cleanup()


def _bad_cases(tmp):
    return [
        ("unknown check", dict(checks=["allocatable", "gpu_burn"]), None, "value of checks must be one or more of"),
        ("timeout too small", dict(wait_timeout=3), None, "wait_timeout:"),
        ("selector matches nothing", dict(node_selector={SET_LABEL: "no-such-set"}), None, "node_selector:"),
        ("unknown node", dict(node_names=["no-such-node"]), None, "node_names:"),
        ("namespace missing", dict(namespace="no-such-namespace"), None, "namespace:"),
        # A missing folder is made (test_healthy_nodes...); one under a file cannot be.
        (
            "report folder is a file",
            dict(report_junit=os.path.join(os.path.abspath(__file__), "r.xml")),
            None,
            "report_junit:",
        ),
        ("report path is a folder", dict(report_json=tmp), None, "report_json:"),
        (
            "bad toleration",
            dict(tolerations=[{"key": "x", "operator": "Sometimes"}]),
            None,
            "value of operator must be one of: Equal, Exists, got: Sometimes found in tolerations",
        ),
        (
            "toleration Exists with a value",
            dict(tolerations=[{"key": "x", "operator": "Exists", "value": "y"}]),
            None,
            "tolerations:",
        ),
        ("expected 0 GPUs", dict(expected_gpus=0), None, "expected_gpus:"),
        ("bad selector", dict(driver_selector="app in (broken"), None, "driver_selector:"),
        (
            "unreachable API",
            {},
            lambda c: {
                "K8S_AUTH_KUBECONFIG": None,
                "K8S_AUTH_HOST": "https://127.0.0.1:9",
                "K8S_AUTH_API_KEY": "x",
                "K8S_AUTH_VERIFY_SSL": "false",
            },
            "host:",
        ),
        (
            "401 token",
            {},
            lambda c: {
                "K8S_AUTH_KUBECONFIG": None,
                "K8S_AUTH_HOST": c.server,
                "K8S_AUTH_API_KEY": "not-a-valid-token",
                "K8S_AUTH_SSL_CA_CERT": c.ca_cert,
            },
            "api_key:",
        ),
    ]


@pytest.mark.parametrize("index", range(len(_bad_cases("/tmp"))), ids=[c[0] for c in _bad_cases("/tmp")])
def test_bad_input_fails_clearly_and_writes_nothing(cluster, stack, ansible_task, tmp_path, index):
    what, override, env, prefix = _bad_cases(str(tmp_path))[index]
    args = base_args(stack, checks=["allocatable", "driver", "vectoradd"])
    args.update(override)
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args, env=env(cluster) if env else None)
    assert result.get("failed"), result
    assert prefix in result["msg"], result["msg"]
    if prefix.endswith(":"):
        assert result["msg"].startswith(prefix), result["msg"]
    assert cluster.audit.writes_since(mark) == []
    assert validation_pods(stack) == []


def test_forbidden_user_gets_403_and_writes_nothing(cluster, stack, ansible_task):
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, base_args(stack), env={"K8S_AUTH_KUBECONFIG": cluster.kubeconfig_of("nobody")})
    assert result.get("failed") and "403" in result["msg"], result
    assert cluster.audit.writes_since(mark, user="nobody") == []


TIME_SLICING_RENAMED = (
    "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n"
    "    - name: nvidia.com/gpu\n      replicas: 4\n"
)


def sharing_stack(namespace, tag, mig_strategy=None, config_map=None):
    """Driver, toolkit, device plugin (MIG_STRATEGY, time-slicing config) and GFD for one node set."""
    driver_image = "nvcr.io/nvidia/driver:550.90.07-{0}-rhcos4.16".format(kernel_of(RHCOS_416))
    objects = list(gpu_stack(namespace, tag, driver_image, dcgm=False))
    plugin = objects[2]
    container = plugin["spec"]["template"]["spec"]["containers"][0]
    if mig_strategy:
        container.setdefault("env", []).append({"name": "MIG_STRATEGY", "value": mig_strategy})
    if config_map:
        plugin["spec"]["template"]["spec"].setdefault("volumes", []).append(
            {"name": "config", "configMap": {"name": config_map}}
        )
        container.setdefault("volumeMounts", []).append({"name": "config", "mountPath": "/config"})
    objects.append(
        on_nvidia_runtime(
            daemonset(
                "gpu-feature-discovery",
                namespace,
                tag,
                "gpu-feature-discovery",
                "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
                # As the GPU Operator runs GFD on OpenShift: labels, not a NodeFeature object.
                env={"USE_NODE_FEATURE_API": "false"},
            )
        )
    )
    for body in objects:
        body["metadata"]["name"] += "-" + tag  # one stack per node set in the namespace
        body["spec"]["selector"]["matchLabels"]["app"] += "-" + tag
        body["spec"]["template"]["metadata"]["labels"]["app"] += "-" + tag
    return objects


def test_mig_and_time_slicing_nodes_pass_allocatable(cluster, ansible_task):
    """MIG single, MIG mixed and renamed time-slicing, as the simulated device plugin and GFD publish them."""
    ns = make_namespace(cluster.api)
    allow_privileged(SimClient(cluster.api), ns)
    nodes = GpuNodes(cluster.api)
    core = client.CoreV1Api(cluster.api)
    made_runtime_class = ensure_runtime_class(cluster.api)
    try:
        core.create_namespaced_config_map(
            ns, {"metadata": {"name": "time-slicing"}, "data": {"any": TIME_SLICING_RENAMED}}
        )
        sets = {}
        for key, itype, labels, strategy, cm in (
            ("single", "p4d.24xlarge", {"nvidia.com/mig.config": "all-1g.5gb"}, "single", None),
            ("mixed", "p4d.24xlarge", {"nvidia.com/mig.config": "all-balanced"}, "mixed", None),
            ("shared", "g4dn.xlarge", {}, None, "time-slicing"),
        ):
            tag, names = nodes.make(1, prefix="gpu-" + key, instance_type=itype, extra_labels=labels)
            deploy(cluster.api, sharing_stack(ns, tag, strategy, cm))
            sets[key] = (tag, names[0])

        def published():
            want = {
                "single": ("nvidia.com/gpu", "56"),
                "mixed": ("nvidia.com/mig-3g.20gb", "8"),
                "shared": ("nvidia.com/gpu.shared", "4"),
            }
            for key, (resource, count) in want.items():
                node = core.read_node(sets[key][1])
                labels = node.metadata.labels or {}
                if (node.status.allocatable or {}).get(resource) != count or "nvidia.com/gpu.count" not in labels:
                    return False
            return True

        wait_until(published, 90, what="MIG and time-slicing resources and GFD labels")
        shared = core.read_node(sets["shared"][1]).metadata.labels
        assert shared["nvidia.com/gpu.product"] == "Tesla-T4"  # renamed: no -SHARED suffix
        assert core.read_node(sets["single"][1]).metadata.labels["nvidia.com/mig.strategy"] == "single"

        for key, checks in (
            ("single", ["allocatable", "driver", "vectoradd", "nvidia_smi"]),
            ("mixed", ["allocatable", "driver"]),
            ("shared", ["allocatable", "driver", "vectoradd", "nvidia_smi"]),
        ):
            args = {
                "namespace": ns,
                "node_selector": {SET_LABEL: sets[key][0]},
                "checks": checks,
                "wait_timeout": 60,
                "wait_sleep": 1,
            }
            result = ansible_task(MODULE, args)
            assert not result.get("failed"), (key, result.get("msg"))
            alloc = result["nodes"][0]["checks"]["allocatable"]
            assert alloc["status"] == "pass", (key, alloc)
        assert "nvidia.com/mig-1g.5gb 16, nvidia.com/mig-2g.10gb 8, nvidia.com/mig-3g.20gb 8" in (
            ansible_task(
                MODULE, {"namespace": ns, "node_selector": {SET_LABEL: sets["mixed"][0]}, "checks": ["allocatable"]}
            )["nodes"][0]["checks"]["allocatable"]["message"]
        )
    finally:
        delete_namespace(cluster.api, ns)
        nodes.cleanup()
        if made_runtime_class:
            delete_runtime_class(cluster.api)
