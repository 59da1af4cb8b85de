# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import validate as v
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError

BASE = {
    "checks": ["allocatable", "driver", "vectoradd"],
    "node_selector": {},
    "nodes": None,
    "namespace": "nvidia-gpu-operator",
    "driver_namespace": None,
    "driver_selector": "app.kubernetes.io/component=nvidia-driver",
    "device_plugin_selector": "app.kubernetes.io/component=nvidia-device-plugin",
    "expected_gpus": None,
    "driver_version": None,
    "vectoradd_image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubi8",
    "nvidia_smi_image": "nvcr.io/nvidia/cuda:12.5.0-base-ubi8",
    "tolerations": None,
    "pin": "affinity",
    "run_as_user": None,
    "service_account": None,
    "priority_class_name": None,
    "runtime_class_name": None,
    "image_pull_secrets": None,
    "timeout": 300,
    "poll_interval": 2,
    "parallel": 16,
    "metrics_namespace": None,
    "metrics_selector": "app.kubernetes.io/component=dcgm-exporter",
    "metrics_via": "pod",
    "metrics_service": "nvidia-dcgm-exporter",
    "metrics_port": 9400,
    "metrics_path": "/metrics",
    "report_json": None,
    "report_junit": None,
    "report_markdown": None,
    "fail_on_error": True,
}

VECTORADD_LOG = """[Vector addition of 50000 elements]
Copy input data from the host memory to the CUDA device
CUDA kernel launch with 196 blocks of 256 threads
Copy output data from the CUDA device to the host memory
Test PASSED
Done
"""

SMI_LOG = """Sun Sep  1 04:01:54 2019
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 430.26       Driver Version: 430.26       CUDA Version: N/A      |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
|===============================+======================+======================|
|   0  Tesla V100-SXM2...  On   | 00000000:00:1E.0 Off |                    0 |
+-------------------------------+----------------------+----------------------+
"""

METRICS = """# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-4063626d", device="nvidia0"} 300
DCGM_FI_DEV_GPU_TEMP{gpu="0", UUID="GPU-4063626d-f712", device="nvidia0",Hostname="gpu-a"} 32
DCGM_FI_DEV_GPU_TEMP{gpu="1", UUID="GPU-1111",device="nvidia1",Hostname="gpu-a"} 36
DCGM_FI_DEV_GPU_TEMP_EXTRA{gpu="2"} 1
"""


def params(**kw):
    p = copy.deepcopy(BASE)
    p.update(kw)
    return p


def node(
    name="gpu-a", alloc="1", count="1", ready=True, taints=None, unschedulable=False, replicas=None, product="Tesla-T4"
):
    labels = {"feature.node.kubernetes.io/pci-10de.present": "true"}
    if count is not None:
        labels[v.GFD_COUNT] = count
    if replicas:
        labels[v.GFD_REPLICAS] = replicas
    if product:
        labels[v.GFD_PRODUCT] = product
    status = {
        "conditions": [
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "reason": "KubeletReady" if ready else "NodeStatusUnknown",
            }
        ]
    }
    if alloc is not None:
        status["allocatable"] = {"cpu": "4", v.GPU_RESOURCE: alloc}
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"metadata": {"name": name, "labels": labels}, "spec": spec, "status": status}


def pod(
    name,
    node_name="gpu-a",
    phase="Running",
    ready=True,
    waiting=None,
    restarts=0,
    last_exit=None,
    terminated=None,
    scheduled_msg=None,
):
    cs = {"name": "c", "ready": ready, "restartCount": restarts, "state": {}}
    if waiting:
        cs["state"] = {"waiting": {"reason": waiting}}
    elif terminated:
        cs["state"] = {"terminated": terminated}
    else:
        cs["state"] = {"running": {}}
    if last_exit is not None:
        cs["lastState"] = {"terminated": {"exitCode": last_exit}}
    conds = [{"type": "Ready", "status": "True" if ready else "False"}]
    if scheduled_msg:
        conds.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": scheduled_msg})
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"nodeName": node_name},
        "status": {"phase": phase, "conditions": conds, "containerStatuses": [cs] if not scheduled_msg else []},
    }


