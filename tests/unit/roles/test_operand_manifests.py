# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The operand manifests have what a real GPU node needs (docs/real-node-review.md), as the GPU Operator v26.7.0 sets it.

Each role's template is rendered with the role's defaults and vars (Ansible's Templar, as lookup('template') does) and
the facts its preflight sets; the sources are GO assets/state-*/*daemonset.yaml and controllers/object_controls.go.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CDI_SPEC = "/var/run/cdi/management.nvidia.com-gpu.yaml"
VALIDATOR = "nvcr.io/nvidia/gpu-operator:v26.7.0"


@pytest.fixture(autouse=True, scope="module")
def plugin_loader():
    """Ansible's filters need its plugin loader; its collection finder is removed again after these tests, so the
    module tests that run later import the collection as conftest.py set it up."""
    # Imported here, not at collection time: importing Ansible's controller side changes how module warnings are
    # collected for the module tests collected before this file.
    from ansible.plugins.loader import init_plugin_loader
    from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder

    init_plugin_loader()
    yield
    _AnsibleCollectionFinder._remove()


def _templar(variables):
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    loader = DataLoader()
    return loader, Templar(loader=loader, variables=variables)


def render(role, template, facts=None, **overrides):
    """The template's documents, rendered with the role's defaults, vars, the preflight ``facts`` and ``overrides``."""
    from ansible.template import trust_as_template

    loader, templar = _templar({})
    variables = {}
    for part in ("defaults", "vars"):
        path = os.path.join(ROOT, "roles", role, part, "main.yml")
        variables.update(loader.load_from_file(path, trusted_as_template=True) or {})
    variables["role_path"] = os.path.join(ROOT, "roles", role)
    variables.update(facts or {})
    variables.update(overrides)
    # The lookup the roles' apply tasks use (trim_blocks and all).
    path = os.path.join(ROOT, "roles", role, "templates", template)
    text = _templar(variables)[1].template(trust_as_template("{{ lookup('ansible.builtin.template', %r) }}" % path))
    docs = [d for d in yaml.safe_load_all(text) if d]
    for doc in docs:  # what k8s_ensure requires of every manifest
        assert doc.get("apiVersion") and doc.get("kind") and doc["metadata"]["name"], doc
    return docs


def pod_spec(docs):
    (ds,) = [d for d in docs if d["kind"] == "DaemonSet"]
    return ds["spec"]["template"]["spec"]


def env(container):
    return dict((e["name"], e.get("value")) for e in container.get("env") or [])


def container(spec, name):
    (found,) = [c for c in spec["containers"] if c["name"] == name]
    return found


def mounts(ctr):
    return dict((m["mountPath"], m["name"]) for m in ctr.get("volumeMounts") or [])


def host_paths(spec):
    return dict((v["name"], v["hostPath"]["path"]) for v in spec["volumes"] if "hostPath" in v)


# --- container toolkit (GO assets/state-container-toolkit/0500_daemonset.yaml) -------------------------------------


def toolkit(runtime="containerd", openshift=False, **overrides):
    facts = {"__container_toolkit_runtime": runtime, "__container_toolkit_openshift": openshift}
    return pod_spec(render("container_toolkit", "toolkit.yaml.j2", facts, **overrides))


@pytest.mark.parametrize(
    "runtime,dropin",
    [("containerd", "/etc/containerd/conf.d/99-nvidia.toml"), ("crio", "/etc/crio/crio.conf.d/99-nvidia.conf")],
)
def test_toolkit_gets_the_host_path_of_the_drop_in_and_the_runtime_config(runtime, dropin):
    """T6/T13: containerd must import the host path, not /runtime/config-dir.d (GO transformRuntimeConfigAndSocketMounts)."""
    e = env(container(toolkit(runtime), "nvidia-container-toolkit-ctr"))
    assert e["RUNTIME_DROP_IN_CONFIG_HOST_PATH"] == dropin
    assert e["RUNTIME_CONFIG"] == "/runtime/config-dir/config.toml"


def test_toolkit_cdi_default_kind_is_the_management_kind_only_with_cdi():
    """T8: unqualified devices resolve to the management.nvidia.com/gpu spec the installer writes."""
    e = env(container(toolkit(), "nvidia-container-toolkit-ctr"))
    assert e["NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND"] == "management.nvidia.com/gpu"
    off = env(container(toolkit(container_toolkit_cdi_enabled=False), "nvidia-container-toolkit-ctr"))
    assert "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND" not in off
    assert off["CDI_ENABLED"] == "false"


@pytest.mark.parametrize(
    "openshift,host", [(True, "/run/containers/oci/hooks.d"), (False, "/usr/share/containers/oci/hooks.d")]
)
def test_toolkit_crio_hooks_land_where_the_installer_writes_them(openshift, host):
    """T12: the installer's default --hooks-dir is /usr/share/containers/oci/hooks.d; the host dir is OpenShift's or CRI-O's."""
    spec = toolkit("crio", openshift, container_toolkit_cdi_enabled=False)
    assert mounts(container(spec, "nvidia-container-toolkit-ctr"))["/usr/share/containers/oci/hooks.d"] == "crio-hooks"
    assert host_paths(spec)["crio-hooks"] == host


@pytest.mark.parametrize("root", ["/run/nvidia/driver", "/"])
def test_toolkit_waits_for_the_driver(root):
    """T10: an init container waits for the driver root's nvidia-smi and the loaded module (GO driver-validation)."""
    spec = toolkit(container_toolkit_driver_root=root)
    (init,) = spec["initContainers"]
    assert init["name"] == "driver-validation"
    assert init["image"] == VALIDATOR
    assert init["command"] == ["sh", "-c"]
    assert "until [ -e /driver-root/usr/bin/nvidia-smi ]" in init["args"][0]
    assert "/sys/module/nvidia/refcnt" in init["args"][0]
    assert mounts(init)["/driver-root"] == "driver-root"
    assert host_paths(spec)["driver-root"] == root


def test_collection_wide_knobs_reach_the_toolkit():
    spec = toolkit(gpuops_validator_image="registry.example.com/mirror/validator:1", gpuops_runtime_class="nvidia-cdi")
    assert spec["initContainers"][0]["image"] == "registry.example.com/mirror/validator:1"
    docs = render(
        "container_toolkit",
        "toolkit.yaml.j2",
        {"__container_toolkit_openshift": False},
        gpuops_runtime_class="nvidia-cdi",
    )
    (rc,) = [d for d in docs if d["kind"] == "RuntimeClass"]
    assert rc["metadata"]["name"] == rc["handler"] == "nvidia-cdi"
    mirrored = toolkit(gpuops_image_registry="registry.example.com/nvidia")
    assert mirrored["initContainers"][0]["image"] == "registry.example.com/nvidia/gpu-operator:v26.7.0"


# --- device plugin (GO assets/state-device-plugin/0500_daemonset.yaml, TransformDevicePlugin) ---------------------


def plugin(runtime_class="nvidia", strategy="cdi-annotations,cdi-cri", configs=None, **overrides):
    facts = {
        "__device_plugin": {
            "configs": configs or {},
            "checksum": "0" * 64,
            "runtime_class": runtime_class,
            "list_strategy": strategy,
        },
        "preflight_platform": {"openshift": False},
    }
    return pod_spec(render("device_plugin", "device_plugin.yaml.j2", facts, **overrides))


def test_plugin_runs_with_the_toolkit_runtime_class_and_the_driver_root():
    """P4: without the nvidia runtime and /driver-root the plugin finds no libnvidia-ml and exits."""
    spec = plugin()
    assert spec["runtimeClassName"] == "nvidia"
    ctr = container(spec, "nvidia-device-plugin")
    assert mounts(ctr)["/driver-root"] == "driver-root"
    assert host_paths(spec)["driver-root"] == "/run/nvidia/driver"
    assert env(ctr)["NVIDIA_DRIVER_ROOT"] == "/run/nvidia/driver"
    assert "runtimeClassName" not in plugin(runtime_class="")  # CRI-O hook mode: preflight resolves it to ""


def test_plugin_hands_devices_out_by_cdi_when_the_toolkit_runs_cdi():
    """P6: GO transformDevicePluginCtrForCDI."""
    spec = plugin()
    ctr = container(spec, "nvidia-device-plugin")
    e = env(ctr)
    assert e["DEVICE_LIST_STRATEGY"] == "cdi-annotations,cdi-cri"
    assert e["CDI_ENABLED"] == "true"
    assert e["CDI_ANNOTATION_PREFIX"] == "cdi.k8s.io/"
    assert e["NVIDIA_CDI_HOOK_PATH"] == "/usr/local/nvidia/toolkit/nvidia-cdi-hook"
    assert mounts(ctr)["/var/run/cdi"] == "cdi-root"
    assert host_paths(spec)["cdi-root"] == "/var/run/cdi"
    off = env(container(plugin(strategy="envvar", device_plugin_cdi_enabled=False), "nvidia-device-plugin"))
    assert off["DEVICE_LIST_STRATEGY"] == "envvar"
    assert "CDI_ENABLED" not in off and "NVIDIA_CDI_HOOK_PATH" not in off


@pytest.mark.parametrize("strategy,monitor", [("none", None), ("single", "all"), ("mixed", "all")])
def test_plugin_monitors_mig_devices_with_a_mig_strategy(strategy, monitor):
    """P8: GO applyMIGConfiguration."""
    e = env(container(plugin(device_plugin_mig_strategy=strategy), "nvidia-device-plugin"))
    assert e["MIG_STRATEGY"] == strategy
    assert e.get("NVIDIA_MIG_MONITOR_DEVICES") == monitor


@pytest.mark.parametrize(
    "cdi,waits_for",
    [
        (True, [CDI_SPEC, "/toolkit-install-dir/toolkit/nvidia-cdi-hook"]),
        (False, ["/toolkit-install-dir/toolkit/nvidia-container-runtime"]),
    ],
)
def test_plugin_waits_for_the_toolkit_first(cdi, waits_for):
    """P7: the first init container waits for what the toolkit installer writes (GO toolkit-validation)."""
    spec = plugin(device_plugin_cdi_enabled=cdi, configs={"default": {"version": "v1"}})
    assert [c["name"] for c in spec["initContainers"]] == ["toolkit-validation", "config-manager-init"]
    init = spec["initContainers"][0]
    assert init["image"] == VALIDATOR
    for path in waits_for:
        assert "[ -e {0} ]".format(path) in init["args"][0]
    assert mounts(init)["/toolkit-install-dir"] == "toolkit-install-dir"
    assert host_paths(spec)["toolkit-install-dir"] == "/usr/local/nvidia"


# --- GPU Feature Discovery (GO assets/gpu-feature-discovery/0500_daemonset.yaml) ---------------------------------


def gfd(config_map="", runtime_class="nvidia", **overrides):
    facts = {
        "__gpu_feature_discovery_openshift": False,
        "__gpu_feature_discovery_api": "",
        "__gpu_feature_discovery_config_map": config_map,
        "__gpu_feature_discovery_config_default": "default" if config_map else "",
        "__gpu_feature_discovery_runtime_class": runtime_class,
    }
    return pod_spec(render("gpu_feature_discovery", "gfd.yaml.j2", facts, **overrides))


def test_gfd_runs_with_the_toolkit_runtime_class_and_waits_for_the_toolkit():
    """G3: GFD loads NVML from the default library path: only the nvidia runtime puts it there."""
    spec = gfd()
    assert spec["runtimeClassName"] == "nvidia"
    assert spec["initContainers"][0]["name"] == "toolkit-validation"
    assert "[ -e {0} ]".format(CDI_SPEC) in spec["initContainers"][0]["args"][0]
    assert env(container(spec, "gpu-feature-discovery"))["POD_NAME"] is None  # from the downward API
    assert "runtimeClassName" not in gfd(runtime_class="")


def test_gfd_reads_the_device_plugin_sharing_config_by_default():
    """G7: the default is the device plugin's ConfigMap (auto), read through config-manager like the plugin."""
    with open(os.path.join(ROOT, "roles", "gpu_feature_discovery", "defaults", "main.yml")) as f:
        assert yaml.safe_load(f)["gpu_feature_discovery_config_map"] == "auto"
    spec = gfd("nvidia-device-plugin-config")
    assert [c["name"] for c in spec["initContainers"]] == ["toolkit-validation", "config-manager-init"]
    assert env(container(spec, "gpu-feature-discovery"))["CONFIG_FILE"] == "/config/config.yaml"
    assert env(container(spec, "config-manager"))["DEFAULT_CONFIG"] == "default"
    (cm,) = [v for v in spec["volumes"] if v["name"] == "available-configs"]
    assert cm["configMap"]["name"] == "nvidia-device-plugin-config"


# --- DCGM exporter (GO assets/state-dcgm-exporter/0800_daemonset.yaml) -------------------------------------------


def test_exporter_runs_with_the_toolkit_runtime_class_and_waits_for_the_toolkit():
    """M6/M7: the embedded hostengine needs NVML."""
    facts = {"__monitoring_counters": "DCGM_FI_DEV_GPU_TEMP, gauge, t\n", "__monitoring_openshift": False}
    spec = pod_spec(render("monitoring", "exporter.yaml.j2", dict(facts, __monitoring_runtime_class="nvidia")))
    assert spec["runtimeClassName"] == "nvidia"
    (init,) = spec["initContainers"]
    assert init["name"] == "toolkit-validation" and init["image"] == VALIDATOR
    assert "[ -e {0} ]".format(CDI_SPEC) in init["args"][0]
    off = pod_spec(
        render(
            "monitoring", "exporter.yaml.j2", dict(facts, __monitoring_runtime_class=""), monitoring_cdi_enabled=False
        )
    )
    assert "runtimeClassName" not in off
    assert "nvidia-container-runtime" in off["initContainers"][0]["args"][0]


# --- waits long enough for a driver build (GO assets/state-driver/0500_daemonset.yaml startupProbe: 21 min) -------


@pytest.mark.parametrize(
    "role,key",
    [
        ("container_toolkit", "container_toolkit_wait_timeout"),
        ("device_plugin", "device_plugin_wait_timeout"),
        ("gpu_feature_discovery", "gpu_feature_discovery_wait_timeout"),
        ("monitoring", "monitoring_wait_timeout"),
    ],
)
def test_operand_waits_outlast_the_driver_startup_probe(role, key):
    with open(os.path.join(ROOT, "roles", role, "defaults", "main.yml")) as f:
        assert int(yaml.safe_load(f)[key]) >= 60 + 120 * 10


def test_validation_pods_use_the_toolkit_runtime_class_by_default():
    """V4: gpu_validation_runtime_class defaults to the toolkit's RuntimeClass."""
    loader, _unused = _templar({})
    defaults = loader.load_from_file(
        os.path.join(ROOT, "roles", "gpu_validation", "defaults", "main.yml"), trusted_as_template=True
    )
    templar = _templar(defaults)[1]
    assert templar.template(defaults["gpu_validation_runtime_class"]) == "nvidia"


# --- scheduling (LimitRange defaulting: pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem) ------------------


def test_limit_range_with_a_max_and_no_default_defaults_to_zero_gpus_not_the_max():
    """Without an explicit default the API server makes the max the default: every container without a GPU request
    would get max_gpus GPUs."""
    docs = render("scheduling", "objects.yaml.j2", scheduling_quotas=[{"namespace": "t", "gpus": 4, "max_gpus": 2}])
    (limits,) = [d for d in docs if d["kind"] == "LimitRange"][0]["spec"]["limits"]
    assert limits["max"] == {"nvidia.com/gpu": "2"}
    assert limits["default"] == limits["defaultRequest"] == {"nvidia.com/gpu": "0"}
    docs = render("scheduling", "objects.yaml.j2", scheduling_quotas=[{"namespace": "t", "gpus": 4, "default_gpus": 1}])
    (limits,) = [d for d in docs if d["kind"] == "LimitRange"][0]["spec"]["limits"]
    assert limits["default"] == {"nvidia.com/gpu": "1"} and "max" not in limits
