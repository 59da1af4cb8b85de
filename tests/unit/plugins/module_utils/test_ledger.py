# -*- coding: utf-8 -*-
"""state_ledger's pure parts: stamps, node facts, readiness, and which states run and why."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.ledger import (
    FAILURE_KEY,
    check_params,
    decide,
    entry_text,
    failure_text,
    failure_words,
    invalidated,
    node_digest,
    not_ready,
    object_stamp,
    parse_entry,
    stamps_by_state,
    state_of,
    why_changed,
)

OURS = {"app.kubernetes.io/managed-by": "gpuops.cluster", "gpuops.cluster/owner": "device_plugin"}


def daemonset(**status):
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "nvidia-device-plugin-daemonset",
            "namespace": "nvidia-gpu",
            "uid": "u-1",
            "generation": 2,
            "resourceVersion": "100",
            "labels": dict(OURS),
            "managedFields": [{"manager": "gpuops.cluster"}],
        },
        "spec": {"template": {"spec": {"containers": [{"image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"}]}}},
        "status": dict(status),
    }


READY = dict(desiredNumberScheduled=2, numberReady=2, updatedNumberScheduled=2, numberAvailable=2, observedGeneration=2)


def node(name="gpu-1", kernel="5.14.0-427.22.1.el9_4.x86_64", **extra):
    labels = {
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "nvidia.com/gpu.product": "Tesla-T4",
        "nvidia.com/gfd.timestamp": "1700000000",
        "kubernetes.io/hostname": name,
    }
    labels.update(extra.pop("labels", {}))
    return {
        "metadata": {"name": name, "uid": "n-" + name, "labels": labels, "resourceVersion": extra.pop("rv", "1")},
        "spec": {"taints": extra.pop("taints", [])},
        "status": {
            "nodeInfo": {"kernelVersion": kernel, "osImage": "RHCOS 416", "containerRuntimeVersion": "cri-o://1.29"},
            "allocatable": {"cpu": "4", "nvidia.com/gpu": extra.pop("gpus", "1")},
            "conditions": [{"type": "Ready", "status": extra.pop("ready", "True")}],
        },
    }


def test_a_stamp_ignores_status_and_bookkeeping_but_not_edits():
    base = daemonset(**READY)
    reported = copy.deepcopy(base)
    reported["status"]["numberReady"] = 1
    reported["metadata"]["resourceVersion"] = "200"
    reported["metadata"]["managedFields"] = []
    assert object_stamp(reported) == object_stamp(base)
    for change in (
        lambda o: o["metadata"]["labels"].pop("gpuops.cluster/owner"),
        lambda o: o["spec"]["template"]["spec"]["containers"][0].update(image="nvcr.io/nvidia/k8s-device-plugin:v0"),
        lambda o: o["metadata"].update(uid="u-2"),  # deleted and made again by someone else
        lambda o: o["metadata"].update(generation=3),
    ):
        edited = copy.deepcopy(base)
        change(edited)
        assert object_stamp(edited) != object_stamp(base)


def test_objects_belong_to_their_owner_state_or_the_module_that_makes_the_kind():
    assert state_of(daemonset()) == "device_plugin"
    machineset = {
        "kind": "MachineSet",
        "metadata": {"name": "gpu-a", "labels": {"app.kubernetes.io/managed-by": "gpuops.cluster"}},
    }
    assert state_of(machineset) == "gpu_machineset"
    assert (
        state_of({"kind": "ConfigMap", "metadata": {"name": "x", "labels": {"app.kubernetes.io/managed-by": "helm"}}})
        is None
    )
    by_state = stamps_by_state([daemonset(), machineset])
    assert sorted(by_state) == ["device_plugin", "gpu_machineset"]
    assert list(by_state["device_plugin"]) == ["DaemonSet nvidia-gpu/nvidia-device-plugin-daemonset"]


def test_workloads_not_ready_are_named_with_their_counts():
    assert not_ready(daemonset(**READY)) is None
    half = dict(READY)
    half.update(numberReady=1, numberAvailable=1, numberUnavailable=1)
    assert not_ready(daemonset(**half)) == "DaemonSet nvidia-gpu/nvidia-device-plugin-daemonset: 1/2 ready"
    # A new template the controller has not seen yet is not ready either.
    stale = dict(READY)
    stale["observedGeneration"] = 1
    assert not_ready(daemonset(**stale)) is not None
    ms = {
        "kind": "MachineSet",
        "metadata": {"name": "gpu-a", "namespace": "openshift-machine-api"},
        "spec": {"replicas": 2},
    }
    assert (
        not_ready(dict(ms, status={"readyReplicas": 1})) == "MachineSet openshift-machine-api/gpu-a: 1/2 machines ready"
    )
    assert not_ready(dict(ms, status={"readyReplicas": 2})) is None
    assert not_ready({"kind": "ConfigMap", "metadata": {"name": "c"}}) is None


def test_node_digest_splits_what_every_state_needs_from_what_the_later_states_publish():
    one = node_digest([node()])
    assert node_digest([node(rv="99")]) == one  # a heartbeat is not a change
    assert node_digest([node(labels={"nvidia.com/gfd.timestamp": "1800000000"})]) == one
    kernel = node_digest([node(kernel="5.14.0-570.el9_6.x86_64")])
    assert kernel["base"] != one["base"]
    assert node_digest([node(), node("gpu-2")])["base"] != one["base"]
    # Heartbeats come and go: a node that is not ready is gpu_validation's to report, on every run.
    assert node_digest([node(ready="False")]) == one
    unreachable = [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]
    assert node_digest([node(taints=unreachable)]) == one
    for later in (
        node(gpus="4"),
        node(taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]),
        node(labels={"nvidia.com/gpu.product": "NVIDIA-A10G"}),
        node(labels={"node-role.kubernetes.io/inference": ""}),
    ):
        digest = node_digest([later])
        assert digest["base"] == one["base"] and digest["late"] != one["late"]
    # The order the server lists nodes in does not matter.
    assert node_digest([node("gpu-2"), node()]) == node_digest([node(), node("gpu-2")])


def entry(nodes, objects=None, inputs="in-1"):
    return parse_entry(entry_text(inputs, nodes, objects or {}, [["apps/v1", "DaemonSet"]]))


def test_why_a_state_runs():
    nodes = node_digest([node()])
    ds = daemonset(**READY)
    key, stamp = "DaemonSet nvidia-gpu/nvidia-device-plugin-daemonset", object_stamp(ds)
    good = entry(nodes, {key: stamp})
    assert why_changed("device_plugin", good, "in-1", nodes, {key: stamp}, []) == ""
    assert why_changed("device_plugin", None, "in-1", nodes, {key: stamp}, []).startswith("no record")
    assert "variables" in why_changed("device_plugin", good, "in-2", nodes, {key: stamp}, [])
    assert why_changed("device_plugin", good, "in-1", nodes, {}, []) == key + " is gone"
    assert why_changed("device_plugin", good, "in-1", nodes, {key: "other"}, []) == key + " was changed"
    assert why_changed("device_plugin", good, "in-1", nodes, {key: stamp, "ConfigMap a/b": "s"}, []) == (
        "ConfigMap a/b is not in the record"
    )
    assert why_changed("device_plugin", good, "in-1", nodes, {key: stamp}, ["DaemonSet x: 1/2 ready"]) == (
        "not ready: DaemonSet x: 1/2 ready"
    )
    more_gpus = node_digest([node(gpus="4")])
    assert "GPU resources" in why_changed("device_plugin", good, "in-1", more_gpus, {key: stamp}, [])
    # The driver does not run again because the device plugin published the GPUs.
    assert why_changed("driver", good, "in-1", more_gpus, {key: stamp}, []) == ""
    assert "kernel" in why_changed("driver", good, "in-1", node_digest([node(kernel="6.0")]), {key: stamp}, [])


def test_the_first_state_that_changed_runs_and_every_state_after_it():
    nodes = node_digest([node()])
    states = [("nfd", "a"), ("driver", "b"), ("device_plugin", "c"), ("scheduling", "d")]
    entries = dict((n, entry(nodes, inputs=i)) for n, i in states)
    assert decide(states, entries, nodes, {}, {}) == ([], {})
    changed = dict(entries, driver=entry(nodes, inputs="old"))
    run, reasons = decide(states, changed, nodes, {}, {})
    assert run == ["driver", "device_plugin", "scheduling"]
    assert reasons["driver"] == "its variables or the collection changed"
    assert reasons["scheduling"] == "runs after driver, which runs"
    run, reasons = decide(states, entries, nodes, {}, {}, force=True)
    assert run == [n for n, dummy in states] and set(reasons.values()) == {"forced (gpuops_ledger is off)"}


def test_a_failed_run_drops_every_record_and_the_next_check_says_where_it_failed():
    nodes = node_digest([node()])
    states = [("nfd", "a"), ("driver", "b"), ("device_plugin", "c")]
    data = dict((n, entry_text(i, nodes, {}, [])) for n, i in states)
    after = invalidated(data, "gpu_validation", "Run the validation pods", "2026-11-28T22:01:02Z")
    assert list(after) == [FAILURE_KEY]
    failure = failure_words(after[FAILURE_KEY])
    assert failure == "the run of 2026-11-28T22:01:02Z failed in gpu_validation (task: Run the validation pods)"
    entries = dict((n, parse_entry(after.get(n))) for n, dummy in states)
    run, reasons = decide(states, entries, nodes, {}, {}, failure=failure)
    # Every state runs: the first with the failure as its reason, the others after it.
    assert run == ["nfd", "driver", "device_plugin"]
    assert reasons["nfd"] == "its record was dropped because " + failure + "; every state runs until a run validates"
    assert reasons["device_plugin"] == "runs after nfd, which runs"
    # No ledger: nothing to drop (the next run has no record anyway).
    assert invalidated(None, "driver", None, "t") is None
    assert json.loads(failure_text("driver", None, "t")) == {"state": "driver", "task": None, "at": "t"}
    assert failure_words("not json") is None and failure_words(None) is None
    with pytest.raises(GpuopsError) as err:
        invalidated(data, "", None, "t")
    assert err.value.param == "failed_state"


def test_an_unreadable_entry_makes_its_state_run():
    assert parse_entry("not json") is None
    assert parse_entry(json.dumps({"v": 0, "objects": {}, "kinds": []})) is None
    assert parse_entry(None) is None


def test_the_same_facts_give_the_same_text():
    nodes = node_digest([node()])
    a = entry_text("i", nodes, {"b": "1", "a": "2"}, [["v1", "Service"], ["apps/v1", "DaemonSet"]])
    b = entry_text("i", nodes, {"a": "2", "b": "1"}, [["apps/v1", "DaemonSet"], ["v1", "Service"]])
    assert a == b


@pytest.mark.parametrize(
    "params, param, words",
    [
        ({"states": ["driver"]}, "states", "dictionary"),
        ({"states": [{"name": "driver"}]}, "states", "inputs"),
        ({"states": [{"name": "driver", "inputs": "a"}, {"name": "driver", "inputs": "b"}]}, "states", "twice"),
        ({"namespace": "Kube_System"}, "namespace", "not a valid"),
        ({"name": "Ledger!"}, "name", "not a valid"),
    ],
)
def test_bad_options_name_the_option(params, param, words):
    good = {
        "mode": "check",
        "states": [{"name": "nfd", "inputs": "x"}],
        "namespace": "kube-system",
        "name": "gpuops-state-ledger",
    }
    good.update(params)
    with pytest.raises(GpuopsError) as err:
        check_params(good)
    assert err.value.param == param and words in str(err.value)


def test_good_options_come_back_checked():
    params = {"mode": "record", "states": [{"name": "nfd", "inputs": "x"}], "namespace": "kube-system", "name": "l"}
    assert check_params(params) == ("record", [("nfd", "x")], "kube-system", "l", None, False)
    # A run of preflight alone asks about no state (site.yml's ledger check still runs).
    assert check_params(dict(params, mode="check", states=[]))[1] == []


def test_asked_inside_another_module_run_the_ledger_only_reads():
    from ansible_collections.gpuops.cluster.plugins.module_utils.ledger import check_asked

    params = {"mode": "check", "states": [{"name": "nfd", "inputs": "x"}], "namespace": "kube-system", "name": "l"}
    assert check_asked(dict(params, write=False)) == check_params(params)
    for bad in (dict(params, mode="record"), dict(params, write=True), dict(params, mode="invalidate")):
        with pytest.raises(GpuopsError) as err:
            check_asked(bad)
        assert err.value.param == "mode"


def test_recorded_inside_the_timelines_run_the_ledger_only_records():
    from ansible_collections.gpuops.cluster.plugins.module_utils.ledger import check_recorded

    params = {"mode": "record", "states": [{"name": "nfd", "inputs": "x"}], "namespace": "kube-system", "name": "l"}
    assert check_recorded(dict(params, write=True)) == check_params(params)
    for bad in (dict(params, mode="check"), dict(params, mode="invalidate")):
        with pytest.raises(GpuopsError) as err:
            check_recorded(bad)
        assert err.value.param == "mode"
