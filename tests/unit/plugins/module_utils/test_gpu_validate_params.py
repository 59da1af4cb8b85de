# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    DEFAULT_TOLERATIONS,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.params import (
    argument_spec,
    validate_params,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import check_selector
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.gpu_validate_fixtures import (
    params,
)

# --- parameters ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "override,param",
    [
        ({"checks": []}, "checks"),
        ({"wait_timeout": 3}, "wait_timeout"),
        ({"wait_sleep": 0}, "wait_sleep"),
        ({"wait_sleep": 400}, "wait_sleep"),
        ({"namespace": "Bad_NS"}, "namespace"),
        ({"driver_namespace": "-x"}, "driver_namespace"),
        ({"expected_gpus": 0}, "expected_gpus"),
        ({"vectoradd_image": "not an image"}, "vectoradd_image"),
        ({"driver_selector": "app=(x"}, "driver_selector"),
        ({"tolerations": [{"key": "a", "operator": "Exists", "value": "x"}]}, "tolerations"),
        ({"node_names": []}, "node_names"),
        ({"node_names": ["Bad Node"]}, "node_names"),
        ({"run_as_user": 0}, "run_as_user"),
        ({"metrics_port": 70000}, "metrics_port"),
        ({"driver_version": "latest"}, "driver_version"),
        # A missing folder is made; one under a file cannot be.
        ({"report_json": os.path.abspath(__file__) + "/reports/report.json"}, "report_json"),
        ({"report_junit": "/"}, "report_junit"),
        ({"parallel": 0}, "parallel"),
        ({"record_config_map": "gpu-validation", "previous_record": {}}, "record_config_map"),
        ({"record_config_map": "Bad_Name"}, "record_config_map"),
        ({"record_definition": {"kind": "ConfigMap", "metadata": {"name": "rec"}}}, "record_definition"),
        (
            {"record_config_map": "rec", "record_definition": {"kind": "Secret", "metadata": {"name": "rec"}}},
            "record_definition",
        ),
        (
            {"record_config_map": "rec", "record_definition": {"kind": "ConfigMap", "metadata": {"name": "other"}}},
            "record_definition",
        ),
        (
            {
                "record_config_map": "rec",
                "record_definition": {"kind": "ConfigMap", "metadata": {"name": "rec", "namespace": "elsewhere"}},
            },
            "record_definition",
        ),
        (
            {
                "record_config_map": "rec",
                "record_definition": {"kind": "ConfigMap", "metadata": {"name": "rec"}, "data": {}},
            },
            "record_definition",
        ),
        ({"checks": ["metrics"], "metrics_selector": None}, "metrics_selector"),
        ({"settle_timeout": -1, "checks": ["allocatable"]}, "settle_timeout"),
        ({"settle_timeout": 10, "checks": ["allocatable", "vectoradd"]}, "settle_timeout"),
    ],
)
def test_bad_params_name_the_parameter(override, param):
    with pytest.raises(GpuopsError) as err:
        validate_params(params(**override))
    assert err.value.param == param
    assert str(err.value).startswith(param + ":")


@pytest.mark.parametrize(
    "override,words",
    [
        ({"checks": ["allocatable", "gpu_burn"]}, ["checks", "gpu_burn"]),
        ({"tolerations": [{"key": "a", "operator": "Sometimes"}]}, ["operator", "Sometimes"]),
        ({"tolerations": [{"key": "a", "effect": "NoRun"}]}, ["effect", "NoRun"]),
        ({"tolerations": [{"colour": "red"}]}, ["colour"]),
        ({"tolerations": ["nvidia.com/gpu"]}, ["tolerations"]),
        ({"tolerations": [{"operator": "Equal", "value": "x"}]}, ["key"]),
        ({"pin": "hostname"}, ["pin", "hostname"]),
        ({"metrics_via": "dns"}, ["metrics_via", "dns"]),
    ],
)
def test_spec_rejects_bad_input(override, words):
    """Choices, unknown and missing toleration keys are the argument spec's job now."""
    result = ArgumentSpecValidator(argument_spec()).validate(dict(override))
    text = " ".join(result.error_messages)
    assert result.error_messages, override
    for word in words:
        assert word in text


@pytest.mark.parametrize(
    "alias,name,value",
    [
        ("nodes", "node_names", ["gpu-a"]),
        ("timeout", "wait_timeout", 120),
        ("poll_interval", "wait_sleep", 3),
    ],
)
def test_old_option_names_are_aliases(alias, name, value):
    result = ArgumentSpecValidator(argument_spec()).validate({alias: value})
    assert not result.error_messages
    assert result.validated_parameters[name] == value
    cfg = validate_params(dict(params(), **{name: result.validated_parameters[name]}))
    assert cfg[name] == value


def test_report_path_not_writable(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(str(folder), 0o500)
    real_access = os.access
    if real_access(str(folder), os.W_OK):
        # Running as root, where mode bits are not enforced: let access(2)
        # answer as it does for any other user of a 0500 folder.
        monkeypatch.setattr(
            os, "access", lambda p, mode: False if os.path.abspath(p) == str(folder) else real_access(p, mode)
        )
    try:
        with pytest.raises(GpuopsError) as err:
            validate_params(params(report_markdown=str(folder / "r.md")))
        assert err.value.param == "report_markdown" and "not writable" in str(err.value)
    finally:
        os.chmod(str(folder), 0o700)


def test_params_defaults_and_normalisation(tmp_path):
    cfg = validate_params(params(checks=["metrics", "allocatable", "metrics"], report_json=str(tmp_path / "r.json")))
    assert cfg["checks"] == ["allocatable", "metrics"]
    assert cfg["driver_namespace"] == cfg["metrics_namespace"] == "nvidia-gpu-operator"
    assert cfg["tolerations"] == DEFAULT_TOLERATIONS
    assert cfg["reports"] == {"json": str(tmp_path / "r.json")}
    assert cfg["metrics_path"] == "/metrics"


def test_selector_syntax_accepts_kubectl_forms():
    for sel in ("app=x", "app.kubernetes.io/component=nvidia-driver,tier!=a", "env in (a,b)", "!legacy", "app"):
        assert check_selector(sel, "driver_selector") == sel


def test_the_record_definition_is_the_configmap_the_record_is_read_from():
    definition = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rec", "labels": {"a": "b"}}}
    cfg = validate_params(params(record_config_map="rec", record_definition=definition))
    assert cfg["record_definition"]["metadata"] == {"name": "rec", "labels": {"a": "b"}, "namespace": cfg["namespace"]}
    assert "namespace" not in definition["metadata"]  # the caller's dict is left alone
    assert validate_params(params(record_config_map="rec"))["record_definition"] is None
