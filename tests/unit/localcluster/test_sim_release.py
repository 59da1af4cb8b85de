# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulated OpenShift release: 4.16 (RHCOS, ID=rhcos) by default, 4.19 (ID=rhel, VERSION_ID 9.6) on request.

Facts: shared/data/openshift-releases.md section 1 (release table), note 2 (os-release from 4.19), section 2
(Driver Toolkit ImageStream tags = RHCOS builds), through data/rhcos-builds.csv.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from simopenshift import catalog, machineapi, mco, nfd, seed

PREFIX = nfd.PREFIX
B416 = "416.94.202406172220-0"
B419 = "9.6.20250925-0"


@pytest.fixture(autouse=True)
def default_release():
    yield
    catalog.set_cluster_release(None)


def gpu_node(release):
    ms = seed.worker_machineset("us-east-2a", instance_type="g4dn.xlarge", release=release)
    machine = machineapi.machine_from_machineset(dict(ms, metadata=dict(ms["metadata"], uid="u1")), "m-abcde")
    machine["spec"].update(machineapi.provisioned_fields(machine)[1])
    return machineapi.node_from_machine(machine, release)


def test_releases_offered_and_default():
    assert sorted(catalog.openshift_versions()) == ["4.16", "4.17", "4.19"]
    assert catalog.release_build("4.16").build == B416
    assert catalog.release_build("4.19.0").build == B419
    assert catalog.cluster_build().build == B416 and catalog.cluster_ocp_version() == "4.16.0"
    with pytest.raises(ValueError, match="4.16, 4.17, 4.19"):
        catalog.release_build("4.18")


def test_cluster_version_and_dtk_tags_follow_the_release():
    r419 = catalog.release_build("4.19")
    cv = seed.cluster_version(r419)["status"]["desired"]
    assert cv["version"] == "4.19.0"
    assert cv["channels"] == ["candidate-4.19", "fast-4.19", "stable-4.19"]  # 4.19 is no EUS release
    cv416 = seed.cluster_version()["status"]["desired"]
    assert cv416["version"] == "4.16.0" and "eus-4.16" in cv416["channels"]
    assert cv["image"] != cv416["image"]
    tags = [t["name"] for t in seed.dtk_imagestream(r419)["spec"]["tags"]]
    assert tags == [B419, "latest"]
    assert [t["name"] for t in seed.dtk_imagestream()["spec"]["tags"]] == [B416, "latest"]


def test_rendered_config_boots_the_release():
    r419 = catalog.release_build("4.19")
    pool = seed.pool("worker")
    pool["metadata"]["uid"] = "p1"
    rendered, _sources = mco.render(pool, seed.base_machineconfigs("worker", r419))
    assert catalog.rhcos_build_for_os_image_url(rendered["spec"]["osImageURL"]).build == B419
    assert rendered["metadata"]["annotations"]["machineconfiguration.openshift.io/release-image-version"] == "4.19.0"
    default, _sources = mco.render(pool, seed.base_machineconfigs("worker"))
    assert default["metadata"]["annotations"]["machineconfiguration.openshift.io/release-image-version"] == "4.16.0"
    assert default["metadata"]["name"] != rendered["metadata"]["name"]


def test_419_node_reports_rhel_and_nfd_labels_it():
    node = gpu_node(catalog.release_build("4.19"))
    info = node["status"]["nodeInfo"]
    assert info["kernelVersion"] == "5.14.0-570.49.1.el9_6.x86_64"
    assert info["osImage"] == "Red Hat Enterprise Linux CoreOS 9.6.20250925-0 (Plow)"
    assert node["metadata"]["labels"]["node.openshift.io/os_id"] == "rhel"
    labels = nfd.feature_labels(node, nfd.parse_worker_config(nfd.OPENSHIFT_DEFAULT_WORKER_CONF))
    want = {
        "system-os_release.ID": "rhel",
        "system-os_release.VERSION_ID": "9.6",
        "system-os_release.VERSION_ID.major": "9",
        "system-os_release.VERSION_ID.minor": "6",
        "system-os_release.RHEL_VERSION": "9.6",
        "system-os_release.OPENSHIFT_VERSION": "4.19",
        "system-os_release.OSTREE_VERSION": B419,
        "kernel-version.full": "5.14.0-570.49.1.el9_6.x86_64",
    }
    assert {k: labels.get(PREFIX + k) for k in want} == want


def test_416_node_unchanged():
    node = gpu_node(catalog.release_build("4.16"))
    assert node["metadata"]["labels"]["node.openshift.io/os_id"] == "rhcos"
    labels = nfd.feature_labels(node, nfd.parse_worker_config(nfd.OPENSHIFT_DEFAULT_WORKER_CONF))
    assert labels[PREFIX + "system-os_release.ID"] == "rhcos"
    assert labels[PREFIX + "system-os_release.VERSION_ID"] == "4.16"


def test_controllers_process_release():
    assert catalog.set_cluster_release("4.19").build == B419
    assert catalog.cluster_ocp_version() == "4.19.0"
    # A machine created later boots the pool's rendered osImageURL; the fallback is the release too.
    assert catalog.cluster_build().kernel == "5.14.0-570.49.1.el9_6.x86_64"


def test_catalog_offers_the_nfd_csv_of_the_release():
    from simopenshift import olm

    pm = olm.package_manifest("nfd", "4.19")["status"]["channels"]
    assert pm[0]["name"] == "stable" and pm[0]["currentCSV"].startswith("nfd.4.19.0-")
    assert olm.package_manifest("nfd")["status"]["channels"][0]["currentCSV"] == "nfd.4.16.0-202406241406"
    catalog.set_cluster_release("4.19")
    csv = olm.csv_body("nfd", "openshift-nfd")
    assert csv["metadata"]["name"] == pm[0]["currentCSV"] and csv["spec"]["version"].startswith("4.19.0-")
    image = csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image.endswith(":v4.19")
    # 4.19 layout of alm-examples: NodeFeatureDiscovery is not the first example any more.
    import json

    kinds = [e["kind"] for e in json.loads(olm.alm_examples("nfd"))]
    assert kinds[0] != "NodeFeatureDiscovery" and "NodeFeatureDiscovery" in kinds
    assert olm.package_for_csv(pm[0]["currentCSV"])[0] == "nfd"
    # The GPU Operator too: the 4.19 catalog offers v26.7.0 (certified for 4.18-4.22).
    assert olm.package("gpu-operator-certified")["channels"]["stable"] == "gpu-operator-certified.v26.7.0"
