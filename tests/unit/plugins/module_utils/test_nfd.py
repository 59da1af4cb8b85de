# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd import facts as F
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd import params as P
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd import plan as L
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.nfd_fixtures import (
    A100_MIG_MIXED,
    CLASS_3D_LABEL,
    GPU_LABEL_FORMS,
    SEED_004,
    T4_TIME_SLICED,
    VENDOR_LABEL,
    node,
    with_gpu_label,
)

# ---------------------------------------------------------------- NFD / GFD parsing


def test_node_facts_of_a_t4_node():
    facts = F.node_facts(node("n1", SEED_004, allocatable=1))
    assert facts["gpu"] is True and facts["ready"] is True
    assert facts["kernel_version"] == "4.18.0-193.29.1.el8_2.x86_64"
    assert facts["kernel"] == {"full": "4.18.0-193.29.1.el8_2.x86_64", "major": "4", "minor": "18", "revision": "0"}
    assert facts["os_release"] == {"ID": "rhcos", "VERSION_ID": "4.6", "VERSION_ID.major": "4", "VERSION_ID.minor": "6"}
    assert facts["gfd"] == {
        "present": True,
        "product": "Tesla-T4",
        "count": 1,
        "memory": 15109,
        "family": "turing",
        "compute_capability": "7.5",
        "cuda_driver": "450.80.02",
        "cuda_runtime": "11.0",
        "machine": "g4dn.xlarge",
    }
    assert facts["instance_type"] == "g4dn.xlarge" and facts["zone"] == "us-east-2a"
    assert facts["allocatable_gpus"] == 1
    assert facts["container_runtime"] is None  # the fixture's node has no nodeInfo
    with_runtime = node("n2", SEED_004)
    with_runtime["status"]["nodeInfo"] = {"containerRuntimeVersion": "cri-o://1.29.5"}
    assert F.node_facts(with_runtime)["container_runtime"] == "cri-o://1.29.5"


def test_node_facts_newer_gfd_labels():
    labels = {
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A10G",
        "nvidia.com/cuda.driver-version.full": "550.54.15",
        "nvidia.com/cuda.runtime-version.full": "12.4",
    }
    gfd = F.node_facts(node("n", labels))["gfd"]
    assert gfd["cuda_driver"] == "550.54.15" and gfd["cuda_runtime"] == "12.4" and gfd["count"] is None


def test_node_facts_without_nfd():
    facts = F.node_facts(node("plain", {"kubernetes.io/os": "linux"}, ready=False))
    assert facts["gpu"] is False and facts["ready"] is False
    assert facts["kernel_version"] is None and facts["gfd"] == {} and facts["os_release"] == {}
    assert facts["allocatable_gpus"] is None


def test_gpu_label_must_be_true():
    assert F.node_facts(node("n", {VENDOR_LABEL: "false"}))["gpu"] is False
    assert F.node_facts(node("n", {"custom/gpu": "true"}), gpu_label="custom/gpu")["gpu"] is True


@pytest.mark.parametrize("form", GPU_LABEL_FORMS)
def test_every_nfd_label_form_is_a_gpu_node(form):
    """Before: only pci-10de.present counted, so pci-0302_10de / pci-0300_10de nodes were no GPU nodes."""
    labels = with_gpu_label(SEED_004, form)
    facts = F.node_facts(node("g", labels))
    assert facts["gpu"] is True
    out = F.summarize([facts, F.node_facts(node("cpu", {"kubernetes.io/os": "linux"}))])
    assert out["gpu_nodes"] == ["g"] and out["summary"]["gpu_nodes"] == 1
    done, msg = F.wait_status([facts], {"gpu_nodes": 1})
    assert done and "1/1 nodes labelled" in msg


def test_gpu_label_given_overrides_the_nfd_forms():
    labels = with_gpu_label(SEED_004, CLASS_3D_LABEL)
    assert F.node_facts(node("g", labels), gpu_label=VENDOR_LABEL)["gpu"] is False
    assert F.node_facts(node("g", labels), gpu_label=CLASS_3D_LABEL)["gpu"] is True
    facts = [F.node_facts(node("g", labels), gpu_label="custom/gpu")]
    done, msg = F.wait_status(facts, {"gpu_nodes": 1}, gpu_label="custom/gpu")
    assert not done and "custom/gpu=true" in msg


def test_gfd_facts_mig_mixed():
    gfd = F.node_facts(node("a100", A100_MIG_MIXED))["gfd"]
    assert gfd["product"] == "NVIDIA-A100-SXM4-40GB" and gfd["count"] == 8
    assert gfd["mig_capable"] is True and gfd["mig_strategy"] == "mixed"
    assert gfd["mig_devices"] == {"1g.5gb": 14, "3g.20gb": 2}
    assert "replicas" not in gfd and "sharing_strategy" not in gfd


