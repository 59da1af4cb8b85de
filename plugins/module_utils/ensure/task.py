# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure's module run: its options, the write path (:mod:`.runner`), the readiness wait, the operand pods'
report and the followers (:mod:`.followers`), which only this module's payload carries."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpuops.cluster.plugins.module_utils.args import wait_params
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError, Progress
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure import followers
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.pools import wait_pools
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.readiness import wait_all
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.runner import converge, plan, remove, result_of
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_read import check_params as check_operand_params
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_read import report as operand_report


def _check_params(params):
    timeout, sleep = wait_params("k8s_ensure", params)
    if timeout < 1:
        raise GpuopsError("must be at least 1 (seconds).", param="wait_timeout")
    if sleep < 1:
        raise GpuopsError("must be at least 1 (seconds).", param="wait_sleep")
    if params.get("operand_pods"):
        # Checked before anything is written, as the manifests are.
        check_operand_params(params["operand_pods"], prefix="operand_pods.")
    return timeout, sleep, followers.check(params)


def _key(item):
    return "{0}/{1}".format(item.kind, item.name)


def waited(items, exclude):
    """The items ``wait`` waits for: all but those ``exclude`` names (``Kind/name``), each of which must be one of
    ``items`` (a misspelt name would wait after all, or never be noticed)."""
    keys = set(_key(i) for i in items)
    unknown = [name for name in exclude if name not in keys]
    if unknown:
        raise GpuopsError(
            "names no object of definitions: {0}. Give Kind/name of an object in the list ({1}).".format(
                ", ".join(unknown), ", ".join(sorted(keys)) or "none"
            ),
            param="wait_exclude",
        )
    return [i for i in items if _key(i) not in exclude]


def _wait_ready(client, items, timeout, sleep, progress, params, result):
    """Workloads ready, then MachineConfig pools rolled out. With ``fail_on_timeout: false`` a timeout is a
    result (``ready: false``, ``not_ready`` and the message) instead of a failure, so that a role can explain
    it per node without un-failing the module."""
    try:
        wait_all(client, items, timeout, sleep, progress)
        wait_pools(client, items, timeout, sleep, progress, present=True)
    except GpuopsError as exc:
        if params.get("fail_on_timeout", True) or exc.param != "wait_timeout":
            raise
        result.update(ready=False, msg=str(exc), not_ready=exc.details.get("late", []))
        return
    result.update(ready=True, not_ready=[])


def run(module, client, svc):
    params = module.params
    started = time.monotonic()
    timeout, sleep, following = _check_params(params)
    progress = Progress(module)
    items, stale = plan(client, params)
    to_wait = waited(items, params.get("wait_exclude") or [])
    result = result_of(items, stale, module._diff)
    if not module.check_mode:
        if params["state"] == "present":
            converge(client, items, params["field_manager"], timeout, sleep, progress)
            remove(client, stale, timeout, sleep, progress)
            if params["wait"]:
                _wait_ready(client, to_wait, timeout, sleep, progress, params, result)
            if params.get("operand_pods"):
                # What a role's verify step would read next, in this run: no second module start for it.
                result["operand_pods"] = operand_report(client, svc, params["operand_pods"])
            if following and followers.may_follow(result):
                followers.run(module, client, svc, following, result)
        else:
            doomed = [i for i in reversed(items) if i.action == "deleted"]
            remove(client, doomed, timeout, sleep, progress)
            if params["wait"]:
                wait_pools(client, items, timeout, sleep, progress, present=False)
    result["progress"] = progress.events
    result["duration"] = round(time.monotonic() - started, 2)
    return result
