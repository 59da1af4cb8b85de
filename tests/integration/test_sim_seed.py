# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulated cluster looks like a fresh OpenShift 4.16 IPI install on AWS.

CRDs carry OpenShift's group/version/kind/plural/scope; the seeded objects have
the shapes the collection reads (seed 000's MachineSet, Infrastructure,
ClusterVersion, pools, the driver-toolkit ImageStream, catalogs).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest
from kubernetes import client as k8s

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, catalog  # noqa: E402
from simopenshift.kube import CRDS, NAMESPACES, NODES, labels_of, node_ready  # noqa: E402
from simopenshift.testing import worker_machinesets  # noqa: E402

pytestmark = pytest.mark.integration

# group, version, kind, plural, scope, subresources
EXPECTED_CRDS = [
    ("machine.openshift.io", "v1beta1", "MachineSet", "machinesets", "Namespaced", {"status", "scale"}),
    ("machine.openshift.io", "v1beta1", "Machine", "machines", "Namespaced", {"status"}),
    ("machineconfiguration.openshift.io", "v1", "MachineConfig", "machineconfigs", "Cluster", set()),
    ("machineconfiguration.openshift.io", "v1", "MachineConfigPool", "machineconfigpools", "Cluster", {"status"}),
    ("machineconfiguration.openshift.io", "v1", "KubeletConfig", "kubeletconfigs", "Cluster", {"status"}),
    ("autoscaling.openshift.io", "v1", "ClusterAutoscaler", "clusterautoscalers", "Cluster", {"status"}),
    ("autoscaling.openshift.io", "v1beta1", "MachineAutoscaler", "machineautoscalers", "Namespaced", {"status"}),
    ("config.openshift.io", "v1", "Infrastructure", "infrastructures", "Cluster", {"status"}),
    ("config.openshift.io", "v1", "ClusterVersion", "clusterversions", "Cluster", {"status"}),
    ("build.openshift.io", "v1", "BuildConfig", "buildconfigs", "Namespaced", {"status"}),
    ("build.openshift.io", "v1", "Build", "builds", "Namespaced", {"status"}),
    ("image.openshift.io", "v1", "ImageStream", "imagestreams", "Namespaced", {"status"}),
    ("security.openshift.io", "v1", "SecurityContextConstraints", "securitycontextconstraints", "Cluster", set()),
    ("operators.coreos.com", "v1alpha1", "Subscription", "subscriptions", "Namespaced", {"status"}),
    ("operators.coreos.com", "v1alpha1", "ClusterServiceVersion", "clusterserviceversions", "Namespaced", {"status"}),
    ("operators.coreos.com", "v1alpha1", "InstallPlan", "installplans", "Namespaced", {"status"}),
    ("operators.coreos.com", "v1", "OperatorGroup", "operatorgroups", "Namespaced", {"status"}),
    ("operators.coreos.com", "v1alpha1", "CatalogSource", "catalogsources", "Namespaced", {"status"}),
    ("nfd.openshift.io", "v1", "NodeFeatureDiscovery", "nodefeaturediscoveries", "Namespaced", {"status"}),
    ("monitoring.coreos.com", "v1", "ServiceMonitor", "servicemonitors", "Namespaced", set()),
    ("monitoring.coreos.com", "v1", "PrometheusRule", "prometheusrules", "Namespaced", set()),
]


@pytest.mark.parametrize(
    "group,version,kind,plural,scope,subresources", EXPECTED_CRDS, ids=["%s.%s" % (c[3], c[0]) for c in EXPECTED_CRDS]
)
def test_crd_has_openshift_identity(kube, group, version, kind, plural, scope, subresources):
    crd = kube.get(CRDS, "%s.%s" % (plural, group))
    assert crd is not None
    assert crd["spec"]["names"]["kind"] == kind
    assert crd["spec"]["scope"] == scope
    served = {v["name"]: v for v in crd["spec"]["versions"] if v["served"]}
    assert version in served
    assert set((served[version].get("subresources") or {}).keys()) == subresources
    assert any(c["type"] == "Established" and c["status"] == "True" for c in crd["status"]["conditions"])


def test_schemas_are_structural_and_reject_wrong_types(kube):
    """A structural schema prunes/validates: a string replicas is refused, unknown spec fields survive in providerSpec."""
    from kubernetes.client.rest import ApiException

    ms = worker_machinesets(kube)[0]
    with pytest.raises(ApiException) as err:
        kube.patch(apis.MACHINESETS, ms["metadata"]["name"], {"spec": {"replicas": "two"}}, apis.MACHINE_API_NS)
    assert err.value.status == 422
    for crd in kube.list(CRDS)[0]:
        if crd["spec"]["group"].endswith("openshift.io") or crd["spec"]["group"].endswith("coreos.com"):
            bad = [c for c in crd["status"].get("conditions") or [] if c["type"] == "NonStructuralSchema"]
            assert not bad, crd["metadata"]["name"]


def test_scale_subresource_drives_machinesets(cluster, kube):
    ms = worker_machinesets(kube)[0]
    scale = k8s.CustomObjectsApi(cluster.api).get_namespaced_custom_object_scale(
        "machine.openshift.io", "v1beta1", apis.MACHINE_API_NS, "machinesets", ms["metadata"]["name"]
    )
    assert scale["spec"]["replicas"] == ms["spec"]["replicas"]
    assert "machine.openshift.io/cluster-api-machineset=%s" % ms["metadata"]["name"] in scale["status"]["selector"]


