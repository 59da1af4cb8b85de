# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Simulated Node Feature Discovery: operator operands, node labels as in seeds 002/004, deletion."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import time
import uuid

import pytest
from simopenshift.control import wait_match  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, catalog  # noqa: E402
from simopenshift.kube import CONFIGMAPS, DAEMONSETS, DEPLOYMENTS, NAMESPACES, NODES, PODS, labels_of  # noqa: E402
from simopenshift.testing import wait_for, worker_machinesets  # noqa: E402

pytestmark = pytest.mark.integration
PREFIX = "feature.node.kubernetes.io/"


@pytest.fixture
def nfd_ns(kube):
    """A namespace of its own, with any other NodeFeatureDiscovery removed first."""
    for cr in kube.list(apis.NODEFEATUREDISCOVERIES)[0]:
        kube.delete(apis.NODEFEATUREDISCOVERIES, cr["metadata"]["name"], cr["metadata"]["namespace"])
    wait_for(lambda: not kube.list(apis.NODEFEATUREDISCOVERIES)[0], 30, what="old NFD CRs gone")
    wait_for(
        lambda: not [d for d in kube.list(DAEMONSETS)[0] if d["metadata"]["name"] == "nfd-worker"],
        30,
        what="old nfd-worker DaemonSets garbage-collected",
    )
    nodes = {n["metadata"]["name"] for n in kube.list(NODES)[0]}
    # Pods bound to nodes that were deleted (scaled-down machines) do not run; pod GC reaps them later.
    wait_for(
        lambda: not [
            p
            for p in kube.list(PODS)[0]
            if p["metadata"].get("labels", {}).get("app") == "nfd-worker" and p["spec"].get("nodeName") in nodes
        ],
        30,
        what="old nfd-worker pods gone",
    )
    name = "sim-nfd-" + uuid.uuid4().hex[:5]
    kube.create(NAMESPACES, {"metadata": {"name": name}})
    yield name
    kube.delete(NAMESPACES, name)


def create_cr(kube, namespace, spec=None):
    kube.create(
        apis.NODEFEATUREDISCOVERIES,
        {
            "apiVersion": apis.NODEFEATUREDISCOVERIES.api_version,
            "kind": "NodeFeatureDiscovery",
            "metadata": {"name": "nfd-instance", "namespace": namespace},
            "spec": spec or {},
        },
    )


def worker_node(kube):
    ms = worker_machinesets(kube)[0]
    machines = kube.list(
        apis.MACHINES,
        apis.MACHINE_API_NS,
        label_selector="machine.openshift.io/cluster-api-machineset=" + ms["metadata"]["name"],
    )[0]
    return machines[0]["status"]["nodeRef"]["name"]


def nfd_labels(kube, node):
    return {k[len(PREFIX) :]: v for k, v in labels_of(kube.get(NODES, node)).items() if k.startswith(PREFIX)}


def strip_nfd_labels(kube):
    for node in kube.list(NODES)[0]:
        stale = {k: None for k in labels_of(node) if k.startswith(PREFIX)}
        if stale:
            kube.patch(
                NODES,
                node["metadata"]["name"],
                {"metadata": {"labels": stale, "annotations": {"nfd.node.kubernetes.io/feature-labels": None}}},
            )


