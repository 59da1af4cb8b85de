"""The nfd role's checks and messages (module_utils/nfd_role.py); the role's integration tests run them for real."""

import json

from ansible_collections.gpuops.cluster.plugins.module_utils import nfd_role

GOOD = {
    "nfd_namespace": "",
    "nfd_expected_gpu_nodes": 0,
    "nfd_wait_timeout": 600,
    "nfd_wait_sleep": 5,
    "nfd_image_registry": "registry.k8s.io/nfd",
    "nfd_image_name": "node-feature-discovery",
    "nfd_version": "v0.19.0",
}
DEFAULTS = ["openshift-nfd", "node-feature-discovery"]
OLM = {
    "namespace": "openshift-nfd",
    "subscription": "nfd",
    "package": "nfd",
    "catalog_source": "redhat-operators",
    "catalog_source_namespace": "openshift-marketplace",
    "approval": "Automatic",
    "kind": "NodeFeatureDiscovery",
    "wait_timeout": 120,
}


def problems(openshift=False, namespace="node-feature-discovery", **values):
    return nfd_role.input_problems(dict(GOOD, **values), namespace, openshift, DEFAULTS)


def meta(name, **extra):
    return dict({"metadata": {"name": name}}, **extra)


# ------------------------------------------------------------------ preflight


def test_good_inputs_pass():
    assert problems() == []
    assert problems(nfd_expected_gpu_nodes="3", nfd_wait_timeout="5", nfd_wait_sleep=5) == []
    # OpenShift does not use the image.
    assert problems(openshift=True, namespace="openshift-nfd", nfd_image_registry="Bad/Registry") == []


def test_bad_inputs_are_named_as_the_tests_pin_them():
    assert problems(nfd_namespace="NFD_system", namespace="NFD_system") == [
        "nfd: nfd_namespace 'NFD_system' is not a valid namespace name (a DNS-1123 label: at most 63 lower-case "
        "letters, digits and '-', starting and ending with a letter or digit); fix it, or leave it empty for "
        "openshift-nfd (OpenShift) / node-feature-discovery (Kubernetes)."
    ]
    (msg,) = problems(nfd_expected_gpu_nodes=-1)
    assert msg.startswith("nfd: nfd_expected_gpu_nodes '-1' must be a whole number >= 0")
    (msg,) = problems(nfd_expected_gpu_nodes=True)
    assert msg.startswith("nfd: nfd_expected_gpu_nodes 'True' must be")
    for timeout, sleep in ((120, 0), (0, 1), (5, 6), ("x", 1)):
        (msg,) = problems(nfd_wait_timeout=timeout, nfd_wait_sleep=sleep)
        assert msg.startswith("nfd: nfd_wait_timeout ({0}) and nfd_wait_sleep ({1}) must be".format(timeout, sleep))
    (msg,) = problems(nfd_image_registry="registry.k8s.io/NFD")
    assert msg.startswith("nfd: nfd_image_registry 'registry.k8s.io/NFD', nfd_image_name 'node-feature-discovery'")
    assert "give 'registry.k8s.io/NFD/node-feature-discovery:v0.19.0', which is not a valid image reference" in msg
    (msg,) = problems(nfd_version="v0.19.0 ")
    assert "which is not a valid image reference" in msg
    assert problems(namespace=5, nfd_namespace=5)[0].startswith("nfd: nfd_namespace '5' is not")


FOUND = {
    "catalogs": [meta("redhat-operators"), meta("certified-operators")],
    "packages": [
        meta("nfd", status={"defaultChannel": "stable", "channels": [{"name": "stable"}, {"name": "4.16"}]}),
        meta("other", status={"defaultChannel": "a", "channels": [{"name": "a"}]}),
    ],
    "groups": [],
}


