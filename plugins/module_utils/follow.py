# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Followers: another module's code run inside this module's run, after its own work, so that a role starts one
module fewer (a module start is most of a no-op task's time). k8s_ensure's are in ensure/followers.py,
platform_info's (the state ledger's check) in platform.py, gpu_timeline's (the ledger's record) in timeline_read.py.

A follower is an option named after its module, taking that module's options without the connection ones; a table
of (option, loader) pairs, the loader importing the module's code only when called (AnsiballZ payloads carry what
a module's files import, so the table lives with the module that follows). Each is checked by that module's own
argument spec and rules before anything is done, and its result comes back as that module's task would register it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.args import BorrowedModule, checked_params, own_options
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError


def check(params, followers):
    """{option: its checked options} of the ``followers`` given; a bad one raises, naming ``<option>.<its option>``."""
    checked = {}
    for option, load in followers:
        given = params.get(option)
        if given is None:
            continue
        module_name, spec, rules, dummy = load()
        values, errors = checked_params(own_options(spec()), dict(given))
        if errors:
            raise GpuopsError("{0} (as {1} reads it)".format("; ".join(errors), module_name), param=option)
        try:
            rules(values)
        except GpuopsError as exc:
            raise GpuopsError(exc.args[0], param="{0}.{1}".format(option, exc.param) if exc.param else option)
        checked[option] = values
    return checked


def run(module, client, svc, checked, result, followers):
    """Run each follower given into ``result[option]``. A wait of its own that ran out is its result (``failed``,
    ``msg``, ``param``: what its task would register); any other error fails the module, as it would that task."""
    for option, load in followers:
        if option not in checked:
            continue
        dummy, dummy2, dummy3, runner = load()
        try:
            # In the caller's check mode: a follower that writes (gpu_timeline's ledger record) then says what it would.
            borrowed = BorrowedModule(module, checked[option], check_mode=bool(getattr(module, "check_mode", False)))
            result[option] = runner(borrowed, client, svc)
            # What a follower changed (k8s_ensure's node_taints writes taints, driver_rollout replaces pods, ...),
            # this task changed.
            result["changed"] = result["changed"] or bool(result[option].get("changed"))
        except GpuopsError as exc:
            if exc.param != "wait_timeout":
                raise GpuopsError("{0}: {1}".format(option, exc), param=option, **exc.details)
            result[option] = dict(exc.details, failed=True, msg=str(exc), param=exc.param)