def test_nfd_cr_deploys_operands_and_labels_nodes_like_seed_004(kube, nfd_ns):
    strip_nfd_labels(kube)
    node = worker_node(kube)
    create_cr(kube, nfd_ns)
    ds = wait_for(lambda: kube.get(DAEMONSETS, "nfd-worker", nfd_ns), 20, what="nfd-worker DaemonSet")
    assert ds["metadata"]["ownerReferences"][0]["kind"] == "NodeFeatureDiscovery"
    assert ds["spec"]["template"]["spec"]["tolerations"] == [{"operator": "Exists"}]
    assert kube.get(DEPLOYMENTS, "nfd-master", nfd_ns) is not None
    conf = kube.get(CONFIGMAPS, "nfd-worker", nfd_ns)["data"]["nfd-worker.conf"]
    assert '"vendor"' in conf
    labels = wait_match(
        lambda: nfd_labels(kube, node),
        lambda ls: "kernel-version.full" in ls,
        30,
        what="NFD labels on a worker",
    )
    build = catalog.cluster_build()
    assert labels["kernel-version.full"] == build.kernel
    assert (labels["kernel-version.major"], labels["kernel-version.minor"], labels["kernel-version.revision"]) == (
        "5",
        "14",
        "0",
    )
    assert labels["system-os_release.ID"] == "rhcos"
    assert labels["system-os_release.VERSION_ID"] == "4.16"
    assert (labels["system-os_release.VERSION_ID.major"], labels["system-os_release.VERSION_ID.minor"]) == ("4", "16")
    assert labels["system-os_release.RHEL_VERSION"] == "9.4"
    assert labels["system-os_release.OPENSHIFT_VERSION"] == "4.16"
    assert labels["system-os_release.OSTREE_VERSION"] == build.build
    assert labels["pci-1d0f.present"] == "true"  # Amazon ENA, as in seeds 000 and 004
    assert "pci-10de.present" not in labels  # m6i.xlarge has no GPU
    assert labels["cpu-cpuid.AVX512F"] == "true" and labels["cpu-hardware_multithreading"] == "true"
    owned = kube.get(NODES, node)["metadata"]["annotations"]["nfd.node.kubernetes.io/feature-labels"].split(",")
    assert sorted(owned) == sorted(labels)
    cr = wait_match(
        lambda: kube.get(apis.NODEFEATUREDISCOVERIES, "nfd-instance", nfd_ns),
        lambda c: any(
            x["type"] == "Available" and x["status"] == "True" for x in (c.get("status") or {}).get("conditions") or []
        ),
        30,
        what="NFD Available",
    )
    assert {c["type"] for c in cr["status"]["conditions"]} >= {"Available", "Degraded", "Progressing"}


def test_worker_config_changes_the_pci_label_form(kube, nfd_ns):
    node = worker_node(kube)
    create_cr(
        kube,
        nfd_ns,
        {
            "workerConfig": {
                "configData": 'sources:\n  pci:\n    deviceClassWhitelist: ["02", "03"]\n'
                "    deviceLabelFields: [class, vendor]\n"
            }
        },
    )
    wait_for(lambda: nfd_labels(kube, node).get("pci-0200_1d0f.present") == "true", 30, what="class_vendor PCI label")
    # The vendor-only form that nfd-worker no longer reports is removed, as nfd-master does.
    wait_for(lambda: "pci-1d0f.present" not in nfd_labels(kube, node), 10, what="stale label removed")


def test_deleting_the_cr_stops_labelling_but_keeps_labels(kube, nfd_ns):
    node = worker_node(kube)
    strip_nfd_labels(kube)
    create_cr(kube, nfd_ns)
    wait_for(lambda: "kernel-version.full" in nfd_labels(kube, node), 30, what="labels")
    kube.delete(apis.NODEFEATUREDISCOVERIES, "nfd-instance", nfd_ns)
    wait_for(lambda: kube.get(apis.NODEFEATUREDISCOVERIES, "nfd-instance", nfd_ns) is None, 30, what="CR gone")
    wait_for(lambda: kube.get(DAEMONSETS, "nfd-worker", nfd_ns) is None, 30, what="operands garbage-collected")
    wait_for(
        lambda: not [p for p in kube.list(PODS, nfd_ns)[0] if p["metadata"]["labels"].get("app") == "nfd-worker"],
        30,
        what="worker pods gone",
    )
    assert "kernel-version.full" in nfd_labels(kube, node)  # nobody removes them
    # ... and nothing relabels: a label removed by hand stays removed.
    kube.patch(NODES, node, {"metadata": {"labels": {PREFIX + "kernel-version.full": None}}})
    time.sleep(2)
    assert "kernel-version.full" not in nfd_labels(kube, node)


def test_pruner_on_delete_removes_the_labels(kube, nfd_ns):
    node = worker_node(kube)
    strip_nfd_labels(kube)
    create_cr(kube, nfd_ns, {"prunerOnDelete": True})
    wait_for(lambda: "kernel-version.full" in nfd_labels(kube, node), 30, what="labels")
    kube.delete(apis.NODEFEATUREDISCOVERIES, "nfd-instance", nfd_ns)
    wait_for(lambda: not nfd_labels(kube, node), 30, what="NFD labels pruned")
    wait_for(lambda: kube.get(apis.NODEFEATUREDISCOVERIES, "nfd-instance", nfd_ns) is None, 20, what="CR gone")
