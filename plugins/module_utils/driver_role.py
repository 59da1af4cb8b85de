# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What the driver role decides and says, out of Jinja (pure; the filters of plugins/filter/driver.py).

The build mode of the platform, the checks the input rules cannot make (driver versions, the mode on this
platform, the entitlement, the GPU nodes' NFD labels), the lines the role shows for the builds and the
rollout, the message per node whose driver is not ready, and the ``driver_result`` fact.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils.validators import dns_label_problem

# Annotation carrying the kernel of a driver DaemonSet (roles/driver/vars/main.yml _driver_kernel_key).
KERNEL_KEY = "gpuops.cluster/kernel"
BUILT_MODES = ("driver-toolkit", "entitlement")
# Driver version 550.90.07 / 550.90; branch 550 (precompiled tags).
VERSION_RE = re.compile(r"^[0-9]{3}\.[0-9]{1,3}(\.[0-9]{1,3})?$")
BRANCH_RE = re.compile(r"^[0-9]{3}(\.[0-9]{1,3}(\.[0-9]{1,3})?)?$")
PEM_DATA_URL_RE = re.compile(r"^data:[^,]*;base64,.+")
BUILD_NAME_MAX = 40


def _shown(value, limit=80):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def version_tuple(text):
    """The leading numeric parts of a version (``4.16.3-rc.1`` -> (4, 16, 3)); () when there are none."""
    match = re.match(r"^\s*v?([0-9]+(\.[0-9]+)*)", str(text or ""))
    return tuple(int(part) for part in match.group(1).split(".")) if match else ()


def _openshift(platform):
    return bool((platform or {}).get("openshift"))


def _openshift_version(platform):
    return str((platform or {}).get("openshift_version") or "0.0.0")


def resolve_mode(build_mode, platform, dtk_min_openshift):
    """``auto``: driver-toolkit on OpenShift >= dtk_min_openshift, entitlement before, runtime-compiled elsewhere."""
    if build_mode != "auto":
        return build_mode
    if not _openshift(platform):
        return "runtime-compiled"
    if version_tuple(_openshift_version(platform)) >= version_tuple(dtk_min_openshift):
        return "driver-toolkit"
    return "entitlement"


def _gpu_nodes(nodes):
    return [node for node in nodes or [] if node.get("gpu")]


def _names(nodes):
    return ", ".join(node.get("name", "?") for node in nodes)


def _input_problems(checks):
    out = []
    version = checks.get("version")
    if not (isinstance(version, str) and VERSION_RE.match(version)):
        out.append(
            "driver: driver_version must be an NVIDIA driver version such as 595.91.07 (three-digit branch, then one "
            "or two numeric parts), got {0}.".format(_shown(version, 60))
        )
    branch = checks.get("precompiled_version")
    if isinstance(branch, bool) or not BRANCH_RE.match(str(branch)):
        out.append(
            "driver: driver_precompiled_version must be a driver branch such as 580 (or a full version), got "
            "{0}.".format(_shown(str(branch), 60))
        )
    name = checks.get("build_name")
    # Not a DNS label at all: the input rule says so, with the same words.
    if isinstance(name, str) and dns_label_problem(name) is None and len(name) > BUILD_NAME_MAX:
        out.append(
            "driver: driver_build_name must be a DNS-1123 label of at most {0} characters, got {1}.".format(
                BUILD_NAME_MAX, _shown(name)
            )
        )
    return out


def _mode_problems(checks):
    mode, platform = checks.get("mode"), checks.get("platform") or {}
    dtk_min = checks.get("dtk_min_openshift", "4.9.9")
    if mode in BUILT_MODES and not _openshift(platform):
        return [
            "driver: driver_build_mode {0} builds on OpenShift (BuildConfig, ImageStream); this cluster is plain "
            "Kubernetes: use runtime-compiled or precompiled (or auto).".format(mode)
        ]
    out = []
    if mode == "driver-toolkit" and version_tuple(_openshift_version(platform)) < version_tuple(dtk_min):
        out.append(
            "driver: driver_build_mode driver-toolkit needs OpenShift >= {0} (entitlement-free builds); this cluster "
            "runs {1}: use entitlement (or auto).".format(dtk_min, _openshift_version(platform))
        )
    if mode == "entitlement" and not PEM_DATA_URL_RE.match(str(checks.get("entitlement_pem") or "")):
        out.append(
            "driver: driver_build_mode entitlement needs the cluster-wide entitlement: MachineConfig {0} with "
            "/etc/pki/entitlement/entitlement.pem as a base64 data URL (the entitlement role makes it); none was "
            "found. Run the entitlement role first or use driver-toolkit (OpenShift >= {1}).".format(
                checks.get("entitlement_machineconfig", "50-entitlement-pem"), dtk_min
            )
        )
    return out


def _node_problems(nodes, checks):
    gpu = _gpu_nodes(nodes)
    out = []
    unlabelled = [node for node in gpu if not node.get("kernel_version")]
    if unlabelled:
        out.append(
            "driver: GPU node(s) {0} carry no {1} label: Node Feature Discovery has not labelled them yet (run the "
            "nfd role, or wait for nfd-worker).".format(_names(unlabelled), checks.get("kernel_label"))
        )
    if checks.get("mode") in ("precompiled", "runtime-compiled"):
        no_os = [node for node in gpu if not {"ID", "VERSION_ID"} <= set(node.get("os_release") or {})]
        if no_os:
            out.append(
                "driver: GPU node(s) {0} carry no system-os_release.ID / VERSION_ID label, so the driver image tag "
                "cannot be named: fix the NFD worker configuration (system source).".format(_names(no_os))
            )
    if not gpu and not checks.get("check_mode"):
        out.append(
            "driver: no GPU node: no node carries an NFD NVIDIA PCI label ({0}=true). Run the gpu_machineset and nfd "
            "roles first.".format(", ".join(checks.get("gpu_labels") or []))
        )
    return out


def problems(nodes, checks):
    """What the input rules cannot say, one message each: the driver versions, the build name's length, the
    build mode on this platform, the entitlement (entitlement mode) and the GPU nodes' NFD labels.

    ``checks``: version, precompiled_version, build_name, mode (resolved), platform (preflight_platform),
    dtk_min_openshift, entitlement_pem, entitlement_machineconfig, kernel_label, gpu_labels, check_mode (no GPU
    node is not a problem then: the state only says what it would do).
    """
    return _input_problems(checks) + _mode_problems(checks) + _node_problems(nodes, checks)


def daemonset_kernels(resources, key=KERNEL_KEY):
    """DaemonSet name -> the kernel of its annotation (``?`` without one), for DaemonSets read from the cluster."""
    out = {}
    for res in resources or []:
        meta = res.get("metadata") or {}
        out[meta.get("name")] = (meta.get("annotations") or {}).get(key, "?")
    return out


def build_lines(build, prune_stale):
    """What driver_container_build did: the strategy, one ``kernel | action | image | nodes`` line per kernel, and
    the stale builds (kernels no GPU node runs)."""
    build = build or {}
    lines = ["driver: {0}, {1} kernel(s)".format(build.get("strategy"), len(build.get("images") or {}))]
    for kernel, info in (build.get("kernels") or {}).items():
        lines.append(
            " | ".join([kernel, str(info.get("action")), str(info.get("image")), ",".join(info.get("nodes") or [])])
        )
    fate = "pruned" if prune_stale else "kept, driver_prune_stale_builds removes it"
    for stale in build.get("stale") or []:
        lines.append("stale build for kernel (no GPU node runs it; {0}): {1}".format(fate, stale.get("kernel")))
    return lines


def _pruned_kernels(ensure, existing):
    kernels = daemonset_kernels(existing)
    return [kernels.get(item.get("name"), "?") for item in (ensure or {}).get("pruned") or []]


def rollout_lines(ensure, existing):
    """k8s_ensure's result for the DaemonSets as lines: ``name: action``, the kernels whose DaemonSet was pruned
    (``existing``: the driver DaemonSets read before), the progress, and what was not ready at the timeout."""
    ensure = ensure or {}
    lines = ["{0}: {1}".format(item.get("name"), item.get("action")) for item in ensure.get("objects") or []]
    lines += ["pruned: DaemonSet of kernel {0}".format(kernel) for kernel in _pruned_kernels(ensure, existing)]
    lines += list(ensure.get("progress") or [])
    if ensure.get("ready") is False or ensure.get("msg"):
        lines.append("not ready: {0}".format(ensure.get("msg")))
    return lines


def node_failures(validation, gpu_nodes, nodes_now):
    """One message per node gpu_validate failed: its kernel by the NFD label, the kernel it really runs when the
    label is stale (``nodes_now``: Node objects), and gpu_validate's reasons."""
    labelled = dict((node.get("name"), node.get("kernel_version")) for node in gpu_nodes or [])
    running = {}
    for node in nodes_now or []:
        kernel = ((node.get("status") or {}).get("nodeInfo") or {}).get("kernelVersion")
        if kernel:
            running[(node.get("metadata") or {}).get("name")] = kernel
    out = []
    for result in (validation or {}).get("nodes") or []:
        if result.get("passed"):
            continue
        name = result.get("node")
        label = labelled.get(name) or "unknown"
        runs = running.get(name, label)
        stale = "" if runs == label else "; the NFD kernel label is stale: the node runs {0}".format(runs)
        out.append(
            "driver: node {0} (kernel {1}{2}): {3}".format(name, label, stale, "; ".join(result.get("failures") or []))
        )
    return out


def result(build, ensure, daemonsets, existing, namespace, validated_nodes=None, key=KERNEL_KEY):
    """The ``driver_result`` fact: mode, namespace, per kernel its DaemonSet, image, nodes and build action, the
    kernels whose DaemonSet was pruned, the stale builds, the builds, ready, and the validated nodes (when given)."""
    build, ensure = build or {}, ensure or {}
    kernels = {}
    for ds in daemonsets or []:
        kernel = ((ds.get("metadata") or {}).get("annotations") or {}).get(key)
        info = (build.get("kernels") or {}).get(kernel) or {}
        containers = (((ds.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or [{}]
        kernels[kernel] = {
            "daemonset": ds["metadata"].get("name"),
            "image": containers[0].get("image"),
            "nodes": info.get("nodes") or [],
            "action": info.get("action") or "",
        }
    out = {
        "mode": build.get("strategy"),
        "namespace": namespace,
        "kernels": kernels,
        "pruned_kernels": _pruned_kernels(ensure, existing),
        "stale_builds": [stale.get("kernel") for stale in build.get("stale") or []],
        "builds": build.get("builds") or [],
        "ready": ensure.get("ready", True) is not False and not ensure.get("msg"),
    }
    if validated_nodes is not None:
        out["validated_nodes"] = list(validated_nodes)
    return out
