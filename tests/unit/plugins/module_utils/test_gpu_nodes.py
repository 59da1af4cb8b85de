# -*- coding: utf-8 -*-
"""One definition of a GPU node, for each label form NFD can produce."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import (
    NVIDIA_PCI_LABELS,
    describe_selection,
    gpu_label_selectors,
    is_gpu_node,
    missing_names,
    select_gpu_nodes,
    union_by_name,
)


def node(name, **labels):
    return {"metadata": {"name": name, "labels": labels}}


@pytest.mark.parametrize(
    "label",
    [
        "feature.node.kubernetes.io/pci-10de.present",  # deviceLabelFields: [vendor] (Red Hat NFD, GPU Operator)
        "feature.node.kubernetes.io/pci-0302_10de.present",  # [class, vendor], 3D controller (upstream default)
        "feature.node.kubernetes.io/pci-0300_10de.present",  # [class, vendor], VGA controller
    ],
)
def test_each_nfd_label_form_is_a_gpu_node(label):
    assert label in NVIDIA_PCI_LABELS
    assert is_gpu_node({label: "true"})
    assert [n["metadata"]["name"] for n in select_gpu_nodes([node("a", **{label: "true"}), node("b")])] == ["a"]


def test_not_gpu_nodes():
    assert not is_gpu_node({})
    assert not is_gpu_node(None)
    assert not is_gpu_node({"feature.node.kubernetes.io/pci-10de.present": "false"})
    # another vendor (AMD 0x1002) in the class-qualified form
    assert not is_gpu_node({"feature.node.kubernetes.io/pci-0300_1002.present": "true"})


def test_selector_replaces_the_gpu_definition_and_names_restrict():
    nodes = [
        node("b", role="gpu"),
        node("a", role="gpu"),
        node("c", **{"feature.node.kubernetes.io/pci-10de.present": "true"}),
    ]
    assert [n["metadata"]["name"] for n in select_gpu_nodes(nodes, {"role": "gpu"})] == ["a", "b"]
    assert [n["metadata"]["name"] for n in select_gpu_nodes(nodes, {"role": "gpu"}, ["b"])] == ["b"]
    assert missing_names(nodes, ["a", "zz"]) == ["zz"]


def test_empty_selector_value_matches_empty_label():
    nodes = [node("a", **{"node-role.kubernetes.io/gpu": ""}), node("b")]
    assert [n["metadata"]["name"] for n in select_gpu_nodes(nodes, {"node-role.kubernetes.io/gpu": ""})] == ["a"]


def test_describe_selection_names_every_label_form():
    text = describe_selection()
    assert all(label in text for label in NVIDIA_PCI_LABELS)
    assert describe_selection({"x": "y"}, ["n1"]) == "nodes labelled x=y named n1"


def test_gpu_label_selectors_one_per_form_anded_with_the_selection():
    assert gpu_label_selectors() == [key + "=true" for key in NVIDIA_PCI_LABELS]
    assert gpu_label_selectors("node-role.kubernetes.io/worker=") == [
        "node-role.kubernetes.io/worker=," + key + "=true" for key in NVIDIA_PCI_LABELS
    ]
    # a label of the user's own replaces the three NFD forms
    assert gpu_label_selectors("a=b", gpu_label="example.com/gpu") == ["a=b,example.com/gpu=true"]
    # every selector matches exactly the nodes is_gpu_node calls GPU nodes (value "true")
    for key, selector in zip(NVIDIA_PCI_LABELS, gpu_label_selectors()):
        assert is_gpu_node({key: "true"}) and selector.endswith(key + "=true")


def test_union_by_name_keeps_each_node_once_sorted():
    a, b, c = node("b-node", x="1"), node("a-node"), node("b-node", x="2")
    merged = union_by_name([a], [b, c], [])
    assert [n["metadata"]["name"] for n in merged] == ["a-node", "b-node"]
    assert merged[1]["metadata"]["labels"] == {"x": "2"}  # the later answer is the newer
    assert union_by_name() == []
