# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Facts tables and the NFD labels derived from them (seeds 002/004, openshift-releases.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from simopenshift import catalog, machineapi, nfd, seed

PREFIX = nfd.PREFIX


def node_for(instance_type, build=None):
    ms = seed.worker_machineset("us-east-2a", instance_type=instance_type)
    machine = machineapi.machine_from_machineset(dict(ms, metadata=dict(ms["metadata"], uid="u1")), "m-abcde")
    machine["spec"].update(machineapi.provisioned_fields(machine)[1])
    return machineapi.node_from_machine(machine, build or catalog.cluster_build())


def test_instance_types_from_the_shared_csv():
    assert len(catalog.instance_types()) == 94
    g4 = catalog.instance_type("g4dn.xlarge")
    assert (g4.gpu_count, g4.gpu_model, g4.vcpu, g4.memory_mib) == (1, "Tesla-T4", 4, 16384)
    assert catalog.instance_type("p3.8xlarge").gpu_count == 4
    assert catalog.instance_type("m6i.xlarge").gpu_count == 0
    assert catalog.instance_type("p9.mega") is None


def test_rhcos_builds_and_os_release_layouts():
    b416 = catalog.rhcos_build("416.94.202406172220-0")
    assert b416.kernel == "5.14.0-427.22.1.el9_4.x86_64"
    assert b416.os_release() == {
        "ID": "rhcos",
        "VERSION_ID": "4.16",
        "RHEL_VERSION": "9.4",
        "OPENSHIFT_VERSION": "4.16",
        "OSTREE_VERSION": "416.94.202406172220-0",
    }
    # 4.19 split RHCOS: ID rhel, VERSION_ID is the RHEL version (openshift-releases.md note 2).
    b419 = catalog.rhcos_build("9.6.20250925-0")
    assert (b419.os_release()["ID"], b419.os_release()["VERSION_ID"], b419.os_release()["OPENSHIFT_VERSION"]) == (
        "rhel",
        "9.6",
        "4.19",
    )
    # An unlisted pre-4.19 build id still says which OCP/RHEL it belongs to.
    derived = catalog.rhcos_build("412.86.202303241612-0")
    assert (derived.ocp, derived.rhel, derived.kernel) == ("4.12", "8.6", None)
    assert catalog.parse_os_image(b416.os_image)["OSTREE_VERSION"] == b416.build
    assert catalog.parse_os_image("Ubuntu 22.04.4 LTS") == {"ID": "ubuntu", "VERSION_ID": "22.04"}
    assert catalog.rhcos_build_for_kernel("5.14.0-427.50.1.el9_4.x86_64").build == "417.94.202409121747-0"


@pytest.mark.parametrize(
    "driver,cuda",
    [("450.80.02", "11.0"), ("470.57.02", "11.4"), ("550.90.07", "12.4"), ("535.104.05", "12.2"), ("abc", None)],
)
def test_cuda_version_follows_the_driver_branch(driver, cuda):
    assert catalog.cuda_version(driver) == cuda


def test_nfd_labels_of_a_g4dn_node_match_seed_004_shape():
    conf = nfd.parse_worker_config(nfd.OPENSHIFT_DEFAULT_WORKER_CONF)
    labels = nfd.feature_labels(node_for("g4dn.xlarge"), conf)
    assert labels[PREFIX + "pci-10de.present"] == "true"
    assert labels[PREFIX + "pci-1d0f.present"] == "true"
    assert labels[PREFIX + "kernel-version.full"] == "5.14.0-427.22.1.el9_4.x86_64"
    assert (
        labels[PREFIX + "kernel-version.major"],
        labels[PREFIX + "kernel-version.minor"],
        labels[PREFIX + "kernel-version.revision"],
    ) == ("5", "14", "0")
    assert labels[PREFIX + "system-os_release.ID"] == "rhcos"
    assert labels[PREFIX + "system-os_release.VERSION_ID.minor"] == "16"
    assert labels[PREFIX + "system-os_release.OSTREE_VERSION"] == "416.94.202406172220-0"
    assert labels[PREFIX + "cpu-cpuid.AVX512VNNI"] == "true"  # Cascade Lake, as in seed 004
    assert all(len(v) <= 63 for v in labels.values())


