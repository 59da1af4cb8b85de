# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The nfd role, for real, through include_role.

OpenShift (the shared ``cluster``, openshift profile): check mode on a cluster without the operator, bad inputs
refused in preflight with zero writes, OLM's ResolutionFailed named, then a GPU MachineSet, the converge (OLM
Subscription -> CSV Succeeded -> NodeFeatureDiscovery from the CSV's alm-examples with overrides -> the GPU node
labelled), a re-run with zero writes, absent twice.

Kubernetes (``k8s_cluster``, two bare GPU nodes: T4 on Ubuntu 22.04 / 5.15, A10G on Ubuntu 24.04 / 6.8): check mode,
bad inputs, a verify failure naming the unlabelled GPU node, the converge from the upstream v0.19.0 manifests with
both kernels in ``nfd_result``, a re-run with zero writes, absent twice (labels removed with nfd_remove_labels).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time

import pytest
from conftest import changed_tasks, failed_message, run_playbook, run_role, short_name, task_results
from kubernetes import client
from waiting import wait_until

pytestmark = pytest.mark.integration

FAST = {"nfd_wait_sleep": 1, "nfd_wait_timeout": 120}
NFD = "feature.node.kubernetes.io/"
GPU_LABEL = NFD + "pci-10de.present"
OLM = ("operators.coreos.com", "v1alpha1")
# The two OLM waits of tasks/apply.yml (Subscription, then CSV).
OLM_WAITS = (
    "Wait until OLM chose the operator's ClusterServiceVersion",
    "Wait until the ClusterServiceVersion Succeeded",
)
NS = "openshift-nfd"
GPU_MS = "nfd-role-gpu"
# Platform facts as preflight sets them, for the bad-input runs (saves the detection round trips).
OPENSHIFT = {"openshift": True, "openshift_version": "4.16.0", "cloud": "AWS"}
KUBERNETES = {"openshift": False, "cloud": "none"}
# Runs after the first converge get the platform as site.yml hands it over (preflight ran before): fewer round trips.
KNOWN_OS = dict(FAST, preflight_platform=OPENSHIFT)
APPLY_TASK = "Apply the NFD manifests (OpenShift - namespace, OperatorGroup, Subscription; Kubernetes - upstream NFD, until ready)"
CR_TASK = "Create the NodeFeatureDiscovery from the CSV's alm-examples (chosen by kind) and nfd_cr_overrides"
KNOWN_K8S = dict(FAST, preflight_platform=KUBERNETES)
WORKER_CONF = """core:
  sleepInterval: 30s
sources:
  pci:
    deviceClassWhitelist: ["0200", "03", "12"]
    deviceLabelFields: [vendor]
"""


def custom(cluster):
    from kubernetes import client

    return client.CustomObjectsApi(cluster.api)


def core(cluster):
    from kubernetes import client

    return client.CoreV1Api(cluster.api)


