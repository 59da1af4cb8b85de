# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Argument-spec pieces every module shares, documented once in plugins/doc_fragments.

The vocabulary is kubernetes.core's (``wait``, ``wait_timeout``,
``wait_sleep``) plus one node-selection pair (``node_selector`` a dict,
``node_names`` a list). Defaults that depend on the module's work (a driver
build takes longer than a label) are resolved by ``wait_params``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.common import auth_argument_spec

# Seconds. Machines take minutes to boot, driver builds up to half an hour.
WAIT_TIMEOUTS = {
    "machineset_clone": 900,
    "driver_container_build": 1800,
    "nfd_labels": 300,
    "gpu_validate": 300,
    "k8s_ensure": 300,
}
WAIT_SLEEP = 5


def wait_spec(with_wait=False, wait_default=False, timeout_aliases=None, sleep_aliases=None):
    """``wait_timeout`` / ``wait_sleep`` (and ``wait`` where the module may skip waiting)."""
    spec = dict(
        wait_timeout=dict(type="int"),
        wait_sleep=dict(type="int", default=WAIT_SLEEP),
    )
    if timeout_aliases:
        spec["wait_timeout"]["aliases"] = list(timeout_aliases)
    if sleep_aliases:
        spec["wait_sleep"]["aliases"] = list(sleep_aliases)
    if with_wait:
        spec["wait"] = dict(type="bool", default=wait_default)
    return spec


def node_selection_spec(names_aliases=None):
    """``node_selector`` (labels every selected node carries) and ``node_names``."""
    spec = dict(
        node_selector=dict(type="dict", default={}),
        node_names=dict(type="list", elements="str"),
    )
    if names_aliases:
        spec["node_names"]["aliases"] = list(names_aliases)
    return spec


# operand_pods' options, which k8s_ensure also takes (its ``operand_pods``) to report in the same module run.
OPERAND_POD_OPTIONS = dict(
    namespace=dict(type="str", required=True),
    selector=dict(type="str", required=True),
    node_names=dict(type="list", elements="str"),
    service=dict(type="str"),
    log_lines=dict(type="int", default=0),
)


def module_spec(*parts, **own):
    """The connection options (kubernetes.core) + shared parts + the module's own options."""
    spec = auth_argument_spec()
    for part in parts:
        spec.update(copy.deepcopy(part))
    spec.update(own)
    return spec


def wait_params(module_name, params):
    """(timeout, sleep) with the module's default timeout when the user gave none."""
    timeout = params.get("wait_timeout")
    if timeout is None:
        timeout = WAIT_TIMEOUTS[module_name]
    sleep = params.get("wait_sleep")
    return timeout, WAIT_SLEEP if sleep is None else sleep


def checked_params(spec, params):
    """(parameters, error messages): ``params`` as an AnsibleModule with ``spec`` hands them to its code (types,
    choices, defaults), for a module that runs another one's code (driver_rollout -> gpu_validate,
    upgrade_preflight -> driver_container_build)."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    result = ArgumentSpecValidator(spec).validate(params)
    return result.validated_parameters, result.error_messages


def own_options(spec):
    """A module's argument spec without the connection options, for its options handed to another module (which
    connects once, with its own)."""
    auth = auth_argument_spec()
    return dict((k, v) for k, v in spec.items() if k not in auth)


class BorrowedModule(object):
    """Another module's code run inside this module's run: its runner reads ``params``, ``check_mode``, ``_diff``
    and ``warn``, and logs progress through ``_module``; the rest is this module's."""

    def __init__(self, module, params, check_mode=False):
        self.params = params
        self.check_mode = check_mode
        self._diff = False
        self.warn = module.warn
        if hasattr(module, "_module"):
            self._module = module._module
