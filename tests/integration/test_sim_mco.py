# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Simulated Machine Config Operator: render, rolling update under maxUnavailable, degradation."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import sys
import threading
import time
import uuid

import pytest
from simopenshift.control import wait_match  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis  # noqa: E402
from simopenshift.kube import NODES, annotations_of, condition, labels_of, match_selector, node_ready  # noqa: E402
from simopenshift.testing import wait_for  # noqa: E402

pytestmark = pytest.mark.integration

CURRENT = "machineconfiguration.openshift.io/currentConfig"
DESIRED = "machineconfiguration.openshift.io/desiredConfig"
STATE = "machineconfiguration.openshift.io/state"


def worker_nodes(kube):
    pool = kube.get(apis.MACHINECONFIGPOOLS, "worker")
    return [n for n in kube.list(NODES)[0] if match_selector(pool["spec"]["nodeSelector"], labels_of(n))]


def machineconfig(name, files, version="3.4.0", role="worker"):
    return {
        "apiVersion": apis.MACHINECONFIGS.api_version,
        "kind": "MachineConfig",
        "metadata": {"name": name, "labels": {"machineconfiguration.openshift.io/role": role}},
        "spec": {
            "config": {
                "ignition": {"version": version},
                "storage": {
                    "files": [
                        {"path": path, "mode": 420, "overwrite": True, "contents": {"source": source}}
                        for path, source in files
                    ]
                },
            }
        },
    }


def data_url(text):
    return "data:text/plain;charset=utf-8;base64," + base64.b64encode(text.encode()).decode()


def pool_status(kube):
    return kube.get(apis.MACHINECONFIGPOOLS, "worker").get("status") or {}


def wait_pool_updated(kube, timeout=90):
    def updated():
        pool = kube.get(apis.MACHINECONFIGPOOLS, "worker")
        status = pool.get("status") or {}
        cond = condition(pool, "Updated") or {}
        target = pool["spec"]["configuration"]["name"]
        return (
            pool
            if (
                cond.get("status") == "True"
                and status.get("configuration", {}).get("name") == target
                and status.get("updatedMachineCount") == status.get("machineCount")
            )
            else None
        )

    return wait_for(updated, timeout, what="worker pool Updated")


class Watcher(object):
    """Samples the worker nodes during a rollout: the most nodes updating at once."""

    def __init__(self, kube):
        self.kube = kube
        self.max_busy = 0
        self.saw_not_ready = False
        self.saw_cordon = False
        self.saw_updating = False
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            try:
                nodes = worker_nodes(self.kube)
                busy = [n for n in nodes if annotations_of(n).get(DESIRED) != annotations_of(n).get(CURRENT)]
                self.max_busy = max(self.max_busy, len(busy))
                self.saw_not_ready |= any(not node_ready(n) for n in busy)
                self.saw_cordon |= any((n.get("spec") or {}).get("unschedulable") for n in busy)
                self.saw_updating |= (
                    condition(self.kube.get(apis.MACHINECONFIGPOOLS, "worker"), "Updating") or {}
                ).get("status") == "True"
            except Exception:  # a node deleted between list and read
                pass
            time.sleep(0.05)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def test_machineconfig_rolls_out_one_node_at_a_time_by_default(kube):
    wait_pool_updated(kube)
    before = kube.get(apis.MACHINECONFIGPOOLS, "worker")["spec"]["configuration"]["name"]
    assert kube.get(apis.MACHINECONFIGPOOLS, "worker")["spec"].get("maxUnavailable") in (None, 1)
    name = "50-sim-test-" + uuid.uuid4().hex[:5]
    nodes = worker_nodes(kube)
    try:
        with Watcher(kube) as watcher:
            kube.create(apis.MACHINECONFIGS, machineconfig(name, [("/etc/sim-test.conf", data_url("x=1\n"))]))
            target = wait_match(
                lambda: kube.get(apis.MACHINECONFIGPOOLS, "worker")["spec"]["configuration"]["name"],
                lambda n: n != before,
                20,
                what="new rendered config",
            )
            pool = wait_pool_updated(kube)
        assert target.startswith("rendered-worker-") and target != before
        sources = [s["name"] for s in pool["spec"]["configuration"]["source"]]
        assert name in sources and "00-worker" in sources
        rendered = kube.get(apis.MACHINECONFIGS, target)
        assert any(f["path"] == "/etc/sim-test.conf" for f in rendered["spec"]["config"]["storage"]["files"])
        assert rendered["metadata"]["ownerReferences"][0]["kind"] == "MachineConfigPool"
        assert watcher.max_busy == 1, "maxUnavailable 1 exceeded: %d nodes updating at once" % watcher.max_busy
        assert watcher.saw_cordon and watcher.saw_not_ready and watcher.saw_updating
        status = pool["status"]
        assert status["machineCount"] == status["updatedMachineCount"] == status["readyMachineCount"] == len(nodes)
        assert status["unavailableMachineCount"] == 0 and status["degradedMachineCount"] == 0
        assert status["configuration"]["name"] == target
        for node in worker_nodes(kube):
            ann = annotations_of(node)
            assert (ann[CURRENT], ann[DESIRED], ann[STATE]) == (target, target, "Done")
            assert not (node.get("spec") or {}).get("unschedulable")

        # Removing the config rolls back; maxUnavailable 100% lets every node go at once.
        kube.patch(apis.MACHINECONFIGPOOLS, "worker", {"spec": {"maxUnavailable": "100%"}})
        with Watcher(kube) as watcher:
            kube.delete(apis.MACHINECONFIGS, name)
            wait_for(
                lambda: kube.get(apis.MACHINECONFIGPOOLS, "worker")["spec"]["configuration"]["name"] == before,
                20,
                what="pool back on the old rendered config",
            )
            wait_pool_updated(kube)
        assert watcher.max_busy == len(nodes) > 1
    finally:
        kube.delete(apis.MACHINECONFIGS, name)
        kube.patch(apis.MACHINECONFIGPOOLS, "worker", {"spec": {"maxUnavailable": None}})
        wait_pool_updated(kube)


