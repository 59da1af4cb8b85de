# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import dataclasses

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import params as params_
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.driver_build_fixtures import (
    K414,
    K416,
    params,
)

# --- validation -----------------------------------------------------------


@pytest.mark.parametrize(
    "kernel",
    [
        K416,
        "4.15.0-1051-aws",
        "5.15.0-69-generic",
        "5.14.0-284.54.1.el9_2.aarch64_64k",
        "4.18.0-193.24.1.el8_2.dt1.x86_64",
        "6.1.0",
    ],
)
def test_kernel_versions_accepted(kernel):
    assert params_.validate_kernel_version(kernel) == kernel


@pytest.mark.parametrize(
    "kernel",
    [
        "5.14",
        "5.14.0 427",
        "linux-5.14.0",
        "5.14.0-427.22.1.el9_4.x86_64;rm -rf /",
        "5.14.0-",
        "5.14.0-427+",
        "",
        "5.14.0-" + "a" * 80,
    ],
)
def test_kernel_versions_rejected_name_parameter(kernel):
    with pytest.raises(GpuopsError) as err:
        params_.validate_kernel_version(kernel)
    assert err.value.param == "kernel_versions"
    assert "kernel_versions" in str(err.value) and "uname -r" in str(err.value)


@pytest.mark.parametrize("version", ["550.90.07", "535.104.05", "430.26", "470.57.02"])
def test_driver_version_full(version):
    assert params_.validate_driver_version(version, "driver-toolkit") == version


def test_driver_branch_only_for_precompiled():
    assert params_.validate_driver_version("550", "precompiled") == "550"
    with pytest.raises(GpuopsError) as err:
        params_.validate_driver_version("550", "driver-toolkit")
    assert err.value.param == "driver_version" and "full version" in str(err.value)


@pytest.mark.parametrize("version", ["v550", "550-90", "550.90.07.1", "abc", "55", ""])
def test_driver_version_malformed(version):
    with pytest.raises(GpuopsError) as err:
        params_.validate_driver_version(version, "precompiled")
    assert str(err.value).startswith("driver_version:")


@pytest.mark.parametrize(
    "override,param",
    [
        ({"driver_version": "55O.90.07"}, "driver_version"),
        ({"kernel_versions": ["5.14"]}, "kernel_versions"),
        ({"kernel_versions": []}, "kernel_versions"),
        ({"name": "Bad_Name"}, "name"),
        ({"name": "a" * 41}, "name"),
        ({"namespace": "-ns"}, "namespace"),
        ({"wait_timeout": 10}, "wait_timeout"),
        ({"wait_sleep": 0}, "wait_sleep"),
        ({"os_tag": "RHCOS 4.16"}, "os_tag"),
        ({"build_args": {"KERNEL_VERSION": "x"}}, "build_args"),
        ({"build_args": {"bad-name": "x"}}, "build_args"),
        ({"base_image": "not an image"}, "base_image"),
        ({"registry": "https://nvcr.io"}, "registry"),
    ],
)
def test_validate_params_bad_inputs(override, param):
    with pytest.raises(GpuopsError) as err:
        params_.validate_params(params(**override))
    assert err.value.param == param
    assert str(err.value).startswith(param + ":")


def test_validate_params_normalizes():
    cfg = params_.validate_params(
        params(
            kernel_versions=[K416, K416, K414],
            os_release={"ID": "rhcos", "VERSION_ID": "4.16"},
            build_args={"EXTRA": 1},
        )
    )
    assert cfg.kernel_versions == (K416, K414)
    assert cfg.build_args == {"EXTRA": "1"}
    assert cfg.os_release == {"ID": "rhcos", "VERSION_ID": "4.16"}


def test_config_is_read_only():
    """One Config per run: no attribute, and no mapping inside, can be changed after validate_params."""
    cfg = params_.validate_params(params(build_args={"EXTRA": "1"}, node_selector={"a": "b"}), check_mode=True)
    assert cfg.check_mode is True and cfg.diff is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.namespace = "other"
    for mapping in (cfg.build_args, cfg.node_selector, cfg.os_release):
        with pytest.raises(TypeError):
            mapping["x"] = "y"
    assert cfg.node_names == () and cfg.kernel_versions is None


def test_wait_timeout_not_checked_without_wait():
    cfg = params_.validate_params(params(wait=False, wait_timeout=5))
    assert cfg.wait is False
