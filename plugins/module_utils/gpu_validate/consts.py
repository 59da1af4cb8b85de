# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Names gpu_validate shares between its parts: checks, verdicts, labels, resources."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

CHECKS = ("allocatable", "driver", "vectoradd", "nvidia_smi", "metrics", "burnin")
WORKLOAD_CHECKS = ("vectoradd", "nvidia_smi", "burnin")
DEFAULT_CHECKS = ["allocatable", "driver", "vectoradd"]
NODE_CHECK = "node_ready"
PASS, FAIL, SKIP, UNREACHABLE = "pass", "fail", "skipped", "unreachable"

# Resources the NVIDIA device plugin advertises and labels GPU Feature Discovery publishes.
GPU_RESOURCE = "nvidia.com/gpu"
SHARED_RESOURCE = "nvidia.com/gpu.shared"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
GFD_COUNT = "nvidia.com/gpu.count"
GFD_REPLICAS = "nvidia.com/gpu.replicas"
GFD_PRODUCT = "nvidia.com/gpu.product"
GFD_SHARING = "nvidia.com/gpu.sharing-strategy"
GFD_MIG_STRATEGY = "nvidia.com/mig.strategy"

# Our validation pods.
COMPONENT_LABEL = "app.kubernetes.io/component"
APP_NAME = "gpu-validate"
RUN_LABEL = "gpuops.cluster/validation-run"
CHECK_LABEL = "gpuops.cluster/check"
NODE_ANNOTATION = "gpuops.cluster/node"
DEFAULT_TOLERATIONS = [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]

TEMP_METRIC = "DCGM_FI_DEV_GPU_TEMP"
