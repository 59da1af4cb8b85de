# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure's followers: their options checked by their own module's spec and rules, and when they run."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.args import own_options
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import params as build_params
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import runner as build_runner
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_rollout import params as rollout_params
from ansible_collections.gpuops.cluster.plugins.module_utils.dry_run import argument_spec as dry_run_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure import followers
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import params as validate_params
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd import params as nfd_params
from ansible_collections.gpuops.cluster.plugins.module_utils.node_taints import argument_spec as taints_spec


def test_none_given_checks_nothing():
    assert followers.check({"definitions": [], "gpu_validate": None, "nfd_labels": None}) == {}


def test_given_options_come_back_with_their_module_defaults():
    checked = followers.check({"nfd_labels": {"gpu_nodes_only": True, "wait_for": {"gfd_nodes": 2}}})
    labels = checked["nfd_labels"]
    assert labels["gpu_nodes_only"] is True and labels["wait_for"] == {"gfd_nodes": 2, "gpu_nodes": None}
    assert labels["parallel"] == 16 and labels["state"] == "present"  # nfd_labels' own defaults
    checked = followers.check({"gpu_validate": {"checks": ["allocatable"], "settle_timeout": "10"}})
    assert checked["gpu_validate"]["checks"] == ["allocatable"] and checked["gpu_validate"]["settle_timeout"] == 10
    assert checked["gpu_validate"]["namespace"] == "nvidia-gpu-operator"  # gpu_validate's default


@pytest.mark.parametrize(
    "option, given, param, words",
    [
        ("nfd_labels", {"wait_for": {"gpu_nodes": -1}}, "nfd_labels.wait_for.gpu_nodes", "must be 0 or more"),
        ("nfd_labels", {"node_names": []}, "nfd_labels.node_names", "is empty"),
        ("nfd_labels", {"wait_for": {"gfd_nodes": 1}, "wait_timeout": 2}, "nfd_labels.wait_timeout", "wait_sleep (5s)"),
        ("nfd_labels", {"state": "absent"}, "nfd_labels.labels", "list the label keys"),
        ("nfd_labels", {"parallel": "many"}, "nfd_labels", "as gpuops.cluster.nfd_labels reads it"),
        # The connection is k8s_ensure's own: a follower's connection option is refused, not ignored.
        ("nfd_labels", {"kubeconfig": "/x"}, "nfd_labels", "kubeconfig"),
        ("gpu_validate", {"api_key": "x"}, "gpu_validate", "api_key"),
        ("gpu_validate", {"checks": ["bogus"]}, "gpu_validate", "as gpuops.cluster.gpu_validate reads it"),
        ("node_taints", {"taints": [{"key": "nvidia.com/gpu", "effect": "Never"}]}, "node_taints", "Never"),
        (
            "node_taints",
            {"taints": [{"key": " ", "effect": "NoSchedule"}], "node_names": ["g"]},
            "node_taints.taints",
            "key is empty",
        ),
        (
            "node_taints",
            {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
            "node_taints.node_names",
            "list the nodes to taint",
        ),
        (
            "k8s_dry_run",
            {"definitions": [{"kind": "Pod", "metadata": {"name": "p"}}]},
            "k8s_dry_run.definitions",
            "needs apiVersion and kind",
        ),
        ("k8s_dry_run", {}, "k8s_dry_run", "definitions"),
        ("driver_container_build", {}, "driver_container_build", "driver_version"),
        # The module's exclusive options and those that need another, as AnsibleModule checks them.
        (
            "driver_container_build",
            {"driver_version": "550.90.07", "dockerfile": "FROM x", "git_uri": "https://example.com/d.git"},
            "driver_container_build",
            "mutually exclusive: dockerfile|git_uri",
        ),
        (
            "driver_container_build",
            {"driver_version": "550.90.07", "git_ref": "main"},
            "driver_container_build",
            "git_uri",
        ),
        ("driver_container_build", {"driver_version": "5.5"}, "driver_container_build.driver_version", "full version"),
        (
            "driver_container_build",
            {"driver_version": "550.90.07", "wait_timeout": 5},
            "driver_container_build.wait_timeout",
            "too short",
        ),
        ("driver_rollout", {}, "driver_rollout", "namespace"),
        ("driver_rollout", {"namespace": "drv", "canary": -1}, "driver_rollout.canary", "no canary"),
        ("driver_rollout", {"namespace": "Drv_1"}, "driver_rollout.namespace", "namespace"),
        (
            "driver_rollout",
            {"namespace": "drv", "verify_checks": ["bogus"]},
            "driver_rollout",
            "driver_rollout reads it",
        ),
    ],
)
def test_a_bad_option_is_named_under_its_follower(option, given, param, words):
    with pytest.raises(GpuopsError) as err:
        followers.check({option: given})
    assert err.value.param == param and words in str(err.value)
    assert str(err.value).startswith(param + ":")
    # Named once: not "nfd_labels.wait_for.gpu_nodes: wait_for.gpu_nodes: ..."
    assert not str(err.value)[len(param) + 2 :].startswith(param.split(".", 1)[-1] + ":")


def test_taints_and_dry_runs_come_back_with_their_module_defaults():
    checked = followers.check(
        {
            "node_taints": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}], "node_names": ["gpu-1"]},
            "k8s_dry_run": {"definitions": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}]},
        }
    )
    assert checked["node_taints"]["state"] == "present" and checked["node_taints"]["parallel"] == 16
    assert checked["node_taints"]["taints"] == [{"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"}]
    assert checked["k8s_dry_run"]["namespace"] is None


