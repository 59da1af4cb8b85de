# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""A custom resource from a CSV's alm-examples: by kind, never by index; overrides deep-merged."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.olm import (
    AlmExampleError,
    alm_example,
    deep_merge,
    example_kinds,
    olm_steady,
)

WORKER_CONF = 'core:\n  sleepInterval: 60s\nsources:\n  pci:\n    deviceClassWhitelist: ["0200", "03", "12"]\n'
NFD = {
    "apiVersion": "nfd.openshift.io/v1",
    "kind": "NodeFeatureDiscovery",
    "metadata": {"name": "nfd-instance", "namespace": "openshift-nfd"},
    "spec": {
        "operand": {
            "image": "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:v4.16",
            "servicePort": 12000,
        },
        "workerConfig": {"configData": WORKER_CONF},
    },
}
RULE_416 = {"apiVersion": "nfd.openshift.io/v1alpha1", "kind": "NodeFeatureRule", "metadata": {"name": "my-rule"}}
RULE_419 = {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeatureRule", "metadata": {"name": "my-rule"}}
# The two layouts of the Red Hat NFD CSV (openshift/cluster-nfd-operator release-4.16 and release-4.19).
LAYOUT_416 = json.dumps([NFD, RULE_416])
LAYOUT_419 = json.dumps([RULE_419, NFD])


@pytest.mark.parametrize("layout", [LAYOUT_416, LAYOUT_419, json.loads(LAYOUT_419)], ids=["4.16", "4.19", "parsed"])
def test_chosen_by_kind_whatever_the_order(layout):
    assert alm_example(layout, "NodeFeatureDiscovery") == NFD


def test_kinds_in_their_order():
    assert example_kinds(LAYOUT_419) == ["NodeFeatureRule", "NodeFeatureDiscovery"]
    assert example_kinds(LAYOUT_416) == ["NodeFeatureDiscovery", "NodeFeatureRule"]


def test_overrides_deep_merge_and_namespace_last():
    conf = "sources:\n  pci:\n    deviceLabelFields: [vendor]\n"
    result = alm_example(
        LAYOUT_419,
        "NodeFeatureDiscovery",
        overrides={
            "metadata": {"namespace": "elsewhere", "labels": {"a": "b"}},
            "spec": {"workerConfig": {"configData": conf}, "operand": {"image": None}},
        },
        namespace="nfd-here",
    )
    assert result["metadata"] == {"name": "nfd-instance", "namespace": "nfd-here", "labels": {"a": "b"}}
    assert result["spec"]["workerConfig"] == {"configData": conf}
    # null removes the example's operand image; the sibling key survives the merge.
    assert result["spec"]["operand"] == {"servicePort": 12000}
    # the input is not modified
    assert json.loads(LAYOUT_419)[1] == NFD


def test_deep_merge_replaces_lists_and_scalars():
    base = {"a": {"b": [1, 2], "c": 1}, "d": "x"}
    assert deep_merge(base, {"a": {"b": [3]}, "d": {"e": 1}}) == {"a": {"b": [3], "c": 1}, "d": {"e": 1}}
    assert base == {"a": {"b": [1, 2], "c": 1}, "d": "x"}
    assert deep_merge(base, None) == base


def test_server_fields_are_dropped():
    example = dict(NFD, status={"conditions": []}, metadata=dict(NFD["metadata"], uid="u", resourceVersion="1"))
    result = alm_example([example], "NodeFeatureDiscovery")
    assert "status" not in result and result["metadata"] == NFD["metadata"]


def test_api_group_separates_examples_sharing_a_kind():
    both = [RULE_416, RULE_419]
    with pytest.raises(AlmExampleError, match="2 examples of NodeFeatureRule; pass api_group"):
        alm_example(both, "NodeFeatureRule")
    assert alm_example(both, "NodeFeatureRule", api_group="nfd.k8s-sigs.io") == RULE_419


@pytest.mark.parametrize(
    "annotation,kind,overrides,message",
    [
        (json.dumps([RULE_419]), "NodeFeatureDiscovery", None, "no NodeFeatureDiscovery; it lists NodeFeatureRule"),
        ("", "NodeFeatureDiscovery", None, "no alm-examples annotation"),
        (None, "NodeFeatureDiscovery", None, "no alm-examples annotation"),
        ("[{not json", "NodeFeatureDiscovery", None, "not valid JSON"),
        ('"a string"', "NodeFeatureDiscovery", None, "JSON list of objects"),
        (LAYOUT_416, "NodeFeatureDiscovery", ["spec"], "overrides must be a dictionary, not list"),
    ],
)
def test_errors_name_the_problem(annotation, kind, overrides, message):
    with pytest.raises(AlmExampleError, match=message):
        alm_example(annotation, kind, overrides=overrides)


def test_steady_only_when_installed_and_no_olm_object_written():
    cr = {"kind": "ClusterPolicy", "name": "gpu-cluster-policy", "action": "updated"}
    olm_objects = [
        {"kind": k, "name": "x", "action": "unchanged"} for k in ("Namespace", "OperatorGroup", "Subscription")
    ]
    # The custom resource's own action does not count: it went with the OLM objects, built from the installed CSV.
    assert olm_steady(olm_objects + [cr], True, "ClusterPolicy") is True
    assert olm_steady(olm_objects, True, "ClusterPolicy") is True
    # A written Subscription (or any OLM object) may bring another CSV: the waits follow.
    written = [dict(o, action="updated") if o["kind"] == "Subscription" else o for o in olm_objects]
    assert olm_steady(written + [cr], True, "ClusterPolicy") is False
    # Not installed when preflight read, or the apply has not run: never steady.
    assert olm_steady(olm_objects, False, "ClusterPolicy") is False
    assert olm_steady(None, True, "ClusterPolicy") is False


FILTER_CHECK = """
import json, sys
from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.cluster.plugins.filter.alm_example import FilterModule

layout = json.loads(sys.argv[1])
filters = FilterModule().filters()
assert filters["alm_example"](layout, "NodeFeatureDiscovery", namespace="x")["metadata"]["namespace"] == "x"
assert filters["alm_kinds"](json.dumps(layout)) == ["NodeFeatureRule", "NodeFeatureDiscovery"]
assert filters["olm_steady"]([{"kind": "Subscription", "action": "unchanged"}], True, "NodeFeatureDiscovery") is True
for call, text in ((lambda: filters["alm_example"](layout, "ClusterPolicy"), "alm_example: alm-examples has no ClusterPolicy"),
                   (lambda: filters["alm_kinds"](""), "alm_kinds: the CSV has no alm-examples"),
                   (lambda: filters["olm_steady"]({"objects": []}, True, "x"), "olm_steady: expects the objects")):
    try:
        call()
    except AnsibleFilterError as exc:
        assert text in str(exc), str(exc)
    else:
        raise AssertionError("no AnsibleFilterError")
print("ok")
"""


def test_filters_raise_filter_errors():
    """The filter plugin, in a child process: importing ansible.errors here would change how other tests' modules
    collect warnings."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run(
        [sys.executable, "-c", FILTER_CHECK, LAYOUT_419],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        check=False,
    )
    assert proc.stdout.decode().strip().endswith("ok"), proc.stdout.decode()
