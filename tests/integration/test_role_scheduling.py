# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The scheduling role, proven with the real kube-scheduler and admission of the local control plane.

A plain Kubernetes cluster of its own (``.localcluster-sched``) whose two GPU nodes are pre-provisioned
(``--gpu-node-mode ready``: NFD GPU label and allocatable nvidia.com/gpu: 1 from the start), because what the
earlier states did does not matter here and the scheduler needs allocatable GPUs. gpu-1 carries a foreign taint
(``example.com/keep=yes:NoSchedule``) that the role must neither own nor remove.

Check mode on the fresh cluster (zero writes), bad inputs (each named in preflight, zero writes), converge and
verify (server-side dry runs), a no-op re-run (zero writes), then real requests: an over-quota pod refused with
403 and the quota message, a pod without GPU request defaulted by the LimitRange, a GPU pod without the toleration
left Pending by the scheduler's taint filter, a CPU pod placed on a CPU node, a high-priority GPU pod preempting a
low-priority one; absent twice. On OpenShift (the shared ``cluster``): a GPU MachineSet without the taint in its
template fails the preflight naming scheduling_taint, with zero writes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import uuid

import pytest
from conftest import changed_tasks, extra_cluster, failed_message, run_playbook, run_role, task_results
from waiting import wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

pytestmark = pytest.mark.integration

SUFFIX = uuid.uuid4().hex[:5]
NS_A = "sched-a-" + SUFFIX  # quota 1, default 1, max 1
NS_B = "sched-b-" + SUFFIX  # quota 2
NS_RUN = "sched-run-" + SUFFIX  # no quota: the scheduler tests
GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
FOREIGN = {"key": "example.com/keep", "value": "yes", "effect": "NoSchedule"}
MARKER = "gpuops.cluster/added-taints"
ROLE_LABEL = "gpuops.cluster/gpu-role"
HIGH, LOW = "sched-high-" + SUFFIX, "sched-low-" + SUFFIX
VARS = {
    "scheduling_taint": True,
    "scheduling_node_roles": [{"name": "training", "count": 1}, {"name": "inference", "nodes": ["gpu-1"]}],
    "scheduling_priority_classes": [
        {"name": HIGH, "value": 100000, "description": "training that may preempt"},
        {"name": LOW, "value": 1000, "preemptionPolicy": "Never"},
    ],
    "scheduling_quotas": [
        {"namespace": NS_A, "gpus": 1, "default_gpus": 1, "max_gpus": 1},
        {"namespace": NS_B, "gpus": 2},
    ],
}
PAUSE = "registry.k8s.io/pause:3.10"
TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


# The platform the first run on a cluster detected, handed to the later runs as site.yml does (preflight runs once
# per play): saves the detection in every run.
PLATFORMS = {}


def sched(c, role_vars, check=False):
    role_vars = dict(role_vars)
    if c.workdir in PLATFORMS:
        role_vars["preflight_platform"] = PLATFORMS[c.workdir]
    out = run_role(c, "scheduling", role_vars, check=check)
    for name, res in task_results(out):
        platform = (res.get("ansible_facts") or {}).get("preflight_platform")
        if name.endswith("Record the detected platform for later states") and platform:
            PLATFORMS[c.workdir] = platform
    return out


@pytest.fixture(scope="module")
def sc():
    from kubernetes import client

    with extra_cluster("sched", "kubernetes", gpu_nodes=2, gpu_node_mode="ready") as c:
        core = client.CoreV1Api(c.api)
        for ns in (NS_A, NS_B, NS_RUN):
            core.create_namespace({"metadata": {"name": ns}})
        core.patch_node("gpu-1", {"spec": {"taints": [FOREIGN]}})
        try:
            yield c
        finally:
            sched(c, dict(VARS, scheduling_state="absent"))
            for ns in (NS_A, NS_B, NS_RUN):
                core.delete_namespace(ns)
            core.patch_node("gpu-1", {"spec": {"taints": None}})


def core_of(c):
    from kubernetes import client

    return client.CoreV1Api(c.api)


def node(c, name):
    return c.api.sanitize_for_serialization(core_of(c).read_node(name))


def taints(c, name):
    return [
        dict((k, t[k]) for k in ("key", "value", "effect") if t.get(k))
        for t in node(c, name)["spec"].get("taints") or []
    ]


