# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import labels as L
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError


def node(name, labels=None, ready=True, allocatable=None):
    obj = {
        "metadata": {"name": name, "labels": dict(labels or {})},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }
    if allocatable is not None:
        obj["status"]["allocatable"] = {"nvidia.com/gpu": str(allocatable)}
    return obj


# Labels from seed 004 (OpenShift 4.6 node with a T4, NFD + GFD).
SEED_004 = {
    "feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true",
    "feature.node.kubernetes.io/kernel-selinux.enabled": "true",
    "feature.node.kubernetes.io/kernel-version.full": "4.18.0-193.29.1.el8_2.x86_64",
    "feature.node.kubernetes.io/kernel-version.major": "4",
    "feature.node.kubernetes.io/kernel-version.minor": "18",
    "feature.node.kubernetes.io/kernel-version.revision": "0",
    "feature.node.kubernetes.io/pci-10de.present": "true",
    "feature.node.kubernetes.io/pci-1d0f.present": "true",
    "feature.node.kubernetes.io/system-os_release.ID": "rhcos",
    "feature.node.kubernetes.io/system-os_release.VERSION_ID": "4.6",
    "feature.node.kubernetes.io/system-os_release.VERSION_ID.major": "4",
    "feature.node.kubernetes.io/system-os_release.VERSION_ID.minor": "6",
    "nvidia.com/cuda.driver.major": "450",
    "nvidia.com/cuda.driver.minor": "80",
    "nvidia.com/cuda.driver.rev": "02",
    "nvidia.com/cuda.runtime.major": "11",
    "nvidia.com/cuda.runtime.minor": "0",
    "nvidia.com/gfd.timestamp": "1608307957",
    "nvidia.com/gpu.compute.major": "7",
    "nvidia.com/gpu.compute.minor": "5",
    "nvidia.com/gpu.count": "1",
    "nvidia.com/gpu.family": "turing",
    "nvidia.com/gpu.machine": "g4dn.xlarge",
    "nvidia.com/gpu.memory": "15109",
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.product": "Tesla-T4",
    "node.kubernetes.io/instance-type": "g4dn.xlarge",
    "topology.kubernetes.io/zone": "us-east-2a",
}


# ---------------------------------------------------------------- label rules


@pytest.mark.parametrize(
    "key",
    [
        "a",
        "node-role.kubernetes.io/gpu",
        "nvidia.com/gpu.deploy.driver",
        "A_b.c-D",
        "feature.node.kubernetes.io/system-os_release.VERSION_ID.major",
        "x" * 63,
        ("a" * 63 + ".") * 3 + "b/" + "n",
    ],
)
def test_valid_label_keys(key):
    assert L.label_key_problem(key) is None


@pytest.mark.parametrize(
    "key,fragment",
    [
        ("", "non-empty"),
        ("/name", "prefix before '/' is empty"),
        ("Example.com/x", "DNS subdomain"),
        ("-bad.com/x", "DNS subdomain"),
        ("a_b.com/x", "DNS subdomain"),
        ("example.com/", "name part"),
        ("x" * 64, "63"),
        ("p/" + "x" * 64, "63"),
        ("a" * 254 + "/x", "253"),
        ("bad key", "name part 'bad key'"),
        ("-x", "start and end"),
        ("a/b/c", "DNS subdomain"),
    ],
)
def test_invalid_label_keys(key, fragment):
    problem = L.label_key_problem(key)
    assert problem and fragment in problem


@pytest.mark.parametrize(
    "value,ok",
    [
        ("", True),
        ("true", True),
        ("4.18.0-193.29.1.el8_2.x86_64", True),
        ("x" * 63, True),
        ("x" * 64, False),
        ("-a", False),
        ("a b", False),
        ("a/b", False),
        ("_a", False),
    ],
)
def test_label_values(value, ok):
    assert (L.label_value_problem(value) is None) is ok


def test_validate_labels_normalizes_yaml_scalars():
    result = L.validate_labels({"a": True, "b": False, "c": 3, "d": None, "e": ""}, "labels")
    assert result == {"a": "true", "b": "false", "c": "3", "d": None, "e": ""}


def test_validate_labels_names_the_bad_key_and_param():
    with pytest.raises(GpuopsError) as exc:
        L.validate_labels({"good/x": "1", "Bad_Prefix.io/x": "1"}, "labels")
    assert exc.value.param == "labels"
    assert "Bad_Prefix.io/x" in str(exc.value) and str(exc.value).startswith("labels:")


def test_validate_labels_bad_value_names_key():
    with pytest.raises(GpuopsError) as exc:
        L.validate_labels({"gpuops.io/pool": "has space"}, "labels")
    assert "gpuops.io/pool" in str(exc.value) and "has space" in str(exc.value)


def test_validate_labels_refuses_null_when_removal_not_allowed():
    with pytest.raises(GpuopsError) as exc:
        L.validate_labels({"a": None}, "labels", allow_remove=False)
    assert "'a' has no value" in str(exc.value)


def test_validate_labels_refuses_lists():
    with pytest.raises(GpuopsError) as exc:
        L.validate_labels({"a": ["x"]}, "labels")
    assert "must be a string" in str(exc.value)


