# -*- coding: utf-8 -*-
"""gpu_validate through main() against an in-memory API with a tiny kubelet/scheduler stand-in.

Pod logs and proxy reads are served by monkeypatched helpers (the fake client
has no HTTP layer); the integration tests read them from the real apiserver.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from kubernetes.client.rest import ApiException

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import metrics, params, podrun, runner
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import RUN_LABEL
from ansible_collections.gpuops.cluster.plugins.modules import gpu_validate
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.gpu_validate_upstream import (
    exposition,
    mig_mixed_node,
    mig_single_node,
    time_sliced_node,
)
from ansible_collections.gpuops.cluster.tests.unit.plugins.modules.fake_k8s import FakeClient, Response, run

KINDS = {("Node", "v1"): False, ("Namespace", "v1"): False, ("Pod", "v1"): True, ("ConfigMap", "v1"): True}

NS = "nvidia-gpu-operator"
PASSED = "[Vector addition of 50000 elements]\nTest PASSED\nDone\n"
SMI = "| NVIDIA-SMI 550.90.07    Driver Version: 550.90.07    CUDA Version: 12.4 |\n|   0  Tesla T4   On |\n"
METRICS = 'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1",Hostname="%s"} 33\n'


def node(name, alloc="1", count="1"):
    return {
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "feature.node.kubernetes.io/pci-10de.present": "true",
                "nvidia.com/gpu.count": count,
                "nvidia.com/gpu.product": "Tesla-T4",
            },
        },
        "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"nvidia.com/gpu": alloc}},
    }


# The app label of the GPU Operator's (and the collection's roles') pods.
APPS = {
    "nvidia-driver": "nvidia-driver-daemonset",
    "nvidia-device-plugin": "nvidia-device-plugin-daemonset",
    "dcgm-exporter": "nvidia-dcgm-exporter",
}


def component_pod(name, node_name, component, ready=True, waiting=None, restarts=0):
    cs = {
        "name": "c",
        "ready": ready,
        "restartCount": restarts,
        "state": {"waiting": {"reason": waiting}} if waiting else {"running": {}},
    }
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {"app.kubernetes.io/component": component, "app": APPS.get(component, component)},
        },
        "spec": {"nodeName": node_name},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [cs],
        },
    }


class GpuCluster(FakeClient):
    def __init__(self, objects, outcome=None):
        super(GpuCluster, self).__init__(objects, kinds=KINDS)
        self.outcome = outcome or (lambda pod: ("Succeeded", PASSED if "vectoradd" in pod["metadata"]["name"] else SMI))
        self.logs = {}
        self.on_get = GpuCluster.kubelet

    def list_node(self, **dummy):
        """CoreV1Api.list_node(_preload_content=False): the nodes PodRun looks at while pods run."""
        return Response({"items": self.objects("Node")})

    def kubelet(self, resource):
        """Validation pods run to completion at the first look (scheduled on their affinity node)."""
        for key, pod in list(self.store.items()):
            if key[0] != "Pod" or (pod.get("status") or {}).get("phase"):
                continue
            terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
                "nodeSelectorTerms"
            ]
            pod["spec"]["nodeName"] = terms[0]["matchFields"][0]["values"][0]
            phase, log = self.outcome(pod)
            if phase == "Pending":
                pod["status"] = {
                    "phase": "Pending",
                    "conditions": [
                        {
                            "type": "PodScheduled",
                            "status": "False",
                            "message": "0/3 nodes are available: 1 Insufficient nvidia.com/gpu.",
                        }
                    ],
                }
                continue
            code = 0 if phase == "Succeeded" else 1
            term = {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}
            pod["status"] = {
                "phase": phase,
                "containerStatuses": [{"name": "c", "ready": False, "restartCount": 0, "state": {"terminated": term}}],
            }
            self.logs[pod["metadata"]["name"]] = log


@pytest.fixture
def patched(monkeypatch):
    state = {"proxy": lambda path: METRICS % path.split("/pods/")[1].split(":")[0].replace("dcgm-", ""), "client": None}
    monkeypatch.setattr(runner, "core_api", lambda client: client)
    for where in (runner, podrun):
        monkeypatch.setattr(where, "read_log", lambda core, pod, ns, tail=None, previous=False: core.logs.get(pod, ""))
    monkeypatch.setattr(metrics, "proxy_get", lambda client, path: state["proxy"](path))
    return state


def cluster(n=3, extra=(), **kw):
    objs = [{"kind": "Namespace", "metadata": {"name": NS}}]
    for i in range(n):
        name = "gpu-{0}".format(i)
        objs += [
            node(name),
            component_pod("nvidia-driver-" + name, name, "nvidia-driver"),
            component_pod("dp-" + name, name, "nvidia-device-plugin"),
            component_pod("dcgm-" + name, name, "dcgm-exporter"),
        ]
    objs.append({"kind": "Node", "metadata": {"name": "worker-0", "labels": {}}, "status": {}})
    objs += list(extra)
    return GpuCluster(objs, **kw)


def go(monkeypatch, client, check=False, **args):
    args.setdefault("wait_sleep", 1)
    return run(monkeypatch, gpu_validate.main, client, args, check=check)


def pods_left(client):
    return [p["metadata"]["name"] for p in client.objects("Pod") if p["metadata"].get("labels", {}).get(RUN_LABEL)]


def test_all_nodes_pass_and_nothing_is_left(monkeypatch, patched, tmp_path):
    client = cluster(3)
    paths = dict(
        report_json=str(tmp_path / "r.json"),
        report_junit=str(tmp_path / "r.xml"),
        report_markdown=str(tmp_path / "r.md"),
    )
    result, failed = go(
        monkeypatch, client, checks=["allocatable", "driver", "vectoradd", "nvidia_smi", "metrics"], **paths
    )
    assert not failed, result
    assert result["changed"] is False and result["passed"] is True
    assert [n["node"] for n in result["nodes"]] == ["gpu-0", "gpu-1", "gpu-2"]
    for n in result["nodes"]:
        assert set(n["checks"]) == {"node_ready", "allocatable", "driver", "vectoradd", "nvidia_smi", "metrics"}
        assert all(c["status"] == "pass" for c in n["checks"].values()), n
    creates = [w for w in client.writes if w[0] == "create"]
    assert len(creates) == 6 and {w[1] for w in creates} == {"Pod"}
    deletes = [w for w in client.writes if w[0] != "create"]
    assert [w[0] for w in deletes] == ["delete"] * 6 and sorted(w[2] for w in deletes) == sorted(w[2] for w in creates)
    assert pods_left(client) == []
    assert result["reports"] == {
        "json": paths["report_json"],
        "junit": paths["report_junit"],
        "markdown": paths["report_markdown"],
    }
    assert json.load(open(paths["report_json"]))["summary"]["passed"] == 3
    assert "GPU validation: PASSED (3/3 nodes passed)" in open(paths["report_markdown"]).read()


def test_failing_node_is_named_with_reasons(monkeypatch, patched, tmp_path):
    client = cluster(
        2,
        extra=[
            node("ip-10-0-138-78", alloc="0"),
            component_pod("nvidia-driver-x", "ip-10-0-138-78", "nvidia-driver"),
            component_pod(
                "dp-x", "ip-10-0-138-78", "nvidia-device-plugin", ready=False, waiting="CrashLoopBackOff", restarts=4
            ),
        ],
    )
    result, failed = go(monkeypatch, client, report_junit=str(tmp_path / "r.xml"))
    assert failed
    assert result["msg"] == (
        "GPU validation failed on 1 of 3 GPU node(s) (checks: allocatable, driver, vectoradd): ip-10-0-138-78: "
        "allocatable nvidia.com/gpu 0, expected 1 (nvidia.com/gpu.count); device-plugin pod CrashLoopBackOff (restarts 4)"
    )
    vectoradd = dict((n["node"], n["checks"]["vectoradd"]) for n in result["nodes"])["ip-10-0-138-78"]
    assert vectoradd == {
        "status": "skipped",
        "message": "vectoradd not run: the allocatable check failed, the pod could not be scheduled",
    }
    assert result["passed"] is False and result["summary"]["failed"] == 1
    assert len([w for w in client.writes if w[0] == "create"]) == 2  # no pod for the node without GPUs
    assert pods_left(client) == []
    assert os.path.exists(str(tmp_path / "r.xml"))  # reports are written on failure too


def test_workload_failure_and_log(monkeypatch, patched):
    def outcome(pod):
        if "vectoradd" in pod["metadata"]["name"] and pod["spec"]["nodeName"] == "gpu-1":
            return "Failed", "Failed to allocate device vector A (error code no CUDA-capable device is detected)!\n"
        return "Succeeded", PASSED

    client = cluster(3, outcome=outcome)
    result, failed = go(monkeypatch, client, fail_on_error=False)
    assert not failed and result["passed"] is False
    assert result["failures"] == [
        "gpu-1: vectoradd pod Failed (Error (exit 1)): Failed to allocate device vector A (error code no CUDA-capable device is detected)!"
    ]
    assert pods_left(client) == []


def test_driver_crashloop(monkeypatch, patched):
    client = cluster(1)
    client.put(
        component_pod(
            "nvidia-driver-gpu-0", "gpu-0", "nvidia-driver", ready=False, waiting="CrashLoopBackOff", restarts=6
        )
    )
    client.logs["nvidia-driver-gpu-0"] = "Loading driver\nERROR: Unable to load the kernel module 'nvidia.ko'\n"
    result, failed = go(monkeypatch, client, checks=["driver"])
    assert failed
    assert result["msg"].endswith(
        "gpu-0: driver pod nvidia-driver-gpu-0 CrashLoopBackOff (restarts 6): Loading driver / ERROR: Unable to load the kernel module 'nvidia.ko'"
    )
    assert client.writes == []  # read-only checks create nothing


def test_check_mode_creates_nothing(monkeypatch, patched):
    client = cluster(2)
    result, failed = go(monkeypatch, client, check=True, checks=["allocatable", "driver", "vectoradd", "metrics"])
    assert not failed, result
    assert client.writes == []
    assert result["nodes"][0]["checks"]["vectoradd"]["status"] == "skipped"
    assert result["nodes"][0]["checks"]["metrics"]["status"] == "pass"
    assert result["summary"]["check_mode"] is True


def test_metrics_unreachable_is_not_a_pass(monkeypatch, patched):
    def refuse(path):
        raise ApiException(status=503, reason="Service Unavailable")

    patched["proxy"] = refuse
    client = cluster(1)
    result, failed = go(monkeypatch, client, checks=["metrics"])
    assert failed
    assert result["nodes"][0]["checks"]["metrics"]["status"] == "unreachable"
    assert (
        "metrics unreachable via pod proxy /api/v1/namespaces/nvidia-gpu-operator/pods/dcgm-gpu-0:9400/proxy/metrics"
        in result["msg"]
    )


def test_metrics_via_service(monkeypatch, patched):
    patched["proxy"] = lambda path: (
        (METRICS % "gpu-0") if "/services/nvidia-dcgm-exporter:9400/proxy/metrics" in path else ""
    )
    client = cluster(2)
    result, failed = go(monkeypatch, client, checks=["metrics"], metrics_via="service", fail_on_error=False)
    assert not failed
    statuses = dict((n["node"], n["checks"]["metrics"]["status"]) for n in result["nodes"])
    assert statuses == {"gpu-0": "pass", "gpu-1": "unreachable"}


def test_timeout_reports_pending_reason_and_cleans_up(monkeypatch, patched):
    monkeypatch.setattr(params, "MIN_TIMEOUT", 1)
    client = cluster(2, outcome=lambda pod: ("Pending", ""))
    result, failed = go(monkeypatch, client, checks=["vectoradd"], wait_timeout=1)
    assert failed
    assert (
        "gpu-0: vectoradd pod still Pending: 0/3 nodes are available: 1 Insufficient nvidia.com/gpu. after 1s"
        in result["msg"]
    )
    assert pods_left(client) == []


def test_untolerated_taint_fails_fast(monkeypatch, patched):
    tainted = node("gpu-t")
    tainted["spec"]["taints"].append({"key": "nodetype", "value": "gpu", "effect": "NoSchedule"})
    client = cluster(0, extra=[tainted, component_pod("nvidia-driver-t", "gpu-t", "nvidia-driver")])
    result, failed = go(monkeypatch, client, checks=["vectoradd"])
    assert failed and "taint nodetype=gpu:NoSchedule is not tolerated; add it to tolerations" in result["msg"]
    assert client.writes == []


def test_unauthorized_create_still_cleans_up(monkeypatch, patched):
    client = cluster(2)
    original = client.create
    calls = []

    def create(resource, definition, namespace=None, **params):
        calls.append(definition["metadata"]["name"])
        if len(calls) == 2:
            raise ApiException(status=401, reason="Unauthorized")
        return original(resource, definition, namespace=namespace, **params)

    client.create = create
    result, failed = go(monkeypatch, client, checks=["vectoradd"])
    assert failed and result["msg"].startswith("api_key:") and "401" in result["msg"]
    assert pods_left(client) == []
    assert [w[0] for w in client.writes] == ["create", "delete"]  # the pod that was created is deleted again


@pytest.mark.parametrize(
    "args,param",
    [
        (dict(checks=["allocatable", "gpu_burn"]), "checks"),
        (dict(wait_timeout=3), "wait_timeout"),
        (dict(node_selector={"gpu": "nonexistent"}), "node_selector"),
        (dict(node_names=["gpu-0", "ghost"]), "node_names"),
        (dict(namespace="missing"), "namespace"),
        (dict(report_json=__file__ + "/r.json"), "report_json"),  # a folder under a file cannot be made
        (dict(expected_gpus=0), "expected_gpus"),
        (dict(tolerations=[{"key": "x", "operator": "Maybe"}]), "tolerations"),
        (dict(driver_selector="app=(broken"), "driver_selector"),
        (dict(vectoradd_image="UPPER/Case Image"), "vectoradd_image"),
        (dict(metrics_port=0, checks=["metrics"]), "metrics_port"),
    ],
)
def test_bad_inputs_fail_naming_parameter_and_write_nothing(monkeypatch, patched, args, param):
    client = cluster(2)
    result, failed = go(monkeypatch, client, **args)
    assert failed, result
    assert client.writes == []
    assert param in result["msg"]
    if param not in ("checks", "tolerations"):  # choices and suboptions are enforced by Ansible's argument spec
        assert result["msg"].startswith(param + ":") and result.get("param") == param


# --- real clusters: sharing, MIG, the GPU Operator's labels, reports -----------------------


def operator_pod(name, node_name, app, **kw):
    """A pod labelled as the NVIDIA GPU Operator labels it (assets/state-*/…_daemonset.yaml)."""
    pod = component_pod(name, node_name, "unused", **kw)
    pod["metadata"]["labels"] = {"app": app}
    if app == "nvidia-driver-daemonset":
        pod["metadata"]["labels"].update(
            {"app.kubernetes.io/component": "nvidia-driver", "nvidia.com/precompiled": "false"}
        )
    return pod


def operator_cluster(nodes, plugin_ready=True):
    objs = [{"kind": "Namespace", "metadata": {"name": NS}}]
    for n in nodes:
        name = n["metadata"]["name"]
        n = dict(n, kind="Node")
        objs += [
            n,
            operator_pod("nvidia-driver-daemonset-" + name, name, "nvidia-driver-daemonset"),
            operator_pod(
                "nvidia-device-plugin-daemonset-" + name,
                name,
                "nvidia-device-plugin-daemonset",
                ready=plugin_ready,
                waiting=None if plugin_ready else "CrashLoopBackOff",
                restarts=0 if plugin_ready else 3,
            ),
            operator_pod("nvidia-dcgm-exporter-" + name, name, "nvidia-dcgm-exporter"),
        ]
    return GpuCluster(objs)


def test_defaults_find_the_gpu_operator_pods(monkeypatch, patched):
    broken = time_sliced_node("gpu-0", rename=False, gpus=1, replicas=1)
    broken["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    client = operator_cluster([broken], plugin_ready=False)
    patched["proxy"] = lambda path: exposition(1, host="gpu-0")
    result, failed = go(monkeypatch, client, checks=["allocatable", "driver", "metrics"], fail_on_error=False)
    checks = result["nodes"][0]["checks"]
    assert checks["driver"]["status"] == "pass", checks
    assert checks["metrics"]["status"] == "pass", checks
    assert "device-plugin pod CrashLoopBackOff (restarts 3)" in checks["allocatable"]["message"]


def all_split(node):
    node["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    return node


@pytest.mark.parametrize(
    "make,series,resource",
    [
        (lambda: time_sliced_node("gpu-0", rename=True, gpus=2, replicas=4), dict(gpus=2), "nvidia.com/gpu.shared"),
        (lambda: time_sliced_node("gpu-0", rename=False, gpus=2, replicas=4), dict(gpus=2), "nvidia.com/gpu"),
        (lambda: mig_single_node("gpu-0"), dict(gpus=2, mig=("1g.5gb", 7)), "nvidia.com/gpu"),
        (lambda: mig_mixed_node("gpu-0"), dict(gpus=4, mig=("1g.5gb", 1)), "nvidia.com/gpu"),
        (lambda: all_split(mig_mixed_node("gpu-0")), dict(gpus=4, mig=("1g.5gb", 1)), "nvidia.com/mig-1g.5gb"),
    ],
)
def test_sharing_and_mig_nodes_pass_every_check(monkeypatch, patched, make, series, resource):
    client = operator_cluster([make()])
    requested, outcome = [], client.outcome

    def record(pod):
        requested.append(sorted(pod["spec"]["containers"][0]["resources"]["limits"]))
        return outcome(pod)

    client.outcome = record
    patched["proxy"] = lambda path: exposition(host="gpu-0", **series)
    result, failed = go(monkeypatch, client, checks=["allocatable", "driver", "vectoradd", "nvidia_smi", "metrics"])
    assert not failed, result.get("msg")
    assert requested == [[resource]] * 2
    assert pods_left(client) == []


def test_not_run_workloads_are_skipped_in_junit(monkeypatch, patched, tmp_path):
    import xml.etree.ElementTree as ET

    client = cluster(1, extra=[node("ip-10-0-138-78", alloc="0")])
    result, failed = go(monkeypatch, client, report_junit=str(tmp_path / "r.xml"), checks=["allocatable", "vectoradd"])
    assert failed
    check = dict((n["node"], n["checks"]["vectoradd"]) for n in result["nodes"])["ip-10-0-138-78"]
    assert check["status"] == "skipped" and "allocatable" in check["message"]
    cases = dict(((c.get("classname"), c.get("name")), c) for c in ET.parse(str(tmp_path / "r.xml")).iter("testcase"))
    case = cases[("gpu_validate.ip-10-0-138-78", "vectoradd")]
    assert case.find("failure") is None
    assert "allocatable" in case.find("skipped").get("message")
    assert cases[("gpu_validate.ip-10-0-138-78", "allocatable")].find("failure") is not None


def test_not_ready_node_is_not_told_to_tolerate_not_ready(monkeypatch, patched):
    sick = node("gpu-9")
    sick["status"]["conditions"] = [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}]
    sick["spec"]["taints"] += [
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
    ]
    client = cluster(0, extra=[sick])
    result, failed = go(monkeypatch, client, checks=["vectoradd"])
    assert failed
    assert "node.kubernetes.io/not-ready" not in result["msg"] and "tolerations" not in result["msg"]
    assert "node NotReady (NodeStatusUnknown)" in result["msg"]
    check = result["nodes"][0]["checks"]["vectoradd"]
    assert check["status"] == "skipped" and "fix the node" in check["message"]
    assert client.writes == []


def test_old_option_names_still_work(monkeypatch, patched):
    client = cluster(2)
    result, failed = go(monkeypatch, client, checks=["vectoradd"], nodes=["gpu-1"], timeout=60, poll_interval=2)
    assert not failed, result
    assert [n["node"] for n in result["nodes"]] == ["gpu-1"]


def test_incremental_runs_workloads_only_on_changed_nodes(monkeypatch, patched):
    """A record of an earlier run: no pod for unchanged nodes; a changed plugin config re-validates its node only."""
    client = cluster(2)
    for name in ("gpu-0", "gpu-1"):
        plugin = client.store[("Pod", NS, "dp-" + name)]
        plugin["spec"]["volumes"] = [{"name": "cfg", "configMap": {"name": "plugin-" + name}}]
        plugin["spec"]["containers"] = [{"name": "c", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}]
        client.put({"kind": "ConfigMap", "metadata": {"name": "plugin-" + name, "namespace": NS}, "data": {"a": "1"}})
    args = dict(checks=["allocatable", "driver", "vectoradd"], namespace=NS)
    first, failed = go(monkeypatch, client, previous_record={}, **args)
    assert not failed, first
    assert first["summary"]["revalidated"] == ["gpu-0", "gpu-1"] and first["summary"]["unchanged"] == []
    assert sorted(first["record_data"]) == ["gpu-0", "gpu-1"]
    assert json.loads(first["record_data"]["gpu-0"])["checks"] == ["vectoradd"]
    assert first["nodes"][0]["validation"]["reason"] == "never validated"

    client.writes[:] = []
    again, failed = go(monkeypatch, client, previous_record=first["record_data"], **args)
    assert not failed, again
    assert client.writes == []  # no pod: nothing changed
    assert again["record_data"] == first["record_data"]
    assert again["summary"]["unchanged"] == ["gpu-0", "gpu-1"]
    vectoradd = again["nodes"][0]["checks"]["vectoradd"]
    assert vectoradd["status"] == "skipped" and vectoradd["message"].startswith("vectoradd not re-run: node unchanged")
    assert any(line.endswith("skipped, unchanged since " + first["summary"]["started"]) for line in again["table"])

    client.store[("ConfigMap", NS, "plugin-gpu-1")]["data"] = {"a": "2"}
    changed, failed = go(monkeypatch, client, previous_record=again["record_data"], **args)
    assert not failed, changed
    assert changed["summary"]["revalidated"] == ["gpu-1"]
    assert changed["nodes"][1]["validation"]["reason"].startswith("device plugin config changed (")
    assert len([w for w in client.writes if w[0] == "create"]) == 1
    assert (
        changed["nodes"][1]["checks"]["vectoradd"]["status"] == "pass"
        and changed["nodes"][1]["checks"]["vectoradd"]["pod"]
    )
    assert changed["nodes"][0]["checks"]["vectoradd"]["status"] == "skipped"
    assert changed["record_data"]["gpu-0"] == first["record_data"]["gpu-0"]
    assert changed["record_data"]["gpu-1"] != first["record_data"]["gpu-1"]

    client.writes[:] = []
    forced, failed = go(monkeypatch, client, previous_record=changed["record_data"], force=True, **args)
    assert not failed and forced["summary"]["revalidated"] == ["gpu-0", "gpu-1"] and forced["summary"]["forced"]
    assert len([w for w in client.writes if w[0] == "create"]) == 2


def leave_pods(client, phases):
    """The validation pods of run old1 on gpu-0, as a run killed before its cleanup left them: (name, phase)."""
    for name, phase in phases:
        client.put(
            {
                "kind": "Pod",
                "apiVersion": "v1",
                "metadata": {"name": name, "namespace": NS, "labels": {RUN_LABEL: "old1"}},
                "spec": {"nodeName": "gpu-0"},
                "status": {"phase": phase},
            }
        )


def test_finished_pods_an_interrupted_run_left_are_deleted(monkeypatch, patched):
    # A run killed (or cut off from the API server) after its pods finished, before its cleanup.
    client = cluster(1)
    leave_pods(client, (("gpuops-vectoradd-gpu-0-old1", "Succeeded"), ("gpuops-nvidia-smi-gpu-0-old1", "Failed")))
    result, failed = go(monkeypatch, client, checks=["allocatable", "driver"])
    assert not failed, result
    assert pods_left(client) == []
    assert "t+0s deleted 2 validation pod(s) an interrupted run left" in result["progress"], result["progress"]


def test_pods_an_interrupted_run_left_pending_or_running_are_deleted_before_this_runs_pods_start(monkeypatch, patched):
    """Left running (the GPU they hold is the one this run's pods wait for) they would finish after this run, with
    no run left to delete them (seen: a CI fault chain's last run ended while the cut run's vectoradd pod waited)."""
    from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import podrun

    client = cluster(1)
    leave_pods(client, (("gpuops-nvidia-smi-gpu-0-old1", "Running"), ("gpuops-vectoradd-gpu-0-old1", "Pending")))
    create, seen = podrun.PodRun.create, []

    def look_then_create(self, *args, **kwargs):
        seen.append(pods_left(client))
        return create(self, *args, **kwargs)

    monkeypatch.setattr(podrun.PodRun, "create", look_then_create)
    result, failed = go(monkeypatch, client, checks=["vectoradd"])
    assert not failed, result
    assert seen == [[]], seen  # both gone before this run's pods were created
    assert pods_left(client) == [], (result.get("warnings"), result["progress"])
    line = "t+0s deleted 2 validation pod(s) an interrupted run left (2 still pending or running)"
    assert line in result["progress"], result["progress"]