def pod(name, ns, gpus=None, tolerate=False, priority=None, host=None):
    container = {"name": "main", "image": PAUSE}
    if gpus is not None:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    spec = {"containers": [container], "terminationGracePeriodSeconds": 0}
    if tolerate:
        spec["tolerations"] = [TOLERATION]
    if priority:
        spec["priorityClassName"] = priority
    if host:
        spec["nodeSelector"] = {"kubernetes.io/hostname": host}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def test_check_mode_on_the_fresh_cluster_writes_nothing(sc):
    mark = sc.audit.mark()
    out = sched(sc, VARS, check=True)
    assert failed_message(out) is None
    assert sc.audit.writes_since(mark) == []
    said = " ".join(str(r.get("msg")) for dummy, r in task_results(out))
    assert "would be added on gpu-0, gpu-1" in said and "PriorityClass " + HIGH + " would be created" in said
    assert GPU_TAINT not in taints(sc, "gpu-0")


BAD = [
    (
        {"scheduling_quotas": [{"namespace": "sched-missing", "gpus": 1}]},
        "scheduling: scheduling_quotas: namespace(s) sched-missing do not exist",
    ),
    (
        {"scheduling_priority_classes": [{"name": "too-high", "value": 2000000000}]},
        "scheduling: scheduling_priority_classes[0].value",
    ),
    (
        {"scheduling_node_roles": [{"name": "training", "nodes": ["worker-0"]}]},
        "scheduling: scheduling_node_roles: worker-0 is not a GPU node",
    ),
    (
        {"scheduling_node_roles": [{"name": "training", "count": 3}]},
        "scheduling: scheduling_node_roles: the counts ask for 3",
    ),
    (
        {"scheduling_node_roles": [{"name": "a", "nodes": ["gpu-0"]}, {"name": "b", "nodes": ["gpu-0"]}]},
        "more than one role",
    ),
    ({"scheduling_quotas": [{"namespace": NS_A, "gpus": 2, "default_gpus": 2, "max_gpus": 1}]}, "is above max_gpus"),
    ({"scheduling_taint_effect": "NoRun"}, "scheduling_taint_effect must be one of: NoSchedule"),
    ({"scheduling_priority_classes": [{"name": "system-node-critical", "value": 1}]}, "the system- prefix is reserved"),
]


def test_bad_inputs_fail_in_preflight_with_zero_writes(sc):
    """All bad inputs in one playbook: each include_role in a block whose rescue records the message."""
    tasks = []
    platform = {"preflight_platform": PLATFORMS[sc.workdir]} if sc.workdir in PLATFORMS else {}
    for index, (bad, dummy) in enumerate(BAD):
        tasks.append(
            {
                "name": "bad input {0}".format(index),
                "block": [
                    {
                        "name": "role",
                        "ansible.builtin.include_role": {"name": "gpuops.cluster.scheduling"},
                        "vars": dict(VARS, **dict(bad, **platform)),
                    },
                    {"name": "not reached", "ansible.builtin.set_fact": {"reached_{0}".format(index): True}},
                ],
                "rescue": [
                    {
                        "name": "record {0}".format(index),
                        "ansible.builtin.set_fact": {"msgs": "{{ msgs | default([]) + [ansible_failed_result.msg] }}"},
                    }
                ],
            }
        )
    tasks.append({"name": "messages", "ansible.builtin.debug": {"var": "msgs"}})
    mark = sc.audit.mark()
    out = run_playbook(sc, tasks)
    assert sc.audit.writes_since(mark) == []
    msgs = [r for name, r in task_results(out) if name == "messages"][0]["msgs"]
    assert len(msgs) == len(BAD)
    for (dummy, expected), msg in zip(BAD, msgs):
        assert expected in msg
    assert not any(name == "not reached" and not r.get("skipped") for name, r in task_results(out))


