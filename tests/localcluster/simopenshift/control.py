# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Levers for tests: things that happen to real clusters without an API call.

* ``upgrade_kernel(api, node, kernel=None, rhcos_build=None)``: the node
  rebooted into another RHCOS build/kernel (what an OpenShift upgrade does to
  each node). The kubelet reports the new ``nodeInfo.kernelVersion``/
  ``osImage``/``bootID``; nfd-worker relabels (kernel-version.*,
  OSTREE_VERSION, ...) and a driver container built for the old kernel
  crash-loops. As the release payload of the new version would, the
  ``openshift/driver-toolkit`` ImageStream gains a tag for the new build.
* ``break_node(api, node)`` / ``repair_node(api, node)``: the kubelet stops
  posting status (node NotReady, pods frozen) / comes back.

``api`` is a kubernetes.client.ApiClient.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from kubernetes.client.rest import ApiException

from simopenshift import apis, catalog
from simopenshift.kube import NODES, Client, labels_of, node_ready
from simopenshift.mco import not_ready_conditions


def upgrade_kernel(api, node_name, kernel=None, rhcos_build=None, add_dtk_tag=True):
    """Reboot a node into another kernel; returns the catalog.RhcosBuild it now runs.

    Give a kernel from data/rhcos-builds.csv (its RHCOS build follows), an RHCOS
    build id, or any kernel string plus ``rhcos_build`` for an unlisted pairing.
    """
    client = Client(api)
    build = None
    if rhcos_build:
        build = catalog.rhcos_build(rhcos_build)
        if build is None:
            raise ValueError("unknown RHCOS build %s" % rhcos_build)
        if kernel and build.kernel != kernel:
            build = catalog.RhcosBuild(build.build, build.ocp, build.rhel, kernel)
    elif kernel:
        build = catalog.rhcos_build_for_kernel(kernel)
        if build is None:
            raise ValueError("kernel %s is not in data/rhcos-builds.csv; pass rhcos_build= too" % kernel)
    else:
        raise ValueError("give kernel= or rhcos_build=")
    node = client.get(NODES, node_name)
    if node is None:
        raise ValueError("node %s not found" % node_name)
    client.patch(
        NODES,
        node_name,
        {
            "status": {
                "nodeInfo": {
                    "kernelVersion": build.kernel,
                    "osImage": build.os_image,
                    "bootID": catalog.fake_hex(32, "boot", node_name, build.build, time.time()),
                }
            }
        },
        subresource="status",
    )
    if add_dtk_tag:
        _add_dtk_tag(client, build.build)
    return build


def _add_dtk_tag(client, build_id):
    stream = client.get(apis.IMAGESTREAMS, "driver-toolkit", "openshift")
    if stream is None:
        return
    tags = (stream.get("spec") or {}).get("tags") or []
    if any(t.get("name") == build_id for t in tags):
        return
    tags.append(
        {
            "name": build_id,
            "from": {"kind": "DockerImage", "name": catalog.dtk_image(build_id)},
            "referencePolicy": {"type": "Source"},
            "importPolicy": {"scheduled": False},
        }
    )
    client.patch(apis.IMAGESTREAMS, "driver-toolkit", {"spec": {"tags": tags}}, "openshift")


def offer_updates(api, versions):
    """The update service answers: ClusterVersion lists ``versions`` as available updates (RetrievedUpdates True),
    each with its release image, as the CVO writes them from the Cincinnati graph."""
    client = Client(api)
    cv = client.get(apis.CLUSTERVERSIONS, "version")
    status = dict(cv.get("status") or {})
    channel = (cv.get("spec") or {}).get("channel")
    status["availableUpdates"] = [
        {
            "version": v,
            "image": "quay.io/openshift-release-dev/ocp-release@" + catalog.fake_digest("release", v),
            "channels": [channel] if channel else [],
        }
        for v in versions
    ] or None
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != "RetrievedUpdates"] + [
        {"type": "RetrievedUpdates", "status": "True", "lastTransitionTime": _now()}
    ]
    client.patch(apis.CLUSTERVERSIONS, "version", {"status": status}, subresource="status")


def upgrade_cluster(api, version, node_names):
    """The cluster upgraded to ``version``, as the CVO and the MachineConfigPool would leave it: the ClusterVersion
    at the new release, and each of ``node_names`` rebooted, one at a time, into its RHCOS build (new kernel and
    os-release; NFD relabels them), with the release's Driver Toolkit tag in openshift/driver-toolkit."""
    build = catalog.release_build(version)
    client = Client(api)
    cv = client.get(apis.CLUSTERVERSIONS, "version")
    status = dict(cv.get("status") or {})
    image = "quay.io/openshift-release-dev/ocp-release@" + catalog.fake_digest("release", build.cluster_version)
    entry = {"state": "Completed", "version": build.cluster_version, "image": image, "verified": True,
             "startedTime": _now(), "completionTime": _now()}  # fmt: skip
    status["desired"] = dict(status.get("desired") or {}, version=build.cluster_version, image=image)
    status["history"] = [entry] + list(status.get("history") or [])
    status["availableUpdates"] = None
    client.patch(apis.CLUSTERVERSIONS, "version", {"status": status}, subresource="status")
    for name in node_names:
        upgrade_kernel(api, name, rhcos_build=build.build)
    return build


