# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""nfd_labels: which label changes which nodes need, and the diff that shows them.

Pure functions. A planned change is ``(node name, merge-patch labels, current
labels)``; a label set to None in the patch is removed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import node_labels
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import diff_entry, name_of


def desired_changes(labels, state):
    """key -> value (None = remove) that the nodes must end up with."""
    if state == "absent":
        return dict((key, None) for key in labels)
    return dict(labels)


def plan_node(node, changes):
    """The merge-patch labels one node needs: {key: value-or-None}; {} when none."""
    current = node_labels(node)
    patch = {}
    for key, value in changes.items():
        if value is None:
            if key in current:
                patch[key] = None
        elif current.get(key) != value:
            patch[key] = value
    return patch


def plan(nodes, changes):
    """[(node name, patch labels, current labels)] for the nodes that need a patch."""
    result = []
    for node in nodes:
        patch = plan_node(node, changes)
        if patch:
            result.append((name_of(node), patch, dict(node_labels(node))))
    return result


def apply_labels(node, patch):
    """A copy of ``node`` with the label merge patch applied (check mode prediction)."""
    new = copy.deepcopy(node)
    labels = new.setdefault("metadata", {}).setdefault("labels", {})
    for key, value in patch.items():
        if value is None:
            labels.pop(key, None)
        else:
            labels[key] = value
    return new


def label_diff(planned):
    """The collection's diff shape: one before/after entry per changed node, changed keys only."""
    entries = []
    for name, patch, current in planned:
        before = dict((k, current[k]) for k in sorted(patch) if k in current)
        after = dict((k, v) for k, v in sorted(patch.items()) if v is not None)
        entry = diff_entry(
            "Node {0}".format(name),
            {"metadata": {"name": name, "labels": before}},
            {"metadata": {"name": name, "labels": after}},
        )
        if entry:
            entries.append(entry)
    return entries


def select(nodes, node_names=None):
    """Keep ``node_names`` (in that order) from the listed nodes; report missing ones."""
    if not node_names:
        return list(nodes), []
    by_name = dict((name_of(n), n) for n in nodes)
    selected = [by_name[name] for name in node_names if name in by_name]
    missing = [name for name in node_names if name not in by_name]
    return selected, missing


def merge_nodes(nodes, planned, updated):
    """The node list after the patches: the server's reply, else the predicted node (check mode)."""
    patches = dict((name, patch) for name, patch, dummy in planned)
    result = []
    for node in nodes:
        name = name_of(node)
        if name in patches:
            result.append(updated.get(name) or apply_labels(node, patches[name]))
        else:
            result.append(node)
    return result
