# -*- coding: utf-8 -*-
"""Kubernetes label key / value rules (validators.py), moved here from the former labels.py tests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import validators as L
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError

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
    result = L.check_labels({"a": True, "b": False, "c": 3, "d": None, "e": ""}, "labels")
    assert result == {"a": "true", "b": "false", "c": "3", "d": None, "e": ""}


def test_validate_labels_names_the_bad_key_and_param():
    with pytest.raises(GpuopsError) as exc:
        L.check_labels({"good/x": "1", "Bad_Prefix.io/x": "1"}, "labels")
    assert exc.value.param == "labels"
    assert "Bad_Prefix.io/x" in str(exc.value) and str(exc.value).startswith("labels:")


def test_validate_labels_bad_value_names_key():
    with pytest.raises(GpuopsError) as exc:
        L.check_labels({"gpuops.io/pool": "has space"}, "labels")
    assert "gpuops.io/pool" in str(exc.value) and "has space" in str(exc.value)


def test_validate_labels_refuses_null_when_removal_not_allowed():
    with pytest.raises(GpuopsError) as exc:
        L.check_labels({"a": None}, "labels", allow_remove=False)
    assert "'a' has no value" in str(exc.value)


def test_validate_labels_refuses_lists():
    with pytest.raises(GpuopsError) as exc:
        L.check_labels({"a": ["x"]}, "labels")
    assert "must be a string" in str(exc.value)
