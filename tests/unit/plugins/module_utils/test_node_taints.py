# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_taints planning: append only what is missing, take back only what the marker records."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.node_taints import (
    MARKER,
    apply_ops,
    check_taints,
    plan_absent,
    plan_present,
    recorded,
)

GPU = {"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"}
CORDON = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-01-01T00:00:00Z"}


def node(taints=None, annotations=None, rv="7"):
    meta = {"name": "gpu-0", "resourceVersion": rv}
    if annotations is not None:
        meta["annotations"] = annotations
    spec = {} if taints is None else {"taints": taints}
    return {"metadata": meta, "spec": spec}


def test_present_appends_without_resending_other_taints():
    n = node([CORDON], {"a": "b"})
    ops, added = plan_present(n, [GPU])
    assert added == ["nvidia.com/gpu=:NoSchedule"]
    assert ops[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": "7"}
    assert ops[1] == {"op": "add", "path": "/spec/taints/-", "value": {"key": "nvidia.com/gpu", "effect": "NoSchedule"}}
    assert ops[2] == {"op": "add", "path": "/metadata/annotations/gpuops.cluster~1added-taints", "value": added[0]}
    # no op touches the cordon taint
    assert not any(op.get("value") == [CORDON] or op["path"] == "/spec/taints/0" for op in ops)
    taints, annotations = apply_ops(n, ops)
    assert taints == [CORDON, {"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    assert annotations == {"a": "b", MARKER: "nvidia.com/gpu=:NoSchedule"}


def test_present_on_a_node_without_taints_or_annotations():
    ops, dummy = plan_present(node(), [GPU])
    assert {"op": "add", "path": "/spec/taints", "value": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]} in ops
    assert {"op": "add", "path": "/metadata/annotations", "value": {MARKER: "nvidia.com/gpu=:NoSchedule"}} in ops


def test_present_when_already_there_sends_nothing_and_records_nothing():
    assert plan_present(node([CORDON, {"key": "nvidia.com/gpu", "effect": "NoSchedule"}]), [GPU]) == ([], [])


def test_present_with_another_value_is_a_conflict():
    with pytest.raises(GpuopsError, match="already carries nvidia.com/gpu=x:NoSchedule"):
        plan_present(node([{"key": "nvidia.com/gpu", "value": "x", "effect": "NoSchedule"}]), [GPU])


def test_absent_removes_only_what_the_marker_records():
    mine = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
    n = node([CORDON, mine], {MARKER: "nvidia.com/gpu=:NoSchedule"})
    ops, removed = plan_absent(n, [GPU])
    assert removed == ["nvidia.com/gpu=:NoSchedule"]
    assert {"op": "remove", "path": "/spec/taints/1"} in ops
    taints, annotations = apply_ops(n, ops)
    assert taints == [CORDON] and MARKER not in annotations


def test_absent_leaves_a_taint_it_did_not_add():
    n = node([{"key": "nvidia.com/gpu", "effect": "NoSchedule"}], {})
    assert plan_absent(n, [GPU]) == ([], [])


def test_absent_removes_in_reverse_index_order():
    other = {"key": "x", "value": "1", "effect": "NoExecute"}
    n = node([GPU, CORDON, other], {MARKER: "nvidia.com/gpu=:NoSchedule,x=1:NoExecute"})
    ops, dummy = plan_absent(n, [GPU, other])
    removes = [op["path"] for op in ops if op["op"] == "remove"]
    assert removes[:2] == ["/spec/taints/2", "/spec/taints/0"]
    assert apply_ops(n, ops)[0] == [CORDON]


def test_recorded_and_checks():
    assert recorded(node(annotations={MARKER: "a=:NoSchedule, b=c:NoExecute"})) == ["a=:NoSchedule", "b=c:NoExecute"]
    with pytest.raises(GpuopsError, match="^taints\\[0\\]: effect"):
        check_taints([{"key": "a", "effect": "Never"}])
    with pytest.raises(GpuopsError, match="listed twice"):
        check_taints([GPU, GPU])
    with pytest.raises(GpuopsError, match="is empty"):
        check_taints([])
