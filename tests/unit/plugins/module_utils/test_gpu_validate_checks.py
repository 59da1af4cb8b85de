# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.checks import (
    check_allocatable,
    check_driver,
    check_node_ready,
    check_workload,
    taint_text,
    untolerated_taints,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    DEFAULT_TOLERATIONS,
    FAIL,
    GFD_COUNT,
    PASS,
    UNREACHABLE,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.metrics import (
    check_metrics,
    parse_metric,
    unreachable,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.pods import (
    pod_finished,
    pod_state,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.resources import expected_gpus
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.gpu_validate_fixtures import (
    METRICS,
    SMI_LOG,
    VECTORADD_LOG,
    node,
    pod,
)

# --- nodes ----------------------------------------------------------------------------


def test_expected_gpus_sources():
    assert expected_gpus(node(count="4")) == (4, GFD_COUNT)
    assert expected_gpus(node(count="2", replicas="4"))[0] == 8
    assert expected_gpus(node(count=None)) == (None, None)
    assert expected_gpus(node(count="4"), override=2) == (2, "expected_gpus")


def test_check_allocatable_pass_and_fail_with_device_plugin_state():
    assert check_allocatable(node(alloc="1"))["status"] == PASS
    res = check_allocatable(
        node(name="ip-10-0-138-78", alloc="0"),
        plugin_pods=[pod("dp", waiting="CrashLoopBackOff", ready=False, restarts=4, last_exit=1)],
        plugin_selector="x",
    )
    assert res["status"] == FAIL
    assert res["message"] == (
        "allocatable nvidia.com/gpu 0, expected 1 (nvidia.com/gpu.count); "
        "device-plugin pod CrashLoopBackOff (restarts 4, last exit 1)"
    )
    res = check_allocatable(node(alloc=None, count=None), plugin_pods=[], plugin_selector="x")
    assert res["message"] == "allocatable nvidia.com/gpu 0, expected at least 1; no device-plugin pod on the node"
    assert check_allocatable(node(alloc="2", count=None))["status"] == PASS
    assert check_allocatable(node(alloc="3", count="4"))["status"] == FAIL


def test_node_ready_and_cordon():
    assert check_node_ready(node())["status"] == PASS
    res = check_node_ready(node(ready=False))
    assert res["status"] == FAIL and "NotReady" in res["message"]
    assert "cordoned" in check_node_ready(node(unschedulable=True))["message"]


def test_untolerated_taints():
    taints = [
        {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
        {"key": "nodetype", "value": "gpu", "effect": "NoSchedule"},
        {"key": "soft", "effect": "PreferNoSchedule"},
    ]
    n = node(taints=taints)
    left = untolerated_taints(n, DEFAULT_TOLERATIONS)
    assert [taint_text(t) for t in left] == ["nodetype=gpu:NoSchedule"]
    tol = DEFAULT_TOLERATIONS + [{"key": "nodetype", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert untolerated_taints(n, tol) == []
    assert untolerated_taints(n, [{"operator": "Exists"}]) == []


# --- pod states and checks ---------------------------------------------------------------


def test_pod_state_texts():
    assert pod_state(pod("p")) == "Ready"
    assert (
        pod_state(pod("p", ready=False, waiting="CrashLoopBackOff", restarts=5, last_exit=1))
        == "CrashLoopBackOff (restarts 5, last exit 1)"
    )
    assert (
        pod_state(
            pod(
                "p",
                phase="Pending",
                ready=False,
                scheduled_msg="0/3 nodes are available: 1 Insufficient nvidia.com/gpu.",
            )
        )
        == "Pending: 0/3 nodes are available: 1 Insufficient nvidia.com/gpu."
    )
    assert pod_state(pod("p", phase="Running", ready=False)) == "Running, not Ready"


def test_check_driver():
    assert check_driver([])["status"] == FAIL
    ok = check_driver([pod("nvidia-driver-x")])
    assert ok["status"] == PASS and "nvidia-driver-x Ready" in ok["message"]
    bad = check_driver(
        [pod("nvidia-driver-y", ready=False, waiting="CrashLoopBackOff", restarts=3)],
        {"nvidia-driver-y": "loading\nERROR: kernel module built for 5.14.0-284 does not match 5.14.0-427\n"},
    )
    assert bad["status"] == FAIL
    assert bad["message"].startswith(
        "driver pod nvidia-driver-y CrashLoopBackOff (restarts 3): loading / ERROR: kernel module"
    )


def test_check_workload_vectoradd():
    ok = pod("v", phase="Succeeded", ready=False, terminated={"exitCode": 0, "reason": "Completed"})
    assert check_workload("vectoradd", ok, VECTORADD_LOG) == {"status": PASS, "message": "vectoradd: Test PASSED"}
    # the log is empty but the termination message carries the output
    ok["status"]["containerStatuses"][0]["state"]["terminated"]["message"] = VECTORADD_LOG
    assert check_workload("vectoradd", ok, "")["status"] == PASS
    nolog = pod("v", phase="Succeeded", ready=False, terminated={"exitCode": 0})
    res = check_workload("vectoradd", nolog, "Done\n")
    assert res["status"] == FAIL and "no 'Test PASSED'" in res["message"]
    failed = pod("v", phase="Failed", ready=False, terminated={"exitCode": 1, "reason": "Error"})
    res = check_workload(
        "vectoradd", failed, "Failed to allocate device vector A (error code no CUDA-capable device is detected)!\n"
    )
    assert res["status"] == FAIL and res["message"].startswith(
        "vectoradd pod Failed (Error (exit 1)): Failed to allocate"
    )


def test_check_workload_timeout_and_pending():
    pending = pod(
        "v", phase="Pending", ready=False, scheduled_msg="0/5 nodes are available: 1 Insufficient nvidia.com/gpu."
    )
    res = check_workload("vectoradd", pending, None, timed_out=True, timeout=30)
    assert (
        res["status"] == FAIL
        and res["message"]
        == "vectoradd pod still Pending: 0/5 nodes are available: 1 Insufficient nvidia.com/gpu. after 30s"
    )
    assert check_workload("vectoradd", None, None)["status"] == FAIL
    pull = pod("v", phase="Pending", ready=False, waiting="ImagePullBackOff")
    assert pod_finished(pull)
    assert "ImagePullBackOff" in check_workload("vectoradd", pull, None)["message"]


def test_check_workload_nvidia_smi_and_driver_version():
    ok = pod("s", phase="Succeeded", ready=False, terminated={"exitCode": 0})
    res = check_workload("nvidia_smi", ok, SMI_LOG)
    assert res["status"] == PASS and res["message"].startswith("nvidia-smi: driver 430.26")
    assert check_workload("nvidia_smi", ok, SMI_LOG, driver_version="430")["status"] == PASS
    res = check_workload("nvidia_smi", ok, SMI_LOG, driver_version="550.90.07")
    assert res["status"] == FAIL and "expected 550.90.07" in res["message"]
    assert check_workload("nvidia_smi", ok, "command not found")["status"] == FAIL


def test_pod_finished():
    assert pod_finished({"status": {"phase": "Succeeded"}})
    assert not pod_finished({"status": {"phase": "Pending"}})
    assert not pod_finished(pod("p", phase="Pending", ready=False, waiting="ErrImagePull"))


# --- metrics ------------------------------------------------------------------------------


def test_parse_and_check_metrics():
    series = parse_metric(METRICS)
    assert [s[1] for s in series] == [32.0, 36.0]
    assert series[0][0]["UUID"] == "GPU-4063626d-f712"
    res = check_metrics(METRICS, expected=2)
    assert res["status"] == PASS and "for 2 GPU(s) (max 36 C)" in res["message"]
    assert check_metrics(METRICS, expected=4)["status"] == FAIL
    assert check_metrics("", None)["message"] == "DCGM_FI_DEV_GPU_TEMP for 0 GPU(s), expected at least 1"
    # service proxy answers: series attributed by Hostname
    assert check_metrics(METRICS, 1, node_name="gpu-b")["gpus"] == 0
    assert check_metrics(METRICS, 2, node_name="gpu-a")["status"] == PASS


def test_unreachable_never_passes():
    res = unreachable(
        "pod proxy /api/v1/namespaces/x/pods/p:9400/proxy/metrics",
        "error trying to reach service: dial tcp 10.128.1.2:9400: connect: connection refused",
    )
    assert res["status"] == UNREACHABLE and res["message"].startswith("metrics unreachable via pod proxy")


def _answer(host, uuid):
    return (
        "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="%s",Hostname="%s"} 33\n' % (uuid, host)
    )


def test_service_reads_repeat_until_every_node_answered(monkeypatch):
    # A service proxy request reaches one random ready endpoint: one read covers one node.
    from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import metrics

    answers = [
        _answer("gpu-a", "GPU-a"),
        _answer("gpu-a", "GPU-a"),
        _answer("gpu-b", "GPU-b"),
        _answer("gpu-a", "GPU-a"),
    ]
    calls = []

    def fake_get(client, path):
        calls.append(path)
        return answers[len(calls) - 1]

    monkeypatch.setattr(metrics, "proxy_get", fake_get)
    cfg = {
        "metrics_namespace": "ns",
        "metrics_port": 9400,
        "metrics_path": "/metrics",
        "metrics_service": "nvidia-dcgm-exporter",
    }
    nodes = [{"metadata": {"name": "gpu-a"}}, {"metadata": {"name": "gpu-b"}}]
    results = metrics._via_service(cfg, None, nodes, {"gpu-a": 1, "gpu-b": 1})
    assert len(calls) == 3  # stops once both nodes were seen
    assert results["gpu-a"]["status"] == PASS and results["gpu-b"]["status"] == PASS
    # An exporter that is never an endpoint stays unreachable, after a bounded number of reads.
    calls[:] = []
    answers[:] = [_answer("gpu-a", "GPU-a")] * 100
    results = metrics._via_service(cfg, None, nodes, {"gpu-a": 1, "gpu-b": 1})
    assert len(calls) == metrics.SERVICE_READS_PER_NODE * 2
    assert results["gpu-a"]["status"] == PASS
    assert results["gpu-b"]["status"] == UNREACHABLE and "Hostname/hostname=gpu-b" in results["gpu-b"]["message"]
