# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_validate run: select the nodes, read what is there, run the pods, report.

Everything is read before the first write; the workload pods run while the
metrics are read; the pods are always deleted.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time
import traceback
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError, Progress
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.normalize import OWNER_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.runner import ensure_present
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import (
    describe_selection,
    list_gpu_nodes,
    missing_names,
    select_gpu_nodes,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.checks import (
    check_allocatable,
    check_driver,
    check_node_ready,
    check_workload,
    taint_text,
    untolerated_taints,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    FAIL,
    GPU_RESOURCE,
    NODE_CHECK,
    PASS,
    RUN_LABEL,
    SKIP,
    UNREACHABLE,
    WORKLOAD_CHECKS,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.metrics import metrics_for
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.params import validate_params
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.podrun import PodRun, delete_leftovers
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.pods import (
    one_line,
    pod_is_ready,
    pods_on,
    render_pod,
    run_id,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.record import (
    config_refs,
    next_record,
    node_fingerprint,
    parse_record,
    plan_revalidation,
    record_data,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.report import (
    build_report,
    failure_message,
    node_report,
    report_table,
    write_reports,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.resources import (
    burnin_request,
    physical_gpus,
    workload_resource,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    condition_true,
    core_api,
    dig,
    get_item,
    label_selector,
    list_items,
    parallel_map,
    read_log,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods import (
    SETTLE_SECONDS,
    marked_by_node_controller,
)


def select_nodes(cfg, client, svc):
    node_api = svc.find_resource("Node", "v1", fail=True)
    selector = label_selector(cfg["node_selector"]) if cfg["node_selector"] else None
    if not selector and not cfg["node_names"]:
        # the GPU nodes only (three small lists), not every node of the cluster
        nodes = list_gpu_nodes(client, node_api)
    else:
        nodes = list_items(client, node_api, label_selector=selector, param="node_selector")
    missing = missing_names(nodes, cfg["node_names"])
    if missing:
        raise GpuopsError(
            "no node named {0}{1}. Fix the names or the selector.".format(
                ", ".join(missing),
                " among {0}".format(describe_selection(cfg["node_selector"])) if cfg["node_selector"] else "",
            ),
            param="node_names",
        )
    if cfg["node_names"] and not cfg["node_selector"]:
        # Named nodes are validated as GPU nodes whatever their labels say.
        return sorted(
            [n for n in nodes if n["metadata"]["name"] in cfg["node_names"]], key=lambda n: n["metadata"]["name"]
        )
    selected = select_gpu_nodes(nodes, cfg["node_selector"], cfg["node_names"])
    if not selected:
        raise GpuopsError(
            "no node matches ({0}; {1} node(s) looked at). Fix node_selector, or check that Node Feature "
            "Discovery labelled the GPU nodes (nfd_labels).".format(
                describe_selection(cfg["node_selector"], cfg["node_names"]), len(nodes)
            ),
            param="node_selector",
        )
    return selected


def check_namespaces(cfg, client, svc):
    ns_api = svc.find_resource("Namespace", "v1", fail=True)
    needed = []
    if any(c in cfg["checks"] for c in WORKLOAD_CHECKS):
        needed.append(("namespace", cfg["namespace"]))
    if "driver" in cfg["checks"]:
        needed.append(("driver_namespace", cfg["driver_namespace"]))
    if "metrics" in cfg["checks"]:
        needed.append(("metrics_namespace", cfg["metrics_namespace"]))
    for param, name in needed:
        if get_item(client, ns_api, name) is None:
            raise GpuopsError("the namespace {0} does not exist; create it or set {1}".format(name, param), param=param)


def read_record(cfg, client, svc):
    """record_config_map: the record stored in that ConfigMap's data (none yet: an empty record; entries that are
    not records are dropped, as parse_record does for previous_record)."""
    if cfg["record_config_map"]:
        found = get_item(
            client, svc.find_resource("ConfigMap", "v1", fail=True), cfg["record_config_map"], cfg["namespace"]
        )
        cfg["previous_record"] = parse_record((found or {}).get("data") or {})


def _pods(cfg, client, pod_api, check, namespace, key, enabled=True):
    # The incremental mode reads the driver and device plugin pods for the fingerprints whatever the checks.
    wanted = check in cfg["checks"] or (cfg["previous_record"] is not None and check != "metrics")
    if not wanted or not enabled:
        return []
    if key == "driver_selector":
        # The default is two selectors (DRIVER_SELECTORS): the pods of either, each once.
        seen, pods = set(), []
        for selector in cfg.get("driver_selectors") or [cfg[key]]:
            for pod in list_items(client, pod_api, namespace, selector, param=key):
                uid = dig(pod, ("metadata", "uid")) or dig(pod, ("metadata", "name"))
                if uid not in seen:
                    seen.add(uid)
                    pods.append(pod)
        return pods
    if not cfg[key]:
        return []
    return list_items(client, pod_api, namespace, cfg[key], param=key)


def _driver_logs(cfg, core, driver_pods, names):
    """{pod: last log lines} of the driver pods that are not Ready (the previous container after a crash)."""
    failing = [p for n in names for p in pods_on(driver_pods, n) if not pod_is_ready(p)]

    def driver_log(pod):
        meta = pod["metadata"]
        crashed = any(
            (cs.get("restartCount") or 0) > 0 for cs in (pod.get("status") or {}).get("containerStatuses") or []
        )
        try:
            return read_log(core, meta["name"], meta["namespace"], tail=5, previous=crashed)
        except Exception:
            return read_log(core, meta["name"], meta["namespace"], tail=5)

    return dict(
        (p["metadata"]["name"], text)
        for p, text, exc in parallel_map(driver_log, failing, cfg["parallel"])
        if exc is None
    )


def read_only_checks(cfg, client, pod_api, core, nodes, results):
    """allocatable and driver verdicts; returns the exporter, driver and device plugin pods."""
    ns = cfg["driver_namespace"]
    plugin_pods = _pods(cfg, client, pod_api, "allocatable", ns, "device_plugin_selector")
    driver_pods = _pods(cfg, client, pod_api, "driver", ns, "driver_selector")
    exporter_pods = _pods(
        cfg, client, pod_api, "metrics", cfg["metrics_namespace"], "metrics_selector", cfg["metrics_via"] == "pod"
    )
    names = [n["metadata"]["name"] for n in nodes]
    if "driver" in cfg["checks"]:
        logs = _driver_logs(cfg, core, driver_pods, names)
        for name in names:
            results[name]["driver"] = check_driver(pods_on(driver_pods, name), logs)
    if "allocatable" in cfg["checks"]:
        for name, node in zip(names, nodes):
            results[name]["allocatable"] = check_allocatable(
                node, cfg["expected_gpus"], pods_on(plugin_pods, name), cfg["device_plugin_selector"]
            )
    return exporter_pods, driver_pods, plugin_pods


def read_config_maps(cfg, client, svc, plugin_pods):
    """{(namespace, name): ConfigMap or None} of the ConfigMaps the device plugin pods reference."""
    refs = config_refs(plugin_pods)
    if not refs:
        return {}
    cm_api = svc.find_resource("ConfigMap", "v1", fail=True)
    found = parallel_map(lambda ref: get_item(client, cm_api, ref[1], ref[0]), refs, cfg["parallel"])
    out = {}
    for ref, item, exc in found:
        if exc is not None:
            raise exc
        out[tuple(ref)] = item
    return out


def plan_incremental(cfg, client, svc, nodes, driver_pods, plugin_pods):
    """(fingerprints, plan) of the incremental mode; (None, None) without a previous record."""
    if cfg["previous_record"] is None:
        return None, None
    config_maps = read_config_maps(cfg, client, svc, plugin_pods)
    fingerprints = dict(
        (
            n["metadata"]["name"],
            node_fingerprint(
                n, pods_on(driver_pods, n["metadata"]["name"]), pods_on(plugin_pods, n["metadata"]["name"]), config_maps
            ),
        )
        for n in nodes
    )
    workloads = [c for c in cfg["checks"] if c in WORKLOAD_CHECKS]
    return fingerprints, plan_revalidation(
        cfg["previous_record"], fingerprints, recorded_checks(cfg, workloads), cfg["force"]
    )


CONDITION_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")


def _taint_reason(node, cfg):
    taints = untolerated_taints(node, cfg["tolerations"])
    if cfg["pin"] == "nodeName":
        # No scheduler: the kubelet admits a bound pod against NoExecute taints only (pkg/kubelet/lifecycle/
        # predicate.go generalFilter), so a cordoned node (unschedulable:NoSchedule) runs it.
        taints = [t for t in taints if t.get("effect") == "NoExecute"]
    condition = [t for t in taints if (t.get("key") or "").startswith(CONDITION_TAINT_PREFIXES)]
    if condition:
        return "not run: the node is tainted {0} by its condition; fix the node (a toleration would not help)".format(
            ", ".join(taint_text(t) for t in condition)
        )
    if taints:
        return "not run: taint {0} is not tolerated; add it to tolerations".format(
            ", ".join(taint_text(t) for t in taints)
        )
    return None


def not_run(node, cfg, results):
    """(status, reason) when a workload pod cannot run on the node, else None.

    Skipped when a check already reported why (node_ready, allocatable); failed
    when nothing else did.
    """
    name = node["metadata"]["name"]
    ready = results[name][NODE_CHECK]
    if ready["status"] != PASS and (condition_true(node, "Ready") is False or cfg["pin"] == "affinity"):
        fix = "fix the node" if condition_true(node, "Ready") is False else "uncordon the node or use pin: nodeName"
        return SKIP, "not run: {0}; {1} first".format(ready["message"], fix)
    if workload_resource(node) is None:
        alloc = results[name].get("allocatable")
        if alloc and alloc["status"] != PASS:
            return SKIP, "not run: the allocatable check failed, the pod could not be scheduled"
        return FAIL, "not run: the node advertises no allocatable {0}, the pod could not be scheduled".format(
            GPU_RESOURCE
        )
    reason = _taint_reason(node, cfg)
    return (FAIL, reason) if reason else None


def unchanged_message(check, step):
    return "{0} not re-run: node unchanged since it passed on {1} (force re-runs it)".format(
        check, step.get("last_validated") or "an earlier run"
    )


def recorded_checks(cfg, workloads):
    """The workload checks as the record names them: the burn-in with its level and duration, so that a deeper or
    longer burn-in runs again on nodes that passed a lighter one."""
    return [
        "burnin-r{0}-{1}s".format(cfg["burnin_level"], cfg["burnin_duration"]) if c == "burnin" else c
        for c in workloads
    ]


def plan_workloads(cfg, nodes, results, check_mode, plan=None):
    """The pod bodies to create and {pod name: (node, check)}; checks that cannot run get their verdict.

    With ``plan`` (incremental mode) only the nodes it marks ``run`` get pods; the others are skipped as unchanged.
    """
    workloads = [c for c in cfg["checks"] if c in WORKLOAD_CHECKS]
    cfg["run"] = run_id() if workloads and not check_mode else None
    bodies, owner = [], {}
    for node in nodes:
        name = node["metadata"]["name"]
        for check in workloads:
            step = (plan or {}).get(name)
            if step is not None and not step["run"]:
                results[name][check] = {"status": SKIP, "message": unchanged_message(check, step), "unchanged": True}
                continue
            if check_mode:
                results[name][check] = {"status": SKIP, "message": "not run in check mode (it creates pods)"}
                continue
            verdict = not_run(node, cfg, results)
            if verdict:
                results[name][check] = {"status": verdict[0], "message": "{0} {1}".format(check, verdict[1])}
                continue
            if check == "burnin":
                resource, count = burnin_request(node)
                if resource is None:
                    results[name][check] = {
                        "status": SKIP,
                        "message": "burn-in not run: " + count,
                        "not_applicable": True,
                    }
                    continue
                body = render_pod(check, name, cfg, cfg["run"], resource, count)
            else:
                body = render_pod(check, name, cfg, cfg["run"], workload_resource(node))
            bodies.append(body)
            owner[body["metadata"]["name"]] = (name, check)
    return bodies, owner


def judge_pods(cfg, pods_run, owner, results, timed_out):
    logs = pods_run.logs()
    for pod_name in pods_run.created:
        name, check = owner[pod_name]
        if pod_name in pods_run.lost:
            results[name][check] = {
                "status": FAIL,
                "message": "{0} pod did not finish: {1} while it ran".format(check, pods_run.lost[pod_name]),
                "pod": pod_name,
            }
            continue
        res = check_workload(
            check,
            pods_run.pods.get(pod_name),
            logs.get(pod_name),
            timed_out and pod_name not in pods_run.finished,
            cfg["wait_timeout"],
            cfg["driver_version"],
            cfg.get("burnin_level"),
            pods_run.log_errors.get(pod_name),
        )
        res["pod"] = pod_name
        res["duration"] = pods_run.finished.get(pod_name)
        results[name][check] = res


def run_pods(cfg, pods_run, bodies, owner, results, timings, t0):
    timings["pods_start"] = round(time.monotonic() - t0, 3)
    pods_run.node_of = dict((pod, node) for pod, (node, dummy) in owner.items())
    pods_run.create(bodies)
    timings["pods_created"] = round(time.monotonic() - t0, 3)
    for pod_name, error in pods_run.errors.items():
        name, check = owner[pod_name]
        results[name][check] = {"status": FAIL, "message": "{0} pod could not be created: {1}".format(check, error)}
    if pods_run.created:
        timed_out = pods_run.follow()
        timings["pods_finished"] = round(time.monotonic() - t0, 3)
        judge_pods(cfg, pods_run, owner, results, timed_out)


def _cleanup(module, cfg, pods_run):
    try:
        return pods_run.cleanup()
    except Exception as exc:  # never hide the real error; report what is left
        module.warn(
            "gpu_validate could not delete its pods (label {0}={1}): {2}".format(
                RUN_LABEL, cfg["run"], traceback.format_exc(limit=1)
            )
        )
        return ["(cleanup failed: {0})".format(one_line(to_text(exc), 200))]


def result_of(module, client, cfg, report, progress, leftovers, record=None):
    result = {
        "changed": False,
        "passed": report["summary"]["result"] == "passed",
        "summary": report["summary"],
        "nodes": report["nodes"],
        "failures": report["failures"],
        "progress": progress.events,
        "reports": {},
        "table": report_table(report),
    }
    if record is not None:
        result["record"] = record
        result["record_data"] = record_data(record)
        if cfg["record_definition"] is not None:
            # Stored in this module run, as k8s_ensure would (only when it changed), instead of a task of its own.
            definition = dict(cfg["record_definition"], data=result["record_data"])
            owner = ((definition.get("metadata") or {}).get("labels") or {}).get(OWNER_LABEL)
            written = ensure_present(module, client, [definition], owner=owner)
            result["changed"] = written["changed"]
            result["record_written"] = written["objects"][0]["action"]
            if "diff" in written:
                result["diff"] = written["diff"]
    if leftovers:
        result["leftover_pods"] = leftovers
        module.warn("validation pods still present after cleanup: {0}".format(", ".join(leftovers)))
    if cfg["reports"] and module.check_mode:
        result["reports"] = dict(
            (fmt, "{0} (not written in check mode)".format(p)) for fmt, p in cfg["reports"].items()
        )
    elif cfg["reports"]:
        result["reports"] = write_reports(report, cfg["reports"])
    if not result["passed"] and cfg["fail_on_error"]:
        raise GpuopsError(failure_message(report), **dict((k, v) for k, v in result.items() if k != "changed"))
    return result


def _unsettled(results):
    """The nodes whose read-only checks do not pass yet."""
    return sorted(
        name for name, checks in results.items() if any(c.get("status") in (FAIL, UNREACHABLE) for c in checks.values())
    )


def _sweep(client, pod_api, cfg, progress):
    stale, running = delete_leftovers(client, pod_api, cfg["namespace"])
    if stale:
        still = " ({0} still pending or running)".format(running) if running else ""
        progress("deleted {0} validation pod(s) an interrupted run left{1}".format(len(stale), still))


def _marked(nodes, driver_pods, unsettled):
    """The nodes of ``unsettled`` that their node lifecycle controller marked (operand_pods.marked_by_node_controller)."""
    return [
        n["metadata"]["name"]
        for n in nodes
        if n["metadata"]["name"] in unsettled
        and marked_by_node_controller(n, pods_on(driver_pods, n["metadata"]["name"]))
    ]


def run(module, client, svc):
    """gpu_validate: validate, read, (create pods, follow, read logs, delete), report."""
    cfg = validate_params(module.params)
    progress = Progress(module)
    started_wall = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.monotonic()
    check_namespaces(cfg, client, svc)
    read_record(cfg, client, svc)
    pod_api = svc.find_resource("Pod", "v1", fail=True)
    core = core_api(client)
    settle_until = time.monotonic() + cfg["settle_timeout"]
    marked_until = time.monotonic() + SETTLE_SECONDS
    while True:
        nodes = select_nodes(cfg, client, svc)
        results = dict((n["metadata"]["name"], {NODE_CHECK: check_node_ready(n)}) for n in nodes)
        expected = dict((n["metadata"]["name"], physical_gpus(n, cfg["expected_gpus"])) for n in nodes)
        progress("validating {0} GPU node(s): {1}".format(len(nodes), ", ".join(cfg["checks"])))
        exporter_pods, driver_pods, plugin_pods = read_only_checks(cfg, client, pod_api, core, nodes, results)
        unsettled = _unsettled(results)
        # settle_timeout: a device plugin registers its GPUs with the kubelet just after it turns Ready. And a node
        # its node controller marked (after an API server restart) is back within seconds: read again for a while.
        marked = _marked(nodes, driver_pods, unsettled)
        until = max(settle_until, marked_until) if marked else settle_until
        pause = min(cfg["wait_sleep"], 2) if marked else cfg["wait_sleep"]
        if not unsettled or time.monotonic() + pause > until:
            break
        why = " ({0}: marked by the node controller, not the kubelet)".format(", ".join(marked)) if marked else ""
        progress("not yet: {0}{1}; reading again in {2}s".format(", ".join(unsettled), why, pause))
        time.sleep(pause)
    fingerprints, plan = plan_incremental(cfg, client, svc, nodes, driver_pods, plugin_pods)
    bodies, owner = plan_workloads(cfg, nodes, results, module.check_mode, plan)

    pool = pods_run = None
    timings, leftovers = {}, []
    if not module.check_mode:
        _sweep(client, pod_api, cfg, progress)
    try:
        if "metrics" in cfg["checks"]:
            # Metrics are read while the pods run: the slowest part sets the pace.
            pool = ThreadPoolExecutor(max_workers=1)
            metrics_future = pool.submit(metrics_for, cfg, client, nodes, exporter_pods, expected)
        if bodies:
            progress("creating {0} validation pod(s)".format(len(bodies)))
            pods_run = PodRun(cfg, client, pod_api, core, progress)
            run_pods(cfg, pods_run, bodies, owner, results, timings, t0)
        if pool is not None:
            for name, res in metrics_future.result().items():
                results[name]["metrics"] = res
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
        if pods_run is not None:
            leftovers = _cleanup(module, cfg, pods_run)
    reports = [
        node_report(node, results[node["metadata"]["name"]], cfg["checks"], (plan or {}).get(node["metadata"]["name"]))
        for node in nodes
    ]
    record = None
    if plan is not None:
        workloads = [c for c in cfg["checks"] if c in WORKLOAD_CHECKS]
        record = next_record(
            cfg["previous_record"],
            fingerprints,
            plan,
            results,
            workloads,
            started_wall,
            recorded_checks(cfg, workloads),
        )
    meta = {
        "namespace": cfg["namespace"],
        "run": cfg.get("run"),
        "check_mode": bool(module.check_mode),
        "timings": timings,
    }
    if plan is not None:
        meta["revalidated"] = sorted(n for n, step in plan.items() if step["run"])
        meta["unchanged"] = sorted(n for n, step in plan.items() if not step["run"])
        meta["forced"] = cfg["force"]
    report = build_report(reports, cfg["checks"], started_wall, round(time.monotonic() - t0, 3), meta)
    return result_of(module, client, cfg, report, progress, leftovers, record)
