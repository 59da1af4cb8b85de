# -*- coding: utf-8 -*-
"""operand_pods' pure parts: the options, checked, and the one-line summary."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_read import check_params, summary


def test_good_options_come_back_checked():
    assert check_params({"namespace": "gpu", "selector": "app=x", "node_names": ["a"], "log_lines": 5}) == (
        "gpu",
        "app=x",
        ["a"],
        5,
    )
    assert check_params({"namespace": "gpu", "selector": "app=x"}) == ("gpu", "app=x", None, 0)


@pytest.mark.parametrize(
    "bad, param",
    [
        ({"namespace": "Gpu_NS"}, "namespace"),
        ({"selector": ""}, "selector"),
        ({"node_names": [""]}, "node_names"),
        ({"log_lines": -3}, "log_lines"),
        ({"service": "Bad_Service"}, "service"),
    ],
)
@pytest.mark.parametrize("prefix", ["", "operand_pods."])
def test_bad_options_name_the_option(bad, param, prefix):
    # k8s_ensure checks its operand_pods suboptions with the same code, named under its option.
    params = dict({"namespace": "gpu", "selector": "app=x"}, **bad)
    with pytest.raises(GpuopsError) as err:
        check_params(params, prefix=prefix)
    assert err.value.param == prefix + param and str(err.value).startswith(prefix + param + ":")


def test_summary_names_the_nodes_without_a_ready_pod():
    states = [{"node": "a", "ready": True}, {"node": "b", "ready": False}]
    assert summary(states, "app=x pods in gpu,") == "app=x pods in gpu, ready on 1 of 2 node(s); not on b"
    assert summary(states[:1], "app=x pods in gpu,") == "app=x pods in gpu, ready on 1 of 1 node(s)"


def test_the_log_read_is_the_failing_containers():
    """A driver pod with the Driver Toolkit sidecar: its log needs a container name, the one that is not ready."""
    from ansible_collections.gpuops.cluster.plugins.module_utils.operand_read import failing_container

    pod = {
        "status": {
            "containerStatuses": [
                {"name": "openshift-driver-toolkit-ctr", "ready": True},
                {"name": "nvidia-driver-ctr", "ready": False},
            ]
        }
    }
    assert failing_container(pod) == "nvidia-driver-ctr"
    assert failing_container({"status": {}}) is None and failing_container(None) is None


class _Svc(object):
    def find_resource(self, kind, api_version, fail=False):
        return kind


def _slice(*nodes):
    return {"endpoints": [{"nodeName": n, "conditions": {"ready": True}} for n in nodes]}


def test_endpoints_that_lag_ready_pods_are_read_again(monkeypatch):
    from ansible_collections.gpuops.cluster.plugins.module_utils import operand_read

    answers = [[_slice("gpu-0")], [_slice("gpu-0")], [_slice("gpu-0", "gpu-1")]]
    monkeypatch.setattr(operand_read, "list_items", lambda c, r, **kw: answers.pop(0))
    now, pauses = [0.0], []

    def pause(seconds):
        pauses.append(seconds)
        now[0] += seconds

    nodes = operand_read.endpoint_nodes(None, _Svc(), "ns", "exporter", ["gpu-0", "gpu-1"], lambda: now[0], pause)
    assert nodes == ["gpu-0", "gpu-1"] and pauses == [1, 1]


def test_an_endpoint_that_never_comes_is_reported_missing_after_the_wait(monkeypatch):
    from ansible_collections.gpuops.cluster.plugins.module_utils import operand_read

    monkeypatch.setattr(operand_read, "list_items", lambda c, r, **kw: [_slice("gpu-0")])
    now = [0.0]
    nodes = operand_read.endpoint_nodes(
        None, _Svc(), "ns", "exporter", ["gpu-0", "gpu-1"], lambda: now[0], lambda s: now.__setitem__(0, now[0] + s)
    )
    assert nodes == ["gpu-0"] and now[0] == operand_read.ENDPOINT_SECONDS
    # Longer than client-go's longest reflector wait after failed watches: the 30 s cap, jittered up to twice that.
    assert operand_read.ENDPOINT_SECONDS > 2 * 30


def _pod(ready_condition):
    return {
        "metadata": {"name": "tk-1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"nodeName": "gpu-0", "containers": [{"name": "ctr"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": ready_condition}],
            "containerStatuses": [{"name": "ctr", "ready": True, "state": {"running": {}}}],
        },
    }


def test_a_pod_marked_not_ready_by_its_node_is_read_again_until_the_kubelet_sets_it_back(monkeypatch):
    from ansible_collections.gpuops.cluster.plugins.module_utils import operand_read

    answers = [[_pod("False")], [_pod("False")], [_pod("True")]]
    monkeypatch.setattr(operand_read, "list_items", lambda c, r, **kw: answers.pop(0))
    now, pauses = [0.0], []

    def pause(seconds):
        pauses.append(seconds)
        now[0] += seconds

    pods, states = operand_read.read_states(None, _Svc(), "ns", "app=tk", ["gpu-0"], lambda: now[0], pause)
    assert states[0]["ready"] and pauses == [2, 2] and len(pods) == 1


def test_a_pod_that_stays_marked_is_reported_after_the_wait_and_a_real_failure_at_once(monkeypatch):
    from ansible_collections.gpuops.cluster.plugins.module_utils import operand_read

    monkeypatch.setattr(operand_read, "list_items", lambda c, r, **kw: [_pod("False")])
    now = [0.0]
    dummy, states = operand_read.read_states(
        None, _Svc(), "ns", "app=tk", ["gpu-0"], lambda: now[0], lambda s: now.__setitem__(0, now[0] + s)
    )
    assert not states[0]["ready"] and states[0]["settling"] and now[0] == operand_read.SETTLE_SECONDS

    crashing = _pod("False")
    crashing["status"]["containerStatuses"][0].update(ready=False, state={"waiting": {"reason": "CrashLoopBackOff"}})
    monkeypatch.setattr(operand_read, "list_items", lambda c, r, **kw: [crashing])
    now = [0.0]
    dummy, states = operand_read.read_states(
        None, _Svc(), "ns", "app=tk", ["gpu-0"], lambda: now[0], lambda s: now.__setitem__(0, now[0] + s)
    )
    assert states[0]["state"] == "CrashLoopBackOff" and now[0] == 0.0