def get(cluster, group, version, plural, name, namespace=NS):
    from kubernetes.client.rest import ApiException

    try:
        return custom(cluster).get_namespaced_custom_object(group, version, namespace, plural, name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def items(cluster, group, version, plural, namespace=NS):
    return custom(cluster).list_namespaced_custom_object(group, version, namespace, plural)["items"]


def by_name(out):
    """{task name without the role's prefix: its result}."""
    return {short_name(name): res for name, res in task_results(out)}


def debug_messages(out):
    """The msg of every task result (and loop item) that did not fail."""
    found = []
    for dummy, res in task_results(out):
        for one in [res] + list(res.get("results") or []):
            if "msg" in one and not one.get("failed"):
                found.append(str(one["msg"]))
    return found


def fact(out, name):
    for dummy, res in task_results(out):
        if name in (res.get("ansible_facts") or {}):
            return res["ansible_facts"][name]
    raise AssertionError("{0} was never set".format(name))


def nfd_labelled(cluster, node):
    labels = core(cluster).read_node(node).metadata.labels or {}
    return {k: v for k, v in labels.items() if k.startswith(NFD)}


def assert_ok(out):
    assert out["stats"]["localhost"]["failures"] == 0, failed_message(out)
    assert out["stats"]["localhost"].get("ignored", 0) == 0, failed_message(out)


def refused(cluster, role_vars, platform):
    """Run the role with a bad input; return (failure message, writes)."""
    mark = cluster.audit.mark()
    out = run_role(cluster, "nfd", dict(FAST, preflight_platform=platform, **role_vars))
    return failed_message(out) or "", cluster.audit.writes_since(mark, include_dry_run=True)


# ---------------------------------------------------------------- OpenShift


def test_openshift_check_mode_without_the_operator_writes_nothing(cluster):
    assert get(cluster, *OLM, "subscriptions", "nfd") is None, "a Subscription nfd is left from another test"
    mark = cluster.audit.mark()
    out = run_role(cluster, "nfd", FAST, check=True)
    assert_ok(out)
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert any(
        "nfd: would subscribe to nfd/stable from redhat-operators in openshift-nfd" in m
        and "the NodeFeatureDiscovery CR is built once the CSV exists" in m
        for m in debug_messages(out)
    ), debug_messages(out)


@pytest.mark.parametrize(
    "role_vars,fragments",
    [
        ({"nfd_channel": "beta"}, ["nfd: nfd_channel 'beta' is not offered by package nfd", "channels: stable"]),
        (
            {"nfd_catalog_source": "redhat-operator"},
            ["nfd: nfd_catalog_source 'redhat-operator' is not a CatalogSource", "redhat-operators"],
        ),
        ({"nfd_package": "nfd-operator"}, ["nfd: nfd_package 'nfd-operator' is not offered by CatalogSource"]),
    ],
    ids=["channel-not-offered", "unknown-catalog-source", "unknown-package"],
)
def test_openshift_bad_inputs_are_refused_before_any_write(cluster, role_vars, fragments):
    message, writes = refused(cluster, role_vars, OPENSHIFT)
    for fragment in fragments:
        assert fragment in message, message
    assert writes == []


def test_openshift_foreign_operator_group_is_refused_before_any_write(cluster):
    """Two OperatorGroups in one namespace make OLM fail the CSV (TooManyOperatorGroups): refused up front."""
    group = {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "OperatorGroup",
        "metadata": {"name": "someone-else"},
        "spec": {},
    }
    from kubernetes import client

    core = client.CoreV1Api(cluster.api)
    # Somebody else made the namespace and their OperatorGroup (a fresh cluster has no openshift-nfd).
    made = NS not in [n.metadata.name for n in core.list_namespace().items]
    if made:
        core.create_namespace({"metadata": {"name": NS}})
    custom(cluster).create_namespaced_custom_object("operators.coreos.com", "v1", NS, "operatorgroups", group)
    try:
        message, writes = refused(cluster, {}, OPENSHIFT)
        assert message.startswith("nfd: nfd_namespace openshift-nfd already holds OperatorGroup someone-else;"), message
        assert "TooManyOperatorGroups" in message
        assert writes == []
    finally:
        custom(cluster).delete_namespaced_custom_object(
            "operators.coreos.com", "v1", NS, "operatorgroups", "someone-else"
        )
        if made:
            core.delete_namespace(NS)
            wait_until(
                lambda: NS not in [n.metadata.name for n in core.list_namespace().items],
                timeout=60,
                what="namespace deleted",
            )


def test_openshift_resolution_failed_converge_rerun_absent(cluster, ansible_task):
    # A PackageManifest that offers a channel the catalog cannot resolve (a stale package cache):
    # preflight accepts it, OLM answers ResolutionFailed, and the role stops naming the Subscription.
    pm = get(cluster, "packages.operators.coreos.com", "v1", "packagemanifests", "nfd", "openshift-marketplace")
    channels = pm["status"]["channels"]
    stale = dict(channels[0], name="beta", currentCSV="nfd.4.16.9")
    patch = custom(cluster).patch_namespaced_custom_object_status
    patch("packages.operators.coreos.com", "v1", "openshift-marketplace", "packagemanifests", "nfd",
          {"status": {"channels": channels + [stale]}})  # fmt: skip
    source = sorted(
        m["metadata"]["name"] for m in items(cluster, "machine.openshift.io", "v1beta1", "machinesets", "openshift-machine-api")
        if "-worker-" in m["metadata"]["name"]
    )[0]  # fmt: skip
    try:
        out = run_role(cluster, "nfd", dict(FAST, nfd_channel="beta"))
        message = failed_message(out) or ""
        assert message.startswith("nfd: Subscription openshift-nfd/nfd: ResolutionFailed (ConstraintsNotSatisfiable):")
        assert "no operators found in channel beta of package nfd" in message, message
        assert get(cluster, "nfd.openshift.io", "v1", "nodefeaturediscoveries", "nfd-instance") is None

        # One GPU MachineSet: the role expects its replicas (1) to be labelled.
        ms = ansible_task(
            "gpuops.cluster.machineset_clone",
            {"source": source, "instance_type": "g4dn.xlarge", "name": GPU_MS, "wait": True, "wait_sleep": 1,
             "wait_timeout": 180},
        )  # fmt: skip
        assert not ms.get("failed"), ms

        # Converge: the same Subscription, now on the default channel; the stale ResolutionFailed is not taken.
        overrides = {"spec": {"workerConfig": {"configData": WORKER_CONF}}}
        started = time.monotonic()
        out = run_role(cluster, "nfd", dict(FAST, nfd_cr_overrides=overrides))
        converge_s = time.monotonic() - started
        assert_ok(out)
        # The channel changed (beta -> stable): the Subscription was updated, so OLM is waited for.
        assert [
            not res.get("skipped") for name, res in task_results(out) if any(wait in name for wait in OLM_WAITS)
        ] == [True, True]
        result = fact(out, "nfd_result")
        assert result["expected_gpu_nodes"] == 1 and len(result["gpu_nodes"]) == 1, result
        gpu = result["gpu_nodes"][0]
        assert gpu["instance_type"] == "g4dn.xlarge" and gpu["os_release"]["ID"] == "rhcos"
        assert result["kernel_versions"] == {gpu["kernel_version"]: [gpu["name"]]}
        assert nfd_labelled(cluster, gpu["name"])[GPU_LABEL] == "true"
        assert result["source"].startswith("OLM nfd/stable nfd.4.16.0-")
        # The CR is the CSV's NodeFeatureDiscovery example (by kind) with the override merged in.
        cr = get(cluster, "nfd.openshift.io", "v1", "nodefeaturediscoveries", "nfd-instance")
        assert cr["spec"]["workerConfig"]["configData"] == WORKER_CONF
        assert cr["spec"]["operand"]["image"] == "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:v4.16"
        assert cr["spec"]["customConfig"]["configData"].startswith("#")  # from the example, untouched
        sub = get(cluster, *OLM, "subscriptions", "nfd")
        assert sub["spec"] == {
            "channel": "stable",
            "installPlanApproval": "Automatic",
            "name": "nfd",
            "source": "redhat-operators",
            "sourceNamespace": "openshift-marketplace",
        }
        ns = core(cluster).read_namespace(NS).metadata.labels
        assert ns["openshift.io/cluster-monitoring"] == "true"
        groups = items(cluster, "operators.coreos.com", "v1", "operatorgroups")
        assert [(g["metadata"]["name"], g["spec"]["targetNamespaces"]) for g in groups] == [(NS, [NS])]

        # Re-run: nothing changes, nothing is written.
        mark = cluster.audit.mark()
        started = time.monotonic()
        out = run_role(cluster, "nfd", dict(KNOWN_OS, nfd_cr_overrides=overrides))
        rerun_s = time.monotonic() - started
        assert_ok(out)
        assert changed_tasks(out) == []
        assert cluster.audit.writes_since(mark, include_dry_run=True) == []
        # Nothing written and preflight read the CSV Succeeded: no OLM wait, the CR still built from that CSV.
        assert [res.get("skipped") for name, res in task_results(out) if any(wait in name for wait in OLM_WAITS)] == [
            True,
            True,
        ]
        assert fact(out, "nfd_result")["source"] == result["source"]
        # ... applied with the manifests, in one k8s_ensure: its own task is skipped.
        results = by_name(out)
        assert results[CR_TASK].get("skipped"), results[CR_TASK]
        assert [
            (o["kind"], o["action"]) for o in results[APPLY_TASK]["objects"] if o["kind"] == "NodeFeatureDiscovery"
        ] == [("NodeFeatureDiscovery", "unchanged")]
        print(
            "nfd openshift: converge {0:.0f}s, no-op re-run {1:.0f}s, {2} tasks".format(
                converge_s, rerun_s, len(task_results(out))
            )
        )

        # A changed override with the operator installed: the CR is updated by the manifests' k8s_ensure, which
        # then waits for the labels; no OLM wait, no second apply.
        changed = {"spec": {"workerConfig": {"configData": WORKER_CONF + "# changed\n"}}}
        out = run_role(cluster, "nfd", dict(KNOWN_OS, nfd_cr_overrides=changed))
        assert_ok(out)
        results = by_name(out)
        assert results[CR_TASK].get("skipped") and results[APPLY_TASK]["changed"], results[APPLY_TASK]
        assert [(o["kind"], o["action"]) for o in results[APPLY_TASK]["objects"] if o["action"] != "unchanged"] == [
            ("NodeFeatureDiscovery", "updated")
        ]
        assert results[APPLY_TASK]["nfd_labels"]["nodes"], results[APPLY_TASK]
        assert [res.get("skipped") for name, res in task_results(out) if any(wait in name for wait in OLM_WAITS)] == [
            True,
            True,
        ]
        cr = get(cluster, "nfd.openshift.io", "v1", "nodefeaturediscoveries", "nfd-instance")
        assert cr["spec"]["workerConfig"]["configData"].endswith("# changed\n")
        assert fact(out, "nfd_result")["source"] == result["source"]

        # Absent (with the labels): CR first, then Subscription, CSV, OperatorGroup; the GPU node loses its labels.
        out = run_role(cluster, "nfd", dict(KNOWN_OS, nfd_state="absent", nfd_remove_labels=True))
        assert_ok(out)
        assert get(cluster, "nfd.openshift.io", "v1", "nodefeaturediscoveries", "nfd-instance") is None
        assert get(cluster, *OLM, "subscriptions", "nfd") is None
        assert items(cluster, *OLM, "clusterserviceversions") == []
        assert items(cluster, "operators.coreos.com", "v1", "operatorgroups") == []
        assert nfd_labelled(cluster, gpu["name"]) == {}
        assert any(
            "nfd: removed 5 object(s) of openshift-nfd; node labels removed from" in m for m in debug_messages(out)
        )
        # The namespace the role made goes too (a fresh cluster has none).
        from kubernetes import client

        assert NS not in [n.metadata.name for n in client.CoreV1Api(cluster.api).list_namespace().items]

        mark = cluster.audit.mark()
        out = run_role(cluster, "nfd", dict(KNOWN_OS, nfd_state="absent", nfd_remove_labels=True))
        assert_ok(out)
        assert changed_tasks(out) == []
        assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    finally:
        patch("packages.operators.coreos.com", "v1", "openshift-marketplace", "packagemanifests", "nfd",
              {"status": {"channels": channels}})  # fmt: skip
        if get(cluster, *OLM, "subscriptions", "nfd") is not None:
            run_role(cluster, "nfd", dict(KNOWN_OS, nfd_state="absent", nfd_remove_labels=True))
        ansible_task(
            "gpuops.cluster.machineset_clone",
            {"state": "absent", "name": GPU_MS, "wait": True, "wait_sleep": 1, "wait_timeout": 120},
        )
        # absent deleted the namespace the role made (a fresh cluster has none).


# --------------------------------------------------------------- Kubernetes

K8S_OBJECTS = [
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "nodefeatures.nfd.k8s-sigs.io"),
    ("apps/v1", "DaemonSet", "node-feature-discovery", "nfd-worker"),
    ("apps/v1", "Deployment", "node-feature-discovery", "nfd-master"),
    ("apps/v1", "Deployment", "node-feature-discovery", "nfd-gc"),
]