def test_nfd_pci_label_form_follows_device_label_fields():
    node = node_for("g4dn.xlarge")
    upstream = nfd.feature_labels(node, nfd.parse_worker_config(None))  # upstream default: class + vendor
    assert upstream[PREFIX + "pci-0302_10de.present"] == "true"
    assert PREFIX + "pci-10de.present" not in upstream
    assert PREFIX + "pci-0200_1d0f.present" not in upstream  # 0200 not in the upstream whitelist
    with_device = nfd.feature_labels(
        node,
        nfd.parse_worker_config(
            "sources:\n  pci:\n    deviceClassWhitelist: ['03']\n    deviceLabelFields: [vendor, device]\n"
        ),
    )
    assert with_device[PREFIX + "pci-10de_1eb8.present"] == "true"  # T4 device id, seed 002


def test_nfd_labels_without_gpu_xen_and_upstream_flavour():
    conf = nfd.parse_worker_config(nfd.OPENSHIFT_DEFAULT_WORKER_CONF)
    assert PREFIX + "pci-10de.present" not in nfd.feature_labels(node_for("m6i.xlarge"), conf)
    p3 = nfd.feature_labels(node_for("p3.2xlarge"), conf)
    assert p3[PREFIX + "pci-1013.present"] == "true" and p3[PREFIX + "pci-10de.present"] == "true"  # seed 000
    assert PREFIX + "cpu-cpuid.AVX512F" not in p3  # Broadwell
    upstream = nfd.feature_labels(node_for("g4dn.xlarge"), conf, openshift_fields=False)
    assert PREFIX + "system-os_release.OSTREE_VERSION" not in upstream
    assert upstream[PREFIX + "system-os_release.VERSION_ID"] == "4.16"


def test_nfd_labels_follow_a_kernel_upgrade():
    node = node_for("g4dn.xlarge", catalog.rhcos_build("417.94.202409121747-0"))
    labels = nfd.feature_labels(node, nfd.parse_worker_config(nfd.OPENSHIFT_DEFAULT_WORKER_CONF))
    assert labels[PREFIX + "kernel-version.full"] == "5.14.0-427.50.1.el9_4.x86_64"
    assert labels[PREFIX + "system-os_release.VERSION_ID"] == "4.17"


def test_worker_pod_recognition():
    assert nfd.is_worker_pod({"metadata": {"labels": {"app": "nfd-worker"}}})
    assert nfd.is_worker_pod(
        {"metadata": {"labels": {"app.kubernetes.io/name": "node-feature-discovery", "role": "worker"}}}
    )
    assert not nfd.is_worker_pod(
        {"metadata": {"labels": {"app.kubernetes.io/name": "node-feature-discovery", "role": "master"}}}
    )


def test_crd_files_are_single_documents_named_after_the_crd():
    """ansible-test's yamllint refuses multi-document files; install() reads one CRD per file."""
    import glob
    import os

    import yaml
    from simopenshift import install

    paths = glob.glob(os.path.join(install.CRD_DIR, "*.yaml")) + glob.glob(os.path.join(install.CRD_DIR, "*", "*.yaml"))
    assert len(paths) == 32
    for path in paths:
        with open(path) as handle:
            docs = [d for d in yaml.safe_load_all(handle) if d]
        assert len(docs) == 1, path
        assert os.path.basename(path) == docs[0]["metadata"]["name"] + ".yaml"
    assert len(install.crd_documents()) == 25  # olm-owned ones come with their operator
    assert [d["metadata"]["name"] for d in install.crd_documents(include_openshift=False)] == ["logs.kwok.x-k8s.io"]