def test_olm_inputs_take_the_default_channel():
    assert nfd_role.olm_inputs(FOUND, "", OLM) == {"channel": "stable", "problems": []}
    assert nfd_role.olm_inputs(FOUND, "4.16", OLM) == {"channel": "4.16", "problems": []}
    own = dict(FOUND, groups=[meta("openshift-nfd")])
    assert nfd_role.olm_inputs(own, "", OLM)["problems"] == []


def test_olm_inputs_name_what_the_cluster_offers():
    (msg,) = nfd_role.olm_inputs(FOUND, "beta", OLM)["problems"]
    assert msg == (
        "nfd: nfd_channel 'beta' is not offered by package nfd in redhat-operators (channels: stable, 4.16; default: "
        "stable); set nfd_channel to one of them or leave it empty for the default."
    )
    (msg,) = nfd_role.olm_inputs(dict(FOUND, packages=[]), "", dict(OLM, catalog_source="redhat-operator"))["problems"]
    assert msg == (
        "nfd: nfd_catalog_source 'redhat-operator' is not a CatalogSource in openshift-marketplace "
        "(nfd_catalog_source_namespace); there: certified-operators, redhat-operators."
    )
    (msg,) = nfd_role.olm_inputs(FOUND, "", dict(OLM, package="nfd-operator"))["problems"]
    assert msg == (
        "nfd: nfd_package 'nfd-operator' is not offered by CatalogSource openshift-marketplace/redhat-operators "
        "(it offers: nfd, other)."
    )
    assert nfd_role.olm_inputs({}, "", OLM)["problems"][0].endswith("there: none.")
    foreign = dict(FOUND, groups=[meta("openshift-nfd"), meta("someone-else")])
    (msg,) = nfd_role.olm_inputs(foreign, "", OLM)["problems"]
    assert msg.startswith("nfd: nfd_namespace openshift-nfd already holds OperatorGroup someone-else; OLM fails")
    assert "(TooManyOperatorGroups)" in msg


# ---------------------------------------------------------------------- apply


def subscription(current="", conditions=(), written="2026-01-01T10:00:00Z", **status):
    return {
        "metadata": {
            "name": "nfd",
            "managedFields": [
                {"manager": "gpuops.cluster", "time": written},
                {"manager": "catalog-operator", "time": "2026-01-01T11:00:00Z"},
            ],
        },
        "status": dict(status, currentCSV=current, conditions=list(conditions)),
    }


def failed_at(when):
    return {
        "type": "ResolutionFailed",
        "status": "True",
        "reason": "ConstraintsNotSatisfiable",
        "message": "no operators found in channel beta of package nfd",
        "lastTransitionTime": when,
    }


def csv(phase, reason="", message="", kinds=("NodeFeatureRule", "NodeFeatureDiscovery")):
    examples = json.dumps([{"apiVersion": "nfd.openshift.io/v1", "kind": k, "metadata": {"name": "x"}} for k in kinds])
    return {
        "metadata": {"name": "nfd.4.16.0", "annotations": {"alm-examples": examples}},
        "status": {
            "phase": phase,
            "reason": reason,
            "message": message,
            "conditions": [{"phase": "Pending"}, {"phase": "Installing"}, {"phase": phase}],
        },
    }


def outcome(sub=None, found=None, created=None, check_mode=False):
    read = {"subscription": [sub] if sub else [], "csv": [found] if found else [], "created": created or []}
    return nfd_role.olm_outcome(read, OLM, "stable", check_mode)


