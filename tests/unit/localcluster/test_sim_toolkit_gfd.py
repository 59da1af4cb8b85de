# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulator's container toolkit installer (runtime of the pod vs the node's) and GFD's NodeFeature API switch."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from simopenshift import gpustack


def node(runtime_version):
    return {"status": {"nodeInfo": {"containerRuntimeVersion": runtime_version}}}


def toolkit(**env):
    return {
        "name": "toolkit",
        "image": "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0",
        "env": [{"name": k, "value": v} for k, v in env.items()],
    }


@pytest.mark.parametrize(
    "version, runtime",
    [
        ("cri-o://1.29.5", "crio"),
        ("containerd://1.7.27", "containerd"),
        ("docker://24.0.7", "docker"),
        ("kwok-v0.6", None),
        ("", None),
    ],
)
def test_node_runtime_from_node_info(version, runtime):
    assert gpustack.node_runtime(node(version)) == runtime


def test_toolkit_logs_the_runtime_the_pod_asks_for():
    ok, runtime, log = gpustack.toolkit_run(
        toolkit(RUNTIME="containerd", CONTAINERD_CONFIG="/runtime/config-dir/config.toml"), "containerd"
    )
    assert ok and runtime == "containerd"
    assert "installed for runtime containerd" in log and "crio" not in log
    assert "Loading config from /runtime/config-dir/config.toml" in log and "Successfully signaled containerd" in log
    ok, runtime, log = gpustack.toolkit_run(toolkit(RUNTIME="crio"), "crio")
    assert ok and "installed for runtime crio" in log and "Restarting crio using systemd" in log


def test_toolkit_for_another_runtime_fails_like_the_installer():
    ok, _runtime, log = gpustack.toolkit_run(
        toolkit(RUNTIME="containerd", CONTAINERD_SOCKET="/runtime/sock-dir/containerd.sock"), "crio"
    )
    assert not ok
    assert "Config file does not exist; using empty config" in log
    assert "unable to restart containerd" in log and "dial unix /runtime/sock-dir/containerd.sock" in log
    assert "installed for runtime" not in log
    ok, _runtime, log = gpustack.toolkit_run(toolkit(RUNTIME="crio"), "containerd")
    assert not ok and "unable to restart crio" in log and "Unit crio.service not found" in log


def test_toolkit_without_runtime_env_takes_the_nodes():
    ok, runtime, _log = gpustack.toolkit_run(toolkit(), "containerd")
    assert ok and runtime == "containerd"
    ok, runtime, _log = gpustack.toolkit_run(toolkit(RUNTIME="containerd"), None)
    assert ok and runtime == "containerd"


@pytest.mark.parametrize(
    "value, api", [(None, True), ("true", True), ("TRUE", True), ("false", False), ("False", False)]
)
def test_gfd_node_feature_api_defaults_to_on(value, api):
    container = toolkit() if value is None else toolkit(USE_NODE_FEATURE_API=value)
    assert gpustack.gfd_uses_node_feature_api(container) is api
