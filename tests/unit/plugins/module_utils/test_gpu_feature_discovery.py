"""The gpu_feature_discovery role's decisions (module_utils/gpu_feature_discovery.py)."""

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import gpu_feature_discovery as gfd

LABELS = ["feature.node.kubernetes.io/pci-10de.present"]
SETTINGS = {
    "namespace": "gpu",
    "node_feature_api": "auto",
    "config_map": "auto",
    "config_default": "",
    "plugin_default": "default",
    "cdi_enabled": True,
    "runtime_class": "nvidia",
}
NODES = [{"name": "a", "gpu": True, "container_runtime": "cri-o://1.29.5"}]


def reads(ns=True, cm=None, name="nvidia-device-plugin-config", ns_skipped=False):
    """The looped k8s_info results: the namespace, then the ConfigMap (None: not found; False: not read)."""
    ns_result = {"skipped": True} if ns_skipped else {"resources": [{"metadata": {"name": "gpu"}}] if ns else []}
    ns_result["item"] = {"kind": "Namespace", "name": "gpu"}
    cm_result = {"skipped": True} if cm is False else {"resources": [] if cm is None else [{"data": cm}]}
    cm_result["item"] = {"kind": "ConfigMap", "name": name if cm is not False else ""}
    return [ns_result, cm_result]


def plan(results, nodes=None, openshift=True, check=False, **settings):
    return gfd.plan(results, NODES if nodes is None else nodes, dict(SETTINGS, **settings), openshift, check, LABELS)


@pytest.mark.parametrize(
    "value,config_map,config_default,count",
    [("auto", "auto", "", 0), (True, "", "", 0), ("false", "x", "k", 0), ("maybe", "auto", "", 1), (1, "", "k", 2)],
)
def test_inputs(value, config_map, config_default, count):
    problems = gfd.input_problems(value, config_map, config_default)
    assert len(problems) == count, problems
    if value == "maybe":
        assert problems[0] == (
            "gpu_feature_discovery: gpu_feature_discovery_node_feature_api must be auto, true or false, got maybe."
        )


def test_node_feature_api_auto_is_false_on_openshift_else_gfd_default():
    assert [gfd.node_feature_api("auto", o) for o in (True, False)] == ["false", ""]
    assert [gfd.node_feature_api(v, True) for v in (True, "true", False, "false")] == ["true", "true", "false", "false"]


def test_auto_takes_the_device_plugin_config_map_and_default_key_when_they_exist():
    p = plan(reads(cm={"default": "x", "ts4": "y"}))
    assert (p["config_map"], p["config_default"], p["problems"], p["skip"]) == (
        "nvidia-device-plugin-config",
        "default",
        [],
        False,
    )
    p = plan(reads(cm={"ts4": "y"}))
    assert (p["config_map"], p["config_default"]) == ("nvidia-device-plugin-config", "")
    p = plan(reads(cm=None))
    assert (p["config_map"], p["config_default"], p["problems"]) == ("", "", [])
    p = plan(reads(cm=False), config_map="")
    assert (p["config_map"], p["config_default"], p["problems"]) == ("", "", [])


def test_no_read_made_means_both_reads_were_skipped():
    """The role skips k8s_read when this run's driver made the namespace and its device plugin has no ConfigMap."""
    p = plan(None)
    assert (p["namespace_exists"], p["config_map"], p["config_default"], p["problems"], p["skip"]) == (
        True,
        "",
        "",
        [],
        False,
    )
    # The same answer as a read that found no ConfigMap.
    found_none = plan(reads(cm=None))
    assert dict((k, found_none[k]) for k in p) == p


def test_sharing_config_map_problems():
    (msg,) = plan(reads(cm=None), config_default="any")["problems"]
    assert msg.startswith(
        "gpu_feature_discovery: gpu_feature_discovery_config_default must be a key of the sharing ConfigMap, but "
        "gpu_feature_discovery_config_map auto found no nvidia-device-plugin-config in gpu"
    ), msg
    (msg,) = plan(reads(cm=None, name="no-such-config"), config_map="no-such-config")["problems"]
    assert msg == (
        "gpu_feature_discovery: gpu_feature_discovery_config_map no-such-config does not exist in gpu (the "
        "device_plugin role makes it)."
    )
    (msg,) = plan(reads(cm={"a": "", "b": ""}, name="mine"), config_map="mine", config_default="c")["problems"]
    assert msg.endswith("has no key c (gpu_feature_discovery_config_default); keys: a, b.")
    # Check mode: the device plugin may make it in the same run; a named one that is missing skips the state.
    p = plan(reads(cm=None, name="mine"), config_map="mine", check=True)
    assert p["problems"] == [] and p["skip"] is True and p["config_map"] == "mine"
    # A missing default key is not something the same run fixes.
    assert plan(reads(cm={"a": ""}, name="mine"), config_map="mine", config_default="c", check=True)["problems"]


