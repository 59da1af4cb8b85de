# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Node labels: Kubernetes label rules, NFD / GFD label parsing, batched edits.

The first half is pure functions (validation, parsing the labels Node Feature
Discovery and GPU Feature Discovery put on nodes, planning the label changes,
building the diff). ``run()`` at the end is the nfd_labels module: one list
call, an optional wait, then merge patches only for the nodes that need them,
sent from a thread pool.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import re
import time

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    GpuopsError,
    Progress,
    describe_api_error,
)

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.waiter import Waiter
except ImportError:  # pragma: no cover - reported by common.new_module
    Waiter = None

try:
    from concurrent.futures import ThreadPoolExecutor
except ImportError:  # pragma: no cover - Python 2 only
    ThreadPoolExecutor = None


NFD_PREFIX = "feature.node.kubernetes.io/"
GPU_LABEL = NFD_PREFIX + "pci-10de.present"
KERNEL_PREFIX = NFD_PREFIX + "kernel-version."
OS_RELEASE_PREFIX = NFD_PREFIX + "system-os_release."
GFD_PREFIX = "nvidia.com/"
GFD_PRODUCT = "nvidia.com/gpu.product"

INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")

# Kubernetes validation (k8s.io/apimachinery/pkg/util/validation).
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_RE = re.compile(r"^{0}(\.{0})*$".format(_DNS1123_LABEL))
QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63


# --------------------------------------------------------------------------
# Label rules
# --------------------------------------------------------------------------


def label_key_problem(key):
    """Why ``key`` is not a valid label key, or None when it is."""
    if not isinstance(key, str) or not key:
        return "a label key must be a non-empty string"
    prefix, sep, name = key.rpartition("/")
    if sep and not prefix:
        return "the prefix before '/' is empty"
    if prefix:
        if len(prefix) > DNS1123_SUBDOMAIN_MAX:
            return "the prefix is {0} characters long; the limit is {1}".format(len(prefix), DNS1123_SUBDOMAIN_MAX)
        if not DNS1123_SUBDOMAIN_RE.match(prefix):
            return (
                "the prefix '{0}' must be a DNS subdomain: lowercase letters, digits, '-' and '.', "
                "starting and ending with a letter or digit".format(prefix)
            )
    if not name:
        return "the name part (after the prefix) is empty"
    if len(name) > QUALIFIED_NAME_MAX:
        return "the name part is {0} characters long; the limit is {1}".format(len(name), QUALIFIED_NAME_MAX)
    if not QUALIFIED_NAME_RE.match(name):
        return (
            "the name part '{0}' may only hold letters, digits, '-', '_' and '.', and must start and end "
            "with a letter or digit".format(name)
        )
    return None


def label_value_problem(value):
    """Why ``value`` (a string) is not a valid label value, or None when it is."""
    if len(value) > LABEL_VALUE_MAX:
        return "the value is {0} characters long; the limit is {1}".format(len(value), LABEL_VALUE_MAX)
    if not LABEL_VALUE_RE.match(value):
        return (
            "the value '{0}' may only hold letters, digits, '-', '_' and '.', and must start and end "
            "with a letter or digit (or be empty)".format(value)
        )
    return None


