# -*- coding: utf-8 -*-
"""Inputs in the formats real clusters produce, for the gpu_validate verdict tests.

- dcgm-exporter's Prometheus exposition: ``# HELP`` / ``# TYPE`` lines, the
  default label set (gpu, UUID, pci_bus_id, device, modelName, Hostname - renamed
  ``hostname`` by later releases, dropped by ``--no-hostname`` - and
  DCGM_FI_DRIVER_VERSION); MIG instances add GPU_I_PROFILE / GPU_I_ID.
- GPU Feature Discovery's documented labels (k8s-device-plugin README, "Generated
  Labels", MIG 'single' and 'mixed' strategy).
- nvidia-smi table headers of the R535, R550, R580 and R610 driver branches.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

PCI = "feature.node.kubernetes.io/pci-10de.present"


def exposition(gpus, host_label="Hostname", host="gpu-a", mig=None, driver="550.90.07", model="Tesla T4"):
    """dcgm-exporter text for ``gpus`` physical GPUs; ``mig``: instances per GPU (profile, count)."""
    lines = []
    for metric, help_text, value in (
        ("DCGM_FI_DEV_SM_CLOCK", "SM frequency (in MHz).", 1410),
        ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", 34),
        ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", 61.2),
    ):
        lines.append("# HELP {0} {1}".format(metric, help_text))
        lines.append("# TYPE {0} gauge".format(metric))
        for index in range(gpus):
            labels = [
                'gpu="{0}"'.format(index),
                'UUID="GPU-5fd4c9e2-{0:04d}-8b41-1f0a-2c6e1f3b9d{0:02d}"'.format(index),
                'pci_bus_id="00000000:{0:02X}:00.0"'.format(0x10 + index),
                'device="nvidia{0}"'.format(index),
                'modelName="{0}"'.format(model),
            ]
            if host_label:
                labels.append('{0}="{1}"'.format(host_label, host))
            labels.append('DCGM_FI_DRIVER_VERSION="{0}"'.format(driver))
            labels += ['container=""', 'namespace=""', 'pod=""']
            instances = [None] if not mig else ["{0}".format(7 + i) for i in range(mig[1])]
            for gi in instances:
                extra = [] if gi is None else ['GPU_I_PROFILE="{0}"'.format(mig[0]), 'GPU_I_ID="{0}"'.format(gi)]
                lines.append("{0}{{{1}}} {2}".format(metric, ",".join(labels[:5] + extra + labels[5:]), value))
    return "\n".join(lines) + "\n"


def gfd_node(name="gpu-a", allocatable=None, **labels):
    """A Node as GFD and the device plugin leave it; ``labels`` without the nvidia.com/ prefix."""
    node_labels = {PCI: "true"}
    for key, value in labels.items():
        node_labels["nvidia.com/" + key.replace("__", ".").replace("_", "-")] = value
    return {
        "metadata": {"name": name, "labels": node_labels},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "allocatable": dict({"cpu": "94", "memory": "1056375788Ki", "pods": "250"}, **(allocatable or {})),
        },
    }


def mig_single_node(name="gpu-a"):
    """2 x A100-SXM4-40GB, every GPU split into 7 x 1g.5gb (GFD overrides gpu.count with MIG devices)."""
    return gfd_node(
        name,
        {"nvidia.com/gpu": "14"},
        **{
            "mig__strategy": "single",
            "mig__capable": "true",
            "gpu__product": "A100-SXM4-40GB-MIG-1g.5gb",
            "gpu__count": "14",
            "gpu__memory": "4864",
            "gpu__replicas": "1",
            "gpu__slices__gi": "1",
            "gpu__slices__ci": "1",
        },
    )


def mig_mixed_node(name="gpu-a"):
    """4 x A100-SXM4-40GB: two split (1g.5gb x 7 and 3g.20gb x 2), two whole."""
    return gfd_node(
        name,
        {"nvidia.com/gpu": "2", "nvidia.com/mig-1g.5gb": "7", "nvidia.com/mig-3g.20gb": "2"},
        **{
            "mig__strategy": "mixed",
            "mig__capable": "true",
            "gpu__product": "A100-SXM4-40GB",
            "gpu__count": "4",
            "gpu__memory": "40960",
            "gpu__replicas": "1",
            "mig-1g__5gb__count": "7",
            "mig-1g__5gb__memory": "4864",
            "mig-1g__5gb__slices__gi": "1",
            "mig-3g__20gb__count": "2",
            "mig-3g__20gb__memory": "19968",
            "mig-3g__20gb__slices__gi": "3",
        },
    )


def time_sliced_node(name="gpu-a", rename=True, gpus=1, replicas=4):
    """Time-slicing: renameByDefault true advertises nvidia.com/gpu.shared and leaves the product as is."""
    resource = "nvidia.com/gpu.shared" if rename else "nvidia.com/gpu"
    return gfd_node(
        name,
        {resource: str(gpus * replicas)},
        **{
            "mig__strategy": "none",
            "gpu__product": "Tesla-T4" if rename else "Tesla-T4-SHARED",
            "gpu__count": str(gpus),
            "gpu__replicas": str(replicas),
            "gpu__sharing-strategy": "time-slicing",
        },
    )


SMI_R535 = """Tue Nov 18 09:12:44 2025
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.183.06             Driver Version: 535.183.06   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  Tesla T4                       On  | 00000000:00:1E.0 Off |                    0 |
| N/A   29C    P8               9W /  70W |      0MiB / 15360MiB |      0%      Default |
|                                         |                      |                  N/A |
+-----------------------------------------+----------------------+----------------------+
"""

SMI_R550 = """Tue Nov 18 09:12:44 2025
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  Tesla T4                       On  |   00000000:00:1E.0 Off |                    0 |
| N/A   29C    P8              9W /   70W |       0MiB /  15360MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
"""

SMI_R580 = SMI_R550.replace(
    "| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |",
    "| NVIDIA-SMI 580.82.07              Driver Version: 580.82.07      CUDA Version: 13.0     |",
).replace("Tesla T4                       On", "NVIDIA L40S                    On")

SMI_R610 = SMI_R550.replace(
    "| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |",
    "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02         CUDA Version: 13.2     |",
).replace("Tesla T4                       On", "NVIDIA H200                    On")
