# -*- coding: utf-8 -*-
"""Shared inputs of the gpu_validate module_utils tests: parameters, nodes, pods, logs, metrics."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    GFD_COUNT,
    GFD_PRODUCT,
    GFD_REPLICAS,
    GPU_RESOURCE,
)

BASE = {
    "checks": ["allocatable", "driver", "vectoradd"],
    "node_selector": {},
    "node_names": None,
    "namespace": "nvidia-gpu-operator",
    "driver_namespace": None,
    "driver_selector": "app.kubernetes.io/component=nvidia-driver",
    "device_plugin_selector": "app.kubernetes.io/component=nvidia-device-plugin",
    "expected_gpus": None,
    "driver_version": None,
    "vectoradd_image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubi8",
    "nvidia_smi_image": "nvcr.io/nvidia/cuda:12.5.0-base-ubi8",
    "tolerations": None,
    "pin": "affinity",
    "run_as_user": None,
    "service_account": None,
    "priority_class_name": None,
    "runtime_class_name": None,
    "image_pull_secrets": None,
    "wait_timeout": 300,
    "wait_sleep": 2,
    "parallel": 16,
    "metrics_namespace": None,
    "metrics_selector": "app.kubernetes.io/component=dcgm-exporter",
    "metrics_via": "pod",
    "metrics_service": "nvidia-dcgm-exporter",
    "metrics_port": 9400,
    "metrics_path": "/metrics",
    "report_json": None,
    "report_junit": None,
    "report_markdown": None,
    "fail_on_error": True,
}

VECTORADD_LOG = """[Vector addition of 50000 elements]
Copy input data from the host memory to the CUDA device
CUDA kernel launch with 196 blocks of 256 threads
Copy output data from the CUDA device to the host memory
Test PASSED
Done
"""

SMI_LOG = """Sun Sep  1 04:01:54 2019
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 430.26       Driver Version: 430.26       CUDA Version: N/A      |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
|===============================+======================+======================|
|   0  Tesla V100-SXM2...  On   | 00000000:00:1E.0 Off |                    0 |
+-------------------------------+----------------------+----------------------+
"""

METRICS = """# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-4063626d", device="nvidia0"} 300
DCGM_FI_DEV_GPU_TEMP{gpu="0", UUID="GPU-4063626d-f712", device="nvidia0",Hostname="gpu-a"} 32
DCGM_FI_DEV_GPU_TEMP{gpu="1", UUID="GPU-1111",device="nvidia1",Hostname="gpu-a"} 36
DCGM_FI_DEV_GPU_TEMP_EXTRA{gpu="2"} 1
"""


def params(**kw):
    p = copy.deepcopy(BASE)
    p.update(kw)
    return p


def node(
    name="gpu-a", alloc="1", count="1", ready=True, taints=None, unschedulable=False, replicas=None, product="Tesla-T4"
):
    labels = {"feature.node.kubernetes.io/pci-10de.present": "true"}
    if count is not None:
        labels[GFD_COUNT] = count
    if replicas:
        labels[GFD_REPLICAS] = replicas
    if product:
        labels[GFD_PRODUCT] = product
    status = {
        "conditions": [
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "reason": "KubeletReady" if ready else "NodeStatusUnknown",
            }
        ]
    }
    if alloc is not None:
        status["allocatable"] = {"cpu": "4", GPU_RESOURCE: alloc}
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"metadata": {"name": name, "labels": labels}, "spec": spec, "status": status}


def pod(
    name,
    node_name="gpu-a",
    phase="Running",
    ready=True,
    waiting=None,
    restarts=0,
    last_exit=None,
    terminated=None,
    scheduled_msg=None,
):
    cs = {"name": "c", "ready": ready, "restartCount": restarts, "state": {}}
    if waiting:
        cs["state"] = {"waiting": {"reason": waiting}}
    elif terminated:
        cs["state"] = {"terminated": terminated}
    else:
        cs["state"] = {"running": {}}
    if last_exit is not None:
        cs["lastState"] = {"terminated": {"exitCode": last_exit}}
    conds = [{"type": "Ready", "status": "True" if ready else "False"}]
    if scheduled_msg:
        conds.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": scheduled_msg})
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"nodeName": node_name},
        "status": {"phase": phase, "conditions": conds, "containerStatuses": [cs] if not scheduled_msg else []},
    }