@pytest.mark.parametrize(
    "version,source,reason",
    [
        ("9.9.9", data_url("ok\n"), "unknown version"),
        ("3.2.0", "data:text/plain;base64,%%%not-base64", "invalid base64 data url"),
    ],
)
def test_invalid_ignition_degrades_the_pool(kube, version, source, reason):
    wait_pool_updated(kube)
    before = kube.get(apis.MACHINECONFIGPOOLS, "worker")["spec"]["configuration"]["name"]
    name = "60-sim-bad-" + uuid.uuid4().hex[:5]
    kube.create(apis.MACHINECONFIGS, machineconfig(name, [("/etc/bad.conf", source)], version=version))
    try:
        pool = wait_match(
            lambda: kube.get(apis.MACHINECONFIGPOOLS, "worker"),
            lambda p: (condition(p, "Degraded") or {}).get("status") == "True",
            20,
            what="pool Degraded",
        )
        render = condition(pool, "RenderDegraded")
        assert render["status"] == "True"
        assert name in render["message"] and reason in render["message"]
        assert condition(pool, "Degraded")["reason"] == "RenderDegraded"
        # Nothing is rolled out: the pool stays on its last good configuration.
        assert pool["spec"]["configuration"]["name"] == before
        assert all(annotations_of(n).get(DESIRED) == before for n in worker_nodes(kube))
    finally:
        kube.delete(apis.MACHINECONFIGS, name)
    wait_for(
        lambda: (condition(kube.get(apis.MACHINECONFIGPOOLS, "worker"), "Degraded") or {}).get("status") == "False",
        20,
        what="pool no longer Degraded",
    )


def test_kubeletconfig_generates_a_machineconfig(kube):
    wait_pool_updated(kube)
    kube.patch(apis.MACHINECONFIGPOOLS, "worker", {"spec": {"maxUnavailable": "100%"}})
    name = "sim-kubelet-" + uuid.uuid4().hex[:5]
    try:
        kube.create(
            apis.KUBELETCONFIGS,
            {
                "apiVersion": apis.KUBELETCONFIGS.api_version,
                "kind": "KubeletConfig",
                "metadata": {"name": name},
                "spec": {
                    "machineConfigPoolSelector": {
                        "matchLabels": {"pools.operator.machineconfiguration.openshift.io/worker": ""}
                    },
                    "kubeletConfig": {"maxPods": 500},
                },
            },
        )
        mc = wait_for(
            lambda: kube.get(apis.MACHINECONFIGS, "99-worker-generated-kubelet"),
            20,
            what="generated kubelet MachineConfig",
        )
        payload = mc["spec"]["config"]["storage"]["files"][0]["contents"]["source"].split(",", 1)[1]
        assert base64.b64decode(payload) == b'{"maxPods": 500}'
        assert mc["metadata"]["labels"]["machineconfiguration.openshift.io/role"] == "worker"
        status = wait_for(lambda: (kube.get(apis.KUBELETCONFIGS, name).get("status") or {}).get("conditions"), 20)
        assert status[0]["type"] == "Success"
        wait_for(
            lambda: "99-worker-generated-kubelet"
            in [s["name"] for s in kube.get(apis.MACHINECONFIGPOOLS, "worker")["spec"]["configuration"]["source"]],
            20,
            what="pool renders the generated config",
        )
        wait_pool_updated(kube)
    finally:
        kube.delete(apis.KUBELETCONFIGS, name)
        kube.delete(apis.MACHINECONFIGS, "99-worker-generated-kubelet")
        wait_for(
            lambda: "99-worker-generated-kubelet"
            not in [s["name"] for s in kube.get(apis.MACHINECONFIGPOOLS, "worker")["spec"]["configuration"]["source"]],
            20,
        )
        wait_pool_updated(kube)
        kube.patch(apis.MACHINECONFIGPOOLS, "worker", {"spec": {"maxUnavailable": None}})
