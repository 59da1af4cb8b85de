# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""nfd_labels: the parameter rules the argument spec cannot express.

Types, choices, ``state=absent`` needing ``labels`` and the ``wait_for``
suboptions are in the module's argument spec; what is left here needs the
values (label syntax, ranges, a non-empty node selection).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.args import (
    module_spec,
    node_selection_spec,
    wait_params,
    wait_spec,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import NVIDIA_PCI_LABELS, gpu_label_selectors
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import label_selector
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd.plan import desired_changes
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import (
    check_labels,
    dns_subdomain_problem,
    label_key_problem,
)

MAX_PARALLEL = 100
EXAMPLE_SELECTOR = NVIDIA_PCI_LABELS[0] + ": 'true'"


def argument_spec():
    """nfd_labels' options (here, not in the module: k8s_ensure's ``nfd_labels`` takes them too)."""
    return module_spec(
        wait_spec(),
        node_selection_spec(),
        labels=dict(type="dict"),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        label_selectors=dict(type="list", elements="str"),
        gpu_label=dict(type="str"),
        gpu_nodes_only=dict(type="bool", default=False),
        wait_for=dict(
            type="dict",
            options=dict(
                gpu_nodes=dict(type="int"),
                gfd_nodes=dict(type="int"),
            ),
        ),
        parallel=dict(type="int", default=16),
    )


def check_node_names(names):
    if names is None:
        return None
    bad = [n for n in names if not isinstance(n, str) or dns_subdomain_problem(n)]
    if bad:
        raise GpuopsError(
            "{0} is not a valid Node name (a DNS subdomain: lowercase letters, digits, '-' and '.').".format(
                ", ".join(repr(b) for b in bad)
            ),
            param="node_names",
        )
    if not names:
        raise GpuopsError("is empty; list at least one Node name or use node_selector.", param="node_names")
    return names


def server_selector(params):
    """(selector, option) for the server: node_selector AND label_selectors, and the option to blame."""
    node_selector = check_labels(params.get("node_selector") or {}, "node_selector")
    terms = [label_selector(node_selector)] if node_selector else []
    for term in params.get("label_selectors") or []:
        if not term or not term.strip():
            raise GpuopsError(
                "holds an empty selector; give kubectl syntax such as 'node-role.kubernetes.io/worker'.",
                param="label_selectors",
            )
        terms.append(term.strip())
    param = "node_selector" if node_selector or not terms else "label_selectors"
    return ",".join(terms) or None, param


def check_wait(params, wait_for):
    for key, value in wait_for.items():
        if value < 0:
            raise GpuopsError("must be 0 or more, got {0}.".format(value), param="wait_for.{0}".format(key))
    timeout, sleep = wait_params("nfd_labels", params)
    if params.get("wait_sleep") is None or params["wait_sleep"] < 1:
        raise GpuopsError("must be at least 1 second, got {0}.".format(params.get("wait_sleep")), param="wait_sleep")
    if wait_for and timeout < sleep:
        raise GpuopsError(
            "{0}s is too small to wait for {1}: it must be at least wait_sleep ({2}s); NFD labels new nodes "
            "within about a minute, so 300 is a sensible value.".format(timeout, ", ".join(sorted(wait_for)), sleep),
            param="wait_timeout",
        )
    return timeout, sleep


def check_gpu_label(gpu_label):
    """None (the three NFD forms) or a valid label key of the user's own."""
    problem = label_key_problem(gpu_label) if gpu_label is not None else None
    if problem:
        raise GpuopsError("invalid label key '{0}': {1}.".format(gpu_label, problem), param="gpu_label")
    return gpu_label


def check_parallel(parallel):
    if parallel is None or parallel < 1 or parallel > MAX_PARALLEL:
        raise GpuopsError("must be between 1 and {0}, got {1}.".format(MAX_PARALLEL, parallel), param="parallel")
    return parallel


def check_params(params):
    """Check everything that can be checked without the API; return the plan."""
    state = params.get("state") or "present"
    labels = check_labels(params.get("labels"), "labels", allow_remove=True)
    if state == "absent" and not labels:
        raise GpuopsError("state=absent removes labels: list the label keys to remove in labels.", param="labels")
    names = check_node_names(params.get("node_names"))
    selector, selector_param = server_selector(params)
    gpu_only = bool(params.get("gpu_nodes_only"))
    if labels and names is None and selector is None and not gpu_only:
        raise GpuopsError(
            "changing labels needs an explicit set of nodes: give node_selector (e.g. {0}), label_selectors, "
            "node_names or gpu_nodes_only.".format(EXAMPLE_SELECTOR),
            param="node_selector",
        )
    wait_for = dict((k, v) for k, v in (params.get("wait_for") or {}).items() if v is not None)
    timeout, sleep = check_wait(params, wait_for)
    gpu_label = check_gpu_label(params.get("gpu_label"))
    return {
        "state": state,
        "changes": desired_changes(labels, state),
        "node_names": names,
        "selector": selector,
        "selector_param": selector_param,
        # the lists to read: the selection, or (gpu_nodes_only) the selection AND each GPU label form
        "selectors": gpu_label_selectors(selector, gpu_label) if gpu_only else [selector],
        "gpu_only": gpu_only,
        "gpu_label": gpu_label,
        "wait_for": wait_for,
        "wait_timeout": timeout,
        "wait_sleep": sleep,
        "parallel": check_parallel(params.get("parallel")),
    }