def test_infrastructure_and_clusterversion(kube):
    infra = kube.get(apis.INFRASTRUCTURES, "cluster")
    assert infra["status"]["platform"] == "AWS"
    assert infra["status"]["platformStatus"] == {"type": "AWS", "aws": {"region": "us-east-2"}}
    assert infra["status"]["infrastructureName"].startswith("gpuops-sim-")
    cv = kube.get(apis.CLUSTERVERSIONS, "version")
    assert cv["status"]["desired"]["version"] == catalog.CLUSTER_OCP_VERSION
    assert cv["status"]["history"][0]["state"] == "Completed"
    assert cv["spec"]["channel"] == "stable-4.16"


def test_worker_machinesets_are_shaped_like_openshift_ones(kube):
    infra = kube.get(apis.INFRASTRUCTURES, "cluster")["status"]["infrastructureName"]
    sets = worker_machinesets(kube)
    zones = sorted(
        m["spec"]["template"]["spec"]["providerSpec"]["value"]["placement"]["availabilityZone"] for m in sets
    )
    assert zones == ["us-east-2a", "us-east-2b", "us-east-2c"]
    for ms in sets:
        name = ms["metadata"]["name"]
        assert ms["spec"]["selector"]["matchLabels"] == {
            "machine.openshift.io/cluster-api-cluster": infra,
            "machine.openshift.io/cluster-api-machineset": name,
        }
        tlabels = ms["spec"]["template"]["metadata"]["labels"]
        assert tlabels["machine.openshift.io/cluster-api-machine-role"] == "worker"
        assert tlabels["machine.openshift.io/cluster-api-machine-type"] == "worker"
        assert tlabels["machine.openshift.io/cluster-api-machineset"] == name
        value = ms["spec"]["template"]["spec"]["providerSpec"]["value"]
        assert value["kind"] == "AWSMachineProviderConfig"
        assert value["instanceType"] == "m6i.xlarge"
        assert value["placement"]["region"] == "us-east-2"
        for key in (
            "ami",
            "iamInstanceProfile",
            "securityGroups",
            "subnet",
            "tags",
            "userDataSecret",
            "credentialsSecret",
            "blockDevices",
        ):
            assert value.get(key), key
        # Set by the AWS machineset controller for scale-from-zero.
        assert ms["metadata"]["annotations"]["machine.openshift.io/vCPU"] == "4"
        assert ms["metadata"]["annotations"]["machine.openshift.io/GPU"] == "0"
        status = ms["status"]
        assert status["replicas"] == status["readyReplicas"] == status["availableReplicas"] == ms["spec"]["replicas"]
        assert status["observedGeneration"] == ms["metadata"]["generation"]


def test_machines_and_nodes(kube):
    machines = kube.list(apis.MACHINES, apis.MACHINE_API_NS)[0]
    worker_sets = {m["metadata"]["name"] for m in worker_machinesets(kube)}
    seeded = [
        m
        for m in machines
        if m["metadata"]["labels"].get("machine.openshift.io/cluster-api-machineset") in worker_sets
        or m["metadata"]["labels"]["machine.openshift.io/cluster-api-machine-role"] == "master"
    ]
    roles = sorted(m["metadata"]["labels"]["machine.openshift.io/cluster-api-machine-role"] for m in seeded)
    assert roles.count("master") == 3 and roles.count("worker") >= 3
    build = catalog.cluster_build()
    for machine in seeded:
        assert machine["status"]["phase"] == "Running"
        assert machine["spec"]["providerID"].startswith("aws:///us-east-2")
        node = kube.get(NODES, machine["status"]["nodeRef"]["name"])
        assert node_ready(node)
        assert (
            node["metadata"]["annotations"]["machine.openshift.io/machine"]
            == "openshift-machine-api/" + machine["metadata"]["name"]
        )
        labels = labels_of(node)
        assert labels["node.kubernetes.io/instance-type"] == "m6i.xlarge"
        assert labels["topology.kubernetes.io/zone"] == machine["metadata"]["labels"]["machine.openshift.io/zone"]
        assert node["status"]["nodeInfo"]["kernelVersion"] == build.kernel
        assert node["status"]["nodeInfo"]["osImage"] == "Red Hat Enterprise Linux CoreOS %s (Plow)" % build.build
        assert catalog.GPU_RESOURCE not in node["status"]["capacity"]
        assert node["spec"]["providerID"] == machine["spec"]["providerID"]


def test_pools_namespaces_imagestream_catalogs(kube):
    for pool in ("master", "worker"):
        mcp = kube.get(apis.MACHINECONFIGPOOLS, pool)
        assert mcp["status"]["configuration"]["name"].startswith("rendered-%s-" % pool)
        conditions = {c["type"]: c["status"] for c in mcp["status"]["conditions"]}
        assert conditions["Updated"] == "True" and conditions["Degraded"] == "False"
        assert mcp["status"]["machineCount"] == mcp["status"]["readyMachineCount"] >= 3
    for ns in ("openshift-machine-api", "openshift-marketplace", "openshift-config", "openshift"):
        assert kube.get(NAMESPACES, ns) is not None
    # Not there until NFD is installed (the nfd role creates it).
    assert kube.get(NAMESPACES, "openshift-nfd") is None
    dtk = kube.get(apis.IMAGESTREAMS, "driver-toolkit", "openshift")
    tags = {t["tag"]: t["items"][0] for t in dtk["status"]["tags"]}
    assert set(tags) >= {catalog.CLUSTER_RHCOS_BUILD, "latest"}
    assert tags["latest"]["image"] == tags[catalog.CLUSTER_RHCOS_BUILD]["image"]
    source = kube.get(apis.CATALOGSOURCES, "redhat-operators", "openshift-marketplace")
    assert source["status"]["connectionState"]["lastObservedState"] == "READY"
    pm = kube.get(apis.PACKAGEMANIFESTS, "nfd", "openshift-marketplace")
    assert pm["status"]["defaultChannel"] == "stable" and pm["status"]["catalogSource"] == "redhat-operators"