def test_no_gpu_node_or_namespace_stops_and_check_mode_skips():
    problems = plan(reads(ns=False, cm=None), nodes=[])["problems"]
    assert problems[0].startswith("gpu_feature_discovery: no GPU node: no node carries an NFD NVIDIA PCI label")
    assert "(gpu_feature_discovery_namespace) does not exist" in problems[1]
    p = plan(reads(ns=False, cm=None), nodes=[], check=True)
    assert p["problems"] == [] and p["skip"] is True
    assert plan(reads(ns_skipped=True, cm=None))["namespace_exists"] is True


def test_runtime_class_none_in_crio_hook_mode():
    assert plan(reads(cm=None))["runtime_class"] == "nvidia"
    assert plan(reads(cm=None), cdi_enabled=False)["runtime_class"] == ""
    containerd = [{"name": "a", "gpu": True, "container_runtime": "containerd://1.7"}]
    assert plan(reads(cm=None), nodes=containerd, cdi_enabled=False)["runtime_class"] == "nvidia"
    unknown = [{"name": "a", "gpu": True, "container_runtime": None}]
    assert plan(reads(cm=None), nodes=unknown, cdi_enabled=False, openshift=True)["runtime_class"] == ""
    assert plan(reads(cm=None), nodes=unknown, cdi_enabled=False, openshift=False)["runtime_class"] == "nvidia"


def labelled(name, **gfd_labels):
    return {"name": name, "gpu": True, "gfd": gfd_labels, "allocatable_gpus": 1}


T4 = dict(product="Tesla-T4", count=1, memory=15109, cuda_driver="550.90.07", cuda_runtime="12.4")


def test_label_summary_table_and_missing_nodes():
    nodes = [
        labelled("a", **T4),
        labelled("b"),
        labelled("c", **{**T4, "cuda_driver": None}),
        labelled("d", **{**T4, "replicas": 4, "sharing_strategy": "time-slicing", "product": "Tesla-T4-SHARED"}),
        {"name": "cpu", "gpu": False, "gfd": {}},
    ]
    out = gfd.label_summary(nodes)
    assert out["missing"] == ["b", "c"]
    assert out["nodes"]["a"] == {
        "product": "Tesla-T4",
        "count": 1,
        "memory_mib": 15109,
        "driver": "550.90.07",
        "cuda": "12.4",
        "replicas": 1,
        "sharing": "none",
        "allocatable": 1,
    }
    assert out["table"] == [
        "node | product | count | memory MiB | driver | replicas/sharing",
        "a | Tesla-T4 | 1 | 15109 | 550.90.07 | 1/none",
        "d | Tesla-T4-SHARED | 1 | 15109 | 550.90.07 | 4/time-slicing",
    ]


def test_unlabelled_lines_give_a_ready_pod_the_node_feature_api_hint():
    states = [
        {"node": "a", "pod": "gfd-1", "ready": True, "state": "Running, ready"},
        {"node": "b", "pod": None, "ready": False, "state": "no pod"},
    ]
    lines = gfd.unlabelled_lines(states, "true", True, "gpu-feature-discovery")
    assert lines[0].startswith(
        "gpu_feature_discovery: node a: no nvidia.com/gpu.product, gpu.count, gpu.memory and cuda driver labels; "
        "pod gfd-1 Running, ready (USE_NODE_FEATURE_API=true: GFD writes a NodeFeature object"
    )
    assert lines[0].endswith("; OpenShift needs gpu_feature_discovery_node_feature_api false)")
    assert lines[1].endswith("labels; no gpu-feature-discovery pod (check the node selector and tolerations)")
    assert "USE_NODE_FEATURE_API=true, GFD default" in gfd.unlabelled_lines(states, "", False, "x")[0]
    assert "USE_NODE_FEATURE_API" not in gfd.unlabelled_lines(states, "false", True, "x")[0]
