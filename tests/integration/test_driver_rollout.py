# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_rollout on 4 simulated GPU nodes that run GPU jobs (``sleep infinity``: Running until deleted).

The simulator's driver rule is what makes this matter: a new driver pod cannot unload modules that GPU clients
(jobs, device plugin, exporter) hold, and crash-loops (gpu-driver-container ``_unload_driver``). So a driver that
became ready without a single restart proves its node had no GPU client at the swap; the audit log proves the
order (each job's eviction before its node's driver pod was deleted), and a watcher the one-node-at-a-time rule.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import threading
import time

import pytest
from gpu_nodes import (
    RHCOS_416,
    SET_LABEL,
    GpuNodes,
    allocatable,
    delete_namespace,
    delete_runtime_class,
    deploy,
    ensure_runtime_class,
    gpu_job,
    gpu_stack,
    kernel_of,
    make_namespace,
    new_tag,
    wait_until,
)
from kubernetes import client
from simopenshift.testing import Client as SimClient
from simopenshift.testing import allow_privileged

pytestmark = pytest.mark.integration

MODULE = "gpuops.cluster.driver_rollout"
STAGE = "gpuops.cluster/driver-upgrade"
FAILURE = "gpuops.cluster/driver-upgrade.failure"
DRIVER = "nvidia-driver-daemonset"
PAUSE = {"key": STAGE, "operator": "NotIn", "values": ["reload"]}


def image(version):
    return "nvcr.io/nvidia/driver:{0}-{1}-rhcos4.16".format(version, kernel_of(RHCOS_416))


class Fleet(object):
    pass


@pytest.fixture(scope="module")
def fleet(cluster):
    """4 GPU nodes, the stack as the roles render it (an OnDelete driver, operands that leave a node in reload),
    and one GPU job per node."""
    f = Fleet()
    f.ns = make_namespace(cluster.api, "roll")
    allow_privileged(SimClient(cluster.api), f.ns)
    f.nodes = GpuNodes(cluster.api)
    f.tag = new_tag()
    f.core, f.apps = client.CoreV1Api(cluster.api), client.AppsV1Api(cluster.api)
    try:
        _tag, f.names = f.nodes.make(4, tag=f.tag, prefix="roll", build=RHCOS_416)
        f.made_runtime_class = ensure_runtime_class(cluster.api)
        objects = gpu_stack(f.ns, f.tag, image("570.195.03"))
        for ds in objects:
            spec = ds["spec"]["template"]["spec"]
            if ds["metadata"]["name"] == DRIVER:
                ds["spec"]["updateStrategy"] = {"type": "OnDelete"}
            else:
                terms = [{"matchExpressions": [{"key": SET_LABEL, "operator": "In", "values": [f.tag]}, PAUSE]}]
                spec["affinity"] = {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
                }
        deploy(cluster.api, objects)
        wait_until(lambda: all(allocatable(f.core, n) == 1 for n in f.names), 90, what="nvidia.com/gpu on every node")
        for name in f.names:
            job(f, name)
        yield f
    finally:
        delete_namespace(cluster.api, f.ns)
        f.nodes.cleanup()
        if getattr(f, "made_runtime_class", False):
            delete_runtime_class(cluster.api)


def job(f, node, name=None, labels=None):
    return gpu_job(f.core, f.ns, node, name, labels)


def args(f, **kw):
    out = {"namespace": f.ns, "driver_selector": "app.kubernetes.io/component=nvidia-driver", "node_names": f.names,
           "wait_sleep": 1, "wait_timeout": 90, "drain_timeout": 30, "validate_checks": ["allocatable", "driver", "vectoradd"],
           "validate_options": {"wait_timeout": 60, "wait_sleep": 1}}  # fmt: skip
    out.update(kw)
    return out


def driver_pods(f):
    pods = f.core.list_namespaced_pod(f.ns, label_selector="app.kubernetes.io/component=nvidia-driver").items
    return dict((p.spec.node_name, p) for p in pods if p.metadata.deletion_timestamp is None)


def set_driver(f, version_image):
    f.apps.patch_namespaced_daemon_set(
        DRIVER, f.ns, {"spec": {"template": {"spec": {"containers": [{"name": DRIVER, "image": version_image}]}}}}
    )


