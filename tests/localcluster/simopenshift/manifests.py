# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Minimal manifests of the NVIDIA components, labelled as the GPU node agent expects.

The simulation's tests use them; they also document the convention: what
matters to the agent is the ``app.kubernetes.io/component`` label and, for the
driver, what its image/env say about the kernel it was built for.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from simopenshift import catalog

GPU_NODE_SELECTOR = {"feature.node.kubernetes.io/pci-10de.present": "true"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def daemonset(name, namespace, component, image, node_selector=None, env=None, volumes=None, args=None):
    labels = {"app": name, catalog.COMPONENT_LABEL: component}
    container = {"name": name + "-ctr", "image": image}
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if args:
        container["args"] = list(args)
    spec = {
        "nodeSelector": dict(node_selector or GPU_NODE_SELECTOR),
        "tolerations": [dict(GPU_TOLERATION)],
        "containers": [container],
    }
    if volumes:
        spec["volumes"] = volumes
        container["volumeMounts"] = [{"name": v["name"], "mountPath": "/config/" + v["name"]} for v in volumes]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }


def driver(
    namespace,
    name="nvidia-driver-daemonset",
    kernel=None,
    driver_version=catalog.DEFAULT_DRIVER_VERSION,
    node_selector=None,
    image=None,
):
    """Driver DaemonSet. With ``kernel`` the image is a precompiled one for that kernel."""
    if image is None:
        if kernel:
            image = "nvcr.io/nvidia/driver:%s-%s-rhcos4.16" % (driver_version, kernel)
        else:
            image = "nvcr.io/nvidia/driver:%s-rhcos4.16" % driver_version
    return daemonset(name, namespace, "nvidia-driver", image, node_selector)


def toolkit(namespace, node_selector=None):
    return daemonset(
        "nvidia-container-toolkit-daemonset",
        namespace,
        "nvidia-container-toolkit",
        "nvcr.io/nvidia/k8s/container-toolkit:v1.15.0-ubi8",
        node_selector,
    )


def device_plugin(namespace, node_selector=None, config_map=None):
    volumes = [{"name": "config", "configMap": {"name": config_map}}] if config_map else None
    return daemonset(
        "nvidia-device-plugin-daemonset",
        namespace,
        "nvidia-device-plugin",
        "nvcr.io/nvidia/k8s-device-plugin:v0.15.0-ubi8",
        node_selector,
        volumes=volumes,
    )


def gpu_feature_discovery(namespace, node_selector=None, env=None):
    """GFD as the GPU Operator runs it on OpenShift: node labels, not a NodeFeature object (USE_NODE_FEATURE_API)."""
    return daemonset(
        "gpu-feature-discovery",
        namespace,
        "gpu-feature-discovery",
        "nvcr.io/nvidia/k8s-device-plugin:v0.15.0-ubi8",
        node_selector,
        env={"USE_NODE_FEATURE_API": "false"} if env is None else env,
    )


DCGM_EXPORTER_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.1-ubi9"


def dcgm_exporter(namespace, node_selector=None, image=DCGM_EXPORTER_IMAGE, env=None, counters_config_map=None):
    """dcgm-exporter DaemonSet as the GPU Operator deploys it: port ``gpu-metrics`` 9400, ``NODE_NAME``
    from spec.nodeName, Kubernetes pod mapping on. ``counters_config_map`` mounts that ConfigMap at
    /etc/dcgm-exporter/custom and points DCGM_EXPORTER_COLLECTORS at its key ``dcgm-metrics.csv``."""
    values = {"DCGM_EXPORTER_LISTEN": ":9400", "DCGM_EXPORTER_KUBERNETES": "true"}
    if counters_config_map:
        values["DCGM_EXPORTER_COLLECTORS"] = "/etc/dcgm-exporter/custom/dcgm-metrics.csv"
    values.update(env or {})
    ds = daemonset("nvidia-dcgm-exporter", namespace, "dcgm-exporter", image, node_selector, env=values)
    spec = ds["spec"]["template"]["spec"]
    container = spec["containers"][0]
    container["env"].append({"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}})
    container["ports"] = [{"name": "gpu-metrics", "containerPort": 9400, "protocol": "TCP"}]
    if counters_config_map:
        spec["volumes"] = [{"name": "metrics-config", "configMap": {"name": counters_config_map}}]
        container["volumeMounts"] = [{"name": "metrics-config", "mountPath": "/etc/dcgm-exporter/custom"}]
    return ds


def dcgm_exporter_service(namespace):
    """Service ``nvidia-dcgm-exporter`` (GPU Operator assets/state-dcgm-exporter/0400_service.yaml)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "nvidia-dcgm-exporter", "namespace": namespace, "labels": {"app": "nvidia-dcgm-exporter"}},
        "spec": {
            "selector": {"app": "nvidia-dcgm-exporter"},
            "ports": [{"name": "gpu-metrics", "port": 9400, "targetPort": 9400, "protocol": "TCP"}],
        },
    }


def validation_pod(
    namespace,
    name,
    command=("vectorAdd",),
    gpus=1,
    node_name=None,
    restart_policy="Never",
    image="nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.4.1-ubi9",
):
    container = {"name": "cuda", "image": image, "command": list(command)}
    if gpus:
        container["resources"] = {"limits": {catalog.GPU_RESOURCE: str(gpus)}}
    spec = {"restartPolicy": restart_policy, "tolerations": [dict(GPU_TOLERATION)], "containers": [container]}
    if node_name:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node_name.split(".")[0]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {catalog.COMPONENT_LABEL: "gpu-validation"}},
        "spec": spec,
    }
