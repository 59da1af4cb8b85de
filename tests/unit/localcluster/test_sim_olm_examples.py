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


def test_gpu_operator_csv_carries_the_real_bundles_examples_per_openshift_minor():
    """4.14-4.17 catalogs offer v26.3.3, 4.18+ v26.7.0 (com.redhat.openshift.versions of each bundle)."""
    for ocp, csv, channel, kinds_wanted in (
        ("4.16", "gpu-operator-certified.v26.3.3", "v26.3", ["ClusterPolicy", "NVIDIADriver"]),
        ("4.19", "gpu-operator-certified.v26.7.0", "v26.7", ["ClusterPolicy", "GPUCluster", "NVIDIADriver"]),
    ):
        pkg = olm.package("gpu-operator-certified", ocp)
        assert pkg["defaultChannel"] == channel and pkg["channels"] == {"stable": csv, channel: csv}
        examples = json.loads(json.dumps(pkg["almExamples"]))
        assert [e["kind"] for e in examples] == kinds_wanted
        policy = examples[0]
        assert policy["metadata"]["name"] == "gpu-cluster-policy" and policy["spec"]["operator"] == {
            "use_ocp_driver_toolkit": True
        }
        env = {e["name"]: e["value"] for e in pkg["deployment"]["env"]}
        assert env["DRIVER_IMAGE"].startswith("nvcr.io/nvidia/driver@sha256:")
        assert env["VALIDATOR_IMAGE"] == "nvcr.io/nvidia/gpu-operator:v" + csv.split(".v", 1)[1]


@pytest.mark.parametrize(
    "ocp, k8s_sigs, openshift_io",
    [
        ("4.14", [], ["nodefeaturediscoveries", "nodefeaturerules"]),
        ("4.16", [], ["nodefeaturediscoveries", "nodefeaturerules", "nodefeatures"]),
        ("4.18", [], ["nodefeaturediscoveries", "nodefeaturegroups", "nodefeaturerules", "nodefeatures"]),
        (
            "4.19",
            ["nodefeaturegroups", "nodefeaturerules", "nodefeatures"],
            ["nodefeaturediscoveries", "nodefeaturerules", "nodefeatures"],
        ),
        (
            "4.21",
            ["nodefeaturegroups", "nodefeaturerules", "nodefeatures"],
            ["nodefeaturediscoveries", "nodefeaturerules", "nodefeatures"],
        ),
    ],
)
def test_the_nfd_operator_owns_the_crds_of_its_minor_each_from_its_file(ocp, k8s_sigs, openshift_io):
    # From 4.19 the NFD operator serves upstream's nfd.k8s-sigs.io NodeFeatureRule (the collection's ledger lists it).
    import glob
    import os

    import yaml

    owned = olm.package("nfd", ocp)["ownedCRDs"]
    assert sorted(c.split(".")[0] for c in owned if c.endswith(".nfd.k8s-sigs.io")) == k8s_sigs
    assert sorted(c.split(".")[0] for c in owned if c.endswith(".nfd.openshift.io")) == openshift_io
    files = {}
    for path in glob.glob(os.path.join(olm.OWNED_CRD_DIR, "*.yaml")):
        with open(path) as handle:
            files[yaml.safe_load(handle)["metadata"]["name"]] = path
    assert all(c in files or c == "nodefeaturediscoveries.nfd.openshift.io" for c in owned), set(owned) - set(files)