def test_kubernetes_check_mode_and_bad_inputs_write_nothing(k8s_cluster):
    mark = k8s_cluster.audit.mark()
    out = run_role(k8s_cluster, "nfd", FAST, check=True)
    assert_ok(out)
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert any(
        "nfd: would apply upstream NFD v0.19.0 (registry.k8s.io/nfd/node-feature-discovery:v0.19.0) in "
        "node-feature-discovery: 18 of 18 objects to write" in m
        for m in debug_messages(out)
    ), debug_messages(out)

    cases = [
        ({"nfd_namespace": "NFD_system"}, "nfd: nfd_namespace 'NFD_system' is not a valid namespace name"),
        ({"nfd_expected_gpu_nodes": -1}, "nfd: nfd_expected_gpu_nodes '-1' must be a whole number >= 0"),
        ({"nfd_image_registry": "registry.k8s.io/NFD"}, "nfd: nfd_image_registry 'registry.k8s.io/NFD'"),
        ({"nfd_version": "v0.19.0 "}, "which is not a valid image reference"),
        ({"nfd_cr_overrides": "spec: {}"}, "nfd_cr_overrides"),
        ({"nfd_wait_sleep": 0}, "nfd: nfd_wait_timeout (120) and nfd_wait_sleep (0)"),
    ]
    for role_vars, fragment in cases:
        message, writes = refused(k8s_cluster, role_vars, KUBERNETES)
        assert fragment in message, (role_vars, message)
        assert writes == [], role_vars


