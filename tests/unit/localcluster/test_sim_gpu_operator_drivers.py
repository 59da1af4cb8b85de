# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulated GPU Operator's driver DaemonSets as the real one names and places them: the ClusterPolicy's one
image for the first GPU node's OS, NVIDIADriver pools per OS release, names hashed as the operator hashes them, and
the toolkit's runtime env (pure parts of simopenshift.gpuoperator)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from simopenshift import gpuoperator

UID = "3f2a6c1e-1111-2222-3333-444455556666"


def node(name, os_id, version, kernel="5.15.0-119-generic"):
    labels = {
        gpuoperator.OS_ID: os_id,
        gpuoperator.OS_VERSION: version,
        gpuoperator.OS_MAJOR: version.split(".")[0],
        gpuoperator.KERNEL_FULL: kernel,
        gpuoperator.PRESENT: "true",
    }
    return {"metadata": {"name": name, "labels": labels}}


def driver_cr(**spec):
    base = {"repository": "nvcr.io/nvidia", "image": "driver", "version": "580.95.05", "driverType": "gpu"}
    return {"metadata": {"name": "default", "uid": UID}, "spec": dict(base, **spec)}


def test_string_hash_matches_the_operators():
    # Expected values printed by Go: fnv.New32a over the string, then k8s.io/apimachinery (v0.37.1)
    # rand.SafeEncodeString of its decimal digits, as internal/utils GetStringHash does.
    assert gpuoperator.string_hash("") == "65bb57b6b5"
    assert gpuoperator.string_hash(UID) == "8656946b56"
    assert gpuoperator.string_hash(UID + "-5.15.0-119-generic") == "846fd8597b"


def test_nvidia_driver_pools_one_per_os_release():
    nodes = [node("gpu-1", "ubuntu", "24.04", "6.8.0-45-generic"), node("gpu-0", "ubuntu", "22.04")]
    pools = gpuoperator._node_pools(driver_cr(), nodes, openshift=False)
    assert [(p[0], p[2]) for p in pools] == [
        ("nvidia-gpu-driver-ubuntu22.04-8656946b56", "nvcr.io/nvidia/driver:580.95.05-ubuntu22.04"),
        ("nvidia-gpu-driver-ubuntu24.04-8656946b56", "nvcr.io/nvidia/driver:580.95.05-ubuntu24.04"),
    ]
    assert pools[0][1] == {
        gpuoperator.PRESENT: "true",
        gpuoperator.DRIVER_OWNER: "default",
        gpuoperator.OS_ID: "ubuntu",
        gpuoperator.OS_VERSION: "22.04",
    }


def test_nvidia_driver_pools_precompiled_per_kernel_and_rhel_by_major():
    nodes = [node("a", "ubuntu", "22.04"), node("b", "ubuntu", "22.04", "5.15.0-122-generic"), node("c", "rhel", "9.4")]
    pools = gpuoperator._node_pools(driver_cr(usePrecompiled=True, version="580"), nodes, openshift=False)
    names = [p[0] for p in pools]
    assert names[0].startswith("nvidia-gpu-driver-rhel9-") and pools[0][1][gpuoperator.OS_MAJOR] == "9"
    assert gpuoperator.OS_VERSION not in pools[0][1]
    assert names[1] == "nvidia-gpu-driver-ubuntu22.04-846fd8597b"
    assert pools[1][2] == "nvcr.io/nvidia/driver:580-5.15.0-119-generic-ubuntu22.04"
    assert len(set(names)) == 3


def test_the_cluster_policy_driver_takes_the_first_gpu_nodes_os():
    controller = gpuoperator.OperatorController.__new__(gpuoperator.OperatorController)
    nodes = [node("gpu-1", "ubuntu", "24.04"), node("gpu-0", "ubuntu", "22.04")]
    pools = controller._policy_driver_pools("nvcr.io/nvidia/driver:580.95.05", nodes, False, {})
    assert [p[2] for p in pools] == ["nvcr.io/nvidia/driver:580.95.05-ubuntu22.04"]


def test_toolkit_reaches_containerd_by_host_paths():
    pod, container = {}, {}
    env = dict(gpuoperator._toolkit_env(pod, container, {"cdi": {"enabled": True}}, "containerd", True))
    assert env["RUNTIME"] == "containerd" and env["CONTAINERD_RUNTIME_CLASS"] == "nvidia"
    assert env["CONTAINERD_CONFIG"] == "/runtime/config-dir/config.toml"
    assert env["RUNTIME_DROP_IN_CONFIG"] == "/runtime/config-dir.d/99-nvidia.toml"
    assert env["RUNTIME_DROP_IN_CONFIG_HOST_PATH"] == "/etc/containerd/conf.d/99-nvidia.toml"
    assert env["CONTAINERD_SOCKET"] == "/runtime/sock-dir/containerd.sock"
    volumes = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"]}
    assert volumes == {
        "containerd-config": "/etc/containerd",
        "containerd-drop-in-config": "/etc/containerd/conf.d",
        "containerd-socket": "/run/containerd",
    }
    # A path the user set in the toolkit's env is honoured.
    user = {"toolkit": {"env": [{"name": "CONTAINERD_CONFIG", "value": "/etc/k3s/containerd/config.toml"}]}}
    pod = {}
    env = dict(gpuoperator._toolkit_env(pod, {}, user, "containerd", False))
    assert env["CONTAINERD_CONFIG"] == "/runtime/config-dir/config.toml"
    assert {v["name"]: v["hostPath"]["path"] for v in pod["volumes"]}["containerd-config"] == "/etc/k3s/containerd"
    crio = dict(gpuoperator._toolkit_env({}, {}, {}, "crio", False))
    assert crio["RUNTIME_DROP_IN_CONFIG_HOST_PATH"] == "/etc/crio/crio.conf.d/99-nvidia.conf"
    assert crio["CRIO_CONFIG_MODE"] == "hook" and "CONTAINERD_SOCKET" not in crio