def block_upgrades(api, operator="gpuops-test", reason="AdminAckRequired", message="an admin must acknowledge"):
    """A ClusterOperator that reports Upgradeable=False (minor upgrades are blocked until it clears)."""
    client = Client(api)
    body = {"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator", "metadata": {"name": operator}}
    if client.get(apis.CLUSTEROPERATORS, operator) is None:
        client.create(apis.CLUSTEROPERATORS, body)
    conditions = [{"type": "Upgradeable", "status": "False", "reason": reason, "message": message,
                   "lastTransitionTime": _now()}]  # fmt: skip
    client.patch(apis.CLUSTEROPERATORS, operator, {"status": {"conditions": conditions}}, subresource="status")


def unblock_upgrades(api, operator="gpuops-test"):
    Client(api).delete(apis.CLUSTEROPERATORS, operator)


def record_api_requests(api, resource, removed_in, count):
    """The API server counted ``count`` requests in 24 h to ``resource`` (e.g.
    flowschemas.v1beta3.flowcontrol.apiserver.k8s.io), which Kubernetes ``removed_in`` (e.g. 1.32) removes."""
    client = Client(api)
    if client.get(apis.APIREQUESTCOUNTS, resource) is None:
        client.create(apis.APIREQUESTCOUNTS, {"apiVersion": "apiserver.openshift.io/v1", "kind": "APIRequestCount",
                                              "metadata": {"name": resource}})  # fmt: skip
    status = {"removedInRelease": removed_in, "requestCount": count, "currentHour": {"requestCount": 0}}
    client.patch(apis.APIREQUESTCOUNTS, resource, {"status": status}, subresource="status")


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def break_node(api, node_name, reason="KubeletNotReady", message="Kubelet stopped posting node status."):
    """Make a node NotReady until repair_node (kwok's node stages skip it meanwhile)."""
    client = Client(api)
    client.patch(
        NODES,
        node_name,
        {
            "metadata": {
                "labels": {catalog.LABEL_NOT_READY: "broken"},
                "annotations": {catalog.ANN_NOT_READY_REASON: message},
            }
        },
    )
    # kwok may have read the node before the label and post one more Ready heartbeat after our patch; it then
    # leaves the node alone (and renews its lease), so the node would stay Ready. Patch until NotReady holds.
    steady, deadline = 0, time.time() + 30
    while steady < 3 and time.time() < deadline:
        node = client.get(NODES, node_name)
        if node_ready(node):
            steady = 0
            client.patch(
                NODES,
                node_name,
                {"status": {"conditions": not_ready_conditions(node, reason, message)}},
                subresource="status",
            )
        else:
            steady += 1
        time.sleep(0.5)
    if steady < 3:
        raise AssertionError("node %s did not stay NotReady after break_node" % node_name)


def repair_node(api, node_name):
    """Undo break_node: kwok marks the node Ready again."""
    Client(api).patch(
        NODES,
        node_name,
        {"metadata": {"labels": {catalog.LABEL_NOT_READY: None}, "annotations": {catalog.ANN_NOT_READY_REASON: None}}},
    )


def images_missing(api, node_name, images):
    """The registry does not have ``images`` (a tag never pushed, or deleted): their pods on the node stay in
    ImagePullBackOff (until images_back)."""
    Client(api).patch(NODES, node_name, {"metadata": {"annotations": {catalog.ANN_MISSING_IMAGES: ",".join(images)}}})


def images_back(api, node_name):
    Client(api).patch(NODES, node_name, {"metadata": {"annotations": {catalog.ANN_MISSING_IMAGES: None}}})


def exporter_down(api, node_name):
    """The node's dcgm-exporter crashes (CrashLoopBackOff, not Ready, nothing listening) until exporter_up."""
    Client(api).patch(NODES, node_name, {"metadata": {"annotations": {catalog.SIM_PREFIX + "dcgm-exporter": "down"}}})


def exporter_up(api, node_name):
    Client(api).patch(NODES, node_name, {"metadata": {"annotations": {catalog.SIM_PREFIX + "dcgm-exporter": None}}})


def dcgm_gpu_fails(api, node_name, gpu=0):
    """DCGM's diagnostics find a memory mismatch on GPU ``gpu`` of the node (until dcgm_gpu_heals)."""
    Client(api).patch(
        NODES, node_name, {"metadata": {"annotations": {catalog.SIM_PREFIX + "dcgm-diag-fail": str(gpu)}}}
    )


def dcgm_gpu_heals(api, node_name):
    Client(api).patch(NODES, node_name, {"metadata": {"annotations": {catalog.SIM_PREFIX + "dcgm-diag-fail": None}}})


def wait_for(predicate, timeout=60, interval=0.25, what="condition"):
    """Poll ``predicate()`` until it returns a truthy value; returns that value."""
    deadline = time.time() + timeout
    last_error = None
    while time.time() < deadline:
        try:
            value = predicate()
        except ApiException as exc:
            value, last_error = None, exc
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(
        "timed out after %ss waiting for %s%s" % (timeout, what, " (last error: %s)" % last_error if last_error else "")
    )


def wait_match(fetch, predicate, timeout=60, interval=0.25, what="condition"):
    """Poll ``fetch()`` until ``predicate(value)`` holds; returns that value."""

    def check():
        value = fetch()
        return value if value is not None and predicate(value) else None

    return wait_for(check, timeout, interval, what)


def node_is_ready(api, node_name):
    node = Client(api).get(NODES, node_name)
    return bool(node and node_ready(node) and catalog.LABEL_NOT_READY not in labels_of(node))