def test_converge_then_rerun_writes_nothing(sc):
    out = sched(sc, VARS)
    assert failed_message(out) is None
    result = [r for dummy, r in task_results(out) if "scheduling_result" in (r.get("ansible_facts") or {})][0]
    result = result["ansible_facts"]["scheduling_result"]
    assert result["roles"] == {"training": ["gpu-0"], "inference": ["gpu-1"]}
    assert result["tainted_nodes"] == ["gpu-0", "gpu-1"] and result["quotas"] == {NS_A: 1, NS_B: 2}
    # the foreign taint is kept, the GPU taint added after it; the marker says which one is ours
    assert taints(sc, "gpu-1") == [FOREIGN, GPU_TAINT] and taints(sc, "gpu-0") == [GPU_TAINT]
    assert node(sc, "gpu-1")["metadata"]["annotations"][MARKER] == "nvidia.com/gpu=:NoSchedule"
    assert node(sc, "gpu-0")["metadata"]["labels"][ROLE_LABEL] == "training"
    assert not any(t.get("key") == "nvidia.com/gpu" for t in node(sc, "worker-0")["spec"].get("taints") or [])
    said = " ".join(str(r.get("msg")) for dummy, r in task_results(out))
    assert "verified by dry runs: 2 quota(s)" in said

    mark = sc.audit.mark()
    again = sched(sc, VARS)
    assert failed_message(again) is None
    assert changed_tasks(again) == []
    assert sc.audit.writes_since(mark) == []


def test_taint_switched_off_takes_back_only_our_taint_then_on_again(sc):
    out = sched(sc, dict(VARS, scheduling_taint=False))
    assert failed_message(out) is None
    assert taints(sc, "gpu-1") == [FOREIGN] and taints(sc, "gpu-0") == []
    for name in ("gpu-0", "gpu-1"):
        assert MARKER not in (node(sc, name)["metadata"].get("annotations") or {}), name
    mark = sc.audit.mark()
    again = sched(sc, dict(VARS, scheduling_taint=False))
    assert failed_message(again) is None and changed_tasks(again) == []
    assert sc.audit.writes_since(mark) == []
    # Back on for the scheduler tests below.
    out = sched(sc, VARS)
    assert failed_message(out) is None
    assert taints(sc, "gpu-1") == [FOREIGN, GPU_TAINT] and taints(sc, "gpu-0") == [GPU_TAINT]


def test_admission_refuses_over_quota_and_defaults_gpu_requests(sc):
    from kubernetes.client.exceptions import ApiException

    core = core_of(sc)
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod(NS_B, pod("too-many", NS_B, gpus=3, tolerate=True))
    assert err.value.status == 403
    assert "exceeded quota: gpuops-gpu" in err.value.body and "requests.nvidia.com/gpu=3" in err.value.body
    created = core.create_namespaced_pod(NS_A, pod("defaulted", NS_A, tolerate=True))
    assert created.spec.containers[0].resources.limits == {"nvidia.com/gpu": "1"}
    assert created.spec.containers[0].resources.requests == {"nvidia.com/gpu": "1"}
    core.delete_namespaced_pod("defaulted", NS_A, grace_period_seconds=0)


def test_scheduler_keeps_untolerating_pods_off_gpu_nodes(sc):
    core = core_of(sc)
    # A GPU pod without the toleration: no node passes the taint filter and the resource fit at once -> Pending.
    core.create_namespaced_pod(NS_RUN, pod("gpu-untolerated", NS_RUN, gpus=1))

    def failed_scheduling():
        events = core.list_namespaced_event(NS_RUN, field_selector="involvedObject.name=gpu-untolerated").items
        return [e.message for e in events if e.reason == "FailedScheduling"]

    messages = wait_until(what="a FailedScheduling event", fn=failed_scheduling)
    # The 3 CPU workers have no nvidia.com/gpu; the 5 others are tainted: the 3 control-plane nodes and the 2 GPU
    # nodes (nvidia.com/gpu=:NoSchedule), the only ones that could fit it. Preemption cannot help either.
    assert "3 Insufficient nvidia.com/gpu" in messages[0] and "5 node(s) had untolerated taint" in messages[0], messages
    assert core.read_namespaced_pod("gpu-untolerated", NS_RUN).spec.node_name is None
    # A CPU pod without the toleration lands on a CPU worker (the GPU nodes' taint filters them out).
    core.create_namespaced_pod(NS_RUN, pod("cpu-plain", NS_RUN))
    host = wait_until(what="cpu-plain bound", fn=lambda: core.read_namespaced_pod("cpu-plain", NS_RUN).spec.node_name)
    assert host.startswith("worker-"), host
    for name in ("gpu-untolerated", "cpu-plain"):
        core.delete_namespaced_pod(name, NS_RUN, grace_period_seconds=0)


