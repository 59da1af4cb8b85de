# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import daemonsets
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_rollout import plan
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_rollout.params import (
    check_params,
    validation_params,
    verify_params,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError

GPU = "feature.node.kubernetes.io/pci-10de.present"
PAUSE = {"key": plan.STATE_LABEL, "operator": "NotIn", "values": [plan.PAUSED]}


def node(name, labels=None, unschedulable=False, ready=True, annotations=None, taints=None):
    obj = {
        "metadata": {"name": name, "labels": dict({GPU: "true"}, **(labels or {})), "annotations": annotations or {}},
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }
    if taints:
        obj["spec"]["taints"] = taints
    return obj


def ds(name, pause=False, selector=None, uid=None):
    expr = [{"key": GPU, "operator": "In", "values": ["true"]}] + ([PAUSE] if pause else [])
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": expr}]}
            }
        },
        "containers": [{"name": "c", "image": "nvcr.io/nvidia/driver:580.95.05-rhcos4.16"}],
    }
    if selector:
        spec["nodeSelector"] = selector
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": uid or name + "-uid"},
        "spec": {"template": {"spec": spec}},
    }


def revision(ds_name, hash_, number, uid=None):
    return {
        "metadata": {
            "name": "{0}-{1}".format(ds_name, hash_),
            "ownerReferences": [{"kind": "DaemonSet", "uid": uid or ds_name + "-uid"}],
        },
        "revision": number,
    }


