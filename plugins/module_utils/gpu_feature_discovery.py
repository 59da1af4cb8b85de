# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The gpu_feature_discovery role's decisions, as plain functions (its filters in plugins/filter/gpu_feature_discovery.py).

- ``input_problems``: the inputs no single rule says (USE_NODE_FEATURE_API auto/true/false; a default key needs a
  sharing ConfigMap).
- ``plan``: USE_NODE_FEATURE_API, the sharing ConfigMap and its default key (``auto``: the device plugin's, when it
  exists), the RuntimeClass (none in CRI-O hook mode), what stops the state before it writes, and whether check
  mode skips it.
- ``label_summary``: which GPU nodes lack the GFD labels, and the per-node summary and its table.
- ``unlabelled_lines``: per GPU node without the labels, its GFD pod's state (and why a ready pod publishes none).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

ROLE = "gpu_feature_discovery"
_TRUE = ("true", "yes", "on", "1")
_CRIO_RE = re.compile(r"cri-o://")


def _shown(value, width=80):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def input_problems(node_feature_api, config_map, config_default):
    """What no single input rule says: USE_NODE_FEATURE_API auto/true/false, and a default key needs a ConfigMap."""
    out = []
    if not (isinstance(node_feature_api, bool) or node_feature_api in ("auto", "true", "false")):
        out.append(
            "{0}: gpu_feature_discovery_node_feature_api must be auto, true or false, got {1}.".format(
                ROLE, _shown(node_feature_api, 40)
            )
        )
    if isinstance(config_default, str) and config_default and not config_map:
        out.append(
            "{0}: gpu_feature_discovery_config_default needs gpu_feature_discovery_config_map (the sharing "
            "ConfigMap it is a key of), got {1}.".format(ROLE, _shown(config_default))
        )
    return out


def node_feature_api(setting, openshift):
    """USE_NODE_FEATURE_API: 'false' or 'true', or '' for GFD's own default (auto off OpenShift)."""
    if str(setting) == "auto":
        return "false" if openshift else ""
    return "true" if setting is True or str(setting).lower() in _TRUE else "false"


def _read(reads, kind):
    """The k8s_info result of ``kind`` among the looped reads (each has its ``item``)."""
    for result in reads or []:
        if (result.get("item") or {}).get("kind") == kind:
            return result
    return {}


def _sharing_problem(name, auto, found, data, config_default, namespace, check_mode):
    """Why the sharing ConfigMap cannot be used, or None."""
    if found:
        if not config_default or config_default in data:
            return None
        return "{0}: gpu_feature_discovery_config_map {1} has no key {2} (gpu_feature_discovery_config_default); keys: {3}.".format(
            ROLE, name, config_default, ", ".join(data)
        )
    if check_mode or (auto and not config_default):
        return None
    if auto:
        return (
            "{0}: gpu_feature_discovery_config_default must be a key of the sharing ConfigMap, but "
            "gpu_feature_discovery_config_map auto found no {1} in {2} (the device_plugin role makes it only with a "
            "sharing config): drop gpu_feature_discovery_config_default or configure sharing in the device_plugin "
            "role first.".format(ROLE, name, namespace)
        )
    return "{0}: gpu_feature_discovery_config_map {1} does not exist in {2} (the device_plugin role makes it).".format(
        ROLE, name, namespace
    )


