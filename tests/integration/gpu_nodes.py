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


RUNTIME_CLASS = "nvidia"
# The toolkit as the container_toolkit role renders it in CDI mode (GO assets/state-container-toolkit/0500_daemonset.yaml),
# for the runtime of the simulated nodes: this is what gives the node's runtime its nvidia handler.
TOOLKIT_ENV = {
    "CDI_ENABLED": "true",
    "NVIDIA_CONTAINER_RUNTIME_MODE": "cdi",
    "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND": "management.nvidia.com/gpu",
    "NVIDIA_RUNTIME_SET_AS_DEFAULT": "false",
    "RUNTIME_DROP_IN_CONFIG": "/runtime/config-dir.d/99-nvidia.conf",
    "RUNTIME_DROP_IN_CONFIG_HOST_PATH": "/etc/crio/crio.conf.d/99-nvidia.conf",
}
# The device plugin with the toolkit in CDI mode (GO transformDevicePluginCtrForCDI).
PLUGIN_ENV = {
    "DEVICE_LIST_STRATEGY": "cdi-annotations,cdi-cri",
    "CDI_ENABLED": "true",
    "CDI_ANNOTATION_PREFIX": "cdi.k8s.io/",
    "NVIDIA_CDI_HOOK_PATH": "/usr/local/nvidia/toolkit/nvidia-cdi-hook",
    "NVIDIA_DRIVER_ROOT": "/run/nvidia/driver",
}


def host_mounts(ds, mounts):
    """(path in the container, host path) hostPath mounts on the first container."""
    spec = ds["spec"]["template"]["spec"]
    for i, (path, host) in enumerate(mounts):
        name = "host-%d" % i
        spec.setdefault("volumes", []).append({"name": name, "hostPath": {"path": host}})
        spec["containers"][0].setdefault("volumeMounts", []).append({"name": name, "mountPath": path})
    return ds


def on_nvidia_runtime(ds, mounts=()):
    """The operand pod as the roles render it: the toolkit's RuntimeClass and (path, host path) mounts."""
    ds["spec"]["template"]["spec"]["runtimeClassName"] = RUNTIME_CLASS
    return host_mounts(ds, mounts)


# The driver's GSP firmware mounts (GO assets/state-driver/0500_daemonset.yaml): open modules need them.
FIRMWARE_MOUNTS = (
    ("/lib/firmware", "/run/nvidia/driver/lib/firmware"),
    ("/sys/module/firmware_class/parameters/path", "/sys/module/firmware_class/parameters/path"),
)


def gpu_stack(namespace, tag, driver_image, dcgm=True):
    """Driver, toolkit, device plugin (and DCGM exporter) DaemonSets for one node set, configured as the roles do."""
    stack = [
        host_mounts(
            daemonset(
                "nvidia-driver-daemonset", namespace, tag, "nvidia-driver", driver_image, command=["nvidia-driver"]
            ),
            FIRMWARE_MOUNTS,
        ),
        daemonset(
            "nvidia-container-toolkit-daemonset",
            namespace,
            tag,
            "nvidia-container-toolkit",
            "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0",
            env=TOOLKIT_ENV,
        ),
        on_nvidia_runtime(
            daemonset(
                "nvidia-device-plugin-daemonset",
                namespace,
                tag,
                "nvidia-device-plugin",
                "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
                env=PLUGIN_ENV,
            ),
            mounts=(("/driver-root", "/run/nvidia/driver"), ("/var/run/cdi", "/var/run/cdi")),
        ),
    ]
    if dcgm:
        stack.append(
            on_nvidia_runtime(
                daemonset(
                    "nvidia-dcgm-exporter",
                    namespace,
                    tag,
                    "dcgm-exporter",
                    "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless",
                )
            )
        )
    return stack


def ensure_runtime_class(api_client):
    """The toolkit role's RuntimeClass (the API server rejects a pod naming a missing one); True when made here."""
    node_api = client.NodeV1Api(api_client)
    try:
        node_api.read_runtime_class(RUNTIME_CLASS)
        return False
    except ApiException as exc:
        if exc.status != 404:
            raise
    node_api.create_runtime_class(
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": RUNTIME_CLASS},
            "handler": "nvidia",
        }
    )
    return True


def delete_runtime_class(api_client):
    try:
        client.NodeV1Api(api_client).delete_runtime_class(RUNTIME_CLASS)
    except ApiException:
        pass


def deploy(api_client, objects):
    apps = client.AppsV1Api(api_client)
    for body in objects:
        apps.create_namespaced_daemon_set(body["metadata"]["namespace"], body)


def allocatable(core, name):
    node = core.read_node(name)
    return int((node.status.allocatable or {}).get("nvidia.com/gpu", "0") or 0)


def gpu_job(core, namespace, node, name=None, labels=None):
    """A GPU job on ``node`` that runs on until it is deleted (restartPolicy Never, like a Job's pod), holding one GPU
    as a training job's pod does; returns its name once it is Running."""
    name = name or "train-" + node.rsplit("-", 1)[-1]
    core.create_namespaced_pod(
        namespace,
        {
            "metadata": {"name": name, "labels": dict({"app": "train"}, **(labels or {}))},
            "spec": {
                "restartPolicy": "Never",
                "nodeSelector": {"kubernetes.io/hostname": node},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [
                    {
                        "name": "train",
                        "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                        "command": ["sleep", "infinity"],
                        "resources": {"limits": {"nvidia.com/gpu": "1"}},
                    }
                ],
            },
        },
    )
    wait_until(lambda: core.read_namespaced_pod(name, namespace).status.phase == "Running", 60, what=name + " Running")
    return name


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
