# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The test bed is real: each test asserts what the real component does.

Scheduler, controller-manager (DaemonSet controller), admission (ResourceQuota),
taints and kwok's pod lifecycle are exercised through the public API only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from localcluster.cluster import fake_node
from waiting import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def core(cluster):
    return client.CoreV1Api(cluster.api)


@pytest.fixture
def nodes(core):
    """Create kwok nodes for one test (unique label), delete them afterwards."""
    made = []
    tag = uuid.uuid4().hex[:6]

    def make(count, gpus=0, taints=None, labels=None):
        names = []
        for i in range(count):
            name = "t{0}-{1}".format(tag, len(made))
            lab = {"gpuops.test/set": tag}
            lab.update(labels or {})
            extra = {"nvidia.com/gpu": str(gpus)} if gpus else None
            core.create_node(fake_node(name, lab, taints or [], cpu="4", memory="16Gi", extra=extra))
            made.append(name)
            names.append(name)

        def ready():
            for n in names:
                node = core.read_node(n)
                if not any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or []):
                    return False
                if any(t.key == "node.kubernetes.io/not-ready" for t in node.spec.taints or []):
                    return False
            return True

        wait_until(ready, 30, what="test nodes Ready")
        return names

    make.tag = tag
    yield make
    for n in made:
        try:
            core.delete_node(n)
        except ApiException:
            pass


def wait_pod(core, name, namespace, predicate, timeout=45, what="pod"):
    def check():
        p = core.read_namespaced_pod(name, namespace)
        return p if predicate(p) else None

    return wait_until(check, timeout, what=what)


def pod(name, node_selector=None, gpus=0, tolerations=None, restart="Always"):
    resources = {}
    if gpus:
        resources = {"limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"nvidia.com/gpu": str(gpus)}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": restart,
            "nodeSelector": node_selector or {},
            "tolerations": tolerations or [],
            "containers": [{"name": "c", "image": "registry.example/app:1", "resources": resources}],
        },
    }


def test_daemonset_one_running_pod_per_matching_node(cluster, core, nodes, namespace):
    matching = nodes(3, labels={"gpuops.test/ds": "yes"})
    nodes(2)  # same set, not matching the selector
    apps = client.AppsV1Api(cluster.api)
    sel = {"gpuops.test/ds": "yes", "gpuops.test/set": nodes.tag}
    apps.create_namespaced_daemon_set(
        namespace,
        {
            "metadata": {"name": "ds"},
            "spec": {
                "selector": {"matchLabels": {"app": "ds"}},
                "template": {
                    "metadata": {"labels": {"app": "ds"}},
                    "spec": {"nodeSelector": sel, "containers": [{"name": "c", "image": "registry.example/ds:1"}]},
                },
            },
        },
    )

    def running():
        pods = core.list_namespaced_pod(namespace, label_selector="app=ds").items
        run = [p for p in pods if p.status.phase == "Running"]
        return run if len(run) == len(matching) else None

    run = wait_until(running, 45, what="one Running pod per matching node")
    time.sleep(2)  # nothing extra shows up later
    pods = core.list_namespaced_pod(namespace, label_selector="app=ds").items
    assert sorted(p.spec.node_name for p in pods) == sorted(matching)
    assert len({p.spec.node_name for p in run}) == len(matching)
    ds = apps.read_namespaced_daemon_set("ds", namespace)
    assert ds.status.desired_number_scheduled == 3


def test_pod_marked_not_ready_by_the_node_controller_is_ready_again(core, nodes, namespace):
    """The node lifecycle controller marks a late node's pods Ready=False; a kubelet reports them Ready again."""
    (node,) = nodes(1)
    core.create_namespaced_pod(namespace, pod("back", node_selector={"kubernetes.io/hostname": node}))
    ready = wait_pod(core, "back", namespace, lambda p: p.status.phase == "Running" and is_ready(p), what="pod Ready")
    # What the controller writes (MarkPodsNotReady): the Ready condition alone, ContainersReady stays True.
    conditions = [
        (
            {"type": "Ready", "status": "False", "lastTransitionTime": ready.status.start_time.isoformat()}
            if c.type == "Ready"
            else {"type": c.type, "status": c.status}
        )
        for c in ready.status.conditions
    ]
    marked = core.patch_namespaced_pod_status("back", namespace, {"status": {"conditions": conditions}})
    assert not is_ready(marked)
    wait_pod(core, "back", namespace, is_ready, timeout=30, what="pod Ready again")