def test_only_a_resolution_failure_after_the_last_write_counts():
    stale = subscription(conditions=[failed_at("2026-01-01T09:00:00Z")])
    assert nfd_role.subscription_state([stale])["settled"] is False
    fresh = subscription(conditions=[failed_at("2026-01-01T10:00:01Z")])
    assert nfd_role.subscription_state([fresh])["settled"] is True
    assert nfd_role.subscription_state([subscription("nfd.4.16.0")])["settled"] is True
    assert nfd_role.subscription_state([]) == {
        "status": {},
        "current_csv": "",
        "resolution_failed": [],
        "settled": False,
    }
    res = outcome(fresh)
    assert res["problem"] == (
        "nfd: Subscription openshift-nfd/nfd: ResolutionFailed (ConstraintsNotSatisfiable): no operators found in "
        "channel beta of package nfd"
    )
    assert not res["ready"]
    # Check mode reports a fresh failure too.
    assert outcome(fresh, check_mode=True)["problem"].startswith("nfd: Subscription openshift-nfd/nfd: Resolution")


def test_no_csv_in_time_names_the_subscription_state():
    pending = subscription(
        state="UpgradePending", conditions=[{"type": "CatalogSourcesUnhealthy", "status": "True", "message": "x"}]
    )
    assert outcome(pending)["problem"] == (
        "nfd: Subscription openshift-nfd/nfd: no CSV chosen after 120s (state UpgradePending; conditions: "
        "CatalogSourcesUnhealthy: x). Check the catalog pods in openshift-marketplace, or raise nfd_wait_timeout."
    )
    res = outcome(None, check_mode=True)
    assert res["problem"] == "" and not res["ready"]
    assert res["note"] == (
        "nfd: would subscribe to nfd/stable from redhat-operators in openshift-nfd (OperatorGroup openshift-nfd, "
        "approval Automatic); the NodeFeatureDiscovery CR is built once the CSV exists."
    )


def test_csv_phases():
    sub = subscription("nfd.4.16.0", installPlanRef={"name": "install-abc"})
    done = outcome(sub, csv("Succeeded", "InstallSucceeded"), [{"name": "nfd-instance", "action": "created"}])
    assert done["ready"] and done["problem"] == "" and done["csv_settled"] and done["csv_name"] == "nfd.4.16.0"
    assert done["note"] == (
        "nfd: nfd/stable -> nfd.4.16.0 Succeeded (Pending -> Installing -> Succeeded; InstallSucceeded); "
        "NodeFeatureDiscovery openshift-nfd/nfd-instance created"
    )
    assert outcome(sub, csv("Failed", "InstallComponentFailed", "boom"))["problem"] == (
        "nfd: ClusterServiceVersion openshift-nfd/nfd.4.16.0: Failed (InstallComponentFailed): boom"
    )
    # OLM's rollout words end in a newline (status_viewer.go DeploymentStatus): not carried into the line.
    waiting = "installing: waiting for deployment nfd-controller-manager to become ready: Waiting for rollout ...\n"
    assert outcome(sub, csv("Installing", "InstallWaiting", waiting))["problem"] == (
        "nfd: ClusterServiceVersion openshift-nfd/nfd.4.16.0: Installing (InstallWaiting): installing: waiting for "
        "deployment nfd-controller-manager to become ready: Waiting for rollout ... - still not Succeeded after 120s"
    )
    assert outcome(sub)["problem"] == (
        "nfd: ClusterServiceVersion openshift-nfd/nfd.4.16.0: not created after 120s (InstallPlan install-abc)"
    )
    assert outcome(sub, csv("Succeeded", kinds=("NodeFeatureRule",)))["problem"] == (
        "nfd: ClusterServiceVersion openshift-nfd/nfd.4.16.0: its alm-examples list NodeFeatureRule, no "
        "NodeFeatureDiscovery; this operator version is not one the role knows."
    )
    # Check mode waits for nothing: a CSV on its way is a note, a Failed one still stops.
    waiting = outcome(sub, csv("Installing"), check_mode=True)
    assert waiting["problem"] == "" and not waiting["ready"] and not waiting["csv_settled"]
    assert waiting["note"].startswith("nfd: would wait for ClusterServiceVersion openshift-nfd/nfd.4.16.0 (Installing)")
    assert outcome(sub, check_mode=True)["note"].startswith(
        "nfd: would wait for ClusterServiceVersion openshift-nfd/nfd.4.16.0 (not created yet)"
    )
    assert outcome(sub, csv("Failed", "X", "y"), check_mode=True)["problem"].endswith("Failed (X): y")
    checked = outcome(sub, csv("Succeeded"), [{"name": "nfd-instance", "action": "unchanged"}], check_mode=True)
    assert checked["ready"] and checked["note"].endswith(
        "NodeFeatureDiscovery openshift-nfd/nfd-instance unchanged (check mode)"
    )


