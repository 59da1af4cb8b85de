# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""operand_pod_states: per node, the operand pod and its state in words."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods import operand_pod_states, pod_state


def pod(name, node, ready=False, created="2026-01-01T00:00:00Z", **container):
    status = {
        "phase": "Running" if ready or container.get("state", {}).get("running") else "Pending",
        "conditions": [{"type": "Ready", "status": "True" if ready else "False", "reason": "ContainersNotReady"}],
        "containerStatuses": [dict({"name": "ctr", "ready": ready}, **container)],
    }
    return {
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": {"nodeName": node, "containers": [{"name": "ctr"}]},
        "status": status,
    }


def test_ready_pod_wins_and_missing_node_says_no_pod():
    pods = [
        pod("tk-old", "a", ready=True, created="2026-01-01T00:00:00Z", state={"running": {}}),
        pod("tk-new", "a", created="2026-01-02T00:00:00Z", state={"waiting": {"reason": "ContainerCreating"}}),
    ]
    states = operand_pod_states(pods, ["a", "b"])
    assert states[0] == {
        "node": "a",
        "pod": "tk-old",
        "ready": True,
        "settling": False,
        "state": "Running, ready",
        "containers": ["ctr"],
    }
    assert states[1]["node"] == "b" and states[1]["pod"] is None and not states[1]["ready"]
    assert states[1]["state"] == "no pod"


def test_crash_loop_names_restarts_and_exit_code():
    crashing = pod(
        "tk-x",
        "a",
        state={"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed container"}},
        restartCount=3,
        lastState={"terminated": {"exitCode": 1, "reason": "Error"}},
    )
    assert pod_state(crashing) == (False, "CrashLoopBackOff (restarts 3, last exit 1)")


@pytest.mark.parametrize(
    "container, words",
    [
        ({"state": {"waiting": {"reason": "PodInitializing"}}}, "PodInitializing"),
        (
            {"state": {"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "x"'}}},
            'ImagePullBackOff: Back-off pulling image "x"',
        ),
        ({"state": {"running": {}}}, "Running, not ready"),
        ({"state": {"terminated": {"reason": "Error", "exitCode": 2}}}, "Terminated Error (exit 2)"),
    ],
)
def test_states_in_words(container, words):
    assert pod_state(pod("p", "a", **container)) == (False, words)


def test_terminating_pod_and_filter_input_checks():
    gone = pod("p", "a", ready=True)
    gone["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert pod_state(gone) == (False, "Terminating")
    # The filter itself runs in a subprocess (tests/unit/plugins/filter/test_timeline_filters.py):
    # importing controller code here breaks the module tests' warning capture.


def test_a_pod_the_node_controller_marked_not_ready_is_settling_and_says_so():
    """MarkPodsNotReady flips only the pod's Ready condition (no reason): its containers still say ready."""
    marked = pod("tk-m", "a", ready=True, state={"running": {}})
    marked["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    ready, words = pod_state(marked)
    assert not ready and "containers ready but the pod marked not ready" in words
    states = operand_pod_states([marked], ["a"])
    assert states[0]["settling"] is True
    # A container that is not ready is a real state, not settling; nor is a pod going away.
    assert operand_pod_states([pod("tk-x", "a", state={"running": {}})], ["a"])[0]["settling"] is False
    marked["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert operand_pod_states([marked], ["a"])[0]["settling"] is False


def test_what_the_node_controller_marked_is_told_from_what_the_kubelet_said():
    from ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods import marked_by_node_controller

    def node(status):
        return {"status": {"conditions": [{"type": "Ready", "status": status, "reason": "x"}]}}

    marked = pod("drv", "a", ready=True, state={"running": {}})
    marked["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    crashing = pod("drv", "a", state={"waiting": {"reason": "CrashLoopBackOff"}})
    assert marked_by_node_controller(node("Unknown"))  # NodeStatusUnknown: the kubelet stopped posting
    assert marked_by_node_controller(node("True"), [marked])
    assert not marked_by_node_controller(node("True"), [crashing])
    assert not marked_by_node_controller(node("False"), [marked])  # the kubelet itself says NotReady
    assert not marked_by_node_controller(node("True")) and not marked_by_node_controller({})