def nodes_state(f):
    out = {}
    for n in f.core.list_node(label_selector="{0}={1}".format(SET_LABEL, f.tag)).items:
        out[n.metadata.name] = (
            bool(n.spec.unschedulable),
            (n.metadata.labels or {}).get(STAGE),
            n.metadata.annotations or {},
        )
    return out


class Watcher(threading.Thread):
    """Samples the nodes while a rollout runs: the most nodes out of service at once."""

    def __init__(self, f):
        super(Watcher, self).__init__(daemon=True)
        self.f, self.stop, self.most, self.seen = f, threading.Event(), 0, set()

    def run(self):
        while not self.stop.is_set():
            out = [n for n, (cordoned, stage, dummy) in nodes_state(self.f).items() if cordoned or stage]
            self.most = max(self.most, len(out))
            self.seen.update(out)
            time.sleep(0.2)


def rollout(f, cluster, ansible_task, **kw):
    watcher = Watcher(f)
    watcher.start()
    mark = cluster.audit.mark()
    try:
        result = ansible_task(MODULE, args(f, **kw))
    finally:
        watcher.stop.set()
        watcher.join()
    return result, watcher, cluster.audit.events_since(mark)


def test_nothing_to_roll_reads_only(fleet, cluster, ansible_task):
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args(fleet))
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False and [r["result"] for r in result["nodes"]] == ["current"] * 4
    assert cluster.audit.writes_since(mark) == []


def test_nothing_to_roll_still_verifies_every_node_in_the_same_run(fleet, cluster, ansible_task):
    """verify_checks: gpu_validate's driver check on every GPU node, in this module run, still without a write."""
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args(fleet, verify_checks=["driver"]))
    assert not result.get("failed"), result.get("msg")
    verify = result["verify"]
    assert verify["passed"] is True and verify["failures"] == []
    assert sorted(n["node"] for n in verify["nodes"]) == sorted(fleet.names)
    assert all(n["checks"]["driver"]["status"] == "pass" for n in verify["nodes"]), verify["nodes"]
    assert cluster.audit.writes_since(mark) == []
    # Not in check mode: nothing to verify there.
    assert "verify" not in ansible_task(MODULE, args(fleet, verify_checks=["driver"]), check=True)


def test_rolls_one_node_at_a_time_with_no_gpu_client_at_any_swap(fleet, cluster, ansible_task):
    before = driver_pods(fleet)
    set_driver(fleet, image("580.95.05"))
    # Check mode: the plan, canary first, and no write.
    mark = cluster.audit.mark()
    planned = ansible_task(MODULE, args(fleet), check=True)
    assert planned["changed"] is True and planned["waves"] == [[n] for n in sorted(fleet.names)], planned
    assert cluster.audit.writes_since(mark) == []
    # The jobs still run: nothing was taken out yet.
    assert all(
        fleet.core.read_namespaced_pod("train-" + n.rsplit("-", 1)[-1], fleet.ns).status.phase == "Running"
        for n in fleet.names
    )

    result, watcher, events = rollout(fleet, cluster, ansible_task, max_unavailable=1)
    assert not result.get("failed"), result.get("msg")
    assert [r["result"] for r in result["nodes"]] == ["upgraded"] * 4, result["table"]
    assert watcher.most == 1 and watcher.seen == set(fleet.names), (watcher.most, watcher.seen)
    after = driver_pods(fleet)
    for name in fleet.names:
        pod = after[name]
        assert pod.spec.containers[0].image == image("580.95.05")
        assert pod.metadata.uid != before[name].metadata.uid
        # Never restarted: had a GPU client been left on the node, the new driver could not have unloaded the old.
        assert pod.status.container_statuses[0].restart_count == 0 and pod.status.container_statuses[0].ready
    for name, (cordoned, stage, annotations) in nodes_state(fleet).items():
        assert not cordoned and stage is None and not any(k.startswith(STAGE) for k in annotations), name
        assert allocatable(fleet.core, name) == 1
    # The audit log: on every node, its job's eviction before its driver pod's deletion, and nodes in sequence.
    when = {}
    for ev in events:
        ref = ev.get("objectRef") or {}
        if ev.get("verb") == "create" and ref.get("subresource") == "eviction":
            when[("evict", ref["name"])] = ev["requestReceivedTimestamp"]
        if ev.get("verb") == "delete" and ref.get("resource") == "pods" and not ref.get("subresource"):
            when[("delete", ref["name"])] = ev["requestReceivedTimestamp"]
    order = []
    for name in sorted(fleet.names):
        evicted = when[("evict", "train-" + name.rsplit("-", 1)[-1])]
        swapped = when[("delete", before[name].metadata.name)]
        assert evicted < swapped, (name, evicted, swapped)
        order += [evicted, swapped]
    assert order == sorted(order), "a node began before the previous one was done"
    # The re-run has nothing to do and writes nothing.
    mark = cluster.audit.mark()
    again = ansible_task(MODULE, args(fleet))
    assert again["changed"] is False and cluster.audit.writes_since(mark) == []