def is_ready(p):
    return any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])


def test_gpu_pod_lands_only_on_gpu_node_and_pends_without_one(core, nodes, namespace):
    nodes(2)  # CPU-only nodes
    p = pod("wants-gpu", node_selector={"gpuops.test/set": nodes.tag}, gpus=1)
    core.create_namespaced_pod(namespace, p)
    # No node in the set advertises nvidia.com/gpu: the scheduler keeps it Pending.
    time.sleep(4)
    got = core.read_namespaced_pod("wants-gpu", namespace)
    assert got.status.phase == "Pending" and not got.spec.node_name
    cond = [c for c in got.status.conditions or [] if c.type == "PodScheduled"]
    assert cond and cond[0].status == "False" and "nvidia.com/gpu" in (cond[0].message or "")

    gpu = nodes(1, gpus=2)
    # Binding is the scheduler's part; whether the pod then runs is the
    # kubelet's (kwok / the simulated GPU agent), not what this test proves.
    got = wait_pod(core, "wants-gpu", namespace, lambda p: p.spec.node_name, what="GPU pod scheduled")
    assert got.spec.node_name == gpu[0]
    cond = [c for c in got.status.conditions or [] if c.type == "PodScheduled"]
    assert cond and cond[0].status == "True"


def test_noschedule_taint_repels_and_toleration_admits(core, nodes, namespace):
    tainted = nodes(1, taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}])
    sel = {"gpuops.test/set": nodes.tag}
    core.create_namespaced_pod(namespace, pod("no-tol", node_selector=sel))
    tol = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    core.create_namespaced_pod(namespace, pod("with-tol", node_selector=sel, tolerations=tol))
    ok = wait_pod(core, "with-tol", namespace, lambda p: p.status.phase == "Running", what="tolerating pod Running")
    assert ok.spec.node_name == tainted[0]
    repelled = core.read_namespaced_pod("no-tol", namespace)
    assert repelled.status.phase == "Pending" and not repelled.spec.node_name
    cond = [c for c in repelled.status.conditions or [] if c.type == "PodScheduled"][0]
    assert "untolerated taint" in cond.message


def test_resourcequota_rejects_over_quota_gpu_pod(core, nodes, namespace):
    nodes(1, gpus=4)
    core.create_namespaced_resource_quota(
        namespace, {"metadata": {"name": "gpu"}, "spec": {"hard": {"requests.nvidia.com/gpu": "1"}}}
    )

    # The quota controller must have computed status.used before admission enforces it.
    wait_until(
        lambda: (core.read_namespaced_resource_quota("gpu", namespace).status.hard or {}).get(
            "requests.nvidia.com/gpu"
        ),
        30,
        what="quota status",
    )
    core.create_namespaced_pod(namespace, pod("one", gpus=1))
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod(namespace, pod("two", gpus=1))
    assert err.value.status == 403
    assert "exceeded quota: gpu" in err.value.body and "requests.nvidia.com/gpu" in err.value.body


def test_run_to_completion_pod_succeeds(core, nodes, namespace):
    nodes(1)
    core.create_namespaced_pod(namespace, pod("once", node_selector={"gpuops.test/set": nodes.tag}, restart="Never"))
    got = wait_pod(core, "once", namespace, lambda p: p.status.phase in ("Succeeded", "Failed"), what="pod completed")
    assert got.status.phase == "Succeeded"
    assert got.status.container_statuses[0].state.terminated.exit_code == 0