def test_gfd_facts_time_slicing():
    gfd = F.node_facts(node("t4", T4_TIME_SLICED))["gfd"]
    assert gfd["replicas"] == 4 and gfd["sharing_strategy"] == "time-slicing"
    assert gfd["mig_capable"] is False and "mig_strategy" not in gfd and "mig_devices" not in gfd


def test_summarize_groups_gpu_nodes_by_kernel_and_os():
    k1 = dict(SEED_004)
    k2 = dict(SEED_004)
    k2["feature.node.kubernetes.io/kernel-version.full"] = "4.18.0-193.41.1.el8_2.x86_64"
    k2["feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"] = "46.82.202105191328-0"
    facts = [
        F.node_facts(n)
        for n in (
            node("b", k1),
            node("a", k1),
            node("c", k2),
            node("cpu", {"feature.node.kubernetes.io/kernel-version.full": "x"}),
        )
    ]
    out = F.summarize(facts)
    assert out["gpu_nodes"] == ["a", "b", "c"]
    assert out["kernel_versions"] == {"4.18.0-193.29.1.el8_2.x86_64": ["a", "b"], "4.18.0-193.41.1.el8_2.x86_64": ["c"]}
    assert out["os_versions"] == {"rhcos-4.6": ["a", "b"], "46.82.202105191328-0": ["c"]}
    assert out["summary"] == {
        "nodes": 4,
        "gpu_nodes": 3,
        "gfd_nodes": 3,
        "products": {"Tesla-T4": 3},
        "kernel_versions": 2,
    }


def test_summarize_unknown_kernel():
    out = F.summarize([F.node_facts(node("g", {VENDOR_LABEL: "true"}))])
    assert out["kernel_versions"] == {"unknown": ["g"]}
    assert out["summary"]["gfd_nodes"] == 0


def test_wait_status():
    facts = [
        F.node_facts(node("a", SEED_004)),
        F.node_facts(node("b", {VENDOR_LABEL: "true"})),
        F.node_facts(node("c")),
    ]
    done, msg = F.wait_status(facts, {"gpu_nodes": 2})
    assert done and "2/2 nodes labelled" in msg and "(3 nodes seen)" in msg
    done, msg = F.wait_status(facts, {"gpu_nodes": 3})
    assert not done and "2/3" in msg
    done, msg = F.wait_status(facts, {"gpu_nodes": 2, "gfd_nodes": 2})
    assert not done and "1/2 GPU nodes with nvidia.com/gpu.product" in msg


# ---------------------------------------------------------------- planning label changes


def test_plan_only_nodes_that_differ():
    nodes = [node("a", {"x": "1"}), node("b", {"x": "2"}), node("c", {"x": "1", "y": "old"})]
    changes = L.desired_changes({"x": "1", "y": None}, "present")
    planned = L.plan(nodes, changes)
    assert [(n, p) for n, p, dummy in planned] == [("b", {"x": "1"}), ("c", {"y": None})]


def test_plan_absent_removes_only_existing_keys():
    nodes = [node("a", {"x": "1"}), node("b", {})]
    planned = L.plan(nodes, L.desired_changes({"x": "ignored"}, "absent"))
    assert [(n, p) for n, p, dummy in planned] == [("a", {"x": None})]


def test_plan_is_empty_when_converged():
    nodes = [node(str(i), {"role": "gpu"}) for i in range(500)]
    assert L.plan(nodes, {"role": "gpu"}) == []


def test_apply_labels_and_diff():
    n = node("a", {"x": "1", "y": "old"})
    patch = {"x": "2", "y": None, "z": ""}
    new = L.apply_labels(n, patch)
    assert new["metadata"]["labels"] == {"x": "2", "z": ""}
    assert n["metadata"]["labels"] == {"x": "1", "y": "old"}  # not mutated
    diff = L.label_diff([("a", patch, n["metadata"]["labels"])])
    assert diff == [
        {
            "before_header": "Node a",
            "after_header": "Node a",
            "before": {"metadata": {"name": "a", "labels": {"x": "1", "y": "old"}}},
            "after": {"metadata": {"name": "a", "labels": {"x": "2", "z": ""}}},
        }
    ]
    assert L.label_diff([]) == []