def test_kubernetes_unlabelled_gpu_node_is_named(k8s_cluster):
    """nfd-worker restricted to gpu-0: gpu-1 never gets labelled and the failure names it (kernel included)."""
    out = run_role(
        k8s_cluster,
        "nfd",
        dict(
            FAST,
            nfd_wait_timeout=6,
            nfd_expected_gpu_nodes=2,
            nfd_worker_node_selector={"kubernetes.io/hostname": "gpu-0"},
        ),
    )
    message = failed_message(out) or ""
    assert message.startswith(
        "nfd: 1 of 2 expected GPU nodes (nfd_expected_gpu_nodes) labelled by NFD after 6s (gpu-0)"
    )
    assert "node gpu-1 (kernel 6.8.0-45-generic): no NFD label at all (is an nfd-worker pod running there?)" in message


def test_kubernetes_converge_rerun_absent(k8s_cluster):
    role_vars = dict(FAST, nfd_expected_gpu_nodes=2)
    started = time.monotonic()
    out = run_role(k8s_cluster, "nfd", role_vars)
    converge_s = time.monotonic() - started
    assert_ok(out)
    result = fact(out, "nfd_result")
    nodes = {n["name"]: n for n in result["gpu_nodes"]}
    assert sorted(nodes) == ["gpu-0", "gpu-1"]
    assert result["kernel_versions"] == {"5.15.0-119-generic": ["gpu-0"], "6.8.0-45-generic": ["gpu-1"]}
    assert [(nodes[n]["os_release"]["ID"], nodes[n]["os_release"]["VERSION_ID"], nodes[n]["instance_type"]) for n in sorted(nodes)] == [
        ("ubuntu", "22.04", "g4dn.xlarge"),
        ("ubuntu", "24.04", "g5.xlarge"),
    ]  # fmt: skip
    assert result["source"] == "upstream manifests registry.k8s.io/nfd/node-feature-discovery:v0.19.0"
    for name in ("gpu-0", "gpu-1"):
        labels = nfd_labelled(k8s_cluster, name)
        assert labels[GPU_LABEL] == "true" and NFD + "pci-0302_10de.present" not in labels
        assert "OPENSHIFT" not in json.dumps(labels)
    assert GPU_LABEL not in nfd_labelled(k8s_cluster, "worker-0")
    assert any("nfd: gpu-1: ubuntu 24.04, kernel 6.8.0-45-generic, g5.xlarge" in m for m in debug_messages(out))

    mark = k8s_cluster.audit.mark()
    started = time.monotonic()
    out = run_role(k8s_cluster, "nfd", dict(role_vars, preflight_platform=KUBERNETES))
    rerun_s = time.monotonic() - started
    assert_ok(out)
    assert changed_tasks(out) == []
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []
    print(
        "nfd kubernetes: converge {0:.0f}s, no-op re-run {1:.0f}s, {2} tasks".format(
            converge_s, rerun_s, len(task_results(out))
        )
    )

    # A full CPU node: its nfd-worker pod, recreated, stays Pending (Insufficient memory), so the DaemonSet's
    # rollout does not finish while the node is full. The state waits for the GPU nodes' labels, not for that rollout
    # (which failed it at nfd_wait_timeout).
    core, apps = client.CoreV1Api(k8s_cluster.api), client.AppsV1Api(k8s_cluster.api)

    def rollout_unfinished():
        status = apps.read_namespaced_daemon_set("nfd-worker", "node-feature-discovery").status
        return (status.number_ready or 0) < status.desired_number_scheduled

    memory = core.read_node("worker-0").status.allocatable["memory"]
    hog = {
        "metadata": {"name": "hog"},
        "spec": {
            "nodeName": "worker-0",  # bound by name, as a kubelet admits it: the node is full for the scheduler
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"memory": memory}}}],
        },
    }  # fmt: skip
    core.create_namespaced_pod("default", hog)
    try:
        for pod in core.list_namespaced_pod("node-feature-discovery", field_selector="spec.nodeName=worker-0").items:
            if pod.metadata.name.startswith("nfd-worker"):
                core.delete_namespaced_pod(pod.metadata.name, "node-feature-discovery", grace_period_seconds=0)
        wait_until(rollout_unfinished, timeout=60, what="nfd-worker not ready on worker-0")
        mark = k8s_cluster.audit.mark()
        out = run_role(k8s_cluster, "nfd", dict(role_vars, nfd_wait_timeout=20, preflight_platform=KUBERNETES))
        assert_ok(out)
        assert changed_tasks(out) == [] and k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []
        assert rollout_unfinished()  # still Pending: the run did not wait for it
        assert sorted(n["name"] for n in fact(out, "nfd_result")["gpu_nodes"]) == ["gpu-0", "gpu-1"]
    finally:
        core.delete_namespaced_pod("hog", "default", grace_period_seconds=0)

    out = run_role(k8s_cluster, "nfd", dict(KNOWN_K8S, nfd_state="absent", nfd_remove_labels=True))
    assert_ok(out)
    check = run_playbook(
        k8s_cluster,
        [
            {"name": "read " + kind, "kubernetes.core.k8s_info": {"api_version": api, "kind": kind, "namespace": ns, "name": name}}
            for api, kind, ns, name in K8S_OBJECTS
        ] + [{"name": "read ns", "kubernetes.core.k8s_info": {"kind": "Namespace", "name": "node-feature-discovery"}}],
    )  # fmt: skip
    assert [res["resources"] for dummy, res in task_results(check)] == [[]] * (len(K8S_OBJECTS) + 1)
    assert all(nfd_labelled(k8s_cluster, n) == {} for n in ("gpu-0", "gpu-1", "worker-0"))

    mark = k8s_cluster.audit.mark()
    out = run_role(k8s_cluster, "nfd", dict(KNOWN_K8S, nfd_state="absent", nfd_remove_labels=True))
    assert_ok(out)
    assert changed_tasks(out) == []
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []
