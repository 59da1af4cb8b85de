# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Known cloud instance types and the NVIDIA GPUs they carry.

Derived from data/gpu-instance-types.csv (AWS DescribeInstanceTypes data, Azure
VM size docs, GCP machine type data; the sources are listed next to the CSV).
The table is embedded as Python because module_utils travel to the managed host
inside the AnsiballZ payload and data files do not.

``gpu_model`` is the string GPU Feature Discovery puts in
``nvidia.com/gpu.product``; memory values are MiB.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib

PROVIDERS = ("aws", "azure", "gcp")

# provider, instance type, GPUs, gpu_model, GPU memory per GPU (MiB), vCPU, memory (MiB)
_ROWS = (
    ("aws", "p2.xlarge", 1, "Tesla-K80", 12288, 4, 62464),
    ("aws", "p2.8xlarge", 8, "Tesla-K80", 12288, 32, 499712),
    ("aws", "p2.16xlarge", 16, "Tesla-K80", 12288, 64, 749568),
    ("aws", "p3.2xlarge", 1, "Tesla-V100-SXM2-16GB", 16384, 8, 62464),
    ("aws", "p3.8xlarge", 4, "Tesla-V100-SXM2-16GB", 16384, 32, 249856),
    ("aws", "p3.16xlarge", 8, "Tesla-V100-SXM2-16GB", 16384, 64, 499712),
    ("aws", "p3dn.24xlarge", 8, "Tesla-V100-SXM2-32GB", 32768, 96, 786432),
    ("aws", "p4d.24xlarge", 8, "NVIDIA-A100-SXM4-40GB", 40960, 96, 1179648),
    ("aws", "p4de.24xlarge", 8, "NVIDIA-A100-SXM4-80GB", 81920, 96, 1179648),
    ("aws", "p5.4xlarge", 1, "NVIDIA-H100-80GB-HBM3", 81920, 16, 262144),
    ("aws", "p5.48xlarge", 8, "NVIDIA-H100-80GB-HBM3", 81920, 192, 2097152),
    ("aws", "p5e.48xlarge", 8, "NVIDIA-H200", 144384, 192, 2097152),
    ("aws", "p5en.48xlarge", 8, "NVIDIA-H200", 144384, 192, 2097152),
    ("aws", "g3s.xlarge", 1, "Tesla-M60", 8192, 4, 31232),
    ("aws", "g3.4xlarge", 1, "Tesla-M60", 8192, 16, 124928),
    ("aws", "g3.8xlarge", 2, "Tesla-M60", 8192, 32, 249856),
    ("aws", "g3.16xlarge", 4, "Tesla-M60", 8192, 64, 499712),
    ("aws", "g4dn.xlarge", 1, "Tesla-T4", 16384, 4, 16384),
    ("aws", "g4dn.2xlarge", 1, "Tesla-T4", 16384, 8, 32768),
    ("aws", "g4dn.4xlarge", 1, "Tesla-T4", 16384, 16, 65536),
    ("aws", "g4dn.8xlarge", 1, "Tesla-T4", 16384, 32, 131072),
    ("aws", "g4dn.12xlarge", 4, "Tesla-T4", 16384, 48, 196608),
    ("aws", "g4dn.16xlarge", 1, "Tesla-T4", 16384, 64, 262144),
    ("aws", "g4dn.metal", 8, "Tesla-T4", 16384, 96, 393216),
    ("aws", "g5.xlarge", 1, "NVIDIA-A10G", 22888, 4, 16384),
    ("aws", "g5.2xlarge", 1, "NVIDIA-A10G", 22888, 8, 32768),
    ("aws", "g5.4xlarge", 1, "NVIDIA-A10G", 22888, 16, 65536),
    ("aws", "g5.8xlarge", 1, "NVIDIA-A10G", 22888, 32, 131072),
    ("aws", "g5.12xlarge", 4, "NVIDIA-A10G", 22888, 48, 196608),
    ("aws", "g5.16xlarge", 1, "NVIDIA-A10G", 22888, 64, 262144),
    ("aws", "g5.24xlarge", 4, "NVIDIA-A10G", 22888, 96, 393216),
    ("aws", "g5.48xlarge", 8, "NVIDIA-A10G", 22888, 192, 786432),
    ("aws", "g6.xlarge", 1, "NVIDIA-L4", 22888, 4, 16384),
    ("aws", "g6.2xlarge", 1, "NVIDIA-L4", 22888, 8, 32768),
    ("aws", "g6.4xlarge", 1, "NVIDIA-L4", 22888, 16, 65536),
    ("aws", "g6.8xlarge", 1, "NVIDIA-L4", 22888, 32, 131072),
    ("aws", "g6.12xlarge", 4, "NVIDIA-L4", 22888, 48, 196608),
    ("aws", "g6.16xlarge", 1, "NVIDIA-L4", 22888, 64, 262144),
    ("aws", "g6.24xlarge", 4, "NVIDIA-L4", 22888, 96, 393216),
    ("aws", "g6.48xlarge", 8, "NVIDIA-L4", 22888, 192, 786432),
    ("aws", "gr6.4xlarge", 1, "NVIDIA-L4", 22888, 16, 131072),
    ("aws", "gr6.8xlarge", 1, "NVIDIA-L4", 22888, 32, 262144),
    ("aws", "g6e.xlarge", 1, "NVIDIA-L40S", 45776, 4, 32768),
    ("aws", "g6e.2xlarge", 1, "NVIDIA-L40S", 45776, 8, 65536),
    ("aws", "g6e.4xlarge", 1, "NVIDIA-L40S", 45776, 16, 131072),
    ("aws", "g6e.8xlarge", 1, "NVIDIA-L40S", 45776, 32, 262144),
    ("aws", "g6e.12xlarge", 4, "NVIDIA-L40S", 45776, 48, 393216),
    ("aws", "g6e.16xlarge", 1, "NVIDIA-L40S", 45776, 64, 524288),
    ("aws", "g6e.24xlarge", 4, "NVIDIA-L40S", 45776, 96, 786432),
    ("aws", "g6e.48xlarge", 8, "NVIDIA-L40S", 45776, 192, 1572864),
    ("aws", "m5.xlarge", 0, "", 0, 4, 16384),
    ("aws", "m5.2xlarge", 0, "", 0, 8, 32768),
    ("aws", "m6i.xlarge", 0, "", 0, 4, 16384),
    ("azure", "Standard_NC4as_T4_v3", 1, "Tesla-T4", 16384, 4, 28672),
    ("azure", "Standard_NC8as_T4_v3", 1, "Tesla-T4", 16384, 8, 57344),
    ("azure", "Standard_NC16as_T4_v3", 1, "Tesla-T4", 16384, 16, 112640),
    ("azure", "Standard_NC64as_T4_v3", 4, "Tesla-T4", 16384, 64, 450560),
    ("azure", "Standard_NC6s_v3", 1, "Tesla-V100-PCIE-16GB", 16384, 6, 114688),
    ("azure", "Standard_NC12s_v3", 2, "Tesla-V100-PCIE-16GB", 16384, 12, 229376),
    ("azure", "Standard_NC24s_v3", 4, "Tesla-V100-PCIE-16GB", 16384, 24, 458752),
    ("azure", "Standard_NC24rs_v3", 4, "Tesla-V100-PCIE-16GB", 16384, 24, 458752),
    ("azure", "Standard_NC24ads_A100_v4", 1, "NVIDIA-A100-80GB-PCIe", 81920, 24, 225280),
    ("azure", "Standard_NC48ads_A100_v4", 2, "NVIDIA-A100-80GB-PCIe", 81920, 48, 450560),
    ("azure", "Standard_NC96ads_A100_v4", 4, "NVIDIA-A100-80GB-PCIe", 81920, 96, 901120),
    ("azure", "Standard_ND96asr_v4", 8, "NVIDIA-A100-SXM4-40GB", 40960, 96, 921600),
    ("azure", "Standard_ND96amsr_A100_v4", 8, "NVIDIA-A100-SXM4-80GB", 81920, 96, 1945600),
    ("azure", "Standard_ND96isr_H100_v5", 8, "NVIDIA-H100-80GB-HBM3", 81920, 96, 1945600),
    ("azure", "Standard_NV6ads_A10_v5", 1, "NVIDIA-A10", 4096, 6, 56320),
    ("azure", "Standard_NV12ads_A10_v5", 1, "NVIDIA-A10", 8192, 12, 112640),
    ("azure", "Standard_NV18ads_A10_v5", 1, "NVIDIA-A10", 12288, 18, 225280),
    ("azure", "Standard_NV36ads_A10_v5", 1, "NVIDIA-A10", 24576, 36, 450560),
    ("azure", "Standard_NV36adms_A10_v5", 1, "NVIDIA-A10", 24576, 36, 901120),
    ("azure", "Standard_NV72ads_A10_v5", 2, "NVIDIA-A10", 24576, 72, 901120),
    ("azure", "Standard_D4s_v3", 0, "", 0, 4, 16384),
    ("gcp", "a2-highgpu-1g", 1, "NVIDIA-A100-SXM4-40GB", 40960, 12, 87040),
    ("gcp", "a2-highgpu-2g", 2, "NVIDIA-A100-SXM4-40GB", 40960, 24, 174080),
    ("gcp", "a2-highgpu-4g", 4, "NVIDIA-A100-SXM4-40GB", 40960, 48, 348160),
    ("gcp", "a2-highgpu-8g", 8, "NVIDIA-A100-SXM4-40GB", 40960, 96, 696320),
    ("gcp", "a2-megagpu-16g", 16, "NVIDIA-A100-SXM4-40GB", 40960, 96, 1392640),
    ("gcp", "a2-ultragpu-1g", 1, "NVIDIA-A100-SXM4-80GB", 81920, 12, 174080),
    ("gcp", "a2-ultragpu-2g", 2, "NVIDIA-A100-SXM4-80GB", 81920, 24, 348160),
    ("gcp", "a2-ultragpu-4g", 4, "NVIDIA-A100-SXM4-80GB", 81920, 48, 696320),
    ("gcp", "a2-ultragpu-8g", 8, "NVIDIA-A100-SXM4-80GB", 81920, 96, 1392640),
    ("gcp", "a3-highgpu-8g", 8, "NVIDIA-H100-80GB-HBM3", 81920, 208, 1916928),
    ("gcp", "g2-standard-4", 1, "NVIDIA-L4", 24576, 4, 16384),
    ("gcp", "g2-standard-8", 1, "NVIDIA-L4", 24576, 8, 32768),
    ("gcp", "g2-standard-12", 1, "NVIDIA-L4", 24576, 12, 49152),
    ("gcp", "g2-standard-16", 1, "NVIDIA-L4", 24576, 16, 65536),
    ("gcp", "g2-standard-24", 2, "NVIDIA-L4", 24576, 24, 98304),
    ("gcp", "g2-standard-32", 1, "NVIDIA-L4", 24576, 32, 131072),
    ("gcp", "g2-standard-48", 4, "NVIDIA-L4", 24576, 48, 196608),
    ("gcp", "g2-standard-96", 8, "NVIDIA-L4", 24576, 96, 393216),
    ("gcp", "n1-standard-4", 0, "", 0, 4, 15360),
    ("gcp", "n2-standard-4", 0, "", 0, 4, 16384),
)

