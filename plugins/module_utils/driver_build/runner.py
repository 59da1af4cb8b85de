# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_container_build: check, read, plan, (apply, build, wait), report.

``run`` is what the module calls, and the only function that reads the module:
it builds the frozen ``Config`` (parameters, check mode, diff) once and hands it
to ``ensure`` and everything below. Every parameter and every prerequisite is
checked before the first write; check mode stops after the plan.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.dict_transformations import dict_merge

from ansible_collections.gpuops.cluster.plugins.module_utils.common import Progress, failure_of
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.api import apply, prune, resource, start_build
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.kernels import check_kernel_infos
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.module_type import (
    decide as decide_module_type,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.params import (
    validate_driver_version,
    validate_params,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.plan import (
    check_build_prerequisites,
    plan_openshift,
    plan_precompiled,
    plan_runtime_compiled,
    read_kernels,
    resolve_strategy,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.state import (
    build_phase,
    build_summary,
    builds_for,
    image_reference,
    imagestream_tags,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.wait import (
    failed_error,
    timeout_error,
    wait_builds,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    diff_entry,
    get_item,
    name_of,
    strip_server_fields,
)


def _applied(existing, desired):
    """What an object will look like after our server-side apply (for diffs)."""
    return dict_merge(strip_server_fields(existing), desired) if existing else desired


def _build_entry(item):
    after = {
        "kind": "Build",
        "buildconfig": name_of(item["desired"]),
        "kernel": item["kernel"],
        "output": item["desired"]["spec"]["output"]["to"]["name"],
        "reason": item["why"],
    }
    return diff_entry("Build for kernel {0}".format(item["kernel"]), None, after)


def plan_diffs(cfg, plan):
    """One before/after entry per object that is created, changed, built or pruned."""
    where = "{0}/".format(cfg.namespace)
    diffs = []
    if plan["is_needs_apply"]:
        before = plan["imagestream"]
        diffs.append(diff_entry("ImageStream " + where + cfg.name, before, _applied(before, plan["desired_is"])))
    for item in plan["buildconfigs"]:
        if item["needs_apply"]:
            header = "BuildConfig " + where + name_of(item["desired"])
            diffs.append(diff_entry(header, item["existing"], _applied(item["existing"], item["desired"])))
        if item["action"] == "build":
            diffs.append(_build_entry(item))
    for stale in plan["stale"] if cfg.prune_stale else []:
        before = {"kind": "BuildConfig", "name": stale["buildconfig"], "tags": stale["tags"]}
        header = "BuildConfig {0}{1} (stale kernel {2})".format(where, stale["buildconfig"], stale["kernel"])
        diffs.append(diff_entry(header, before, None))
    return [d for d in diffs if d]


def execute(client, svc, plan, progress):
    """Apply the ImageStream and BuildConfigs that differ, start the builds. Returns (started, waited for)."""
    apis = plan["apis"]
    if plan["is_needs_apply"]:
        plan["imagestream"] = apply(svc, apis["is"], plan["desired_is"])
    for item in plan["buildconfigs"]:
        if item["needs_apply"]:
            item["existing"] = apply(svc, apis["bc"], item["desired"])
    started, waiting = [], []
    for item in plan["buildconfigs"]:
        if item["action"] == "build":
            bc_builds = builds_for(plan["builds"], name_of(item["desired"]))
            item["build"] = start_build(client, apis["build"], item["existing"], bc_builds)
            started.append(name_of(item["build"]))
            progress("started {0} for kernel {1} ({2})".format(name_of(item["build"]), item["kernel"], item["why"]))
        elif item["action"] == "wait":
            waiting.append(name_of(item["build"]))
            progress("waiting for {0} for kernel {1} ({2})".format(name_of(item["build"]), item["kernel"], item["why"]))
    return started, waiting


def finish(cfg, client, svc, plan, names, result, progress):
    """Wait for the builds (when asked to); return {name: build}. Raises when one failed or did not finish."""
    if not names:
        return {}
    if not cfg.wait:
        result["builds"] = [build_summary({"metadata": {"name": n}}) for n in names]
        return {}
    mine, failed, active = wait_builds(cfg, client, plan["apis"]["build"], names, progress)
    result["builds"] = [build_summary(b) for b in mine]
    extra = dict(builds=result["builds"], changed=result["changed"], progress=progress.events)
    if failed:
        raise failed_error(client, mine, failed, **extra)
    if active:
        raise timeout_error(cfg, client, svc, active, **extra)
    plan["imagestream"] = get_item(client, plan["apis"]["is"], cfg.name, cfg.namespace)
    return dict((name_of(b), b) for b in mine)


def _action(item, cfg):
    action = item["action"]
    if action == "build" and cfg.check_mode:
        return "would-build"
    if action in ("build", "wait"):
        return "built" if cfg.wait else "building"
    return action


def report_kernels(cfg, plan, final_builds, result):
    """result['images'] and result['kernels'] from the plan and the finished builds."""
    tags_now = imagestream_tags(plan["imagestream"])
    for item in plan["buildconfigs"]:
        kernel = item["kernel"]
        ref, digest = image_reference(plan["imagestream"], cfg, item["tag"])
        build_name = name_of(item["build"] or {})
        build = final_builds.get(build_name) or item["build"] or {}
        result["images"][kernel] = ref
        result["kernels"][kernel] = dict(
            item["info"],
            image=ref,
            image_digest=digest,
            tag=item["tag"],
            ready=item["tag"] in tags_now,
            buildconfig=name_of(item["desired"]),
            build=build_name,
            build_phase=build_phase(build) if build_name else None,
            inputs_hash=item["hash"],
            action=_action(item, cfg),
            reason=item["why"],
        )


def run(module, client, svc):
    """driver_container_build, the module's edge: its parameters, check mode and diff become one ``Config``."""
    cfg = validate_params(module.params, check_mode=module.check_mode, diff=module._diff)
    return ensure(cfg, client, svc, Progress(module))


def run_followed(module, client, svc):
    """:func:`run` as another module's follower (k8s_ensure's, after the driver role's namespace and RBAC): a failure
    (a failed build, a bad kernel, an API server that went away) is its result, ``failed`` and what the module's
    ``fail_json`` would say (common.failure_of), as the module's task registers it with ``failed_when: false``. The
    role reports it with the state's name, as it does the module's, even where the task it follows is ``no_log``
    (the entitlement's Secret)."""
    try:
        return run(module, client, svc)
    except Exception as exc:
        failure = failure_of(exc, module.params, client)
        if failure is None:
            raise
        return dict(failure, failed=True)


def ensure(cfg, client, svc, progress):
    """Read, plan, (apply, build, wait), report; returns the module result."""
    is_openshift = bool(
        resource(svc, "BuildConfig", "build.openshift.io/v1") and resource(svc, "ImageStream", "image.openshift.io/v1")
    )
    strategy = resolve_strategy(cfg.strategy, is_openshift)
    validate_driver_version(cfg.driver_version, strategy)
    kernels = read_kernels(cfg, client, svc)
    check_kernel_infos(kernels, strategy, cfg)
    for kernel, info in kernels.items():
        where = "nodes {0}".format(", ".join(info["nodes"])) if info["nodes"] else "kernel {0}".format(kernel)
        info["module_type"], info["module_type_reason"] = decide_module_type(
            cfg.kernel_module_type, info.get("gpu_products") or [], cfg.driver_version, where
        )
    result = {
        "changed": False,
        "strategy": strategy,
        "platform": "openshift" if is_openshift else "kubernetes",
        "images": {},
        "kernels": {},
        "stale": [],
        "pruned": [],
        "builds": [],
        "progress": progress.events,
    }
    if strategy == "precompiled":
        return plan_precompiled(cfg, kernels, result)
    if strategy == "runtime-compiled":
        return plan_runtime_compiled(cfg, kernels, result)

    check_build_prerequisites(cfg, client, svc, kernels, strategy)
    plan = plan_openshift(cfg, client, svc, kernels, strategy)
    diffs = plan_diffs(cfg, plan)
    result.update(stale=plan["stale"], changed=bool(diffs))
    if cfg.diff:
        result["diff"] = diffs
    started, waiting = ([], []) if cfg.check_mode else execute(client, svc, plan, progress)
    final_builds = finish(cfg, client, svc, plan, started + waiting, result, progress)
    report_kernels(cfg, plan, final_builds, result)
    if cfg.prune_stale and plan["stale"]:
        result["pruned"] = prune(cfg, client, svc, plan["apis"], plan["stale"], progress)
    return result