# --- parameters ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "override,param",
    [
        ({"checks": ["allocatable", "gpu_burn"]}, "checks"),
        ({"checks": []}, "checks"),
        ({"timeout": 3}, "timeout"),
        ({"poll_interval": 0}, "poll_interval"),
        ({"poll_interval": 400}, "poll_interval"),
        ({"namespace": "Bad_NS"}, "namespace"),
        ({"driver_namespace": "-x"}, "driver_namespace"),
        ({"expected_gpus": 0}, "expected_gpus"),
        ({"vectoradd_image": "not an image"}, "vectoradd_image"),
        ({"tolerations": [{"key": "a", "operator": "Sometimes"}]}, "tolerations"),
        ({"tolerations": [{"key": "a", "effect": "NoRun"}]}, "tolerations"),
        ({"tolerations": [{"colour": "red"}]}, "tolerations"),
        ({"tolerations": ["nvidia.com/gpu"]}, "tolerations"),
        ({"driver_selector": "app=(x"}, "driver_selector"),
        ({"nodes": []}, "nodes"),
        ({"nodes": ["Bad Node"]}, "nodes"),
        ({"run_as_user": 0}, "run_as_user"),
        ({"metrics_port": 70000}, "metrics_port"),
        ({"driver_version": "latest"}, "driver_version"),
        ({"report_json": "/nonexistent-dir-xyz/report.json"}, "report_json"),
        ({"report_junit": "/"}, "report_junit"),
        ({"parallel": 0}, "parallel"),
        ({"driver_selector": None}, "driver_selector"),
        ({"checks": ["metrics"], "metrics_selector": None}, "metrics_selector"),
    ],
)
def test_bad_params_name_the_parameter(override, param):
    with pytest.raises(GpuopsError) as err:
        v.validate_params(params(**override))
    assert err.value.param == param
    assert str(err.value).startswith(param + ":")