def test_select_by_names_reports_missing():
    nodes = [node("a"), node("b")]
    selected, missing = L.select(nodes, ["b", "zz"])
    assert [n["metadata"]["name"] for n in selected] == ["b"] and missing == ["zz"]
    assert L.select(nodes, None) == (nodes, [])


# ---------------------------------------------------------------- parameters


def params(**kw):
    base = {
        "labels": None,
        "state": "present",
        "node_selector": {},
        "label_selectors": None,
        "node_names": None,
        "gpu_label": None,
        "gpu_nodes_only": False,
        "wait_for": None,
        "wait_timeout": None,
        "wait_sleep": 5,
        "parallel": 16,
    }
    base.update(kw)
    return base


def test_check_params_read_only_ok():
    plan = P.check_params(params())
    assert plan["changes"] == {} and plan["wait_for"] == {} and plan["selector"] is None
    assert plan["wait_timeout"] == 300  # args.WAIT_TIMEOUTS["nfd_labels"]


def test_check_params_wait_for_drops_unset():
    plan = P.check_params(params(wait_for={"gpu_nodes": 3, "gfd_nodes": None}))
    assert plan["wait_for"] == {"gpu_nodes": 3}


def test_selector_from_dict_and_label_selectors():
    plan = P.check_params(
        params(
            node_selector={VENDOR_LABEL: True, "node-role.kubernetes.io/worker": ""},
            label_selectors=["!gpuops.io/pool", "kubernetes.io/arch in (amd64,arm64)"],
        )
    )
    assert plan["selector"] == (
        VENDOR_LABEL + "=true,node-role.kubernetes.io/worker=,!gpuops.io/pool,kubernetes.io/arch in (amd64,arm64)"
    )
    assert plan["selector_param"] == "node_selector"
    plan = P.check_params(params(label_selectors=["node-role.kubernetes.io/worker"], labels={"a": "b"}))
    assert plan["selector"] == "node-role.kubernetes.io/worker" and plan["selector_param"] == "label_selectors"


def test_gpu_nodes_only_reads_one_list_per_gpu_label_form():
    plan = P.check_params(params())
    assert plan["selectors"] == [None] and plan["gpu_only"] is False
    plan = P.check_params(params(gpu_nodes_only=True, node_selector={"node-role.kubernetes.io/worker": ""}))
    assert plan["gpu_only"] is True
    assert plan["selectors"] == [
        "node-role.kubernetes.io/worker=," + key + "=true"
        for key in (
            "feature.node.kubernetes.io/pci-10de.present",
            "feature.node.kubernetes.io/pci-0302_10de.present",
            "feature.node.kubernetes.io/pci-0300_10de.present",
        )
    ]
    assert P.check_params(params(gpu_nodes_only=True, gpu_label="example.com/gpu"))["selectors"] == [
        "example.com/gpu=true"
    ]
    # the GPU nodes are an explicit enough selection to label
    plan = P.check_params(params(gpu_nodes_only=True, labels={"gpuops.io/pool": "gpu"}))
    assert plan["changes"] == {"gpuops.io/pool": "gpu"} and plan["selector"] is None


@pytest.mark.parametrize(
    "kw,param,fragment",
    [
        (dict(labels={"bad key": "x"}), "labels", "bad key"),
        (dict(labels={"a": "x"}), "node_selector", "explicit set of nodes"),
        (dict(state="absent", labels={}, node_selector={"a": "b"}), "labels", "list the label keys"),
        (dict(node_names=[]), "node_names", "is empty"),
        (dict(node_names=["Bad_Name"]), "node_names", "'Bad_Name'"),
        (dict(label_selectors=["  "]), "label_selectors", "empty selector"),
        (dict(node_selector={"Bad Key": "x"}), "node_selector", "Bad Key"),
        (dict(wait_for={"gpu_nodes": 1}, wait_timeout=0), "wait_timeout", "too small"),
        (dict(wait_for={"gpu_nodes": 1}, wait_timeout=3, wait_sleep=5), "wait_timeout", "at least wait_sleep"),
        (dict(wait_for={"gpu_nodes": -1}), "wait_for.gpu_nodes", "0 or more"),
        (dict(wait_sleep=0), "wait_sleep", "at least 1"),
        (dict(parallel=0), "parallel", "between 1 and 100"),
        (dict(gpu_label="not a key"), "gpu_label", "invalid label key"),
        (dict(gpu_label=""), "gpu_label", "invalid label key"),
    ],
)
def test_check_params_errors(kw, param, fragment):
    with pytest.raises(GpuopsError) as exc:
        P.check_params(params(**kw))
    assert exc.value.param == param
    assert fragment in str(exc.value)
    assert str(exc.value).startswith(param + ":")
