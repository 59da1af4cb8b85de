# -*- coding: utf-8 -*-
"""k8s_ensure's MachineConfigPool wait: rolled out, removed, degraded, timeout."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError, Progress
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure import manifests, pools

SRC = "data:text/plain;charset=utf-8;base64,YQ=="


def mc(name, role="worker", path="/etc/a", source=SRC):
    return {
        "apiVersion": "machineconfiguration.openshift.io/v1",
        "kind": "MachineConfig",
        "metadata": {"name": name, "labels": {"machineconfiguration.openshift.io/role": role}},
        "spec": {
            "config": {
                "ignition": {"version": "3.2.0"},
                "storage": {"files": [{"path": path, "contents": {"source": source}}]},
            }
        },
    }


def pool(
    name="worker",
    want="rendered-worker-new",
    have="rendered-worker-new",
    sources=("50-a",),
    counts=(3, 3, 3, 0),
    updated=True,
    degraded=None,
    generation=2,
    observed=2,
):
    machine, upd, ready, unavailable = counts
    conditions = [{"type": "Updated", "status": "True" if updated else "False"}]
    if degraded:
        conditions.append({"type": "RenderDegraded", "status": "True", "reason": "RenderDegraded", "message": degraded})
    return {
        "metadata": {"name": name, "generation": generation},
        "spec": {
            "machineConfigSelector": {"matchLabels": {"machineconfiguration.openshift.io/role": name}},
            "configuration": {"name": want},
        },
        "status": {
            "observedGeneration": observed,
            "configuration": {"name": have, "source": [{"kind": "MachineConfig", "name": s} for s in sources]},
            "machineCount": machine,
            "updatedMachineCount": upd,
            "readyMachineCount": ready,
            "unavailableMachineCount": unavailable,
            "conditions": conditions,
        },
    }


def rendered(name="rendered-worker-new", files=(("/etc/a", SRC),)):
    return {
        "metadata": {"name": name},
        "spec": {"config": {"storage": {"files": [{"path": p, "contents": {"source": s}} for p, s in files]}}},
    }


@pytest.mark.parametrize(
    "selector, labels, ok",
    [
        ({"matchLabels": {"r": "worker"}}, {"r": "worker"}, True),
        ({"matchLabels": {"r": "worker"}}, {"r": "master"}, False),
        ({"matchExpressions": [{"key": "r", "operator": "In", "values": ["worker", "gpu"]}]}, {"r": "gpu"}, True),
        ({"matchExpressions": [{"key": "r", "operator": "NotIn", "values": ["master"]}]}, {"r": "gpu"}, True),
        ({"matchExpressions": [{"key": "r", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "r", "operator": "DoesNotExist"}]}, {}, True),
        ({}, {"r": "worker"}, False),
        (None, {"r": "worker"}, False),
    ],
)
def test_selector(selector, labels, ok):
    assert pools.selector_matches(selector, labels) is ok


def test_rolled_out_pool_is_done():
    assert pools.pool_state(pool(), [mc("50-a")], rendered(), True) == (True, "")


@pytest.mark.parametrize(
    "kwargs, files, note",
    [
        ({"sources": ()}, (("/etc/a", SRC),), "rendering the new configuration"),  # MC not rendered yet
        ({}, (("/etc/a", "data:,old"),), "rendering the new configuration"),  # changed in place, old content
        ({"have": "rendered-worker-old"}, (("/etc/a", SRC),), "rolling out rendered-worker-new"),
        ({"counts": (3, 2, 2, 1), "updated": False}, (("/etc/a", SRC),), "rolling out rendered-worker-new"),
        ({"observed": 1}, (("/etc/a", SRC),), "rolling out rendered-worker-new"),
    ],
)
def test_pool_not_done(kwargs, files, note):
    assert pools.pool_state(pool(**kwargs), [mc("50-a")], rendered(files=files), True) == (False, note)


def test_absent_waits_until_the_config_is_gone():
    assert not pools.pool_state(pool(), [mc("50-a")], rendered(), False)[0]
    assert pools.pool_state(pool(sources=("00-worker",)), [mc("50-a")], rendered(files=()), False) == (True, "")


def test_progress_line_and_degraded_reason():
    p = pool(counts=(5, 2, 2, 1), degraded="Failed to render configuration for pool worker: bad")
    assert pools.progress_line(p) == "MachineConfigPool worker: 2/5 updated, 1 updating, 2 ready"
    assert pools.degraded_reason(p) == (
        "RenderDegraded (RenderDegraded): Failed to render configuration for pool worker: bad"
    )
    assert pools.degraded_reason(pool()) is None


class FakeClient(object):
    def __init__(self, states, rendered_configs):
        self.states = list(states)
        self.rendered_configs = rendered_configs
        self.lists = 0

    def resource(self, kind, api_version):
        return kind


@pytest.fixture
def fake(monkeypatch):
    def install(states, rendered_configs=None):
        client = FakeClient(states, rendered_configs or {"rendered-worker-new": rendered()})

        def list_items(c, resource):
            assert resource == "MachineConfigPool"
            c.lists += 1
            state = c.states.pop(0) if len(c.states) > 1 else c.states[0]
            if isinstance(state, Exception):
                raise state
            return state

        monkeypatch.setattr(pools, "list_items", list_items)
        monkeypatch.setattr(pools, "get_item", lambda c, res, name: c.rendered_configs.get(name))
        return client

    return install


class Clock(object):
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def pause(self, seconds):
        self.now += seconds


def items(*bodies):
    return manifests.build_items(list(bodies), owner="entitlement")


def test_wait_reports_progress_until_updated(fake):
    master = pool("master", sources=("00-master",))
    client = fake(
        [
            [
                pool(
                    sources=("00-worker",), want="rendered-worker-old", have="rendered-worker-old", counts=(3, 0, 3, 0)
                ),
                master,
            ],
            [pool(have="rendered-worker-old", counts=(3, 1, 2, 1), updated=False), master],
            [pool(), master],
        ]
    )
    clock, progress = Clock(), Progress(clock=Clock())
    waited = pools.wait_pools(client, items(mc("50-a")), 60, 5, progress, clock=clock, pause=clock.pause)
    assert waited == 10 and client.lists == 3
    lines = [e.split(" ", 1)[1] for e in progress.events]
    assert lines == [
        "MachineConfigPool worker: 0/3 updated, 0 updating, 3 ready (rendering the new configuration)",
        "MachineConfigPool worker: 1/3 updated, 1 updating, 2 ready (rolling out rendered-worker-new)",
        "MachineConfigPool worker: 3/3 updated, 0 updating, 3 ready",
    ]


def test_a_degraded_pool_stops_the_wait_at_once(fake):
    client = fake([[pool(degraded="Failed to render configuration for pool worker: MachineConfig 50-x: bad")]])
    clock = Clock()
    with pytest.raises(GpuopsError) as err:
        pools.wait_pools(client, items(mc("50-a")), 600, 5, Progress(), clock=clock, pause=clock.pause)
    assert clock.now == 0 and "MachineConfigPool worker is degraded" in str(err.value)
    assert "MachineConfig 50-x: bad" in str(err.value)


def test_an_api_server_restart_during_the_rollout_is_waited_out(fake):
    # What urllib3 raises when kube-apiserver dies under a request, then a 503 while it starts again.
    cut = ConnectionResetError("Connection reset by peer")
    starting = type("Unavailable", (Exception,), {"status": 503})(
        "the server is currently unable to handle the request"
    )
    client = fake([cut, starting, [pool()]])
    clock = Clock()
    pools.wait_pools(client, items(mc("50-a")), 600, 5, Progress(), clock=clock, pause=clock.pause)
    assert client.lists == 3 and clock.now == 4


def test_an_api_server_gone_for_a_minute_ends_the_wait_naming_host(fake):
    client = fake([ConnectionRefusedError("[Errno 111] Connection refused")])
    clock = Clock()
    with pytest.raises(GpuopsError) as err:
        pools.wait_pools(client, items(mc("50-a")), 3600, 5, Progress(), clock=clock, pause=clock.pause)
    assert 60 <= clock.now < 70, clock.now
    assert str(err.value).startswith("host: cannot reach the Kubernetes API") and "60s in a row" in str(err.value)


def test_a_forbidden_look_is_not_waited_out(fake):
    forbidden = type("Forbidden", (Exception,), {"status": 403})("forbidden")
    client = fake([forbidden])
    clock = Clock()
    with pytest.raises(Exception) as err:
        pools.wait_pools(client, items(mc("50-a")), 600, 5, Progress(), clock=clock, pause=clock.pause)
    assert err.value is forbidden and clock.now == 0


def test_timeout_names_the_pool(fake):
    client = fake([[pool(have="rendered-worker-old", counts=(3, 1, 2, 1), updated=False)]])
    clock = Clock()
    with pytest.raises(GpuopsError) as err:
        pools.wait_pools(client, items(mc("50-a")), 20, 5, Progress(), clock=clock, pause=clock.pause)
    assert err.value.param == "wait_timeout"
    assert "MachineConfigPool worker: 1/3 updated, 1 updating, 2 ready" in str(err.value) and "(50-a)" in str(err.value)


def test_no_machineconfig_no_wait(fake):
    client = fake([[pool()]])
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}}
    assert pools.wait_pools(client, items(cm), 20, 5, Progress()) == 0 and client.lists == 0


def test_pools_that_select_none_of_the_configs_are_ignored(fake):
    client = fake([[pool("master", have="x", want="y", updated=False, sources=()), pool()]])
    clock = Clock()
    assert pools.wait_pools(client, items(mc("50-a")), 20, 5, Progress(), clock=clock, pause=clock.pause) == 0
