"""The device plugin role's decisions (module_utils/device_plugin.py): configs, problems, runtime class, strategy."""

from ansible_collections.gpuops.cluster.plugins.module_utils import device_plugin as dp

BASE = {
    "device_plugin_configs": {},
    "device_plugin_default_config": "default",
    "device_plugin_time_slicing_replicas": 1,
    "device_plugin_mig_strategy": "none",
    "device_plugin_rename_by_default": False,
    "device_plugin_fail_requests_greater_than_one": False,
    "device_plugin_device_list_strategy": "auto",
    "device_plugin_cdi_enabled": True,
    "device_plugin_runtime_class": "nvidia",
}
LABEL = "nvidia.com/device-plugin.config"
GPU = [{"name": "gpu-0", "gpu": True, "container_runtime": "containerd://2.2.0"}, {"name": "cpu-0", "gpu": False}]


def v(**kw):
    return dict(BASE, **kw)


def node(name, key):
    return {"metadata": {"name": name, "labels": {LABEL: key}}}


def test_no_sharing_no_config_and_time_slicing_generates_one():
    assert dp.render_configs(v()) == {}
    assert dp.render_configs(v(device_plugin_time_slicing_replicas="0")) == {}
    cfg = dp.render_configs(v(device_plugin_time_slicing_replicas="4", device_plugin_rename_by_default=True))
    ts = cfg["default"]["sharing"]["timeSlicing"]
    assert cfg["default"]["version"] == "v1" and cfg["default"]["flags"] == {"migStrategy": "none"}
    assert ts == {
        "renameByDefault": True,
        "failRequestsGreaterThanOne": False,
        "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
    }
    given = {"a": {"version": "v1"}}
    assert dp.render_configs(v(device_plugin_configs=given, device_plugin_time_slicing_replicas=4)) is given


def test_the_plugins_own_rules_are_named_per_config():
    configs = {
        "v2": {"version": "v2"},
        "bad key!": {"version": "v1"},
        "mig": {"version": "v1", "flags": {"migStrategy": "mixed"}},
        "auto": {"version": "v1", "flags": {"migStrategy": "auto"}},
        "mps": {"version": "v1", "sharing": {"mps": {"resources": []}}},
        "one": {
            "version": "v1",
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 1}]}},
        },
        "name": {
            "version": "v1",
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/GPU", "replicas": 2}]}},
        },
        "empty": {"version": "v1", "sharing": {"timeSlicing": {"resources": []}}},
        "ok": {"version": "v1", "sharing": {"timeSlicing": {"resources": [{"name": "gpu.shared", "replicas": "2"}]}}},
    }
    problems = dp.config_problems(configs, "none")
    assert problems == [
        "v2: not a version v1 config (a dictionary with version: v1)",
        "bad key!: not a ConfigMap key (letters, digits, -, _ and .)",
        "mig: flags.migStrategy mixed would run as none (the MIG_STRATEGY env the plugin gets wins): set device_plugin_mig_strategy: mixed"
        " or drop flags.migStrategy",
        "auto: flags.migStrategy must be one of none, single, mixed",
        "mps: sharing.mps needs the MPS control daemon (and its /run/nvidia/mps, /dev/shm mounts), which this collection does not deploy:"
        " use sharing.timeSlicing",
        "one: sharing.timeSlicing.resources[0] needs a name (nvidia.com/ and lowercase letters, digits, - and .) and replicas >= 2",
        "name: sharing.timeSlicing.resources[0] needs a name (nvidia.com/ and lowercase letters, digits, - and .) and replicas >= 2",
        "empty: sharing.timeSlicing.resources must be a non-empty list",
    ]


def test_input_problems_exclusive_choices_default_key_and_list_strategy():
    assert dp.input_problems(v(), {}) == []
    given = {"a": {"version": "v1"}}
    assert dp.input_problems(v(device_plugin_configs=given, device_plugin_default_config="b"), given) == [
        "device_plugin: device_plugin_default_config b is not a key of device_plugin_configs (a)."
    ]
    (msg,) = dp.input_problems(
        v(device_plugin_configs={"default": {"version": "v1"}}, device_plugin_time_slicing_replicas=4), {"default": 1}
    )
    assert msg.startswith(
        "device_plugin: device_plugin_time_slicing_replicas (4) and device_plugin_configs are exclusive"
    )
    (msg,) = dp.input_problems(v(device_plugin_device_list_strategy="envvar,magic"), {})
    assert msg.startswith("device_plugin: device_plugin_device_list_strategy must be auto, or one")
    assert dp.input_problems(v(device_plugin_device_list_strategy="cdi-annotations,cdi-cri"), {}) == []


def test_runtime_class_list_strategy_and_node_configs():
    plan = dp.plan(v(), GPU, [], False, LABEL)
    assert (plan["runtime_class"], plan["list_strategy"], plan["gpu_nodes"]) == (
        "nvidia",
        "cdi-annotations,cdi-cri",
        ["gpu-0"],
    )
    # CRI-O without CDI: OCI hook, no runtime handler (GO setRuntimeClassName); no runtime known on OpenShift: CRI-O.
    crio = [dict(GPU[0], container_runtime="cri-o://1.31.3")]
    assert dp.plan(v(device_plugin_cdi_enabled=False), crio, [], False, LABEL)["runtime_class"] == ""
    assert (
        dp.plan(v(device_plugin_cdi_enabled=False), [{"name": "g", "gpu": True}], [], True, LABEL)["runtime_class"]
        == ""
    )
    assert dp.plan(v(device_plugin_cdi_enabled=False), GPU, [], True, LABEL)["list_strategy"] == "envvar"
    configs = {"a": {"version": "v1"}}
    plan = dp.plan(
        v(device_plugin_configs=configs, device_plugin_default_config="a"),
        GPU,
        [node("gpu-0", "a"), node("gpu-1", "zz")],
        False,
        LABEL,
    )
    assert plan["node_configs"] == {"gpu-0": "a", "gpu-1": "zz"}
    assert plan["problems"] == [
        "device_plugin: node(s) gpu-1=zz select a config by the nvidia.com/device-plugin.config label that is not a key of"
        " device_plugin_configs (a): add the config or fix the label."
    ]


def test_checksum_follows_content_and_default_key():
    a = dp.checksum({"k": {"version": "v1", "x": 1}}, "k")
    assert a == dp.checksum({"k": {"x": 1, "version": "v1"}}, "k")
    assert a != dp.checksum({"k": {"version": "v1", "x": 2}}, "k") and a != dp.checksum(
        {"k": {"version": "v1", "x": 1}}, "j"
    )