def test_k8s_module_idempotent_with_zero_writes_on_rerun(cluster, ansible_task, namespace):
    # apply: true (client-side apply) skips the request when nothing changed;
    # plain state=present re-sends a no-op PATCH on every run and server-side
    # apply always sends one, so the roles use client-side apply.
    args = {
        "state": "present",
        "apply": True,
        "definition": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "idem", "namespace": namespace},
            "data": {"a": "1"},
        },
    }
    m0 = cluster.audit.mark()
    first = ansible_task("kubernetes.core.k8s", args)
    assert not first.get("failed"), first
    assert first["changed"] is True
    writes_first = cluster.audit.writes_since(m0)
    assert [w["verb"] for w in writes_first] == ["create"], writes_first

    m1 = cluster.audit.mark()
    second = ansible_task("kubernetes.core.k8s", args)
    assert not second.get("failed"), second
    assert second["changed"] is False
    assert cluster.audit.writes_since(m1) == []

    # Check mode of a real change: reported, sent only as a dry run.
    changed = dict(args, definition=dict(args["definition"], data={"a": "2"}))
    m2 = cluster.audit.mark()
    check = ansible_task("kubernetes.core.k8s", changed, check=True)
    assert check["changed"] is True
    assert cluster.audit.writes_since(m2) == []
    assert client.CoreV1Api(cluster.api).read_namespaced_config_map("idem", namespace).data == {"a": "1"}


def test_reset_waits_for_a_namespace_a_test_left_terminating(cluster, core):
    """A test that deletes its namespace without waiting leaves it Terminating, its objects still listed: the
    reset between files waits until it is gone (seen in CI: a Subscription left so stopped the next file's
    preflight). A finalizer holds the namespace here until a timer lets it go."""
    import threading

    from cluster_reset import Seed

    seed = Seed.take(cluster.api)
    name = "reset-" + uuid.uuid4().hex[:6]
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    held = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="held", finalizers=["gpuops.test/hold"]))
    core.create_namespaced_config_map(name, held)
    core.delete_namespace(name)
    assert core.read_namespace(name).metadata.deletion_timestamp
    release = threading.Timer(3, core.patch_namespaced_config_map, ("held", name, {"metadata": {"finalizers": None}}))
    release.start()
    t0 = time.time()
    try:
        done = seed.reset(cluster.api, timeout=60)
    finally:
        release.join()
    with pytest.raises(ApiException) as gone:
        core.read_namespace(name)
    assert gone.value.status == 404
    assert time.time() - t0 >= 3
    assert "waited for Namespace {0}".format(name) in done


def test_a_kept_cluster_is_reset_to_its_start_and_a_foreign_one_started_afresh():
    """A cluster a test session started and kept (GPUOPS_KEEP_CLUSTER) is reused by the next session only after a
    reset to the seed saved at its start; one running there without that seed (`make demo` leaves its converged
    cluster) is started afresh. Taking the seed from a running cluster instead made a kept or demo cluster's
    leftovers part of the seed, and the next run's role tests failed where nothing was wrong."""
    from conftest import EVENTS, SEED_FILE, SharedCluster, cluster_dir

    first = SharedCluster(cluster_dir("kept"), "kubernetes", {"gpu_nodes": 1})
    try:
        first.use("test_one")
        core = client.CoreV1Api(first.cluster.api)
        name = "kept-" + uuid.uuid4().hex[:6]
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
        core.patch_node("gpu-0", {"metadata": {"labels": {"gpuops.test/left": "yes"}}})
        uid = core.read_namespace("kube-system").metadata.uid

        # The next session, same directory: reset, not restarted (same etcd), the leftovers gone.
        second = SharedCluster(cluster_dir("kept"), "kubernetes", {"gpu_nodes": 1})
        second.use("test_two")
        core = client.CoreV1Api(second.cluster.api)
        assert core.read_namespace("kube-system").metadata.uid == uid
        assert "gpuops.test/left" not in (core.read_node("gpu-0").metadata.labels or {})
        with pytest.raises(ApiException) as gone:
            core.read_namespace(name)
        assert gone.value.status == 404
        assert not second.started and EVENTS[-1][4].startswith("reused, reset to its start: ")

        # Without the saved seed (a cluster the harness did not start): started afresh, a new etcd.
        os.remove(os.path.join(first.lc.workdir, SEED_FILE))
        third = SharedCluster(cluster_dir("kept"), "kubernetes", {"gpu_nodes": 1})
        third.use("test_three")
        assert third.started
        assert client.CoreV1Api(third.cluster.api).read_namespace("kube-system").metadata.uid != uid
    finally:
        first.lc.down(quiet=True)