def test_high_priority_gpu_pod_preempts_a_low_priority_one(sc):
    core = core_of(sc)
    assert node(sc, "gpu-0")["status"]["allocatable"]["nvidia.com/gpu"] == "1"
    core.create_namespaced_pod(NS_RUN, pod("low", NS_RUN, gpus=1, tolerate=True, priority=LOW, host="gpu-0"))
    wait_until(what="low bound to gpu-0", fn=lambda: core.read_namespaced_pod("low", NS_RUN).spec.node_name == "gpu-0")
    core.create_namespaced_pod(NS_RUN, pod("high", NS_RUN, gpus=1, tolerate=True, priority=HIGH, host="gpu-0"))

    def low_gone():
        return "low" not in [p.metadata.name for p in core.list_namespaced_pod(NS_RUN).items]

    wait_until(what="low evicted", fn=low_gone)
    wait_until(
        what="high bound to gpu-0", fn=lambda: core.read_namespaced_pod("high", NS_RUN).spec.node_name == "gpu-0"
    )
    events = core.list_namespaced_event(NS_RUN, field_selector="involvedObject.name=low").items
    assert any(e.reason == "Preempted" for e in events), [(e.reason, e.message) for e in events]
    assert core.read_namespaced_pod("high", NS_RUN).spec.priority == 100000
    core.delete_namespaced_pod("high", NS_RUN, grace_period_seconds=0)


def test_absent_takes_everything_back_and_twice_changes_nothing(sc):
    out = sched(sc, dict(VARS, scheduling_state="absent"))
    assert failed_message(out) is None
    assert taints(sc, "gpu-1") == [FOREIGN] and taints(sc, "gpu-0") == []
    for name in ("gpu-0", "gpu-1"):
        meta = node(sc, name)["metadata"]
        assert MARKER not in (meta.get("annotations") or {}) and ROLE_LABEL not in meta["labels"]
    from kubernetes import client

    scheduling_api = client.SchedulingV1Api(sc.api)
    assert not [p for p in scheduling_api.list_priority_class().items if p.metadata.name in (HIGH, LOW)]
    assert core_of(sc).list_namespaced_resource_quota(NS_A).items == []
    assert core_of(sc).list_namespaced_limit_range(NS_A).items == []

    mark = sc.audit.mark()
    again = sched(sc, dict(VARS, scheduling_state="absent"))
    assert failed_message(again) is None and changed_tasks(again) == []
    assert sc.audit.writes_since(mark) == []


def test_openshift_gpu_machineset_without_the_taint_fails_preflight(cluster, kube):
    """gpu_machineset owns the MachineSet template taint; this role refuses to run when it is missing there."""
    from simopenshift import apis
    from simopenshift.testing import clone_machineset, delete_machineset, worker_machinesets

    name = "sched-gpu-" + SUFFIX
    clone_machineset(kube, worker_machinesets(kube)[0], name, "g4dn.xlarge", replicas=0)
    kube.patch(
        apis.MACHINESETS,
        name,
        {
            "metadata": {
                "labels": {"app.kubernetes.io/managed-by": "gpuops.cluster", "gpuops.cluster/owner": "gpu_machineset"}
            }
        },
        "openshift-machine-api",
    )
    try:
        mark = cluster.audit.mark()
        out = sched(cluster, {"scheduling_taint": True})
        msg = failed_message(out)
        assert msg.startswith("scheduling: scheduling_taint: GPU MachineSet(s) " + name), msg
        assert "set gpu_machineset_taint (or gpuops_gpu_taint) true" in msg
        assert cluster.audit.writes_since(mark) == []
        # with the taint in the template the same run passes (check mode: nothing else to do on this cluster)
        kube.patch(
            apis.MACHINESETS,
            name,
            {"spec": {"template": {"spec": {"taints": [GPU_TAINT]}}}},
            "openshift-machine-api",
        )
        ok = sched(cluster, {"scheduling_taint": True}, check=True)
        assert failed_message(ok) is None
    finally:
        delete_machineset(kube, name)
