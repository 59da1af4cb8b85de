# -*- coding: utf-8 -*-
"""gpu_diagnose's pure part: per GPU node what is wrong, the likely cause from the signature table, and redaction."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.analyse import (
    NO_SIGNATURE,
    daemonset_wants,
    diagnose,
    markdown,
    node_findings,
    redact,
    redact_object,
    table,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.signatures import SIGNATURES

BY_ID = dict((s["id"], s) for s in SIGNATURES)
NS = "nvidia-gpu-driver"


def node(name, ready=True, taints=None, gpus="1", message="kubelet is posting ready status"):
    return {
        "metadata": {"name": name, "labels": {"feature.node.kubernetes.io/pci-10de.present": "true", "gpu": "yes"}},
        "spec": {"taints": taints or []},
        "status": {
            "conditions": [{"type": "Ready", "status": "True" if ready else "Unknown", "message": message}],
            "allocatable": {"nvidia.com/gpu": gpus} if gpus is not None else {},
        },
    }


def daemonset(name, tolerations=None, selector=None):
    return {
        "metadata": {"name": name, "namespace": NS},
        "spec": {"template": {"spec": {"nodeSelector": selector or {"gpu": "yes"}, "tolerations": tolerations or []}}},
    }


def pod(name, ds, node_name, ready=True, waiting=None, message=None, restarts=0, last_message=None):
    status = {"ready": ready, "restartCount": restarts, "name": "c"}
    if waiting:
        status["state"] = {"waiting": dict({"reason": waiting}, **({"message": message} if message else {}))}
    else:
        status["state"] = {"running": {}}
    if last_message:
        status["lastState"] = {"terminated": {"exitCode": 1, "message": last_message}}
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": name,
            "ownerReferences": [{"kind": "DaemonSet", "name": ds}],
        },
        "spec": {"nodeName": node_name, "containers": [{"name": "c"}]},
        "status": {
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [status],
        },
    }


def event(kind, name, message, reason="Failed", namespace=NS):
    return {
        "type": "Warning",
        "reason": reason,
        "message": message,
        "involvedObject": {"kind": kind, "name": name, "namespace": namespace},
    }


DS = [("driver", daemonset("nvidia-driver")), ("device_plugin", daemonset("nvidia-device-plugin"))]


def healthy_pods(name):
    return [
        ("driver", pod("driver-" + name, "nvidia-driver", name)),
        ("device_plugin", pod("plugin-" + name, "nvidia-device-plugin", name)),
    ]


def test_a_healthy_node_is_ok_and_its_logs_match_nothing():
    logs = {(NS, "driver-gpu-1", "c", False): "Loading NVIDIA driver kernel modules...\nDone, now waiting for signal\n"}
    (row,) = diagnose([node("gpu-1")], DS, healthy_pods("gpu-1"), logs, [])
    assert row == {"node": "gpu-1", "status": "ok", "symptoms": [], "findings": [], "evidence": []}


def test_a_driver_built_for_another_kernel_is_named_from_its_log():
    line = BY_ID["driver_modules_not_built_for_kernel"]["example"]
    pods = [
        ("driver", pod("driver-gpu-1", "nvidia-driver", "gpu-1", ready=False, waiting="CrashLoopBackOff", restarts=3)),
        ("device_plugin", pod("plugin-gpu-1", "nvidia-device-plugin", "gpu-1")),
    ]
    logs = {
        (NS, "driver-gpu-1", "c", True): "Loading NVIDIA driver kernel modules...\n+ modprobe nvidia\n" + line + "\n"
    }
    (row,) = diagnose([node("gpu-1", gpus="0")], DS, pods, logs, [])
    assert row["status"] == "problem"
    assert row["symptoms"][0] == "driver pod driver-gpu-1: CrashLoopBackOff (restarts 3)"
    assert "no allocatable GPUs (nvidia.com/gpu: 0)" in row["symptoms"]
    (found,) = row["findings"]
    assert found["signature"] == "driver_modules_not_built_for_kernel" and found["evidence"] == line
    assert found["source"].startswith("https://github.com/")


def test_kubelet_events_name_the_runtime_and_the_pull_failures():
    sandbox = BY_ID["containerd_no_nvidia_runtime"]["example"]
    pull = BY_ID["image_manifest_unknown"]["example"]
    pods = [
        (
            "driver",
            pod(
                "driver-gpu-1",
                "nvidia-driver",
                "gpu-1",
                ready=False,
                waiting="ImagePullBackOff",
                message='Back-off pulling image "x"',
            ),
        ),
        (
            "device_plugin",
            pod("plugin-gpu-1", "nvidia-device-plugin", "gpu-1", ready=False, waiting="ContainerCreating"),
        ),
    ]
    events = [
        event("Pod", "driver-gpu-1", pull),
        event("Pod", "plugin-gpu-1", sandbox, reason="FailedCreatePodSandBox"),
        event("Pod", "somebody-else", BY_ID["openshift_scc_denied"]["example"]),
    ]
    (row,) = diagnose([node("gpu-1")], DS, pods, {}, events)
    assert [f["signature"] for f in row["findings"]] == ["image_manifest_unknown", "containerd_no_nvidia_runtime"]


def test_what_a_ready_pod_overcame_before_it_was_ready_is_history():
    """The GPU Operator starts its operands at once: until the toolkit has configured containerd, their sandboxes are
    refused (kubelet events). Once Ready, those events are not a finding; one after readiness still is."""
    sandbox = BY_ID["containerd_no_nvidia_runtime"]["example"]
    pods = healthy_pods("gpu-1")
    pods[1][1]["status"]["conditions"][0]["lastTransitionTime"] = "2026-11-29T08:00:30Z"
    before = dict(
        event("Pod", "plugin-gpu-1", sandbox, reason="FailedCreatePodSandBox"), lastTimestamp="2026-11-29T08:00:10Z"
    )
    (row,) = diagnose([node("gpu-1")], DS, pods, {}, [before])
    assert row["status"] == "ok" and row["findings"] == []
    after = dict(before, lastTimestamp="2026-11-29T08:05:00Z")
    (row,) = diagnose([node("gpu-1")], DS, pods, {}, [after])
    assert row["status"] == "warning" and [f["signature"] for f in row["findings"]] == ["containerd_no_nvidia_runtime"]


def test_a_missing_pod_is_explained_by_its_daemonsets_events_or_an_untolerated_taint():
    refused = BY_ID["openshift_scc_denied"]["example"]
    pods = [("driver", pod("driver-gpu-1", "nvidia-driver", "gpu-1"))]
    events = [event("DaemonSet", "nvidia-device-plugin", refused, reason="FailedCreate")]
    (row,) = diagnose([node("gpu-1")], DS, pods, {}, events)
    assert row["symptoms"] == ["no device_plugin pod (nvidia-device-plugin)"]
    assert [f["signature"] for f in row["findings"]] == ["openshift_scc_denied"]

    taint = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
    (row,) = diagnose([node("gpu-2", taints=[taint])], DS, [], {}, [])
    assert row["symptoms"] == [
        "no driver pod (nvidia-driver): taint nvidia.com/gpu=true:NoSchedule is not tolerated",
        "no device_plugin pod (nvidia-device-plugin): taint nvidia.com/gpu=true:NoSchedule is not tolerated",
    ]
    assert row["findings"] == [] and row["evidence"] == row["symptoms"]
    tolerant = daemonset("d", tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
    assert daemonset_wants(tolerant, node("gpu-2", taints=[taint])) == (True, None)
    assert daemonset_wants(daemonset("d", tolerations=[{"operator": "Exists"}]), node("gpu-2", taints=[taint]))[0]
    # A DaemonSet for another kernel (its nodeSelector) is not expected on the node.
    assert daemonset_wants(daemonset("d", selector={"kernel": "other"}), node("gpu-2")) == (False, None)


def test_a_node_not_ready_is_named_from_its_condition():
    message = BY_ID["node_not_ready_kubelet_stopped"]["example"]
    (row,) = diagnose([node("gpu-1", ready=False, message=message)], DS, healthy_pods("gpu-1"), {}, [])
    assert row["symptoms"][0].startswith("node NotReady: ")
    assert [f["signature"] for f in row["findings"]] == ["node_not_ready_kubelet_stopped"]


def test_an_unknown_failure_says_no_known_signature_and_shows_the_evidence():
    pods = [
        ("driver", pod("driver-gpu-1", "nvidia-driver", "gpu-1", ready=False, waiting="CrashLoopBackOff", restarts=1)),
        ("device_plugin", pod("plugin-gpu-1", "nvidia-device-plugin", "gpu-1")),
    ]
    logs = {(NS, "driver-gpu-1", "c", True): "step one\nsomething nobody has seen before\n"}
    report = {"nodes": [{"node": "gpu-1", "failures": ["vectoradd: exit 1"]}]}
    (row,) = diagnose([node("gpu-1")], DS, pods, logs, [], report)
    assert row["findings"] == []
    assert "validation: vectoradd: exit 1" in row["symptoms"]
    assert "driver-gpu-1/c (previous): something nobody has seen before" in row["evidence"]
    lines = table([row])
    assert lines[0] == "GPU nodes: 1 (1 with a problem, 0 with a warning, 0 ok)"
    assert "  cause:    " + NO_SIGNATURE + "; the evidence:" in lines
    assert NO_SIGNATURE in markdown([row])


def test_rows_put_problems_first_and_the_table_lists_the_ok_nodes_once():
    line = BY_ID["driver_modules_not_built_for_kernel"]["example"]
    pods = healthy_pods("gpu-a") + [
        ("driver", pod("driver-gpu-b", "nvidia-driver", "gpu-b", ready=False, waiting="CrashLoopBackOff", restarts=2)),
        ("device_plugin", pod("plugin-gpu-b", "nvidia-device-plugin", "gpu-b")),
    ]
    logs = {(NS, "driver-gpu-b", "c", True): line}
    rows = diagnose([node("gpu-a"), node("gpu-b")], DS, pods, logs, [])
    assert [r["node"] for r in rows] == ["gpu-b", "gpu-a"]
    lines = table(rows)
    assert lines[-1] == "ok: gpu-a" and "gpu-b [problem]" in lines
    assert any(line.startswith("  cause:    No NVIDIA kernel module") for line in lines)
    md = markdown(rows)
    assert md.splitlines()[0].startswith("| node | status |") and "driver_modules_not_built_for_kernel" in md


PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\nabcDEF123=\n-----END CERTIFICATE-----"


def test_secrets_are_redacted_wherever_they_appear():
    text = "\n".join(
        [
            "cert follows " + PEM,
            "Authorization: Bearer sha256~abcdefghijklmnop",
            '{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz","email":"a@b"}}}',
            "password=hunter2 token: abc.def",
            "jwt eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJlLXBhcnQ",
        ]
    )
    out = redact(text)
    for secret in (
        "MIIBszCCAVmgAwIBAgIUQ",
        "abcdefghijklmnop",
        "dXNlcjpwYXNz",
        "hunter2",
        "abc.def",
        "eyJhbGciOiJSUzI1NiJ9",
    ):
        assert secret not in out, (secret, out)
    assert "-----BEGIN CERTIFICATE----- <redacted> -----END CERTIFICATE-----" in out
    assert "Bearer <redacted>" in out and '"auth":"<redacted>"' in out and "a@b" in out
    # A truncated PEM (a log tail cut mid-block) is redacted too.
    assert "MIIBszCCAVmgAwIBAgIUQ" not in redact("x " + PEM.split("-----END", maxsplit=1)[0])
    obj = {
        "spec": {
            "containers": [{"env": [{"name": "REGISTRY_PASSWORD", "value": "pw"}, {"name": "MODE", "value": "dtk"}]}]
        }
    }
    env = redact_object(obj)["spec"]["containers"][0]["env"]
    assert env == [{"name": "REGISTRY_PASSWORD", "value": "<redacted>"}, {"name": "MODE", "value": "dtk"}]
    assert json.dumps(redact_object({"data": {"cert": PEM}})).count("<redacted>") == 1


def test_a_daemonset_not_made_by_the_collection_gets_its_component_from_its_name():
    from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.analyse import component_of

    names = {
        "nvidia-driver-daemonset": "driver",
        "nvidia-container-toolkit-daemonset": "container_toolkit",
        "nvidia-device-plugin-daemonset": "device_plugin",
        "gpu-feature-discovery": "gpu_feature_discovery",
        "nvidia-dcgm-exporter": "monitoring",
        "nfd-worker": "nfd",
        "node-feature-discovery-worker": "nfd",
        "something-else": "other",
    }
    for name, component in names.items():
        assert component_of({"metadata": {"name": name}}) == component, name
    # The collection's owner label wins over the name.
    assert component_of({"metadata": {"name": "nvidia-driver"}}, "device_plugin") == "device_plugin"
    # The logs of an unknown component are matched against every signature.
    pods = [("other", pod("x-gpu-1", "something-else", "gpu-1", ready=False, waiting="CrashLoopBackOff", restarts=1))]
    logs = {(NS, "x-gpu-1", "c", True): BY_ID["nouveau_in_use"]["example"]}
    (row,) = diagnose([node("gpu-1")], [("other", daemonset("something-else"))], pods, logs, [])
    assert [f["signature"] for f in row["findings"]] == ["nouveau_in_use"]


def test_the_shapes_a_reviewer_found_are_redacted_too():
    cases = [
        'password: "hunter2"',
        "password='hunter2'",
        "AWS_SECRET_ACCESS_KEY=hunter2",
        "client_secret=hunter2",
        "access_token=hunter2",
        "Authorization: Basic dXNlcjpodW50ZXIy",
        "HTTPS_PROXY=http://user:hunter2@proxy.example.com:3128",
        '{\\"auths\\":{\\"r.example.com\\":{\\"auth\\":\\"hunter2\\"}}}',
        '{"msg":"cert -----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\nhunter2hunter2"}',
    ]
    for text in cases:
        out = redact(text)
        assert "hunter2" not in out and "dXNlcjpodW50ZXIy" not in out and "MIIEvQIB" not in out, (text, out)
    # What diagnosis needs stays: taint keys, secret volume names, event wording.
    kept = redact('MountVolume.SetUp failed for volume "x" : secret "pull-secret" not found')
    assert kept == 'MountVolume.SetUp failed for volume "x" : secret "pull-secret" not found'
    obj = {
        "metadata": {
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": '{"env":[{"name":"HF_TOKEN","value":"hunter2"}]}'
            }
        },
        "spec": {
            "triggers": [{"github": {"secret": "hunter2"}}],
            "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
            "volumes": [{"secret": {"secretName": "nvidia-entitlement"}}],
            "containers": [{"args": ["serve", "--token", "hunter2", "--port", "80"]}],
        },
    }
    out = redact_object(obj)
    assert "hunter2" not in json.dumps(out)
    assert out["spec"]["taints"][0]["key"] == "nvidia.com/gpu"
    assert out["spec"]["volumes"][0]["secret"]["secretName"] == "nvidia-entitlement"
    assert out["spec"]["containers"][0]["args"] == ["serve", "--token", "<redacted>", "--port", "80"]


def test_a_cordoned_or_not_ready_node_is_not_blamed_on_the_taints_every_daemonset_tolerates():
    for key in ("node.kubernetes.io/unschedulable", "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        taint = {"key": key, "effect": "NoSchedule" if "unsched" in key else "NoExecute"}
        assert daemonset_wants(daemonset("d"), node("gpu-1", taints=[taint])) == (True, None), key


def test_a_node_the_driver_rollout_left_is_named_with_its_cause():
    failed = node("gpu-1")
    failed["metadata"]["labels"]["gpuops.cluster/driver-upgrade"] = "failed"
    failed["metadata"]["annotations"] = {
        "gpuops.cluster/driver-upgrade.failure": "the new driver pod is not ready after 1260s: CrashLoopBackOff "
        "(log: Could not unload NVIDIA driver kernel modules, driver is in use)"
    }
    row = node_findings(failed, [], [], {}, [])
    assert row["status"] == "problem"
    assert row["symptoms"][0].startswith("driver upgrade failed, node cordoned: the new driver pod is not ready")
    assert [f["signature"] for f in row["findings"]] == ["driver_in_use_cannot_unload"], row["findings"]
    stopped = node("gpu-2")
    stopped["metadata"]["labels"]["gpuops.cluster/driver-upgrade"] = "reload"
    row = node_findings(stopped, [], [], {}, [])
    assert row["symptoms"] == [
        "cordoned for a driver upgrade (stage reload) by a run that did not finish: the next site.yml run resumes it"
    ]