def plan(reads, nodes, settings, openshift, check_mode, gpu_labels):
    """What the preflight decides.

    ``reads``: the k8s_info results of the Namespace and the sharing ConfigMap (each with its ``item``: kind,
    name; the namespace read is skipped when this run's driver state made it, the ConfigMap read when no name or
    when this run's device plugin has none), or None when both were skipped and so the read was not made;
    ``nodes``: the GPU nodes (nfd_labels facts); ``settings``: namespace, node_feature_api, config_map (the
    setting: auto, "" or a name), config_default, plugin_default (the device plugin's default key), cdi_enabled,
    runtime_class.
    """
    if reads is None:
        reads = [{"item": {"kind": "Namespace"}, "skipped": True}, {"item": {"kind": "ConfigMap"}, "skipped": True}]
    ns_read, cm_read = _read(reads, "Namespace"), _read(reads, "ConfigMap")
    ns_exists = bool(ns_read.get("skipped")) or bool(ns_read.get("resources"))
    name = (cm_read.get("item") or {}).get("name") or ""
    auto = settings["config_map"] == "auto"
    found = bool(cm_read.get("resources"))
    data = (cm_read["resources"][0].get("data") or {}) if found else {}
    default = settings["config_default"]
    if not default and auto and settings["plugin_default"] in data:
        default = settings["plugin_default"]
    # CRI-O without CDI: hook mode, no nvidia runtime handler, so no RuntimeClass (GO setRuntimeClassName).
    runtimes = [n.get("container_runtime") for n in nodes or [] if n.get("container_runtime")]
    hook_mode = not settings["cdi_enabled"] and (
        any(_CRIO_RE.match(r) for r in runtimes) or (not runtimes and bool(openshift))
    )
    problems = []
    if not nodes and not check_mode:
        problems.append(
            "{0}: no GPU node: no node carries an NFD NVIDIA PCI label ({1}=true). Run the nfd and driver roles "
            "first.".format(ROLE, ", ".join(gpu_labels))
        )
    if not ns_exists and not check_mode:
        problems.append(
            "{0}: namespace {1} (gpu_feature_discovery_namespace) does not exist: the driver role creates it; run "
            "the driver role first.".format(ROLE, settings["namespace"])
        )
    sharing = name and _sharing_problem(
        name, auto, found, data, settings["config_default"], settings["namespace"], check_mode
    )
    if sharing:
        problems.append(sharing)
    return {
        "api": node_feature_api(settings["node_feature_api"], openshift),
        # auto: the device plugin's ConfigMap only when it exists (the plugin makes it only with a sharing config).
        "config_map": name if name and (found or not auto) else "",
        "config_default": default,
        "runtime_class": "" if hook_mode else settings["runtime_class"],
        "namespace_exists": ns_exists,
        "problems": problems,
        "skip": bool(check_mode) and (not nodes or not ns_exists or bool(name and not auto and not found)),
    }


_NEEDED = ("count", "memory", "cuda_driver")


def label_summary(nodes):
    """``missing``: the GPU nodes without nvidia.com/gpu.product, .count, .memory or the CUDA driver labels;
    ``nodes``: node -> product, count, memory_mib, driver, cuda, replicas, sharing, allocatable for the others;
    ``table``: that summary as lines."""
    gpu = [n for n in nodes or [] if n.get("gpu")]
    missing = [n["name"] for n in gpu if "product" not in (n.get("gfd") or {})]
    for key in _NEEDED:  # in this order, as the failure lists them
        missing += [n["name"] for n in gpu if "product" in (n.get("gfd") or {}) and not n["gfd"].get(key)]
    missing = list(dict.fromkeys(missing))
    summary = {}
    for node in gpu:
        if node["name"] in missing:
            continue
        gfd = node["gfd"]
        summary[node["name"]] = {
            "product": gfd["product"],
            "count": gfd["count"],
            "memory_mib": gfd["memory"],
            "driver": gfd["cuda_driver"],
            "cuda": gfd.get("cuda_runtime"),
            "replicas": gfd.get("replicas", 1),
            "sharing": gfd.get("sharing_strategy", "none"),
            "allocatable": node.get("allocatable_gpus"),
        }
    table = ["node | product | count | memory MiB | driver | replicas/sharing"] + [
        "{0} | {product} | {count} | {memory_mib} | {driver} | {replicas}/{sharing}".format(name, **s)
        for name, s in summary.items()
    ]
    return {"missing": missing, "nodes": summary, "table": table}


def unlabelled_lines(states, api, openshift, daemonset):
    """One line per node of ``states`` (operand_pod_states' entries); a ready pod that publishes no labels gets
    the NodeFeature API hint."""
    hint = ""
    if api != "false":
        hint = (
            " (USE_NODE_FEATURE_API={0}: GFD writes a NodeFeature object instead of labels, and only an NFD master "
            "that reads NodeFeature objects turns it into labels{1})".format(
                api or "true, GFD default",
                "; OpenShift needs gpu_feature_discovery_node_feature_api false" if openshift else "",
            )
        )
    out = []
    for state in states or []:
        if state.get("pod"):
            where = "pod {0} {1}".format(state["pod"], state.get("state"))
        else:
            where = "no {0} pod (check the node selector and tolerations)".format(daemonset)
        out.append(
            "{0}: node {1}: no nvidia.com/gpu.product, gpu.count, gpu.memory and cuda driver labels; {2}{3}".format(
                ROLE, state.get("node"), where, hint if state.get("ready") else ""
            )
        )
    return out
