# -*- coding: utf-8 -*-
"""nfd_labels through main(): facts, batched labelling, check mode, diff, idempotence, zero writes on errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import kube
from ansible_collections.gpuops.cluster.plugins.modules import nfd_labels
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.nfd_fixtures import (
    CLASS_3D_LABEL,
    GPU_LABEL_FORMS,
    SEED_004,
    VENDOR_LABEL,
    node,
    with_gpu_label,
)
from ansible_collections.gpuops.cluster.tests.unit.plugins.modules.fake_k8s import FakeClient, run

GPU_SEL = {VENDOR_LABEL: "true"}


def cluster(gpu=3, cpu=2, gpu_labels=None):
    nodes = [node("gpu-{0}".format(i), SEED_004 if gpu_labels is None else gpu_labels) for i in range(gpu)]
    nodes += [node("cpu-{0}".format(i), {"kubernetes.io/os": "linux"}) for i in range(cpu)]
    return FakeClient(nodes)


def go(monkeypatch, client, check=False, diff=False, **args):
    return run(monkeypatch, nfd_labels.main, client, args, check=check, diff=diff)


def labels_of(client, name):
    return [n for n in client.objects("Node") if n["metadata"]["name"] == name][0]["metadata"]["labels"]


def test_read_facts(monkeypatch):
    client = cluster()
    result, failed = go(monkeypatch, client)
    assert not failed, result
    assert result["changed"] is False and client.writes == []
    assert result["gpu_nodes"] == ["gpu-0", "gpu-1", "gpu-2"]
    assert result["kernel_versions"] == {"4.18.0-193.29.1.el8_2.x86_64": ["gpu-0", "gpu-1", "gpu-2"]}
    assert result["summary"]["nodes"] == 5 and result["summary"]["products"] == {"Tesla-T4": 3}
    assert result["ansible_facts"]["gpuops_nfd"]["gpu_nodes"] == result["gpu_nodes"]
    gpu0 = [n for n in result["nodes"] if n["name"] == "gpu-0"][0]
    assert gpu0["gfd"]["product"] == "Tesla-T4" and gpu0["os_release"]["ID"] == "rhcos"


def test_label_then_idempotent(monkeypatch):
    client = cluster()
    args = dict(node_selector=GPU_SEL, labels={"node-role.kubernetes.io/gpu": "", "gpuops.io/pool": "a"})
    result, failed = go(monkeypatch, client, **args)
    assert not failed, result
    assert result["changed"] is True and result["changed_nodes"] == ["gpu-0", "gpu-1", "gpu-2"]
    assert sorted(w[2] for w in client.writes) == ["gpu-0", "gpu-1", "gpu-2"]
    assert {w[0] for w in client.writes} == {"patch"}
    assert labels_of(client, "gpu-1")["gpuops.io/pool"] == "a"
    assert "gpuops.io/pool" not in labels_of(client, "cpu-0")
    client.writes = []
    result, failed = go(monkeypatch, client, **args)
    assert not failed and result["changed"] is False and client.writes == [] and result["changed_nodes"] == []


def test_only_nodes_that_differ_are_patched(monkeypatch):
    client = cluster()
    go(monkeypatch, client, node_names=["gpu-0"], labels={"gpuops.io/pool": "a"})
    client.writes = []
    result, failed = go(monkeypatch, client, node_selector=GPU_SEL, labels={"gpuops.io/pool": "a"})
    assert not failed and sorted(w[2] for w in client.writes) == ["gpu-1", "gpu-2"]


def test_check_mode_and_diff(monkeypatch):
    client = cluster()
    labels_of_before = labels_of(client, "gpu-0")
    result, failed = go(
        monkeypatch,
        client,
        check=True,
        diff=True,
        node_names=["gpu-0", "cpu-0"],
        labels={"gpuops.io/pool": "b", VENDOR_LABEL: None},
    )
    assert not failed, result
    assert client.writes == [] and labels_of(client, "gpu-0") == labels_of_before
    assert result["changed"] is True and result["changed_nodes"] == ["cpu-0", "gpu-0"]
    diff = dict((entry["before_header"], entry) for entry in result["diff"])
    assert sorted(diff) == ["Node cpu-0", "Node gpu-0"]
    assert diff["Node gpu-0"]["before"]["metadata"]["labels"] == {VENDOR_LABEL: "true"}
    assert diff["Node gpu-0"]["after"]["metadata"]["labels"] == {"gpuops.io/pool": "b"}
    assert diff["Node cpu-0"]["after"]["metadata"]["labels"] == {"gpuops.io/pool": "b"}
    # facts show the predicted state: gpu-0 would lose its GPU label
    assert result["gpu_nodes"] == []


def test_absent_removes(monkeypatch):
    client = cluster()
    go(monkeypatch, client, node_selector=GPU_SEL, labels={"gpuops.io/pool": "a"})
    client.writes = []
    result, failed = go(monkeypatch, client, state="absent", node_selector=GPU_SEL, labels={"gpuops.io/pool": None})
    assert not failed and result["changed"] is True and len(client.writes) == 3
    assert "gpuops.io/pool" not in labels_of(client, "gpu-2")
    client.writes = []
    result, failed = go(monkeypatch, client, state="absent", node_selector=GPU_SEL, labels={"gpuops.io/pool": None})
    assert result["changed"] is False and client.writes == []


@pytest.mark.parametrize(
    "args,param,fragment",
    [
        (dict(node_selector={"gpuops.io/none": "true"}, labels={"a": "b"}), "node_selector", "matches no Node"),
        (
            dict(label_selectors=["!" + VENDOR_LABEL, "gpuops.io/none"], labels={"a": "b"}),
            "label_selectors",
            "matches no Node",
        ),
        (dict(node_names=["gpu-0", "ghost"], labels={"a": "b"}), "node_names", "ghost"),
        (dict(node_selector=GPU_SEL, labels={"Bad_Prefix/x": "1"}), "labels", "Bad_Prefix/x"),
        (dict(node_selector=GPU_SEL, labels={"x": "y" * 64}), "labels", "63"),
        (dict(labels={"x": "1"}), "node_selector", "explicit set of nodes"),
        (dict(wait_for={"gpu_nodes": 3}, wait_timeout=1), "wait_timeout", "too small"),
        (dict(node_selector=GPU_SEL, labels={"x": "1"}, parallel=0), "parallel", "between 1 and 100"),
        (dict(state="absent", node_selector=GPU_SEL, labels={}), "labels", "list the label keys"),
    ],
)
def test_bad_input_fails_naming_parameter_and_writes_nothing(monkeypatch, args, param, fragment):
    client = cluster()
    result, failed = go(monkeypatch, client, **args)
    assert failed, result
    assert result["param"] == param and result["msg"].startswith(param + ":"), result["msg"]
    assert fragment in result["msg"]
    assert client.writes == []


def test_wait_for_nfd(monkeypatch):
    client = cluster(gpu=0, cpu=0)
    for i in range(2):
        client.put(node("new-{0}".format(i), {}))

    def nfd(client_, resource):
        # the simulated NFD labels one more node per read
        for n in client_.objects("Node"):
            if VENDOR_LABEL not in n["metadata"]["labels"]:
                n["metadata"]["labels"].update(SEED_004)
                client_.put(n)
                return

    client.on_get = nfd
    result, failed = go(monkeypatch, client, wait_for={"gpu_nodes": 2}, wait_sleep=1, wait_timeout=10)
    assert not failed, result
    assert result["gpu_nodes"] == ["new-0", "new-1"]
    assert any("2/2 nodes labelled" in line for line in result["progress"])
    assert client.writes == []


def test_wait_for_timeout(monkeypatch):
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s import waiter

    class Clock(object):
        now = 0.0

        def monotonic(self):
            return self.now

        def sleep(self, seconds):
            self.now += seconds

    clock = Clock()
    monkeypatch.setattr(waiter, "time", clock)
    monkeypatch.setattr(kube, "time", clock)  # kube.wait_backoff's own looks
    client = cluster(gpu=1)
    result, failed = go(monkeypatch, client, wait_for={"gpu_nodes": 4}, wait_sleep=5, wait_timeout=20)
    assert failed and result["param"] == "wait_timeout" and "1/4 nodes labelled" in result["msg"]
    assert result["progress"]


def test_node_deleted_while_labelling_is_a_warning(monkeypatch):
    client = cluster(gpu=2, cpu=0)
    original = client.patch

    def patch(resource, definition, name=None, **kw):
        if name == "gpu-1":
            client.store.pop(("Node", None, "gpu-1"))
        return original(resource, definition, name=name, **kw)

    client.patch = patch
    result, failed = go(monkeypatch, client, node_selector=GPU_SEL, labels={"x": "1"})
    assert not failed, result
    assert any("gpu-1" in w for w in result.get("warnings", []))


def test_many_nodes_single_list_call(monkeypatch):
    client = FakeClient([node("n-{0:03d}".format(i), SEED_004) for i in range(500)])
    result, failed = go(monkeypatch, client, node_selector=GPU_SEL, labels={"gpuops.io/batch": "1"})
    assert not failed and len(client.writes) == 500 and result["summary"]["nodes"] == 500
    assert client.reads == 1
    client.writes, client.reads = [], 0
    result, failed = go(monkeypatch, client, node_selector=GPU_SEL, labels={"gpuops.io/batch": "1"})
    assert client.writes == [] and client.reads == 1 and result["changed"] is False


def test_wait_for_skipped_in_check_mode(monkeypatch):
    client = cluster(gpu=0)
    result, failed = go(monkeypatch, client, check=True, wait_for={"gpu_nodes": 5}, wait_timeout=60, wait_sleep=1)
    assert not failed, result
    assert result["progress"] == ["t+0s wait_for skipped in check mode"]
    assert client.reads == 1 and client.writes == []


def test_state_absent_without_labels_is_refused_by_the_argument_spec(monkeypatch):
    client = cluster()
    result, failed = go(monkeypatch, client, state="absent", node_selector=GPU_SEL)
    assert failed and "state is absent but all of the following are missing: labels" in result["msg"], result
    assert client.writes == [] and client.reads == 0


@pytest.mark.parametrize("form", GPU_LABEL_FORMS)
def test_wait_for_counts_every_nfd_label_form(monkeypatch, form):
    """Before: wait_for gpu_nodes counted only pci-10de.present and timed out on class-qualified labels."""
    client = cluster(gpu=2, cpu=1, gpu_labels=with_gpu_label(SEED_004, form))
    result, failed = go(monkeypatch, client, wait_for={"gpu_nodes": 2}, wait_sleep=1, wait_timeout=2)
    assert not failed, result
    assert result["gpu_nodes"] == ["gpu-0", "gpu-1"] and result["summary"]["gpu_nodes"] == 2
    assert result["kernel_versions"] == {"4.18.0-193.29.1.el8_2.x86_64": ["gpu-0", "gpu-1"]}
    assert any("2/2 nodes labelled" in line for line in result["progress"])


def test_gpu_label_option_still_overrides(monkeypatch):
    client = cluster(gpu=2, cpu=1, gpu_labels=with_gpu_label(SEED_004, CLASS_3D_LABEL))
    result, failed = go(monkeypatch, client, gpu_label=VENDOR_LABEL)
    assert not failed and result["gpu_nodes"] == []
    result, failed = go(monkeypatch, client, gpu_label=CLASS_3D_LABEL)
    assert not failed and result["gpu_nodes"] == ["gpu-0", "gpu-1"]


def test_node_selector_string_of_an_older_playbook_still_works(monkeypatch):
    """node_selector was a kubectl string; equality selectors convert to the dict it is now."""
    client = cluster()
    client.put(node("cpu-9", {VENDOR_LABEL: "true"}))
    args = dict(node_selector=VENDOR_LABEL + "=true,gpuops.io/none=", labels={"gpuops.io/pool": "a"})
    result, failed = go(monkeypatch, client, **args)
    assert failed and result["param"] == "node_selector" and "matches no Node" in result["msg"]
    assert "gpuops.io/none=" in result["msg"] and client.writes == []
    result, failed = go(monkeypatch, client, node_selector=VENDOR_LABEL + "=true", labels={"gpuops.io/pool": "a"})
    assert not failed, result
    assert result["changed_nodes"] == ["cpu-9", "gpu-0", "gpu-1", "gpu-2"]


def test_label_selectors_for_existence_and_negation(monkeypatch):
    client = cluster()
    go(monkeypatch, client, node_names=["gpu-0"], labels={"gpuops.io/pool": "a"})
    client.writes = []
    result, failed = go(
        monkeypatch, client, label_selectors=[VENDOR_LABEL, "!gpuops.io/pool"], labels={"gpuops.io/pool": "b"}
    )
    assert not failed, result
    assert result["changed_nodes"] == ["gpu-1", "gpu-2"] and labels_of(client, "gpu-0")["gpuops.io/pool"] == "a"
