# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Manifests of the NVIDIA components, labelled as the GPU node agent expects, shaped as a real node needs them.

The simulation's tests use them; they also document the convention: what
matters to the agent is the ``app.kubernetes.io/component`` label, the image
(its contents, images.py), the command, and what the GPU Operator v26.7 gives
each operand so that it works on a real node (assets/state-*/0500_daemonset.yaml,
controllers/object_controls.go): the driver's firmware mounts, the toolkit's CDI
default kind and drop-in host path, ``runtimeClassName: nvidia`` and init
containers that wait for the driver and toolkit.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from simopenshift import catalog, images

GPU_NODE_SELECTOR = {"feature.node.kubernetes.io/pci-10de.present": "true"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
RUNTIME_CLASS = "nvidia"
DTK_OS = re.compile(r"^(rhcos|rhel)")
WAIT_IMAGE = "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v26.7.0"


def runtime_class(name=RUNTIME_CLASS):
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": "nvidia"}


def host_path(spec, container, name, path, mount_path=None, type_=None):
    volume = {"name": name, "hostPath": {"path": path}}
    if type_:
        volume["hostPath"]["type"] = type_
    spec.setdefault("volumes", []).append(volume)
    container.setdefault("volumeMounts", []).append({"name": name, "mountPath": mount_path or path})


def wait_for(spec, what, path):
    """An init container that waits for a file the driver or toolkit makes (the GPU Operator's validations)."""
    init = {
        "name": "wait-for-" + what,
        "image": WAIT_IMAGE,
        "command": ["sh", "-c"],
        "args": ["until [ -e %s ]; do echo waiting for the %s; sleep 5; done" % (path, what)],
    }
    spec.setdefault("initContainers", []).append(init)
    host_path(spec, init, "wait-" + what, "/run/nvidia", "/run/nvidia")


def on_nvidia_runtime(ds, waits=("toolkit",)):
    """runtimeClassName nvidia (GO setRuntimeClassName) and init containers waiting for the stack."""
    spec = ds["spec"]["template"]["spec"]
    spec["runtimeClassName"] = RUNTIME_CLASS
    for what in waits:
        path = "/run/nvidia/driver/usr/bin/nvidia-smi" if what == "driver" else "/run/nvidia/toolkit/.ready"
        wait_for(spec, what, path)
    return ds


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
    args=None,
    firmware=True,
    dtk_image=None,
):
    """Driver DaemonSet. With ``kernel`` the image is a precompiled one for that kernel; without, NVIDIA's image of
    the OS with the Driver Toolkit sidecar of the cluster's RHCOS build (the GPU Operator's OpenShift pattern);
    ``args`` (e.g. ["load"]) runs ``nvidia-driver`` with them (a built image)."""
    if image is None:
        if kernel:
            image = "nvcr.io/nvidia/driver:%s-%s-rhcos4.16" % (driver_version, kernel)
        else:
            image = "nvcr.io/nvidia/driver:%s-rhcos4.16" % driver_version
    contents = images.public(image)
    dtk = args is None and contents is not None and contents.kind == "driver" and DTK_OS.match(contents.os_tag)
    ds = daemonset(name, namespace, "nvidia-driver", image, node_selector)
    spec = ds["spec"]["template"]["spec"]
    container = spec["containers"][0]
    spec["hostPID"] = True
    if dtk:
        container["command"], container["args"] = ["ocp_dtk_entrypoint"], ["nv-ctr-run-with-dtk"]
        sidecar = {
            "name": "openshift-driver-toolkit-ctr",
            "image": dtk_image or catalog.dtk_image(catalog.cluster_build().build),
            "command": ["bash", "-xc"],
            "args": ["until [ -f /mnt/shared-nvidia-driver-toolkit/dir_prepared ]; do sleep 10; done; "
                     "exec /mnt/shared-nvidia-driver-toolkit/ocp_dtk_entrypoint dtk-build-driver"],
        }  # fmt: skip
        spec["containers"].append(sidecar)
    else:
        container["command"], container["args"] = ["nvidia-driver"], list(args or ["init"])
    if firmware:
        host_path(spec, container, "firmware-search-path", "/sys/module/firmware_class/parameters/path")
        host_path(
            spec, container, "nv-firmware", "/run/nvidia/driver/lib/firmware", "/lib/firmware", "DirectoryOrCreate"
        )
    return ds


def toolkit(namespace, node_selector=None, env=None):
    """The toolkit in CDI mode as the GPU Operator configures it (assets/state-container-toolkit)."""
    values = {
        "CDI_ENABLED": "true",
        "NVIDIA_CONTAINER_RUNTIME_MODE": "cdi",
        "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND": "management.nvidia.com/gpu",
        "NVIDIA_RUNTIME_SET_AS_DEFAULT": "false",
        "RUNTIME_DROP_IN_CONFIG": "/runtime/config-dir.d/99-nvidia.toml",
        "RUNTIME_DROP_IN_CONFIG_HOST_PATH": "/etc/containerd/conf.d/99-nvidia.toml",
    }
    values.update(env or {})
    ds = daemonset(
        "nvidia-container-toolkit-daemonset",
        namespace,
        "nvidia-container-toolkit",
        "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0",
        node_selector,
        env=dict((k, v) for k, v in values.items() if v is not None),
    )
    wait_for(ds["spec"]["template"]["spec"], "driver", "/run/nvidia/driver/usr/bin/nvidia-smi")
    return ds


def device_plugin(namespace, node_selector=None, config_map=None):
    volumes = [{"name": "config", "configMap": {"name": config_map}}] if config_map else None
    ds = daemonset(
        "nvidia-device-plugin-daemonset",
        namespace,
        "nvidia-device-plugin",
        "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
        node_selector,
        volumes=volumes,
        env={
            "DEVICE_LIST_STRATEGY": "cdi-annotations,cdi-cri",
            "CDI_ENABLED": "true",
            "CDI_ANNOTATION_PREFIX": "cdi.k8s.io/",
            "NVIDIA_DRIVER_ROOT": "/run/nvidia/driver",
        },
    )
    spec = ds["spec"]["template"]["spec"]
    host_path(spec, spec["containers"][0], "cdi-root", "/var/run/cdi")
    host_path(spec, spec["containers"][0], "driver-root", "/run/nvidia/driver", "/driver-root")
    return on_nvidia_runtime(ds)


def gpu_feature_discovery(namespace, node_selector=None, env=None):
    """GFD as the GPU Operator runs it on OpenShift: node labels, not a NodeFeature object (USE_NODE_FEATURE_API)."""
    ds = daemonset(
        "gpu-feature-discovery",
        namespace,
        "gpu-feature-discovery",
        "nvcr.io/nvidia/k8s-device-plugin:v0.20.0",
        node_selector,
        env={"USE_NODE_FEATURE_API": "false"} if env is None else env,
    )
    return on_nvidia_runtime(ds)


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
    return on_nvidia_runtime(ds)


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
    # The kubelet puts the log's end in the terminated state only with this policy (and a non-zero exit).
    container = {
        "name": "cuda",
        "image": image,
        "command": list(command),
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    if gpus:
        container["resources"] = {"limits": {catalog.GPU_RESOURCE: str(gpus)}}
    spec = {
        "restartPolicy": restart_policy,
        "tolerations": [dict(GPU_TOLERATION)],
        "containers": [container],
        "runtimeClassName": RUNTIME_CLASS,
    }
    if node_name:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node_name.split(".")[0]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {catalog.COMPONENT_LABEL: "gpu-validation"}},
        "spec": spec,
    }