def jobs_running(f, names):
    return dict((n, f.core.read_namespaced_pod("train-" + n.rsplit("-", 1)[-1], f.ns).status.phase) for n in names)


def test_a_disruption_budget_stops_the_canary_and_a_rerun_resumes(fleet, cluster, ansible_task):
    for name in fleet.names:
        if "train-" + name.rsplit("-", 1)[-1] not in [
            p.metadata.name for p in fleet.core.list_namespaced_pod(fleet.ns).items
        ]:
            job(fleet, name, labels={"guard": "yes"} if name == sorted(fleet.names)[0] else None)
    canary, rest = sorted(fleet.names)[0], sorted(fleet.names)[1:]
    client.PolicyV1Api(cluster.api).create_namespaced_pod_disruption_budget(
        fleet.ns,
        {"metadata": {"name": "guard"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"guard": "yes"}}}},
    )
    wait_until(
        lambda: client.PolicyV1Api(cluster.api)
        .read_namespaced_pod_disruption_budget("guard", fleet.ns)
        .status.current_healthy
        == 1,
        30,
        what="the budget counts its pod",
    )
    before = driver_pods(fleet)
    set_driver(fleet, image("580.105.08"))
    result, watcher, dummy = rollout(fleet, cluster, ansible_task, drain_timeout=6)
    assert result.get("failed"), result
    msg = result["msg"]
    assert "driver rollout stopped in wave 1: {0} failed".format(canary) in msg, msg
    assert "PodDisruptionBudget guard (disruptionsAllowed 0)" in msg and "delete_after_timeout" in msg, msg
    cordoned, stage, annotations = nodes_state(fleet)[canary]
    assert cordoned and stage == "failed" and "PodDisruptionBudget guard" in annotations[FAILURE]
    # Every other node untouched: same driver pod, schedulable, its job still running.
    after = driver_pods(fleet)
    for name in rest:
        assert after[name].metadata.uid == before[name].metadata.uid, name
        assert nodes_state(fleet)[name][:2] == (False, None), name
    assert set(jobs_running(fleet, fleet.names).values()) == {"Running"}
    assert watcher.seen == {canary}

    client.PolicyV1Api(cluster.api).delete_namespaced_pod_disruption_budget("guard", fleet.ns)
    result, watcher, dummy = rollout(fleet, cluster, ansible_task)
    assert not result.get("failed"), result.get("msg")
    assert result["waves"][0] == [canary], result["waves"]
    assert [r["result"] for r in result["nodes"]] == ["upgraded"] * 4, result["table"]
    assert watcher.most == 1
    assert all(p.spec.containers[0].image == image("580.105.08") for p in driver_pods(fleet).values())


