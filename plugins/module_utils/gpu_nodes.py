# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What a GPU node is, and which nodes a module works on: one definition for every module.

A node is a GPU node when Node Feature Discovery marked an NVIDIA PCI device
(vendor 0x10de) on it. NFD writes that as one of three labels, depending on
its ``deviceLabelFields`` setting: vendor only (``pci-10de``, Red Hat's NFD and
the GPU Operator's NFD values), class + vendor for 3D controllers
(``pci-0302_10de``, upstream NFD's default) or for VGA controllers
(``pci-0300_10de``). The GPU Operator accepts any of them
(gpu-operator controllers/state_manager.go ``gpuNodeLabels``), and so do we.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.kube import label_selector, list_items

NFD_PREFIX = "feature.node.kubernetes.io/"
NVIDIA_PCI_LABELS = (
    NFD_PREFIX + "pci-10de.present",
    NFD_PREFIX + "pci-0302_10de.present",
    NFD_PREFIX + "pci-0300_10de.present",
)


def is_gpu_node(labels):
    """True when NFD marked the node (its labels) as carrying an NVIDIA PCI device."""
    labels = labels or {}
    return any(str(labels.get(key, "")).lower() == "true" for key in NVIDIA_PCI_LABELS)


def node_labels(node):
    return ((node or {}).get("metadata") or {}).get("labels") or {}


def matches(labels, node_selector):
    """True when ``labels`` carry every key of ``node_selector`` with its value."""
    return all(str(labels.get(k)) == str("" if v is None else v) for k, v in (node_selector or {}).items())


def select_gpu_nodes(nodes, node_selector=None, node_names=None):
    """The GPU nodes among ``nodes`` (API dicts), sorted by name.

    With a ``node_selector`` the nodes must carry every label of it (the caller
    usually also gave it to the server); without one, a node is a GPU node when
    ``is_gpu_node``. ``node_names`` restricts the result further.
    """
    selected = []
    for node in nodes:
        labels = node_labels(node)
        if node_selector:
            if not matches(labels, node_selector):
                continue
        elif not is_gpu_node(labels):
            continue
        if node_names and node["metadata"]["name"] not in node_names:
            continue
        selected.append(node)
    return sorted(selected, key=lambda n: n["metadata"]["name"])


def gpu_label_selectors(selector=None, gpu_label=None):
    """One server-side label selector per form of the GPU label, each ANDed with ``selector``.

    A label selector cannot say "any of these labels", so reading only the GPU
    nodes takes one list per form (three, or one for a ``gpu_label`` of the
    user's own); the union of the answers is the GPU nodes. On 1,000 nodes with
    100 GPU nodes that is 100 nodes read instead of 1,000.
    """
    keys = (gpu_label,) if gpu_label else NVIDIA_PCI_LABELS
    return [",".join(term for term in (selector, key + "=true") if term) for key in keys]


def union_by_name(*lists):
    """The objects of ``lists`` once each (by name), sorted by name."""
    by_name = {}
    for items in lists:
        for obj in items:
            by_name[obj["metadata"]["name"]] = obj
    return [by_name[name] for name in sorted(by_name)]


def list_union(client, resource, selectors, param=None):
    """The objects matching any of ``selectors`` (one list request each) as plain dicts, once each, by name."""
    return union_by_name(*[list_items(client, resource, label_selector=s, param=param) for s in selectors])


def list_gpu_nodes(client, resource, selector=None, gpu_label=None, param=None):
    """The GPU nodes as plain dicts, sorted by name, read server-side (``gpu_label_selectors``)."""
    return list_union(client, resource, gpu_label_selectors(selector, gpu_label), param)


def describe_selection(node_selector=None, node_names=None):
    """Human wording of a node selection, for messages ("nodes labelled ... named ...")."""
    if node_selector:
        what = "nodes labelled {0}".format(label_selector(node_selector))
    else:
        what = "nodes labelled {0}=true".format(" or ".join(NVIDIA_PCI_LABELS))
    if node_names:
        what += " named {0}".format(", ".join(node_names))
    return what


def missing_names(nodes, node_names):
    """The names in ``node_names`` that no listed node has (typos, deleted nodes)."""
    known = set(n["metadata"]["name"] for n in nodes)
    return [n for n in node_names or [] if n not in known]