# ---------------------------------------------------------------- NFD / GFD parsing


def test_node_facts_seed_004():
    facts = L.node_facts(node("n1", SEED_004, allocatable=1))
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


def test_node_facts_newer_gfd_labels():
    labels = {
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A10G",
        "nvidia.com/cuda.driver-version.full": "550.54.15",
        "nvidia.com/cuda.runtime-version.full": "12.4",
    }
    gfd = L.node_facts(node("n", labels))["gfd"]
    assert gfd["cuda_driver"] == "550.54.15" and gfd["cuda_runtime"] == "12.4" and gfd["count"] is None


def test_node_facts_without_nfd():
    facts = L.node_facts(node("plain", {"kubernetes.io/os": "linux"}, ready=False))
    assert facts["gpu"] is False and facts["ready"] is False
    assert facts["kernel_version"] is None and facts["gfd"] == {} and facts["os_release"] == {}
    assert facts["allocatable_gpus"] is None


def test_gpu_label_must_be_true():
    assert L.node_facts(node("n", {L.GPU_LABEL: "false"}))["gpu"] is False
    assert L.node_facts(node("n", {"custom/gpu": "true"}), gpu_label="custom/gpu")["gpu"] is True


def test_summarize_groups_gpu_nodes_by_kernel_and_os():
    k1 = dict(SEED_004)
    k2 = dict(SEED_004)
    k2["feature.node.kubernetes.io/kernel-version.full"] = "4.18.0-193.41.1.el8_2.x86_64"
    k2["feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"] = "46.82.202105191328-0"
    facts = [
        L.node_facts(n)
        for n in (
            node("b", k1),
            node("a", k1),
            node("c", k2),
            node("cpu", {"feature.node.kubernetes.io/kernel-version.full": "x"}),
        )
    ]
    out = L.summarize(facts)
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
    out = L.summarize([L.node_facts(node("g", {L.GPU_LABEL: "true"}))])
    assert out["kernel_versions"] == {"unknown": ["g"]}
    assert out["summary"]["gfd_nodes"] == 0


def test_wait_status():
    facts = [L.node_facts(node("a", SEED_004)), L.node_facts(node("b", {L.GPU_LABEL: "true"})), L.node_facts(node("c"))]
    done, msg = L.wait_status(facts, {"gpu_nodes": 2})
    assert done and "2/2 nodes labelled" in msg and "(3 nodes seen)" in msg
    done, msg = L.wait_status(facts, {"gpu_nodes": 3})
    assert not done and "2/3" in msg
    done, msg = L.wait_status(facts, {"gpu_nodes": 2, "gfd_nodes": 2})
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
    assert diff == {
        "before": {"nodes": {"a": {"labels": {"x": "1", "y": "old"}}}},
        "after": {"nodes": {"a": {"labels": {"x": "2", "z": ""}}}},
    }


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
        "node_selector": None,
        "node_names": None,
        "gpu_label": L.GPU_LABEL,
        "wait_for": None,
        "wait_timeout": 300,
        "wait_sleep": 5,
        "parallel": 16,
    }
    base.update(kw)
    return base


def test_validate_params_read_only_ok():
    plan = L.validate_params(params())
    assert plan["changes"] == {} and plan["wait_for"] == {}


def test_validate_params_wait_for_drops_unset():
    plan = L.validate_params(params(wait_for={"gpu_nodes": 3, "gfd_nodes": None}))
    assert plan["wait_for"] == {"gpu_nodes": 3}


@pytest.mark.parametrize(
    "kw,param,fragment",
    [
        (dict(labels={"bad key": "x"}), "labels", "bad key"),
        (dict(labels={"a": "x"}), "node_selector", "explicit set of nodes"),
        (dict(state="absent", node_selector="a=b"), "labels", "list the label keys"),
        (dict(node_names=[]), "node_names", "is empty"),
        (dict(node_names=["Bad_Name"]), "node_names", "'Bad_Name'"),
        (dict(node_selector="  "), "node_selector", "is empty"),
        (dict(wait_for={"gpu_nodes": 1}, wait_timeout=0), "wait_timeout", "too small"),
        (dict(wait_for={"gpu_nodes": 1}, wait_timeout=3, wait_sleep=5), "wait_timeout", "at least wait_sleep"),
        (dict(wait_for={"gpu_nodes": -1}), "wait_for.gpu_nodes", "0 or more"),
        (dict(wait_sleep=0), "wait_sleep", "at least 1"),
        (dict(parallel=0), "parallel", "between 1 and 100"),
        (dict(gpu_label="not a key"), "gpu_label", "invalid label key"),
    ],
)
def test_validate_params_errors(kw, param, fragment):
    with pytest.raises(GpuopsError) as exc:
        L.validate_params(params(**kw))
    assert exc.value.param == param
    assert fragment in str(exc.value)
    assert str(exc.value).startswith(param + ":")


def test_pool_size():
    class Conf(object):
        connection_pool_maxsize = 10

    class Client(object):
        configuration = Conf()

    assert L.pool_size(Client()) == 10
    assert L.pool_size(object()) == 4
