# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The device plugin role's decisions: its configs (given, or generated from the time-slicing variables), their
problems by the plugin's own rules, the RuntimeClass and device list strategy, and the config each node selects.

The rules are the plugin's (NVIDIA/k8s-device-plugin api/config/v1): version v1, replicas >= 2
(replicas.go), resource names nvidia.com/ + a DNS-1123 subdomain (resources.go NewResourceName), and the
MIG_STRATEGY env wins over a config's flags.migStrategy (flags.go updateFromCLIFlag).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import re

MIG_STRATEGIES = ("none", "single", "mixed")
LIST_STRATEGIES = ("envvar", "volume-mounts", "cdi-annotations", "cdi-cri")
# GO transformDevicePluginCtrForCDI (controllers/object_controls.go).
CDI_LIST_STRATEGY = "cdi-annotations,cdi-cri"
CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]{1,253}$")
RESOURCE_NAME_RE = re.compile(r"^(nvidia\.com/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
WHOLE_RE = re.compile(r"^[0-9]+$")


def _replicas(value):
    text = str(value)
    return int(text) if WHOLE_RE.match(text) else None


def render_configs(v):
    """The configs the ConfigMap holds: ``device_plugin_configs`` when given, else one generated from the
    time-slicing variables when replicas > 1, else none."""
    given = v["device_plugin_configs"]
    if isinstance(given, dict) and given:
        return given
    replicas = _replicas(v["device_plugin_time_slicing_replicas"])
    if replicas is None or replicas < 2:
        return {}
    return {
        str(v["device_plugin_default_config"]): {
            "version": "v1",
            "flags": {"migStrategy": str(v["device_plugin_mig_strategy"])},
            "sharing": {
                "timeSlicing": {
                    "renameByDefault": bool(v["device_plugin_rename_by_default"]),
                    "failRequestsGreaterThanOne": bool(v["device_plugin_fail_requests_greater_than_one"]),
                    "resources": [{"name": "nvidia.com/gpu", "replicas": replicas}],
                }
            },
        }
    }


def _resource_problems(key, resources):
    if isinstance(resources, str) or not isinstance(resources, list) or not resources:
        return ["{0}: sharing.timeSlicing.resources must be a non-empty list".format(key)]
    out = []
    for index, res in enumerate(resources):
        name = str(res.get("name", "")) if isinstance(res, dict) else ""
        replicas = _replicas(res.get("replicas", "")) if isinstance(res, dict) else None
        if not RESOURCE_NAME_RE.match(name) or replicas is None or replicas < 2:
            out.append(
                "{0}: sharing.timeSlicing.resources[{1}] needs a name (nvidia.com/ and lowercase letters, digits, - and .)"
                " and replicas >= 2".format(key, index)
            )
    return out


def _config_problems(key, cfg, mig_strategy):
    if not isinstance(cfg, dict) or cfg.get("version", "") != "v1":
        return ["{0}: not a version v1 config (a dictionary with version: v1)".format(key)]
    out = []
    mig = (cfg.get("flags") or {}).get("migStrategy")
    if mig is not None and mig not in MIG_STRATEGIES:
        out.append("{0}: flags.migStrategy must be one of none, single, mixed".format(key))
    elif mig is not None and mig != mig_strategy:
        out.append(
            "{0}: flags.migStrategy {1} would run as {2} (the MIG_STRATEGY env the plugin gets wins): set "
            "device_plugin_mig_strategy: {1} or drop flags.migStrategy".format(key, mig, mig_strategy)
        )
    sharing = cfg.get("sharing") or {}
    if sharing.get("mps") is not None:
        out.append(
            "{0}: sharing.mps needs the MPS control daemon (and its /run/nvidia/mps, /dev/shm mounts), which this "
            "collection does not deploy: use sharing.timeSlicing".format(key)
        )
    block = sharing.get("timeSlicing")
    if block is not None:
        out.extend(_resource_problems(key, block.get("resources", []) if isinstance(block, dict) else []))
    return out


def config_problems(configs, mig_strategy):
    """One line per problem of ``device_plugin_configs`` (keys, schema, MIG strategy, sharing)."""
    if not isinstance(configs, dict):
        return []
    out = []
    for key, cfg in configs.items():
        if not isinstance(key, str) or not CONFIG_KEY_RE.match(key):
            out.append("{0}: not a ConfigMap key (letters, digits, -, _ and .)".format(key))
        out.extend(_config_problems(key, cfg, mig_strategy))
    return out


def input_problems(v, configs):
    """What the argument spec and the shared input rules cannot say: the configs, the list strategy, the choice
    between time-slicing variables and whole configs, and the default key."""
    out = []
    strategy = v["device_plugin_device_list_strategy"]
    if not isinstance(strategy, str) or (strategy != "auto" and set(strategy.split(",")) - set(LIST_STRATEGIES)):
        out.append(
            "device_plugin_device_list_strategy must be auto, or one (or a comma-separated list) of {0}, got {1}.".format(
                ", ".join(LIST_STRATEGIES), strategy
            )
        )
    given = v["device_plugin_configs"]
    problems = config_problems(given, v["device_plugin_mig_strategy"])
    if problems:
        out.append("device_plugin_configs: {0}.".format("; ".join(problems)))
    replicas = str(v["device_plugin_time_slicing_replicas"])
    if isinstance(given, dict) and given and replicas != "1":
        out.append(
            "device_plugin_time_slicing_replicas ({0}) and device_plugin_configs are exclusive: put the time-slicing "
            "into the configs, or drop device_plugin_configs.".format(replicas)
        )
    default = v["device_plugin_default_config"]
    if configs and str(default) not in configs:
        out.append(
            "device_plugin_default_config {0} is not a key of device_plugin_configs ({1}).".format(
                default, ", ".join(configs)
            )
        )
    return ["device_plugin: " + line for line in out]


def checksum(configs, default_config):
    """The pod template annotation: a content change of the configs rolls the DaemonSet."""
    text = json.dumps(configs, sort_keys=True) + "|" + str(default_config)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def runtime_class(v, gpu_nodes, openshift):
    """CRI-O without CDI: the toolkit installs an OCI hook and no nvidia runtime handler, so no RuntimeClass
    (GO setRuntimeClassName); the runtime is the GPU nodes' (status.nodeInfo), else the platform's."""
    runtimes = [n.get("container_runtime") for n in gpu_nodes if n.get("container_runtime")]
    crio = any(r.startswith("cri-o://") for r in runtimes) or (not runtimes and openshift)
    return "" if (not v["device_plugin_cdi_enabled"] and crio) else v["device_plugin_runtime_class"]


def plan(v, gpu_nodes, labelled, openshift, config_label):
    """Everything the role decides before it writes: configs, checksum, problems, runtime class, list strategy,
    the GPU nodes and the config each labelled node selects (and those that select an unknown one)."""
    configs = render_configs(v)
    node_configs = {}
    for node in labelled:
        meta = node.get("metadata") or {}
        node_configs[meta.get("name")] = (meta.get("labels") or {}).get(config_label)
    problems = input_problems(v, configs)
    unknown = sorted("{0}={1}".format(n, k) for n, k in node_configs.items() if configs and k not in configs)
    if unknown:
        problems.append(
            "device_plugin: node(s) {0} select a config by the {1} label that is not a key of device_plugin_configs "
            "({2}): add the config or fix the label.".format(", ".join(unknown), config_label, ", ".join(configs))
        )
    strategy = v["device_plugin_device_list_strategy"]
    if strategy == "auto":
        strategy = CDI_LIST_STRATEGY if v["device_plugin_cdi_enabled"] else "envvar"
    gpus = [n for n in gpu_nodes if n.get("gpu")]
    return {
        "configs": configs,
        "checksum": checksum(configs, v["device_plugin_default_config"]),
        "problems": problems,
        "runtime_class": runtime_class(v, gpus, openshift),
        "list_strategy": strategy,
        "gpu_nodes": [n["name"] for n in gpus],
        "node_configs": node_configs,
    }