# --------------------------------------------------------------------- verify

VERIFY = {
    "openshift": False,
    "namespace": "node-feature-discovery",
    "wait_timeout": 6,
    "gpu_labels": ["feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-0302_10de.present"],
    "label_prefix": "feature.node.kubernetes.io/",
}


def node(name, kernel="6.8.0-45-generic", **labels):
    return {"metadata": {"name": name, "labels": labels}, "status": {"nodeInfo": {"kernelVersion": kernel}}}


EXPECTED = {"count": 2, "source": "nfd_expected_gpu_nodes"}
GPU = {"feature.node.kubernetes.io/pci-10de.present": "true"}
NFD_ONLY = {"feature.node.kubernetes.io/kernel-version.full": "6.8.0-45-generic"}
CONTROL = {"node-role.kubernetes.io/control-plane": ""}


def test_kubernetes_names_each_worker_without_the_gpu_label():
    nodes = [node("gpu-1"), node("gpu-0", "5.15.0", **GPU), node("cp-0", **CONTROL), node("worker-0", **NFD_ONLY)]
    assert nfd_role.unlabelled({"nodes": nodes}, VERIFY, EXPECTED) == (
        "nfd: 1 of 2 expected GPU nodes (nfd_expected_gpu_nodes) labelled by NFD after 6s (gpu-0); without "
        "feature.node.kubernetes.io/pci-10de.present: node gpu-1 (kernel 6.8.0-45-generic): no NFD label at all (is "
        "an nfd-worker pod running there?); node worker-0 (kernel 6.8.0-45-generic): labelled by NFD but no NVIDIA "
        "PCI device label."
    )
    assert nfd_role.unlabelled({"nodes": [node("cp-0", **CONTROL)]}, VERIFY, EXPECTED) == (
        "nfd: 0 of 2 expected GPU nodes (nfd_expected_gpu_nodes) labelled by NFD after 6s; without "
        "feature.node.kubernetes.io/pci-10de.present: no candidate node found."
    )


def test_openshift_looks_at_the_gpu_machines_nodes_and_the_instance_first():
    settings = dict(VERIFY, openshift=True, namespace="openshift-nfd")
    expected = {"count": 2, "source": "the replicas of GPU MachineSets gpu-a"}
    available = meta("nfd-instance", status={"conditions": [{"type": "Available", "status": "True"}]})
    machines = [
        {"metadata": {"name": "gpu-a-1"}, "status": {"nodeRef": {"name": "ip-1"}}},
        {"metadata": {"name": "gpu-a-2"}, "status": {}},
    ]
    nodes = [node("ip-1", "5.14.0", **NFD_ONLY), node("ip-2")]
    read = {"instances": [available], "machines": machines, "nodes": nodes}
    assert nfd_role.unlabelled(read, settings, expected, "nfd-instance") == (
        "nfd: 0 of 2 expected GPU nodes (the replicas of GPU MachineSets gpu-a) labelled by NFD after 6s; without "
        "feature.node.kubernetes.io/pci-10de.present: node ip-1 (kernel 5.14.0): labelled by NFD but no NVIDIA PCI "
        "device label; Machines without a Node yet: gpu-a-2."
    )
    degraded = meta(
        "nfd-instance",
        status={"conditions": [{"type": "Degraded", "status": "True", "message": "worker crashloop"},
                               {"type": "Available", "status": "False", "message": ""}]},
    )  # fmt: skip
    assert nfd_role.unlabelled(dict(read, instances=[degraded]), settings, expected, "nfd-instance") == (
        "nfd: NodeFeatureDiscovery openshift-nfd/nfd-instance: not Available after 6s (Degraded: worker crashloop)"
    )
    assert nfd_role.unlabelled(dict(read, instances=[]), settings, expected, "nfd-instance").endswith(
        "not Available after 6s (no condition: )"
    )