def test_a_failed_canary_driver_leaves_every_other_node_untouched(fleet, cluster, ansible_task):
    canary, rest = sorted(fleet.names)[0], sorted(fleet.names)[1:]
    for name in rest:
        if name not in [
            p.spec.node_name for p in fleet.core.list_namespaced_pod(fleet.ns, label_selector="app=train").items
        ]:
            job(fleet, name)
    before = driver_pods(fleet)
    # An image for another OS: the new driver crash-loops on the canary (as on a real node).
    set_driver(fleet, "nvcr.io/nvidia/driver:580.105.08-ubuntu22.04")
    result, watcher, dummy = rollout(fleet, cluster, ansible_task, wait_timeout=15)
    assert result.get("failed"), result
    assert re.search(
        r"{0} failed \(the new driver pod is not ready after 1[5-9]s".format(canary), result["msg"]
    ), result["msg"]
    assert "CrashLoopBackOff" in result["msg"], result["msg"]
    assert result["not_reached"] == rest
    assert nodes_state(fleet)[canary][:2] == (True, "failed")
    after = driver_pods(fleet)
    for name in rest:
        assert after[name].metadata.uid == before[name].metadata.uid
        assert after[name].spec.containers[0].image == image("580.105.08")
        assert nodes_state(fleet)[name][:2] == (False, None)
    assert set(jobs_running(fleet, rest).values()) == {"Running"}
    assert watcher.seen == {canary}

    # The fix (a good image), and the rollout resumes with the canary.
    set_driver(fleet, image("580.105.08"))
    result, watcher, dummy = rollout(fleet, cluster, ansible_task)
    assert not result.get("failed"), result.get("msg")
    # The DaemonSet controller reuses the ControllerRevision of a template it had before (its hash): the other
    # nodes already run it, so only the canary is rolled.
    assert result["waves"] == [[canary]], result["waves"]
    assert [r["result"] for r in result["nodes"] if r["node"] == canary] == ["upgraded"]
    assert all(driver_pods(fleet)[n].metadata.uid == before[n].metadata.uid for n in rest)
    assert nodes_state(fleet)[canary][:2] == (False, None)


def test_a_run_killed_mid_way_is_resumed_from_its_stage(fleet, cluster, ansible_task):
    """A run stopped (SIGKILL) while a node was in reload: that node is cordoned, its operands off, its old driver
    still there, and a GPU job still on it. The next run takes it first, keeps it in reload (the operands stay
    off), evicts the job, and finishes it."""
    node = sorted(fleet.names)[-1]
    before = driver_pods(fleet)
    set_driver(fleet, image("580.105.09"))
    fleet.core.patch_node(node, {"metadata": {"labels": {STAGE: "reload"}}, "spec": {"unschedulable": True}})
    wait_until(
        lambda: not [p for p in fleet.core.list_namespaced_pod(fleet.ns).items
                     if p.spec.node_name == node and p.metadata.labels.get("app") != DRIVER
                     and "driver" not in p.metadata.name and p.metadata.deletion_timestamp is None
                     and p.metadata.owner_references],
        30,
        what="the operands leave the node in reload",
    )  # fmt: skip
    result, watcher, dummy = rollout(fleet, cluster, ansible_task, node_names=[node])
    assert not result.get("failed"), result.get("msg")
    assert result["waves"] == [[node]], result["waves"]
    assert any("{0}: from stage reload".format(node) in line for line in result["progress"]), result["progress"]
    pod = driver_pods(fleet)[node]
    assert pod.metadata.uid != before[node].metadata.uid and pod.spec.containers[0].image == image("580.105.09")
    assert nodes_state(fleet)[node][:2] == (False, None)


def test_refused_before_any_write(fleet, cluster, ansible_task):
    set_driver(fleet, image("580.95.05"))
    # An operand that would stay on a node in reload (no pause rule in its affinity).
    extra = {
        "metadata": {"name": "stubborn", "namespace": fleet.ns},
        "spec": {
            "selector": {"matchLabels": {"app": "stubborn"}},
            "template": {
                "metadata": {"labels": {"app": "stubborn"}},
                "spec": {
                    "nodeSelector": {SET_LABEL: fleet.tag},
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": "c", "image": "registry.access.redhat.com/ubi9/ubi-minimal:latest"}],
                },
            },
        },
    }
    fleet.apps.create_namespaced_daemon_set(fleet.ns, extra)
    try:
        mark = cluster.audit.mark()
        bad = ansible_task(MODULE, args(fleet, max_unavailable="0%"))
        assert bad.get("failed") and "max_unavailable" in bad["msg"], bad
        refused = ansible_task(MODULE, args(fleet))
        assert refused.get("failed"), refused
        assert (
            "{0}/stubborn would keep running on a node while its driver is replaced".format(fleet.ns) in refused["msg"]
        )
        assert cluster.audit.writes_since(mark) == []
    finally:
        fleet.apps.delete_namespaced_daemon_set("stubborn", fleet.ns)
