# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulated NFD CSV carries the real alm-examples layout of its OpenShift minor."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest
from simopenshift import nfd, olm


@pytest.fixture
def nfd_version(monkeypatch):
    def set_version(version):
        package = copy.deepcopy(olm.PACKAGES["nfd"])
        package["version"] = version
        monkeypatch.setitem(olm.PACKAGES, "nfd", package)

    return set_version


def kinds(package="nfd"):
    csv = olm.csv_body(package, "openshift-nfd")
    return json.loads(csv["metadata"]["annotations"]["alm-examples"])


def test_416_lists_the_nodefeaturediscovery_first_with_the_product_operand_image():
    examples = kinds()
    assert [(e["apiVersion"], e["kind"]) for e in examples] == [
        ("nfd.openshift.io/v1", "NodeFeatureDiscovery"),
        ("nfd.openshift.io/v1alpha1", "NodeFeatureRule"),
    ]
    cr = examples[0]
    assert cr["metadata"] == {"name": "nfd-instance", "namespace": "openshift-nfd"}
    assert cr["spec"]["operand"]["image"] == "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:v4.16"
    # The example's worker config gives the vendor-only GPU label (pci-10de).
    conf = nfd.parse_worker_config(cr["spec"]["workerConfig"]["configData"])
    assert conf == {"deviceClassWhitelist": ["0200", "03", "12"], "deviceLabelFields": ["vendor"]}


def test_419_lists_a_nodefeaturerule_first(nfd_version):
    nfd_version("4.19.0-202507151233")
    examples = kinds()
    assert [(e["apiVersion"], e["kind"]) for e in examples] == [
        ("nfd.k8s-sigs.io/v1alpha1", "NodeFeatureRule"),
        ("nfd.openshift.io/v1", "NodeFeatureDiscovery"),
    ]
    assert "image" not in examples[1]["spec"]["operand"]


def test_packages_without_examples_carry_none():
    assert (
        "alm-examples" not in olm.csv_body("gpu-operator-certified", "nvidia-gpu-operator")["metadata"]["annotations"]
    )
