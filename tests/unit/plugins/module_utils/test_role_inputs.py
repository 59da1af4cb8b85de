"""The input rules the roles share (module_utils/role_inputs.py) and the Jinja tests over them (the filter: tests/unit/plugins/filter)."""

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.role_inputs import input_problems
from ansible_collections.gpuops.cluster.plugins.test.inputs import TestModule as JinjaTests

TESTS = JinjaTests().tests()

GOOD_BAD = [
    ("dns_label", ["nvidia-gpu-driver", "a"], ["GPU", "-a", "a" * 64, "", None, 5]),
    ("dns_subdomain", ["nvidia.com", "a-b.c"], ["A.b", "a_b", "." + "a"]),
    (
        "registry",
        ["nvcr.io/nvidia", "quay.io:443/a/b", "registry.local/x_y"],
        ["nvcr.io", "https://nvcr.io/nvidia", "nvcr.io/nvidia:v1", "NVCR.io/a"],
    ),
    (
        "image",
        ["nvcr.io/nvidia/gpu-operator:v26.7.0", "r.io/a@sha256:" + "a" * 64],
        ["nvcr.io/nvidia/x:v 1", "x:latest", "docker://r.io/a"],
    ),
    ("tag", ["v0.20.0", "550.127.08-rhel9.4"], ["v0.20.0 latest", ".x", "a" * 129]),
    ("host_path", ["/run/nvidia/driver", "/usr/local/nvidia"], ["/", "relative/path", "/a/../b", "/a b", None]),
    (
        "url",
        ["https://helm.ngc.nvidia.com/nvidia", "http://127.0.0.1:8879", "oci://registry.example.com/charts"],
        ["helm.ngc.nvidia.com/nvidia", "ftp://x", "https://a b", "https://x/y?token=1", None],
    ),
]


@pytest.mark.parametrize("rule,good,bad", GOOD_BAD, ids=[g[0] for g in GOOD_BAD])
def test_each_rule_accepts_the_good_and_names_the_bad(rule, good, bad):
    for value in good:
        assert TESTS[rule](value), (rule, value)
        assert input_problems("r", {"v": rule}, {"v": value}) == []
    for value in bad:
        assert not TESTS[rule](value), (rule, value)
        (msg,) = input_problems("r", {"v": rule}, {"v": value})
        assert msg.startswith("r: v must be "), msg


def test_bounds_aliases_and_wording():
    rules = {
        "a_wait_timeout": {"rule": "seconds", "min": 10},
        "a_replicas": {"rule": "whole", "min": 1},
        "a_root": {"rule": "host_path", "root": True, "alias": "gpuops_driver_root"},
        "a_registry": {"rule": "registry", "alias": "gpuops_image_registry"},
    }
    ok = {"a_wait_timeout": "10", "a_replicas": 1, "a_root": "/", "a_registry": "nvcr.io/nvidia"}
    assert input_problems("a", rules, ok) == []
    bad = {"a_wait_timeout": 9, "a_replicas": True, "a_root": "/x/..", "a_registry": "nvcr.io/nvidia:v1"}
    assert input_problems("a", rules, bad) == [
        "a: a_wait_timeout must be a number of seconds >= 10, got 9.",
        "a: a_replicas must be a whole number >= 1, got True.",
        "a: a_root (gpuops_driver_root) must be an absolute host path without '..', got /x/...",
        "a: a_registry (gpuops_image_registry) must be a registry host with a lowercase repository path and no tag,"
        " such as nvcr.io/nvidia, got nvcr.io/nvidia:v1.",
    ]
    assert TESTS["whole"]("12", min=10, max=12) and not TESTS["whole"](13, min=10, max=12)
    assert TESTS["host_path"]("/", root=True) and not TESTS["host_path"]("/")


def test_long_values_are_cut_and_the_fix_can_be_worded():
    (msg,) = input_problems(
        "r", {"v": {"rule": "dns_label", "what": "the namespace the driver role made"}}, {"v": "X" * 200}
    )
    assert msg == "r: v must be the namespace the driver role made, got " + "X" * 77 + "...."


def test_labels_and_tolerations_are_checked_whole():
    rules = {"sel": "labels", "tol": "tolerations"}
    assert (
        input_problems("r", rules, {"sel": {"nvidia.com/gpu.present": "true"}, "tol": [{"operator": "Exists"}]}) == []
    )
    assert len(input_problems("r", rules, {"sel": {"bad key!": "x"}, "tol": "key=value"})) == 2


def test_empty_is_accepted_only_where_the_rule_says():
    assert input_problems("r", {"v": {"rule": "dns_label", "empty": True}}, {"v": ""}) == []
    assert input_problems("r", {"v": {"rule": "dns_label", "empty": True}}, {"v": "A"}) != []
    assert input_problems("r", {"v": "dns_label"}, {"v": ""}) != []