def test_report_path_not_writable(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(str(folder), 0o500)
    real_access = os.access
    if real_access(str(folder), os.W_OK):
        # Running as root, where mode bits are not enforced: let access(2)
        # answer as it does for any other user of a 0500 folder.
        monkeypatch.setattr(
            v.os, "access", lambda p, mode: False if os.path.abspath(p) == str(folder) else real_access(p, mode)
        )
    try:
        with pytest.raises(GpuopsError) as err:
            v.validate_params(params(report_markdown=str(folder / "r.md")))
        assert err.value.param == "report_markdown" and "not writable" in str(err.value)
    finally:
        os.chmod(str(folder), 0o700)


def test_params_defaults_and_normalisation(tmp_path):
    cfg = v.validate_params(params(checks=["metrics", "allocatable", "metrics"], report_json=str(tmp_path / "r.json")))
    assert cfg["checks"] == ["allocatable", "metrics"]
    assert cfg["driver_namespace"] == cfg["metrics_namespace"] == "nvidia-gpu-operator"
    assert cfg["tolerations"] == v.DEFAULT_TOLERATIONS
    assert cfg["reports"] == {"json": str(tmp_path / "r.json")}
    assert cfg["metrics_path"] == "/metrics"


def test_selector_syntax_accepts_kubectl_forms():
    for sel in ("app=x", "app.kubernetes.io/component=nvidia-driver,tier!=a", "env in (a,b)", "!legacy", "app"):
        assert v._check_selector(sel, "driver_selector") == sel


# --- nodes ----------------------------------------------------------------------------


def test_expected_gpus_sources():
    assert v.expected_gpus(node(count="4")) == (4, v.GFD_COUNT)
    assert v.expected_gpus(node(count="2", replicas="4"))[0] == 8
    assert v.expected_gpus(node(count=None)) == (None, None)
    assert v.expected_gpus(node(count="4"), override=2) == (2, "expected_gpus")


def test_check_allocatable_pass_and_fail_with_device_plugin_state():
    assert v.check_allocatable(node(alloc="1"))["status"] == v.PASS
    res = v.check_allocatable(
        node(name="ip-10-0-138-78", alloc="0"),
        plugin_pods=[pod("dp", waiting="CrashLoopBackOff", ready=False, restarts=4, last_exit=1)],
        plugin_selector="x",
    )
    assert res["status"] == v.FAIL
    assert res["message"] == (
        "allocatable nvidia.com/gpu 0, expected 1 (nvidia.com/gpu.count); "
        "device-plugin pod CrashLoopBackOff (restarts 4, last exit 1)"
    )
    res = v.check_allocatable(node(alloc=None, count=None), plugin_pods=[], plugin_selector="x")
    assert res["message"] == "allocatable nvidia.com/gpu 0, expected at least 1; no device-plugin pod on the node"
    assert v.check_allocatable(node(alloc="2", count=None))["status"] == v.PASS
    assert v.check_allocatable(node(alloc="3", count="4"))["status"] == v.FAIL


def test_node_ready_and_cordon():
    assert v.check_node_ready(node())["status"] == v.PASS
    res = v.check_node_ready(node(ready=False))
    assert res["status"] == v.FAIL and "NotReady" in res["message"]
    assert "cordoned" in v.check_node_ready(node(unschedulable=True))["message"]


def test_untolerated_taints():
    taints = [
        {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
        {"key": "nodetype", "value": "gpu", "effect": "NoSchedule"},
        {"key": "soft", "effect": "PreferNoSchedule"},
    ]
    n = node(taints=taints)
    left = v.untolerated_taints(n, v.DEFAULT_TOLERATIONS)
    assert [v.taint_text(t) for t in left] == ["nodetype=gpu:NoSchedule"]
    tol = v.DEFAULT_TOLERATIONS + [{"key": "nodetype", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert v.untolerated_taints(n, tol) == []
    assert v.untolerated_taints(n, [{"operator": "Exists"}]) == []


# --- pod states and checks ---------------------------------------------------------------


def test_pod_state_texts():
    assert v.pod_state(pod("p")) == "Ready"
    assert (
        v.pod_state(pod("p", ready=False, waiting="CrashLoopBackOff", restarts=5, last_exit=1))
        == "CrashLoopBackOff (restarts 5, last exit 1)"
    )
    assert (
        v.pod_state(
            pod(
                "p",
                phase="Pending",
                ready=False,
                scheduled_msg="0/3 nodes are available: 1 Insufficient nvidia.com/gpu.",
            )
        )
        == "Pending: 0/3 nodes are available: 1 Insufficient nvidia.com/gpu."
    )
    assert v.pod_state(pod("p", phase="Running", ready=False)) == "Running, not Ready"


def test_check_driver():
    assert v.check_driver([])["status"] == v.FAIL
    ok = v.check_driver([pod("nvidia-driver-x")])
    assert ok["status"] == v.PASS and "nvidia-driver-x Ready" in ok["message"]
    bad = v.check_driver(
        [pod("nvidia-driver-y", ready=False, waiting="CrashLoopBackOff", restarts=3)],
        {"nvidia-driver-y": "loading\nERROR: kernel module built for 5.14.0-284 does not match 5.14.0-427\n"},
    )
    assert bad["status"] == v.FAIL
    assert bad["message"].startswith(
        "driver pod nvidia-driver-y CrashLoopBackOff (restarts 3): loading / ERROR: kernel module"
    )


def test_check_workload_vectoradd():
    ok = pod("v", phase="Succeeded", ready=False, terminated={"exitCode": 0, "reason": "Completed"})
    assert v.check_workload("vectoradd", ok, VECTORADD_LOG) == {"status": v.PASS, "message": "vectoradd: Test PASSED"}
    # the log is empty but the termination message carries the output
    ok["status"]["containerStatuses"][0]["state"]["terminated"]["message"] = VECTORADD_LOG
    assert v.check_workload("vectoradd", ok, "")["status"] == v.PASS
    nolog = pod("v", phase="Succeeded", ready=False, terminated={"exitCode": 0})
    res = v.check_workload("vectoradd", nolog, "Done\n")
    assert res["status"] == v.FAIL and "no 'Test PASSED'" in res["message"]
    failed = pod("v", phase="Failed", ready=False, terminated={"exitCode": 1, "reason": "Error"})
    res = v.check_workload(
        "vectoradd", failed, "Failed to allocate device vector A (error code no CUDA-capable device is detected)!\n"
    )
    assert res["status"] == v.FAIL and res["message"].startswith(
        "vectoradd pod Failed (Error (exit 1)): Failed to allocate"
    )


def test_check_workload_timeout_and_pending():
    pending = pod(
        "v", phase="Pending", ready=False, scheduled_msg="0/5 nodes are available: 1 Insufficient nvidia.com/gpu."
    )
    res = v.check_workload("vectoradd", pending, None, timed_out=True, timeout=30)
    assert (
        res["status"] == v.FAIL
        and res["message"]
        == "vectoradd pod still Pending: 0/5 nodes are available: 1 Insufficient nvidia.com/gpu. after 30s"
    )
    assert v.check_workload("vectoradd", None, None)["status"] == v.FAIL
    pull = pod("v", phase="Pending", ready=False, waiting="ImagePullBackOff")
    assert v.pod_finished(pull)
    assert "ImagePullBackOff" in v.check_workload("vectoradd", pull, None)["message"]


def test_check_workload_nvidia_smi_and_driver_version():
    ok = pod("s", phase="Succeeded", ready=False, terminated={"exitCode": 0})
    res = v.check_workload("nvidia_smi", ok, SMI_LOG)
    assert res["status"] == v.PASS and res["message"].startswith("nvidia-smi: driver 430.26")
    assert v.check_workload("nvidia_smi", ok, SMI_LOG, driver_version="430")["status"] == v.PASS
    res = v.check_workload("nvidia_smi", ok, SMI_LOG, driver_version="550.90.07")
    assert res["status"] == v.FAIL and "expected 550.90.07" in res["message"]
    assert v.check_workload("nvidia_smi", ok, "command not found")["status"] == v.FAIL


def test_pod_finished():
    assert v.pod_finished({"status": {"phase": "Succeeded"}})
    assert not v.pod_finished({"status": {"phase": "Pending"}})
    assert not v.pod_finished(pod("p", phase="Pending", ready=False, waiting="ErrImagePull"))


# --- metrics ------------------------------------------------------------------------------


def test_parse_and_check_metrics():
    series = v.parse_metric(METRICS)
    assert [s[1] for s in series] == [32.0, 36.0]
    assert series[0][0]["UUID"] == "GPU-4063626d-f712"
    res = v.check_metrics(METRICS, expected=2)
    assert res["status"] == v.PASS and "for 2 GPU(s) (max 36 C)" in res["message"]
    assert v.check_metrics(METRICS, expected=4)["status"] == v.FAIL
    assert v.check_metrics("", None)["message"] == "DCGM_FI_DEV_GPU_TEMP for 0 GPU(s), expected at least 1"
    # service proxy answers: series attributed by Hostname
    assert v.check_metrics(METRICS, 1, node_name="gpu-b")["gpus"] == 0
    assert v.check_metrics(METRICS, 2, node_name="gpu-a")["status"] == v.PASS


def test_unreachable_never_passes():
    res = v.unreachable(
        "pod proxy /api/v1/namespaces/x/pods/p:9400/proxy/metrics",
        "error trying to reach service: dial tcp 10.128.1.2:9400: connect: connection refused",
    )
    assert res["status"] == v.UNREACHABLE and res["message"].startswith("metrics unreachable via pod proxy")


# --- pods ------------------------------------------------------------------------------------


def test_render_pod_restricted_and_pinned():
    cfg = v.validate_params(params())
    body = v.render_pod("vectoradd", "ip-10-0-138-78.us-east-2.compute.internal", cfg, "abc123")
    spec = body["spec"]
    c = spec["containers"][0]
    assert body["metadata"]["namespace"] == "nvidia-gpu-operator"
    assert len(body["metadata"]["name"]) <= 63
    assert body["metadata"]["labels"][v.RUN_LABEL] == "abc123"
    assert body["metadata"]["labels"]["app.kubernetes.io/component"] == "gpu-validation"
    assert body["metadata"]["annotations"][v.NODE_ANNOTATION] == "ip-10-0-138-78.us-east-2.compute.internal"
    assert spec["restartPolicy"] == "Never"
    assert c["resources"]["limits"] == {"nvidia.com/gpu": 1}
    assert c["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
    }
    assert spec["securityContext"] == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {
            "matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["ip-10-0-138-78.us-east-2.compute.internal"]}
            ]
        }
    ]
    assert "nodeName" not in spec
    assert spec["tolerations"] == v.DEFAULT_TOLERATIONS
    assert spec["activeDeadlineSeconds"] > cfg["timeout"]
    assert c["terminationMessagePolicy"] == "FallbackToLogsOnError"


def test_render_pod_options():
    cfg = v.validate_params(
        params(
            pin="nodeName",
            run_as_user=1000,
            runtime_class_name="nvidia",
            image_pull_secrets=["ngc"],
            tolerations=[{"key": "nodetype", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        )
    )
    body = v.render_pod("nvidia_smi", "gpu-a", cfg, "r1")
    spec = body["spec"]
    assert spec["nodeName"] == "gpu-a" and "affinity" not in spec
    assert spec["containers"][0]["command"] == ["nvidia-smi"]
    assert spec["containers"][0]["image"] == cfg["nvidia_smi_image"]
    assert spec["securityContext"]["runAsUser"] == 1000
    assert spec["runtimeClassName"] == "nvidia" and spec["imagePullSecrets"] == [{"name": "ngc"}]
    assert spec["tolerations"] == [{"key": "nodetype", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert (
        v.pod_name("nvidia_smi", "gpu-a", "r1")
        != v.pod_name("vectoradd", "gpu-a", "r1")
        != v.pod_name("vectoradd", "gpu-b", "r1")
    )


def test_run_id_is_a_label_value():
    rid = v.run_id()
    assert len(rid) == 6 and rid.isalnum() and rid.lower() == rid


# --- reports ----------------------------------------------------------------------------------


def sample_report():
    a = node("gpu-a")
    bad = node("ip-10-0-138-78", alloc="0")
    checks = ["allocatable", "driver", "vectoradd", "metrics"]
    res_a = {
        "allocatable": v.check_allocatable(a),
        "driver": v.check_driver([pod("nvidia-driver-a")]),
        "vectoradd": {"status": v.PASS, "message": "vectoradd: Test PASSED", "duration": 3.5},
        "metrics": v.check_metrics(METRICS, 1),
    }
    res_b = {
        "allocatable": v.check_allocatable(
            bad,
            plugin_pods=[pod("dp", node_name="ip-10-0-138-78", ready=False, waiting="CrashLoopBackOff", restarts=4)],
            plugin_selector="x",
        ),
        "driver": v.check_driver([pod("nvidia-driver-b", node_name="ip-10-0-138-78")]),
        "vectoradd": {
            "status": v.FAIL,
            "message": "vectoradd not run: the node advertises no allocatable nvidia.com/gpu",
        },
        "metrics": v.unreachable("pod proxy", "connection refused"),
    }
    nodes = [v.node_report(a, res_a, checks), v.node_report(bad, res_b, checks)]
    return v.build_report(nodes, checks, "2026-01-10T10:00:00Z", 12.5, {"namespace": "nvidia-gpu-operator"})


def test_build_report_and_failure_message():
    report = sample_report()
    s = report["summary"]
    assert (s["result"], s["nodes"], s["passed"], s["failed"]) == ("failed", 2, 1, 1)
    assert report["nodes"][0]["passed"] and not report["nodes"][1]["passed"]
    assert report["nodes"][1]["checks"]["node_ready"]["status"] == v.PASS
    msg = v.failure_message(report)
    assert msg.startswith(
        "GPU validation failed on 1 of 2 GPU node(s) (checks: allocatable, driver, vectoradd, metrics): "
    )
    assert (
        "ip-10-0-138-78: allocatable nvidia.com/gpu 0, expected 1 (nvidia.com/gpu.count); device-plugin pod CrashLoopBackOff (restarts 4); "
        "vectoradd not run"
    ) in msg
    assert "metrics unreachable via pod proxy: connection refused" in msg
    assert "gpu-a" not in msg


def test_node_report_missing_check_is_skipped_not_passed():
    rep = v.node_report(node(), {}, ["allocatable"])
    assert rep["checks"]["allocatable"]["status"] == v.SKIP and rep["passed"]


def test_report_json_roundtrip():
    report = sample_report()
    assert json.loads(v.report_json(report)) == report


def test_report_junit():
    text = v.report_junit(sample_report())
    root = ET.fromstring(text.split("\n", 1)[1])
    suite = root.find("testsuite")
    assert (
        suite.get("tests") == "10"
        and suite.get("failures") == "2"
        and suite.get("errors") == "1"
        and suite.get("skipped") == "0"
    )
    cases = dict(((c.get("classname"), c.get("name")), c) for c in suite.findall("testcase"))
    fail = cases[("gpu_validate.ip-10-0-138-78", "allocatable")].find("failure")
    assert fail is not None and "CrashLoopBackOff" in fail.get("message")
    assert cases[("gpu_validate.ip-10-0-138-78", "metrics")].find("error").get("type") == "unreachable"
    assert cases[("gpu_validate.gpu-a", "vectoradd")].get("time") == "3.500"
    assert cases[("gpu_validate.gpu-a", "vectoradd")].find("failure") is None


def test_report_junit_escapes_markup():
    report = sample_report()
    report["nodes"][1]["checks"]["driver"] = {"status": v.FAIL, "message": "log <b>&\"'"}
    root = ET.fromstring(v.report_junit(report).split("\n", 1)[1])
    msgs = [f.get("message") for f in root.iter("failure")]
    assert "log <b>&\"'" in msgs


def test_report_markdown():
    md = v.report_markdown(sample_report())
    lines = md.splitlines()
    assert lines[0] == "## GPU validation: FAILED (1/2 nodes passed)"
    assert (
        lines[2]
        == "| Node | Product | GPUs (allocatable/expected) | node_ready | allocatable | driver | vectoradd | metrics | Result |"
    )
    assert lines[3].count("---") == 9
    assert "| gpu-a | Tesla-T4 | 1/1 | pass | pass | pass | pass | pass | PASS |" in lines
    assert (
        "| ip-10-0-138-78 | Tesla-T4 | 0/1 | pass | **FAIL** | pass | **FAIL** | **unreachable** | **FAIL** |" in lines
    )
    assert "### Failures" in lines
    report = sample_report()
    report["nodes"][0]["node"] = "a|b"
    assert "a\\|b" in v.report_markdown(report)


def test_write_reports(tmp_path):
    paths = {"json": str(tmp_path / "r.json"), "junit": str(tmp_path / "r.xml"), "markdown": str(tmp_path / "r.md")}
    written = v.write_reports(sample_report(), paths)
    assert written == paths
    for path in paths.values():
        assert os.path.getsize(path) > 0 and not os.path.exists(path + ".tmp")