# GCP N1 machine types take attachable GPUs (GCPMachineProviderSpec.gpus[]);
# openshift/api validates the type against this pattern.
GCP_ATTACHABLE_GPU_TYPES = (
    "nvidia-tesla-k80",
    "nvidia-tesla-p100",
    "nvidia-tesla-v100",
    "nvidia-tesla-p4",
    "nvidia-tesla-t4",
)
GCP_ATTACHABLE_FAMILIES = ("n1-",)
# GCP families whose machine type brings its GPUs (A100, H100, L4): no gpus[] to give.
GCP_BUNDLED_GPU_FAMILIES = ("a2-", "a3-", "g2-")


def _key(provider, instance_type):
    # Azure VM size names are case-insensitive in the Azure API.
    if provider == "azure":
        return provider, instance_type.lower()
    return provider, instance_type


CATALOG = dict(
    (
        _key(row[0], row[1]),
        {
            "provider": row[0],
            "instance_type": row[1],
            "gpu_count": row[2],
            "gpu_model": row[3] or None,
            "gpu_memory_mib": row[4],
            "vcpu": row[5],
            "memory_mib": row[6],
        },
    )
    for row in _ROWS
)


def lookup(provider, instance_type):
    """The catalog entry for an instance type (a copy), or None when unknown."""
    if not instance_type:
        return None
    entry = CATALOG.get(_key(provider, instance_type))
    return dict(entry) if entry else None


def has_gpu(provider, instance_type):
    """True / False for known types, None for types the catalog does not know."""
    entry = lookup(provider, instance_type)
    if entry is None:
        return None
    return entry["gpu_count"] > 0


def gpu_instance_types(provider):
    """Names of the known GPU instance types of one provider, in catalog order."""
    return [row[1] for row in _ROWS if row[0] == provider and row[2] > 0]


def suggest(provider, instance_type, count=5):
    """Known GPU instance types of ``provider`` that look like ``instance_type``.

    Used in error messages; falls back to the first few GPU types of the provider.
    """
    names = gpu_instance_types(provider)
    close = difflib.get_close_matches(instance_type or "", names, n=count, cutoff=0.5)
    return close or names[:count]
