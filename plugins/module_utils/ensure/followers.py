# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure's followers: what a role runs right after the writes and the wait, in the same module run, so that
the state starts one module fewer (a module start is most of a no-op task's time).

Each option is named after its module and takes that module's options: ``driver_container_build``,
``node_taints``, ``driver_rollout``, ``gpu_validate``, ``nfd_labels``, ``k8s_dry_run``, run in that order. Each is
checked by that module's own argument spec and rules before anything is written, and its result comes back as that
module's task would register it.
A follower runs only after a wait that ended ready (and, with ``operand_pods``, every pod ready), and not in check
mode: otherwise it does not run, and the role runs the module itself (to explain a timeout, or to say what check
mode would do), as it always did.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils import follow


def _build():
    from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import params, runner

    return "gpuops.cluster.driver_container_build", params.argument_spec, params.check_params, runner.run_followed


def _validate():
    from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import params, runner

    return "gpuops.cluster.gpu_validate", params.argument_spec, params.validate_params, runner.run


def _labels():
    from ansible_collections.gpuops.cluster.plugins.module_utils.nfd import params, runner

    return "gpuops.cluster.nfd_labels", params.argument_spec, params.check_params, runner.run


def _taints():
    from ansible_collections.gpuops.cluster.plugins.module_utils import node_taints

    return "gpuops.cluster.node_taints", node_taints.argument_spec, node_taints.check_params, node_taints.run


def _rollout():
    from ansible_collections.gpuops.cluster.plugins.module_utils.driver_rollout import params, runner

    return "gpuops.cluster.driver_rollout", params.argument_spec, params.check_params, runner.run


def _dry_run():
    from ansible_collections.gpuops.cluster.plugins.module_utils import dry_run

    return "gpuops.cluster.k8s_dry_run", dry_run.argument_spec, dry_run.check_params, dry_run.run


# In the order they run: the driver images (built in the namespace the driver state's objects make), the taints (the
# scheduling state's) and the driver rollout (the driver state's) write, the others read or check.
FOLLOWERS = (
    ("driver_container_build", _build),
    ("node_taints", _taints),
    ("driver_rollout", _rollout),
    ("gpu_validate", _validate),
    ("nfd_labels", _labels),
    ("k8s_dry_run", _dry_run),
)


def check(params):
    """{option: its checked options} of the followers given; a bad one raises, naming ``<option>.<its option>``."""
    return follow.check(params, FOLLOWERS)


def may_follow(result):
    """Whether the wait (if any) ended ready and every reported operand pod is ready."""
    pods = result.get("operand_pods")
    return result.get("ready", True) and not (pods and pods.get("not_ready"))


def run(module, client, svc, checked, result):
    """Run each follower given into ``result[option]`` (follow.run)."""
    follow.run(module, client, svc, checked, result, FOLLOWERS)
