# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    DEFAULT_TOLERATIONS,
    NODE_ANNOTATION,
    RUN_LABEL,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.params import (
    validate_params,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.pods import (
    pod_name,
    render_pod,
    run_id,
)
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.gpu_validate_fixtures import (
    params,
)

# --- pods ------------------------------------------------------------------------------------


def test_render_pod_restricted_and_pinned():
    cfg = validate_params(params())
    body = render_pod("vectoradd", "ip-10-0-138-78.us-east-2.compute.internal", cfg, "abc123")
    spec = body["spec"]
    c = spec["containers"][0]
    assert body["metadata"]["namespace"] == "nvidia-gpu-operator"
    assert len(body["metadata"]["name"]) <= 63
    assert body["metadata"]["labels"][RUN_LABEL] == "abc123"
    assert body["metadata"]["labels"]["app.kubernetes.io/component"] == "gpu-validation"
    assert body["metadata"]["annotations"][NODE_ANNOTATION] == "ip-10-0-138-78.us-east-2.compute.internal"
    assert spec["restartPolicy"] == "Never"
    assert c["resources"]["limits"] == {"nvidia.com/gpu": 1}
    # Writable root filesystem: the CDI hooks write /etc/ld.so.cache (kserve/kserve#5711).
    assert c["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
    }
    assert "readOnlyRootFilesystem" not in c["securityContext"]
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
    assert spec["tolerations"] == DEFAULT_TOLERATIONS
    assert spec["activeDeadlineSeconds"] > cfg["wait_timeout"]
    assert c["terminationMessagePolicy"] == "FallbackToLogsOnError"


def test_render_pod_options():
    cfg = validate_params(
        params(
            pin="nodeName",
            run_as_user=1000,
            runtime_class_name="nvidia",
            image_pull_secrets=["ngc"],
            tolerations=[{"key": "nodetype", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        )
    )
    body = render_pod("nvidia_smi", "gpu-a", cfg, "r1")
    spec = body["spec"]
    assert spec["nodeName"] == "gpu-a" and "affinity" not in spec
    assert spec["containers"][0]["command"] == ["nvidia-smi"]
    assert spec["containers"][0]["image"] == cfg["nvidia_smi_image"]
    assert spec["securityContext"]["runAsUser"] == 1000
    assert spec["runtimeClassName"] == "nvidia" and spec["imagePullSecrets"] == [{"name": "ngc"}]
    assert spec["tolerations"] == [{"key": "nodetype", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert (
        pod_name("nvidia_smi", "gpu-a", "r1")
        != pod_name("vectoradd", "gpu-a", "r1")
        != pod_name("vectoradd", "gpu-b", "r1")
    )


def test_run_id_is_a_label_value():
    rid = run_id()
    assert len(rid) == 6 and rid.isalnum() and rid.lower() == rid


def _node(name, status="True", reason="KubeletReady", message="kubelet is posting ready status"):
    return {
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Ready", "status": status, "reason": reason, "message": message}]},
    }


def _pod_run(clock):
    from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.podrun import PodRun

    cfg = {"namespace": "gpu-validation", "run": "r1", "parallel": 4, "wait_sleep": 5, "wait_timeout": 300}
    run = PodRun(cfg, client=object(), pod_api=None, core=None, progress=lambda m: None, clock=clock)
    run.created = ["va-gpu-0", "va-gpu-1", "smi-gpu-1"]
    run.node_of = {"va-gpu-0": "gpu-0", "va-gpu-1": "gpu-1", "smi-gpu-1": "gpu-1"}
    return run


def test_pods_on_a_node_that_stays_not_ready_are_lost_naming_the_node():
    now = [0.0]
    run = _pod_run(lambda: now[0])
    broken = {"gpu-0": _node("gpu-0"), "gpu-1": _node("gpu-1", "False", "KubeletNotReady", "Kubelet stopped posting")}
    run.look_at_nodes(lambda: broken)
    assert run.lost == {}  # one look: it may come back at once
    now[0] = 5.0
    run.look_at_nodes(lambda: broken)
    assert run.lost == {}  # not yet NODE_LOOK_SECONDS since the last look
    now[0] = 10.0
    run.look_at_nodes(lambda: broken)
    assert set(run.lost) == {"va-gpu-1", "smi-gpu-1"} and "va-gpu-0" not in run.finished
    assert run.lost["va-gpu-1"] == "node gpu-1 went NotReady (KubeletNotReady: Kubelet stopped posting)"
    assert not run.done()  # gpu-0's pod still runs


def test_a_node_that_recovers_between_looks_loses_nothing_and_a_deleted_node_is_named():
    now = [0.0]
    run = _pod_run(lambda: now[0])
    run.look_at_nodes(lambda: {"gpu-0": _node("gpu-0"), "gpu-1": _node("gpu-1", "Unknown", "NodeStatusUnknown")})
    now[0] = 10.0
    run.look_at_nodes(lambda: {"gpu-1": _node("gpu-1")})  # gpu-0 deleted, gpu-1 Ready again
    assert run.lost == {}
    now[0] = 20.0
    run.look_at_nodes(lambda: {"gpu-1": _node("gpu-1")})
    assert run.lost == {"va-gpu-0": "node gpu-0 is gone"}


def test_a_node_the_node_controller_marked_is_given_the_settle_time_before_its_pods_are_lost():
    from ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods import SETTLE_SECONDS

    now = [0.0]
    run = _pod_run(lambda: now[0])
    marked = {
        "gpu-0": _node("gpu-0"),
        "gpu-1": _node("gpu-1", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."),
    }
    looks = 0
    while now[0] < SETTLE_SECONDS:
        run.look_at_nodes(lambda: marked)
        looks += 1
        assert run.lost == {}, now[0]  # an API server restart's mark: the kubelet posts Ready again within seconds
        now[0] += 10.0
    assert looks >= 3  # more than the two looks a kubelet's own NotReady gets
    run.look_at_nodes(lambda: marked)
    assert set(run.lost) == {"va-gpu-1", "smi-gpu-1"}
    assert run.lost["va-gpu-1"] == "node gpu-1 went NotReady (NodeStatusUnknown: Kubelet stopped posting node status.)"


class _FlakyLogs(object):
    """CoreV1Api.read_namespaced_pod_log that fails with the given statuses first, then answers."""

    def __init__(self, *statuses):
        self.statuses = list(statuses)
        self.calls = 0

    def read_namespaced_pod_log(self, pod, namespace, **kwargs):
        from kubernetes.client.rest import ApiException

        self.calls += 1
        if self.statuses:
            raise ApiException(status=self.statuses.pop(0), reason="from the test")

        class Response(object):
            data = b'{"DCGM Diagnostic": {}}\n'

        return Response()


def test_a_finished_pods_log_is_read_again_after_a_failed_read_but_not_when_the_pod_is_gone():
    from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import podrun

    slept = []
    run = _pod_run(lambda: 0.0)
    run.sleep = slept.append
    run.core = _FlakyLogs(500, 503)
    assert run._read_log("va-gpu-0") == '{"DCGM Diagnostic": {}}\n'
    assert run.core.calls == 3 and slept == [podrun.LOG_RETRY_SECONDS] * 2

    run.core = _FlakyLogs(500, 500, 500)
    run.futures = {"va-gpu-0": run.pool.submit(run._read_log, "va-gpu-0")}
    assert run.logs() == {"va-gpu-0": None} and run.core.calls == podrun.LOG_READS
    assert run.log_errors["va-gpu-0"].startswith("(500)")

    run.core = _FlakyLogs(404)
    run.futures = {"va-gpu-1": run.pool.submit(run._read_log, "va-gpu-1")}
    assert run.logs() == {"va-gpu-1": None} and run.core.calls == 1