def test_the_driver_images_are_built_first_then_the_taints_and_the_dry_runs_last():
    assert [option for option, dummy in followers.FOLLOWERS][:2] == ["driver_container_build", "node_taints"]
    assert [option for option, dummy in followers.FOLLOWERS][-1] == "k8s_dry_run"


def test_the_build_comes_back_with_its_module_defaults():
    build = followers.check({"driver_container_build": {"driver_version": "550.90.07", "node_names": ["gpu-1"]}})[
        "driver_container_build"
    ]
    assert build["strategy"] == "auto" and build["namespace"] == "nvidia-gpu-operator" and build["prune_stale"] is False
    assert build["node_names"] == ["gpu-1"] and build["entitlement_secret"] == "etc-pki-entitlement"


def test_a_failed_build_is_the_followers_result_not_a_failure(monkeypatch):
    """As the driver role's own build task registers it (failed_when: false; the message as fail_json gives it,
    the param first): the role names the state."""

    def fails(module, client, svc):
        raise GpuopsError("1 of 1 driver build(s) failed: build d-1 Failed", param="wait_timeout", builds=["d-1"])

    monkeypatch.setattr(build_runner, "run", fails)
    module = type("Borrowed", (), {"params": {"namespace": "nvidia-gpu-driver"}})()
    result = build_runner.run_followed(module, None, None)
    assert result == {
        "failed": True,
        "msg": "wait_timeout: 1 of 1 driver build(s) failed: build d-1 Failed",
        "param": "wait_timeout",
        "builds": ["d-1"],
    }
    monkeypatch.setattr(build_runner, "run", lambda module, client, svc: {"changed": True, "images": {}})
    assert build_runner.run_followed(module, None, None) == {"changed": True, "images": {}}


def test_an_api_server_gone_during_the_build_is_the_followers_result_and_a_bug_is_raised(monkeypatch):
    """Said as the module's fail_json says it, so that the role shows it even where the task it follows is no_log."""
    from urllib3.exceptions import NewConnectionError

    def refused(module, client, svc):
        raise NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused")

    monkeypatch.setattr(build_runner, "run", refused)
    module = type("Borrowed", (), {"params": {"namespace": "nvidia-gpu-driver"}})()
    result = build_runner.run_followed(module, None, None)
    assert result["failed"] is True and "cannot reach the Kubernetes API" in result["msg"], result
    assert "Traceback" in result["exception"]

    def bug(module, client, svc):
        raise ValueError("a bug")

    monkeypatch.setattr(build_runner, "run", bug)
    with pytest.raises(ValueError):
        build_runner.run_followed(module, None, None)


def test_the_driver_rollout_writes_before_the_checks_and_comes_back_with_its_defaults():
    order = [option for option, dummy in followers.FOLLOWERS]
    assert order.index("node_taints") < order.index("driver_rollout") < order.index("gpu_validate")
    rollout = followers.check({"driver_rollout": {"namespace": "nvidia-gpu-driver", "verify_checks": ["driver"]}})[
        "driver_rollout"
    ]
    assert rollout["max_unavailable"] == 1 and rollout["canary"] == 1 and rollout["assume_outdated"] is False
    assert rollout["verify_checks"] == ["driver"] and rollout["validate"] is True


def test_the_followers_specs_are_their_modules_specs_without_the_connection():
    for spec, option in (
        (validate_params.argument_spec(), "wait_timeout"),
        (nfd_params.argument_spec(), "wait_timeout"),
        (taints_spec(), "taints"),
        (dry_run_spec(), "definitions"),
        (rollout_params.argument_spec(), "max_unavailable"),
        (build_params.argument_spec(), "kernel_versions"),
    ):
        own = own_options(spec)
        assert "kubeconfig" in spec and "kubeconfig" not in own and option in own


@pytest.mark.parametrize(
    "result, follows",
    [
        ({"changed": False}, True),  # no wait
        ({"ready": True, "not_ready": []}, True),
        ({"ready": False, "not_ready": ["DaemonSet x/y (0/1 ready)"]}, False),
        ({"ready": True, "operand_pods": {"not_ready": []}}, True),
        ({"ready": True, "operand_pods": {"not_ready": [{"node": "gpu-1", "pod": None}]}}, False),
    ],
)
def test_followers_run_only_after_a_ready_wait_and_ready_pods(result, follows):
    assert followers.may_follow(result) is follows
