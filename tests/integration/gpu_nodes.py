# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Simulated GPU nodes and NVIDIA component DaemonSets for the module tests and the benchmark.

Nodes are kwok nodes described the way the simulation reads them
(tests/localcluster/simopenshift): the instance type label (a GPU instance
type of the catalog makes the node "managed": the GPU node agent publishes
nvidia.com/gpu once driver, toolkit and device plugin are Ready), the kubelet's
``nodeInfo.kernelVersion`` / ``osImage``, and the NFD labels NFD would put
there. ``preprovisioned=True`` gives the plain-Kubernetes kind of GPU node that
already advertises nvidia.com/gpu (the agent treats it as having a host driver).
Every set carries a unique ``gpuops.test/set`` label so tests select only
their own nodes on a shared cluster.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import uuid

from kubernetes import client
from kubernetes.client.rest import ApiException

HERE = os.path.dirname(os.path.abspath(__file__))
LOCALCLUSTER = os.path.join(os.path.dirname(HERE), "localcluster")
if LOCALCLUSTER not in sys.path:
    sys.path.insert(0, LOCALCLUSTER)

from simopenshift import catalog  # noqa: E402  (the simulation's fact tables)
from waiting import wait_until  # noqa: E402

SET_LABEL = "gpuops.test/set"
NFD = "feature.node.kubernetes.io/"
GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
TOLERATE_ALL = [{"operator": "Exists"}]
RHCOS_416 = "416.94.202406172220-0"
RHCOS_417 = "417.94.202409121747-0"


def kernel_of(build):
    return catalog.rhcos_builds()[build].kernel


def os_release_of(build):
    return catalog.rhcos_builds()[build].os_release()


def new_tag():
    return uuid.uuid4().hex[:8]


def nfd_labels(build):
    """The labels NFD puts on an RHCOS node of ``build`` with an NVIDIA GPU (vendor-only PCI form)."""
    kernel = kernel_of(build)
    major, minor, rest = kernel.split(".", 2)
    labels = {
        NFD + "pci-10de.present": "true",
        NFD + "kernel-version.full": kernel,
        NFD + "kernel-version.major": major,
        NFD + "kernel-version.minor": minor,
        NFD + "kernel-version.revision": rest.split("-", 1)[0],
    }
    for key, value in os_release_of(build).items():
        labels[NFD + "system-os_release." + key] = value
    return labels


def node_body(
    name,
    tag,
    build=RHCOS_416,
    instance_type="g4dn.xlarge",
    preprovisioned=False,
    gpus=1,
    extra_labels=None,
    taints=None,
):
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "type": "kwok",
        "node-role.kubernetes.io/worker": "",
        SET_LABEL: tag,
    }
    labels.update(nfd_labels(build))
    resources = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    if preprovisioned:
        resources["nvidia.com/gpu"] = str(gpus)
    else:
        labels["node.kubernetes.io/instance-type"] = instance_type
    labels.update(extra_labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": {"kwok.x-k8s.io/node": "fake"}},
        "spec": {"taints": list(taints if taints is not None else [GPU_TAINT])},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "nodeInfo": {
                "kernelVersion": kernel_of(build),
                "osImage": catalog.rhcos_builds()[build].os_image,
                "architecture": "amd64",
                "operatingSystem": "linux",
                "bootID": uuid.uuid4().hex,
                "kubeletVersion": catalog.KUBELET_VERSION,
                "containerRuntimeVersion": catalog.CRIO_VERSION,
            },
        },
    }


class GpuNodes(object):
    """Creates node sets and removes everything it made."""

    def __init__(self, api_client):
        self.core = client.CoreV1Api(api_client)
        self.made = []

    def make(self, count, tag=None, prefix="gpu", **kw):
        tag = tag or new_tag()
        names = []
        for i in range(count):
            name = "{0}-{1}-{2}".format(prefix, tag, i)
            try:
                self.core.create_node(node_body(name, tag, **kw))
            except ApiException as exc:
                if exc.status != 409:
                    raise
            self.made.append(name)
            names.append(name)

        def ready():
            for node in self.core.list_node(label_selector="{0}={1}".format(SET_LABEL, tag)).items:
                if node.metadata.name in names and not any(
                    c.type == "Ready" and c.status == "True" for c in node.status.conditions or []
                ):
                    return False
            return True

        wait_until(ready, 60, what="nodes {0} Ready".format(names))
        return tag, names

    def relabel(self, name, build):
        """A kernel upgrade as NFD reports it: new kernel and os-release labels, new kubelet nodeInfo."""
        self.core.patch_node(name, {"metadata": {"labels": nfd_labels(build)}})
        info = {"kernelVersion": kernel_of(build), "osImage": catalog.rhcos_builds()[build].os_image}
        self.core.patch_node_status(name, {"status": {"nodeInfo": info}})

    def cleanup(self):
        for name in self.made:
            try:
                self.core.delete_node(name)
            except ApiException:
                pass
        self.made = []


def daemonset(name, namespace, tag, component, image, env=None, command=None):
    labels = {"app": name, "app.kubernetes.io/component": component, "app.kubernetes.io/part-of": "gpuops-test"}
    container = {"name": name, "image": image}
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if command:
        container["command"] = command
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"nodeSelector": {SET_LABEL: tag}, "tolerations": TOLERATE_ALL, "containers": [container]},
            },
        },
    }


def gpu_stack(namespace, tag, driver_image, dcgm=True):
    """Driver, toolkit, device plugin (and DCGM exporter) DaemonSets for one node set."""
    stack = [
        daemonset("nvidia-driver-daemonset", namespace, tag, "nvidia-driver", driver_image),
        daemonset(
            "nvidia-container-toolkit-daemonset",
            namespace,
            tag,
            "nvidia-container-toolkit",
            "nvcr.io/nvidia/k8s/container-toolkit:v1.16.1-ubi8",
        ),
        daemonset(
            "nvidia-device-plugin-daemonset",
            namespace,
            tag,
            "nvidia-device-plugin",
            "nvcr.io/nvidia/k8s-device-plugin:v0.16.1-ubi8",
        ),
    ]
    if dcgm:
        stack.append(
            daemonset(
                "nvidia-dcgm-exporter",
                namespace,
                tag,
                "dcgm-exporter",
                "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.7-3.5.0-ubi9",
            )
        )
    return stack


def deploy(api_client, objects):
    apps = client.AppsV1Api(api_client)
    for body in objects:
        apps.create_namespaced_daemon_set(body["metadata"]["namespace"], body)


def allocatable(core, name):
    node = core.read_node(name)
    return int((node.status.allocatable or {}).get("nvidia.com/gpu", "0") or 0)


def make_namespace(api_client, prefix="gv"):
    core = client.CoreV1Api(api_client)
    name = "{0}-{1}".format(prefix, uuid.uuid4().hex[:8])
    core.create_namespace({"metadata": {"name": name}})
    return name


def delete_namespace(api_client, name):
    try:
        client.CoreV1Api(api_client).delete_namespace(name)
    except ApiException:
        pass