def normalize_label_value(value):
    """YAML gives booleans and numbers; Kubernetes wants strings.

    ``true`` becomes ``"true"`` (not Python's ``"True"``), numbers their decimal
    text, None stays None (it means "remove the label").
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return to_text(value)
    raise TypeError("must be a string, got {0}".format(type(value).__name__))


def validate_labels(labels, param, allow_remove=True):
    """Check every key and value; return a new dict with normalized values.

    Raises GpuopsError naming ``param`` and the bad key.
    """
    if labels is None:
        return {}
    if not isinstance(labels, dict):
        raise GpuopsError("must be a dictionary of label key: value", param=param)
    result = {}
    for key in sorted(labels, key=to_text):
        problem = label_key_problem(key)
        if problem:
            raise GpuopsError(
                "invalid label key '{0}': {1}. Fix the key (format [prefix/]name, e.g. "
                "node-role.kubernetes.io/gpu).".format(key, problem),
                param=param,
            )
        try:
            value = normalize_label_value(labels[key])
        except TypeError as exc:
            raise GpuopsError("label '{0}': the value {1}.".format(key, exc), param=param)
        if value is None:
            if not allow_remove:
                raise GpuopsError(
                    "label '{0}' has no value; give a string (an empty string \"\" is allowed).".format(key),
                    param=param,
                )
        else:
            problem = label_value_problem(value)
            if problem:
                raise GpuopsError("invalid value for label '{0}': {1}.".format(key, problem), param=param)
        result[key] = value
    return result


# --------------------------------------------------------------------------
# NFD / GFD label parsing
# --------------------------------------------------------------------------


def _int_or_none(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _first(labels, keys):
    for key in keys:
        if labels.get(key):
            return labels[key]
    return None


def _dotted(labels, base, parts):
    values = [labels.get(base + part) for part in parts]
    if not values[0]:
        return None
    return ".".join(v for v in values if v)


def gfd_facts(labels):
    """The GPU Feature Discovery labels of one node as a dict ({} without GFD)."""
    if not any(k.startswith(GFD_PREFIX + "gpu.") or k.startswith(GFD_PREFIX + "cuda.") for k in labels):
        return {}
    driver = labels.get("nvidia.com/cuda.driver-version.full") or _dotted(
        labels, "nvidia.com/cuda.driver.", ("major", "minor", "rev")
    )
    if not driver:
        driver = _dotted(labels, "nvidia.com/cuda.driver-version.", ("major", "minor", "revision"))
    runtime = labels.get("nvidia.com/cuda.runtime-version.full") or _dotted(
        labels, "nvidia.com/cuda.runtime.", ("major", "minor")
    )
    if not runtime:
        runtime = _dotted(labels, "nvidia.com/cuda.runtime-version.", ("major", "minor"))
    return {
        "present": labels.get("nvidia.com/gpu.present") == "true",
        "product": labels.get(GFD_PRODUCT),
        "count": _int_or_none(labels.get("nvidia.com/gpu.count")),
        "memory": _int_or_none(labels.get("nvidia.com/gpu.memory")),
        "family": labels.get("nvidia.com/gpu.family"),
        "compute_capability": _dotted(labels, "nvidia.com/gpu.compute.", ("major", "minor")),
        "cuda_driver": driver,
        "cuda_runtime": runtime,
        "machine": labels.get("nvidia.com/gpu.machine"),
    }


def _condition(node, ctype):
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return cond.get("status") == "True"
    return False


def node_facts(node, gpu_label=GPU_LABEL):
    """What NFD and GFD say about one Node object (a dict)."""
    metadata = node.get("metadata") or {}
    labels = metadata.get("labels") or {}
    kernel = dict((key[len(KERNEL_PREFIX) :], value) for key, value in labels.items() if key.startswith(KERNEL_PREFIX))
    os_release = dict(
        (key[len(OS_RELEASE_PREFIX) :], value) for key, value in labels.items() if key.startswith(OS_RELEASE_PREFIX)
    )
    allocatable = ((node.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu")
    return {
        "name": metadata.get("name"),
        "gpu": labels.get(gpu_label) == "true",
        "ready": _condition(node, "Ready"),
        "instance_type": _first(labels, INSTANCE_TYPE_LABELS),
        "zone": _first(labels, ZONE_LABELS),
        "kernel_version": kernel.get("full"),
        "kernel": kernel,
        "os_release": os_release,
        "gfd": gfd_facts(labels),
        "allocatable_gpus": _int_or_none(allocatable),
    }


def summarize(facts):
    """Group the per-node facts: GPU nodes, kernel versions, OS builds, products."""
    gpu_nodes = [f["name"] for f in facts if f["gpu"]]
    kernel_versions = {}
    os_versions = {}
    products = {}
    gfd_nodes = 0
    for f in facts:
        if not f["gpu"]:
            continue
        kernel_versions.setdefault(f["kernel_version"] or "unknown", []).append(f["name"])
        osr = f["os_release"]
        build = osr.get("OSTREE_VERSION") or "-".join(v for v in (osr.get("ID"), osr.get("VERSION_ID")) if v)
        os_versions.setdefault(build or "unknown", []).append(f["name"])
        product = f["gfd"].get("product")
        if product:
            gfd_nodes += 1
            products[product] = products.get(product, 0) + 1
    for groups in (kernel_versions, os_versions):
        for names in groups.values():
            names.sort()
    return {
        "gpu_nodes": sorted(gpu_nodes),
        "kernel_versions": kernel_versions,
        "os_versions": os_versions,
        "summary": {
            "nodes": len(facts),
            "gpu_nodes": len(gpu_nodes),
            "gfd_nodes": gfd_nodes,
            "products": products,
            "kernel_versions": len(kernel_versions),
        },
    }


def wait_status(facts, wait_for, gpu_label=GPU_LABEL):
    """(done, message) for a ``wait_for`` dict against the current node facts."""
    gpu = [f for f in facts if f["gpu"]]
    gfd = [f for f in gpu if f["gfd"].get("product")]
    parts = []
    done = True
    want = wait_for.get("gpu_nodes")
    if want is not None:
        parts.append("{0}/{1} nodes labelled {2}=true".format(len(gpu), want, gpu_label))
        done = done and len(gpu) >= want
    want = wait_for.get("gfd_nodes")
    if want is not None:
        parts.append("{0}/{1} GPU nodes with {2}".format(len(gfd), want, GFD_PRODUCT))
        done = done and len(gfd) >= want
    return done, "; ".join(parts) + " ({0} nodes seen)".format(len(facts))


# --------------------------------------------------------------------------
# Label changes
# --------------------------------------------------------------------------


def desired_changes(labels, state):
    """key -> value (None = remove) that the nodes must end up with."""
    if state == "absent":
        return dict((key, None) for key in labels)
    return dict(labels)


def plan_node(node, changes):
    """The merge-patch labels one node needs: {key: value-or-None}; {} when none."""
    current = (node.get("metadata") or {}).get("labels") or {}
    patch = {}
    for key, value in changes.items():
        if value is None:
            if key in current:
                patch[key] = None
        elif current.get(key) != value:
            patch[key] = value
    return patch


def plan(nodes, changes):
    """[(node name, patch labels, current labels)] for the nodes that need a patch."""
    result = []
    for node in nodes:
        patch = plan_node(node, changes)
        if patch:
            metadata = node.get("metadata") or {}
            result.append((metadata.get("name"), patch, dict(metadata.get("labels") or {})))
    return result


def apply_labels(node, patch):
    """A copy of ``node`` with the label merge patch applied (check mode prediction)."""
    new = copy.deepcopy(node)
    labels = new.setdefault("metadata", {}).setdefault("labels", {})
    for key, value in patch.items():
        if value is None:
            labels.pop(key, None)
        else:
            labels[key] = value
    return new


def label_diff(planned):
    """Ansible diff: per node, the changed keys before and after."""
    before, after = {}, {}
    for name, patch, current in planned:
        before[name] = {"labels": dict((k, current[k]) for k in sorted(patch) if k in current)}
        after[name] = {"labels": dict((k, v) for k, v in sorted(patch.items()) if v is not None)}
    return {"before": {"nodes": before}, "after": {"nodes": after}}


def select(nodes, node_names=None):
    """Keep ``node_names`` (in that order) from the listed nodes; report missing ones."""
    if not node_names:
        return list(nodes), []
    by_name = dict(((n.get("metadata") or {}).get("name"), n) for n in nodes)
    selected = [by_name[name] for name in node_names if name in by_name]
    missing = [name for name in node_names if name not in by_name]
    return selected, missing


# --------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------


def validate_params(params):
    """Check everything that can be checked without the API; return the plan."""
    state = params.get("state") or "present"
    labels = validate_labels(params.get("labels"), "labels", allow_remove=True)
    names = params.get("node_names")
    if names is not None:
        bad = [
            n
            for n in names
            if not isinstance(n, str) or not n or len(n) > DNS1123_SUBDOMAIN_MAX or not DNS1123_SUBDOMAIN_RE.match(n)
        ]
        if bad:
            raise GpuopsError(
                "{0} is not a valid Node name (a DNS subdomain: lowercase letters, digits, '-' and '.').".format(
                    ", ".join(repr(b) for b in bad)
                ),
                param="node_names",
            )
        if not names:
            raise GpuopsError("is empty; list at least one Node name or use node_selector.", param="node_names")
    selector = params.get("node_selector")
    if selector is not None and not selector.strip():
        raise GpuopsError(
            "is empty; give a label selector such as '{0}=true'.".format(GPU_LABEL), param="node_selector"
        )
    if state == "absent" and not labels:
        raise GpuopsError("state=absent removes labels: list the label keys to remove in labels.", param="labels")
    if labels and names is None and selector is None:
        raise GpuopsError(
            "changing labels needs an explicit set of nodes: give node_selector (e.g. '{0}=true') or "
            "node_names.".format(GPU_LABEL),
            param="node_selector",
        )
    gpu_label = params.get("gpu_label") or GPU_LABEL
    problem = label_key_problem(gpu_label)
    if problem:
        raise GpuopsError("invalid label key '{0}': {1}.".format(gpu_label, problem), param="gpu_label")
    wait_for = params.get("wait_for") or {}
    wait_for = dict((k, v) for k, v in wait_for.items() if v is not None)
    for key, value in wait_for.items():
        if value < 0:
            raise GpuopsError("must be 0 or more, got {0}.".format(value), param="wait_for.{0}".format(key))
    timeout = params.get("wait_timeout")
    sleep = params.get("wait_sleep")
    if sleep is None or sleep < 1:
        raise GpuopsError("must be at least 1 second, got {0}.".format(sleep), param="wait_sleep")
    if wait_for and (timeout is None or timeout < sleep):
        raise GpuopsError(
            "{0}s is too small to wait for {1}: it must be at least wait_sleep ({2}s); NFD labels new nodes "
            "within about a minute, so 300 is a sensible value.".format(timeout, ", ".join(sorted(wait_for)), sleep),
            param="wait_timeout",
        )
    parallel = params.get("parallel")
    if parallel is None or parallel < 1 or parallel > 100:
        raise GpuopsError("must be between 1 and 100, got {0}.".format(parallel), param="parallel")
    return {
        "state": state,
        "changes": desired_changes(labels, state),
        "node_names": names,
        "node_selector": selector,
        "gpu_label": gpu_label,
        "wait_for": wait_for,
        "wait_timeout": timeout,
        "wait_sleep": sleep,
        "parallel": parallel,
    }


# --------------------------------------------------------------------------
# The module
# --------------------------------------------------------------------------


def _list_nodes(client, resource, selector):
    """All matching Nodes as plain dicts, in one request (no ResourceInstance wrapping)."""
    params = {"serialize": False}
    if selector:
        params["label_selector"] = selector
    try:
        response = client.get(resource, **params)
    except Exception as exc:
        if getattr(exc, "status", None) == 400:
            raise GpuopsError(
                "the API server rejected the selector '{0}': {1}. Use the kubectl label selector syntax, "
                "e.g. '{2}=true,node-role.kubernetes.io/worker'.".format(selector, _api_message(exc), GPU_LABEL),
                param="node_selector",
            )
        raise
    return json.loads(to_text(response.data)).get("items") or []


def _api_message(exc):
    body = getattr(exc, "body", None)
    try:
        return json.loads(to_text(body)).get("message") or to_text(exc)
    except Exception:
        return to_text(body or exc)[:300]


def _wait(client, resource, plan_, progress):
    """Wait until the nodes satisfy ``wait_for``; raise GpuopsError on timeout."""
    selector = plan_["node_selector"]
    names = plan_["node_names"]
    state = {"message": ""}

    def predicate(response):
        if response is None:
            return False
        nodes = response.to_dict().get("items") or []
        nodes, dummy = select(nodes, names)
        facts = [node_facts(n, plan_["gpu_label"]) for n in nodes]
        done, message = wait_status(facts, plan_["wait_for"], plan_["gpu_label"])
        state["message"] = message
        progress(message)
        return done

    waiter = Waiter(client, resource, predicate)
    ok, dummy, elapsed = waiter.wait(
        timeout=plan_["wait_timeout"],
        sleep=plan_["wait_sleep"],
        label_selectors=[selector] if selector else None,
    )
    if not ok:
        raise GpuopsError(
            "timed out after {0}s waiting for {1}: {2}. Check that the NodeFeatureDiscovery instance runs "
            "and the nodes have NVIDIA GPUs, or raise wait_timeout.".format(
                plan_["wait_timeout"],
                ", ".join("{0}>={1}".format(k, v) for k, v in sorted(plan_["wait_for"].items())),
                state["message"],
            ),
            param="wait_timeout",
            progress=progress.events,
        )
    return elapsed


def _patch_all(client, resource, planned, workers):
    """Send the merge patches in parallel. Returns ({name: new node}, {name: error}, [gone]).

    Goes through kubernetes.core's K8SClient.patch (so a server-side dry run
    would apply) but reads the response with json.loads: K8sService.patch_resource
    wraps each reply in a ResourceInstance, which costs more CPU than the
    request itself when 500 nodes come back.
    """
    results, errors, gone = {}, {}, []

    def one(item):
        name, patch, dummy = item
        body = {"metadata": {"labels": patch}}
        response = client.patch(resource, body, name=name, serialize=False, content_type="application/merge-patch+json")
        return json.loads(to_text(response.data))

    if not planned:
        return results, errors, gone
    executor = ThreadPoolExecutor(max_workers=max(1, min(workers, len(planned))))
    try:
        futures = [(item[0], executor.submit(one, item)) for item in planned]
        for name, future in futures:
            try:
                results[name] = future.result()
            except Exception as exc:
                if getattr(exc, "status", None) == 404:
                    gone.append(name)
                else:
                    errors[name] = describe_api_error(exc) if getattr(exc, "status", None) else to_text(exc)
    finally:
        executor.shutdown(wait=True)
    return results, errors, gone


def _names_preview(names, limit=20):
    names = sorted(n for n in names if n)
    if not names:
        return "none"
    more = len(names) - limit
    return ", ".join(names[:limit]) + (" and {0} more".format(more) if more > 0 else "")


def pool_size(client):
    """How many connections the kubernetes client keeps per host (its pool size)."""
    try:
        return int(client.configuration.connection_pool_maxsize) or 1
    except (AttributeError, TypeError, ValueError):
        return 4


def run(module, client, svc):
    """nfd_labels: facts from NFD / GFD labels, optional wait, batched label edits."""
    started = time.monotonic()
    plan_ = validate_params(module.params)
    resource = svc.find_resource("Node", "v1", fail=True)
    progress = Progress(module)
    result = {"changed": False}

    if plan_["wait_for"]:
        if module.check_mode:
            # as kubernetes.core does: no waiting in check mode (what is waited for may not be deployed yet)
            progress("wait_for skipped in check mode")
        else:
            _wait(client, resource, plan_, progress)
        result["progress"] = progress.events

    listed = _list_nodes(client, resource, plan_["node_selector"])
    nodes, missing = select(listed, plan_["node_names"])
    if missing:
        raise GpuopsError(
            "no Node named {0}{1}. Fix the names; existing nodes{1}: {2}.".format(
                ", ".join(missing),
                " matching node_selector" if plan_["node_selector"] else "",
                _names_preview(n.get("metadata", {}).get("name") for n in listed),
            ),
            param="node_names",
        )
    changes = plan_["changes"]
    if changes and not nodes:
        raise GpuopsError(
            "'{0}' matches no Node, so no label can be set. Check the selector with "
            "'kubectl get nodes -l \"{0}\"'.".format(plan_["node_selector"]),
            param="node_selector",
        )

    planned = plan(nodes, changes) if changes else []
    warnings = []
    if planned:
        if module.check_mode:
            updated = dict((name, None) for name, dummy, dummy2 in planned)
        else:
            workers = min(plan_["parallel"], pool_size(client))
            updated, errors, gone = _patch_all(client, resource, planned, workers)
            if gone:
                warnings.append("nodes deleted while labelling: {0}".format(", ".join(sorted(gone))))
            if errors:
                shown = sorted(errors.items())[:5]
                raise GpuopsError(
                    "labelling failed on {0} of {1} nodes ({2} labelled): {3}".format(
                        len(errors), len(planned), len(updated), "; ".join("{0}: {1}".format(k, v) for k, v in shown)
                    ),
                    changed=bool(updated),
                    changed_nodes=sorted(updated),
                )
        patches = dict((name, patch) for name, patch, dummy in planned)
        new_nodes = []
        for node in nodes:
            name = (node.get("metadata") or {}).get("name")
            if name in patches:
                new_nodes.append(updated.get(name) or apply_labels(node, patches[name]))
            else:
                new_nodes.append(node)
        nodes = new_nodes
        result["changed"] = True
        if module._diff:
            result["diff"] = label_diff(planned)
    elif module._diff and changes:
        result["diff"] = {"before": {"nodes": {}}, "after": {"nodes": {}}}

    facts = [node_facts(n, plan_["gpu_label"]) for n in nodes]
    changed_names = set(name for name, dummy, dummy2 in planned)
    for f in facts:
        f["changed"] = f["name"] in changed_names
    grouped = summarize(facts)
    result.update(grouped)
    result["nodes"] = facts
    result["changed_nodes"] = sorted(changed_names)
    result["duration"] = round(time.monotonic() - started, 3)
    result["ansible_facts"] = {"gpuops_nfd": dict(grouped, nodes=facts)}
    for warning in warnings:
        module.warn(warning)
    return result