def test_gpu_node_lines_and_the_expected_count():
    result = {
        "expected_gpu_nodes": 2,
        "kernel_versions": {"6.8.0-45-generic": ["gpu-1"], "5.15.0-119-generic": ["gpu-0"]},
        "gpu_nodes": [
            {"name": "gpu-0", "os_release": {"ID": "ubuntu", "VERSION_ID": "22.04"}, "kernel_version": "5.15.0-119-generic",
             "instance_type": "g4dn.xlarge"},
            {"name": "gpu-1", "os_release": {}, "kernel_version": None, "instance_type": None},
        ],
    }  # fmt: skip
    assert nfd_role.gpu_node_lines(result, "nfd_expected_gpu_nodes") == [
        "nfd: 2 GPU node(s) labelled (expected 2, from nfd_expected_gpu_nodes); kernels: 5.15.0-119-generic, "
        "6.8.0-45-generic",
        "nfd: gpu-0: ubuntu 22.04, kernel 5.15.0-119-generic, g4dn.xlarge",
        "nfd: gpu-1: ? , kernel ?, unknown instance type",
    ]
    assert nfd_role.gpu_node_lines({}, "x") == ["nfd: 0 GPU node(s) labelled (expected None, from x); kernels: none"]
    sets = [meta("gpu-a", spec={"replicas": 2}), meta("gpu-b", spec={"replicas": None})]
    assert nfd_role.expected_gpu_nodes(sets, 0, True) == {
        "count": 2,
        "source": "the replicas of GPU MachineSets gpu-a, gpu-b",
    }
    assert nfd_role.expected_gpu_nodes(sets, "3", False) == {"count": 3, "source": "nfd_expected_gpu_nodes"}


def test_the_csv_the_subscription_names_counts_among_several():
    # Preflight reads every CSV of the package (an upgrade leaves the old one Replacing next to the new one).
    sub = subscription("nfd.4.16.0")
    old = dict(csv("Replacing"), metadata={"name": "nfd.4.15.0", "annotations": {}})
    read = {"subscription": [sub], "csv": [old, csv("Succeeded", "InstallSucceeded")], "created": []}
    res = nfd_role.olm_outcome(read, OLM, "stable")
    assert res["ready"] and res["csv"]["metadata"]["name"] == "nfd.4.16.0"
    read["csv"] = [old]
    res = nfd_role.olm_outcome(read, OLM, "stable")
    assert not res["ready"] and not res["csv_settled"] and res["csv"] == {}


def test_installed_only_when_olm_has_nothing_pending():
    """Ready (the CSV the Subscription names Succeeded and offers the kind) is not enough to skip the OLM waits: the
    Subscription must be AtLatestKnown with that CSV installed, else an InstallPlan may wait (Manual approval)."""
    found = csv("Succeeded", "InstallSucceeded")
    done = subscription("nfd.4.16.0", state="AtLatestKnown", installedCSV="nfd.4.16.0")
    res = outcome(done, found)
    assert res["ready"] and res["installed"]
    pending = subscription("nfd.4.16.0", state="UpgradePending", installedCSV="nfd.4.16.0")
    res = outcome(pending, found)
    assert res["ready"] and not res["installed"]
    older = subscription("nfd.4.16.0", state="AtLatestKnown", installedCSV="nfd.4.15.0")
    assert not outcome(older, found)["installed"]
    assert not outcome(done, csv("Installing"))["installed"]
