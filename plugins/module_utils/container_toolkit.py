# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The container_toolkit role's decisions, as plain functions (its filters in plugins/filter/container_toolkit.py).

- ``host_file_problems``: the host paths of the runtime's files, checked together (one message for the group).
- ``plan``: the runtime the toolkit configures (the GPU nodes' ``status.nodeInfo.containerRuntimeVersion`` with
  ``container_toolkit_runtime: auto``), what stops the state before it writes, and whether check mode skips it.
- ``not_ready_lines``: per GPU node without a ready toolkit pod, node, runtime, pod, state and the installer's error.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils.role_inputs import is_host_path

ROLE = "container_toolkit"
# nodeInfo.containerRuntimeVersion scheme -> the installer's RUNTIME value.
RUNTIME_SCHEMES = {"cri-o": "crio", "containerd": "containerd"}
_SCHEME_RE = re.compile(r"^([a-z-]+)://")
_ERROR_RE = re.compile(r"level=(error|fatal)")
_LOGFMT_MSG_RE = re.compile(r'^.*msg="(.*)"$')


def _shown(value, width=80):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def host_file_problems(names, values):
    """One message when any of the host paths ``names`` (values in the same order) is not an absolute host path
    without '..': the names share the role prefix, written once."""
    bad = [_shown(value, 60) for value in values if not is_host_path(value)]
    if not bad:
        return []
    prefix = ROLE
    shown = [names[0]] + [n[len(prefix) :] if n.startswith(prefix + "_") else n for n in names[1:]]
    listed = ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else shown[0]
    return [
        "{0}: {1} must be absolute host paths of a file (no '..', no trailing '/'), got {2}.".format(
            ROLE, listed, ", ".join(bad)
        )
    ]


def node_runtimes(nodes):
    """GPU node name -> its containerRuntimeVersion ('' when unknown), in the nodes' order."""
    return dict((n.get("name"), n.get("container_runtime") or "") for n in nodes or [] if n.get("gpu", True))


def detected_runtimes(versions):
    """The installer's runtimes (crio, containerd) the versions name, each once, in order; others are ignored."""
    found = []
    for version in versions:
        match = _SCHEME_RE.match(version or "")
        runtime = RUNTIME_SCHEMES.get(match.group(1)) if match else None
        if runtime and runtime not in found:
            found.append(runtime)
    return found


def plan(nodes, runtime, openshift, namespace, namespace_read, check_mode, gpu_labels):
    """What the preflight decides.

    ``nodes``: the GPU nodes (nfd_labels facts); ``runtime``: container_toolkit_runtime; ``namespace_read``: the
    k8s_info result of the namespace (skipped when this run's driver state made it). Returns ``runtime``,
    ``node_runtimes``, ``namespace_exists``, ``problems`` (what stops the state; a missing node or namespace is
    no problem in check mode, which then skips the state: ``skip``).
    """
    runtimes = node_runtimes(nodes)
    detected = detected_runtimes(runtimes.values())
    if runtime == "auto":
        chosen = detected[0] if detected else ("crio" if openshift else "containerd")
    else:
        chosen = runtime
    read = namespace_read or {}
    ns_exists = bool(read.get("skipped")) or bool(read.get("resources"))
    problems = []
    if runtime == "auto" and len(detected) > 1:
        problems.append(
            "{0}: container_toolkit_runtime auto: the GPU nodes run different container runtimes ({1}); one "
            "DaemonSet configures one runtime: set container_toolkit_runtime and container_toolkit_node_selector "
            "per group of nodes.".format(ROLE, ", ".join("{0} {1}".format(k, v) for k, v in runtimes.items()))
        )
    if not runtimes and not check_mode:
        problems.append(
            "{0}: no GPU node: no node carries an NFD NVIDIA PCI label ({1}=true). Run the nfd and driver roles "
            "first.".format(ROLE, ", ".join(gpu_labels))
        )
    if not ns_exists and not check_mode:
        problems.append(
            "{0}: namespace {1} (container_toolkit_namespace) does not exist: the driver role creates it (with its "
            "PodSecurity labels); run the driver role first.".format(ROLE, namespace)
        )
    return {
        "runtime": chosen,
        "node_runtimes": runtimes,
        "namespace_exists": ns_exists,
        "problems": problems,
        "skip": bool(check_mode) and (not runtimes or not ns_exists),
    }


def _cause(log_lines):
    """The installer's last error line (else the last line), its logfmt msg when it has one."""
    lines = [line for line in log_lines or [] if line]
    errors = [line for line in lines if _ERROR_RE.search(line)]
    cause = errors[-1] if errors else (lines[-1] if lines else "")
    return _LOGFMT_MSG_RE.sub(r"\1", cause)


def not_ready_lines(not_ready, node_runtimes, runtime, daemonset):
    """One line per node of ``not_ready`` (operand_pods' entries: node, pod, state, log_lines)."""
    out = []
    for bad in not_ready or []:
        node = bad.get("node")
        runs = (node_runtimes or {}).get(node) or "unknown"
        if bad.get("pod"):
            where = "pod {0} {1}".format(bad["pod"], bad.get("state"))
        else:
            where = "no {0} pod: check container_toolkit_node_selector and container_toolkit_tolerations".format(
                daemonset
            )
        cause = _cause(bad.get("log_lines"))
        out.append(
            "{0}: node {1} (runtime {2}, toolkit configured for {3}): {4}{5}".format(
                ROLE, node, runs, runtime, where, ": " + cause if cause else ""
            )
        )
    return out