def pod(name, node_name, owner=None, revision_hash=None, gpus=0, phase="Running", ready=True, image="img:1"):
    meta = {"name": name, "namespace": "ns", "labels": {}, "creationTimestamp": "2026-11-29T00:00:00Z"}
    if owner:
        meta["ownerReferences"] = [{"kind": "DaemonSet", "name": owner, "controller": True}]
    if revision_hash:
        meta["labels"][daemonsets.REVISION_LABEL] = revision_hash
    container = {"name": "c", "image": image}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {
        "metadata": meta,
        "spec": {"nodeName": node_name, "containers": [container]},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def test_current_revision_is_the_newest_owned_revision_by_number_not_by_name():
    d = ds("driver")
    revs = [revision("driver", "bbbb", 1), revision("driver", "aaaa", 2), revision("driver-other", "zzzz", 9),
            revision("driver", "cccc", 3, uid="someone-else")]  # fmt: skip
    assert daemonsets.current_revision(d, revs) == "aaaa"
    assert daemonsets.current_revision(d, []) is None


@pytest.mark.parametrize(
    "expr, labels, ok",
    [
        ({"key": "a", "operator": "In", "values": ["1"]}, {"a": "1"}, True),
        ({"key": "a", "operator": "In", "values": ["1"]}, {}, False),
        ({"key": "a", "operator": "NotIn", "values": ["1"]}, {}, True),
        ({"key": "a", "operator": "NotIn", "values": ["1"]}, {"a": "1"}, False),
        ({"key": "a", "operator": "Exists"}, {"a": ""}, True),
        ({"key": "a", "operator": "DoesNotExist"}, {"a": ""}, False),
        ({"key": "a", "operator": "Gt", "values": ["3"]}, {"a": "4"}, True),
        ({"key": "a", "operator": "Lt", "values": ["3"]}, {"a": "x"}, False),
    ],
)
def test_node_selector_requirements(expr, labels, ok):
    assert daemonsets.expression_matches(expr, labels) is ok


def test_a_daemonset_with_the_pause_rule_leaves_a_node_in_reload_and_only_then():
    n = node("gpu-1")
    assert daemonsets.daemonset_wants(ds("plugin", pause=True), n) == (True, None)
    assert plan.leaves_when_paused(ds("plugin", pause=True), n)
    assert not plan.leaves_when_paused(ds("plugin"), n)
    for stage in (plan.DRAIN, plan.VALIDATE, plan.FAILED):
        assert daemonsets.daemonset_wants(ds("plugin", pause=True), node("gpu-1", {plan.STATE_LABEL: stage}))[0]
    assert not daemonsets.daemonset_wants(ds("plugin", pause=True), node("gpu-1", {plan.STATE_LABEL: plan.RELOAD}))[0]
    # Only the operands that run on the nodes count; the driver's own DaemonSet never leaves.
    sets = [ds("driver"), ds("plugin", pause=True), ds("exporter"), ds("elsewhere", selector={"pool": "cpu"})]
    assert plan.unpaused_operands(plan.gpu_clients(sets, "ns", {"driver"}), [n]) == ["ns/exporter"]


def test_gpu_pods_are_the_running_pods_that_hold_an_nvidia_resource_and_no_daemonset_owns():
    pods = [
        pod("train", "gpu-1", gpus=1),
        pod("mig", "gpu-1"),
        pod("done", "gpu-1", gpus=1, phase="Succeeded"),
        pod("plugin", "gpu-1", owner="plugin", gpus=1),
        pod("cpu", "gpu-1"),
    ]
    pods[1]["spec"]["containers"][0]["resources"] = {"requests": {"nvidia.com/mig-1g.10gb": "1"}}
    assert [p["metadata"]["name"] for p in plan.gpu_pods(pods)] == ["train", "mig"]


def states_of(nodes, hashes):
    driver = ds("driver")
    revs = [revision("driver", "old", 1), revision("driver", "new", 2)]
    pods = [
        pod("drv-" + n["metadata"]["name"], n["metadata"]["name"], "driver", hashes[n["metadata"]["name"]])
        for n in nodes
    ]
    return plan.driver_states(nodes, [driver], revs, pods)


def test_outdated_and_labelled_nodes_are_rolled_resumed_first_then_cordoned_then_by_name():
    nodes = [
        node("gpu-4"),
        node("gpu-3", unschedulable=True),
        node("gpu-2", {plan.STATE_LABEL: plan.FAILED}),
        node("gpu-1"),
    ]
    states = states_of(nodes, {"gpu-1": "new", "gpu-2": "new", "gpu-3": "old", "gpu-4": "old"})
    assert [s["node"] for s in plan.order(states)] == ["gpu-2", "gpu-3", "gpu-4"]
    assert [s["current"] for s in states] == [False, False, True, True]
    assert not plan.needs_roll(states[3])


def st(name, stage=None, unschedulable=False, reachable=True, stays=None):
    return {"node": name, "stage": stage, "unschedulable": unschedulable, "reachable": reachable,
            "stays_cordoned": unschedulable if stays is None else stays}  # fmt: skip


def names(waves):
    return [[s["node"] for s in w] for w in waves]


def test_waves_canary_first_then_at_most_max_unavailable():
    todo = [st("n%d" % i) for i in range(5)]
    assert names(plan.plan_waves(todo, todo, 1, 2)[0]) == [["n0"], ["n1", "n2"], ["n3", "n4"]]
    assert [len(w) for w in plan.plan_waves(todo, todo, 0, 2)[0]] == [2, 2, 1]
    assert names(plan.plan_waves(todo, todo, 3, 2)[0])[0] == ["n0", "n1"]  # a canary never exceeds max_unavailable


def test_nodes_already_out_go_first_together_and_the_canary_still_goes_alone():
    todo = [st("a", plan.FAILED), st("b", plan.RELOAD), st("c", unschedulable=True)] + [st("n%d" % i) for i in range(3)]
    waves, slots, down = plan.plan_waves(todo, todo, 1, 3)
    # c stays cordoned after its roll (it was cordoned before): one slot less for the fresh nodes.
    assert names(waves) == [["a", "b", "c"], ["n0"], ["n1", "n2"]] and slots == 2 and down == []


def test_max_unavailable_counts_every_gpu_node_that_stays_out():
    states = [
        st("a"),
        st("b"),
        st("down", reachable=False),
        st("cordoned", unschedulable=True),
        st("old", reachable=False),
    ]
    todo = [states[0], states[1], states[4]]  # "old" needs a roll but is NotReady: it stays out, unrolled
    waves, slots, down = plan.plan_waves(states, todo, 1, 4)
    assert down == ["cordoned", "down", "old"] and slots == 1 and names(waves) == [["a"], ["b"]]
    assert plan.plan_waves(states, todo, 1, 3)[0] == [] and plan.plan_waves(states, todo, 1, 3)[1] == 0


def test_a_node_resumes_from_its_stage_and_a_loading_driver_is_left_alone():
    ready = pod("d", "gpu-1", "driver", "new")
    loading = pod("d", "gpu-1", "driver", "new", ready=False)
    crashing = pod("d", "gpu-1", "driver", "new", ready=False)
    crashing["status"]["containerStatuses"] = [{"restartCount": 4}]
    old = pod("d", "gpu-1", "driver", "old")

    def state(stage, p, current):
        return {"stage": stage, "pod": p, "current": current}

    assert plan.start_stage(state(plan.FAILED, ready, True)) == plan.VALIDATE
    assert plan.start_stage(state(plan.VALIDATE, loading, True)) == plan.RELOAD
    assert plan.start_stage(state(plan.RELOAD, old, False)) == plan.RELOAD
    assert plan.start_stage(state(plan.FAILED, old, False)) == plan.DRAIN
    assert plan.start_stage(state(None, old, False)) == plan.DRAIN
    assert plan.replace_driver(state(None, old, False))
    assert not plan.replace_driver(state(plan.RELOAD, loading, True))
    assert plan.replace_driver(state(plan.RELOAD, crashing, True))
    assert not plan.replace_driver(state(None, None, False))


def test_gpu_clients_are_the_namespace_the_collection_operands_and_gpu_daemonsets():
    mine = ds("plugin")
    elsewhere = dict(
        ds("exporter"),
        metadata={"name": "exporter", "namespace": "monitoring", "labels": {plan.OWNER_LABEL: "monitoring"}},
    )
    gpu_ds = dict(ds("burn"), metadata={"name": "burn", "namespace": "jobs"})
    gpu_ds["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
    system = dict(ds("dns"), metadata={"name": "dns", "namespace": "openshift-dns"})
    clients = plan.gpu_clients([ds("driver"), mine, elsewhere, gpu_ds, system], "ns", {"driver"})
    assert [plan.ds_key(d) for d in clients] == ["ns/plugin", "monitoring/exporter", "jobs/burn"]


def test_max_unavailable_numbers_and_percentages():
    assert plan.parse_max_unavailable(1, 4) == 1
    assert plan.parse_max_unavailable("25%", 4) == 1
    assert plan.parse_max_unavailable("30%", 10) == 3
    assert plan.parse_max_unavailable("1%", 3) == 1
    for bad in (0, "0", "-1", "101%", "two", "1.5"):
        with pytest.raises(GpuopsError) as err:
            plan.parse_max_unavailable(bad, 4)
        assert err.value.param == "max_unavailable"


def test_patches_keep_what_the_node_was_and_are_empty_when_nothing_changes():
    fresh = node("gpu-1")
    assert plan.mark_patch(fresh, plan.DRAIN) == {
        "metadata": {"labels": {plan.STATE_LABEL: "drain"}},
        "spec": {"unschedulable": True},
    }
    cordoned = node("gpu-1", unschedulable=True)
    assert plan.mark_patch(cordoned, plan.DRAIN)["metadata"]["annotations"] == {plan.ANN_UNSCHEDULABLE: "true"}
    draining = node("gpu-1", {plan.STATE_LABEL: "drain"}, unschedulable=True)
    assert plan.mark_patch(draining, plan.DRAIN) is None
    assert plan.mark_patch(draining, plan.FAILED, "x" * 2000)["metadata"]["annotations"][plan.ANN_FAILURE] == "x" * 1000
    assert plan.finish_patch(draining) == {
        "metadata": {"labels": {plan.STATE_LABEL: None}},
        "spec": {"unschedulable": None},
    }
    was = node(
        "gpu-1", {plan.STATE_LABEL: "validate"}, unschedulable=True, annotations={plan.ANN_UNSCHEDULABLE: "true"}
    )
    assert plan.finish_patch(was) == {
        "metadata": {"labels": {plan.STATE_LABEL: None}, "annotations": {plan.ANN_UNSCHEDULABLE: None}}
    }
    assert plan.finish_patch(fresh) is None


def test_table_shows_the_driver_tags():
    rows = [{"node": "gpu-1", "result": "upgraded", "image_before": "nvcr.io/nvidia/driver:570.1-rhcos4.16",
             "image_after": "nvcr.io/nvidia/driver:580.2-rhcos4.16", "seconds": 41.2}]  # fmt: skip
    lines = plan.table(rows)
    assert lines[0].split() == ["node", "result", "driver", "before", "driver", "after", "seconds", "note"]
    assert lines[1].split() == ["gpu-1", "upgraded", "570.1-rhcos4.16", "580.2-rhcos4.16", "41"]


BASE = {"namespace": "gpu", "node_names": None, "assume_outdated": False, "canary": 1, "drain_timeout": 300, "wait_timeout": None, "wait_sleep": 5,
        "validate": True, "validate_checks": ["allocatable", "driver", "vectoradd"], "validate_options": {},
        "driver_selector": "app=d", "max_unavailable": 1, "delete_after_timeout": False, "verify_checks": []}  # fmt: skip


@pytest.mark.parametrize(
    "change, param, words",
    [
        ({"namespace": "Bad_NS"}, "namespace", "namespace"),
        ({"canary": -1}, "canary", "0 (no canary)"),
        ({"drain_timeout": 0}, "drain_timeout", "seconds"),
        ({"wait_timeout": 5}, "wait_timeout", "at least 10"),
        ({"validate_options": {"pin": "affinity"}}, "validate_options", "sets pin"),
        ({"validate_options": {"bogus": 1}}, "validate_options", "not an option of gpuops.cluster.gpu_validate"),
        ({"validate_options": {"run_as_user": "root"}}, "validate_options", "run_as_user"),
        ({"validate_options": {"vectoradd_image": "https://x/y"}}, "validate_options", "vectoradd_image"),
        ({"validate_checks": []}, "validate_checks", "is empty"),
    ],
)
def test_bad_options_are_named_before_anything_is_read(change, param, words):
    with pytest.raises(GpuopsError) as err:
        check_params(dict(BASE, **change))
    assert err.value.param == param and words in str(err.value), str(err.value)


def test_good_options_pass_and_default_the_wait():
    cfg = check_params(dict(BASE, validate_options={"run_as_user": "1000", "runtime_class_name": "nvidia"}))
    assert cfg["wait_timeout"] == 1260


def test_verify_checks_run_on_the_nodes_back_in_service_with_the_validation_options():
    cfg = check_params(dict(BASE, verify_checks=["driver"], validate_options={"runtime_class_name": "nvidia"}))
    params = verify_params(cfg, ["gpu-1", "gpu-2"])
    assert params["checks"] == ["driver"] and params["node_names"] == ["gpu-1", "gpu-2"]
    # Placed as gpu_validate places pods by default: the nodes are uncordoned again.
    assert params["pin"] == "affinity" and params["runtime_class_name"] == "nvidia"
    assert (params["driver_namespace"], params["driver_selector"], params["fail_on_error"]) == ("gpu", "app=d", False)
    # A wave's validation still pins its cordoned node.
    wave = validation_params(cfg, ["gpu-1"])
    assert wave["pin"] == "nodeName" and wave["checks"] == ["allocatable", "driver", "vectoradd"]


def test_verify_checks_are_checked_with_the_validation_options_before_any_write():
    # The waves' checks accept these options; a burn-in in verify_checks needs a longer wait.
    check_params(dict(BASE, validate_options={"wait_timeout": 60}))
    with pytest.raises(GpuopsError) as err:
        check_params(dict(BASE, verify_checks=["burnin"], validate_options={"wait_timeout": 60}))
    assert err.value.param == "validate_options" and "too short for a level 2 burn-in" in str(err.value)
