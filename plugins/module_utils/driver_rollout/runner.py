# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_rollout: replace outdated driver pods (OnDelete DaemonSets) node by node, each node drained of its GPU pods
and its operands first, validated before it serves again. plan.py decides; this file reads, writes and waits."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.args import BorrowedModule
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError, Progress
from ansible_collections.gpuops.cluster.plugins.module_utils.daemonsets import (
    daemonset_wants,
    owner_daemonset,
    pod_revision,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_rollout import plan
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_rollout.params import (
    check_params,
    validation_params,
    verify_params,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.pools import selector_matches
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import runner as validate_runner
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import FAIL, NODE_CHECK, UNREACHABLE
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.pods import one_line
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    api_message,
    condition_true,
    core_api,
    dig,
    get_item,
    list_items,
    read_log,
    status_of,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods import pod_state


class NodeGone(Exception):
    """The node was deleted during its roll."""


def _key(pod):
    return "{0}/{1}".format(pod["metadata"]["namespace"], pod["metadata"]["name"])


class Rollout(object):
    def __init__(self, module, client, svc, cfg):
        self.module, self.client, self.svc, self.cfg = module, client, svc, cfg
        self.progress = Progress(module)
        self.res = dict(
            (kind, svc.find_resource(kind, api, fail=True))
            for kind, api in (
                ("Node", "v1"),
                ("Pod", "v1"),
                ("DaemonSet", "apps/v1"),
                ("ControllerRevision", "apps/v1"),
                ("PodDisruptionBudget", "policy/v1"),
            )
        )
        self.core = core_api(client)
        self.writes = 0

    # -- reads --------------------------------------------------------------------------------------------------
    def read(self):
        ns = self.cfg["namespace"]
        self.driver_sets = list_items(
            self.client, self.res["DaemonSet"], ns, label_selector=self.cfg["driver_selector"], param="driver_selector"
        )
        driver_names = set(d["metadata"]["name"] for d in self.driver_sets)
        self.clients = plan.gpu_clients(list_items(self.client, self.res["DaemonSet"]), ns, driver_names)
        self.client_keys = set(plan.ds_key(d) for d in self.clients)
        revisions = list_items(self.client, self.res["ControllerRevision"], ns)
        pods = list_items(self.client, self.res["Pod"], ns, label_selector=self.cfg["driver_selector"])
        nodes = list_items(self.client, self.res["Node"])
        if self.cfg.get("node_names"):
            wanted = set(self.cfg["node_names"])
            nodes = [n for n in nodes if n["metadata"]["name"] in wanted]
        self.nodes = dict((n["metadata"]["name"], n) for n in nodes)
        return plan.driver_states(nodes, self.driver_sets, revisions, pods, self.cfg["assume_outdated"])

    def node(self, name):
        node = get_item(self.client, self.res["Node"], name)
        if node is None:
            raise NodeGone(name)
        return node

    def pods_on(self, name, namespace=None):
        return list_items(self.client, self.res["Pod"], namespace, field_selector="spec.nodeName=" + name)

    # -- writes -------------------------------------------------------------------------------------------------
    def patch_node(self, name, body):
        if not body:
            return
        self.client.patch(
            self.res["Node"], body, name=name, serialize=False, content_type="application/merge-patch+json"
        )
        self.writes += 1

    def mark(self, name, stage, failure=None):
        self.patch_node(name, plan.mark_patch(self.node(name), stage, failure))

    def evict(self, pod):
        """None when the eviction was accepted (or the pod is gone), else the API's refusal."""
        meta = pod["metadata"]
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
        }
        try:
            self.core.create_namespaced_pod_eviction(meta["name"], meta["namespace"], body)
            self.writes += 1
            return None
        except Exception as exc:
            if status_of(exc) == 404:
                return None
            if status_of(exc) in (429, 500):  # 429: a PodDisruptionBudget allows no disruption now
                return api_message(exc)
            raise

    def delete_pod(self, pod):
        if pod["metadata"].get("deletionTimestamp"):
            return  # already terminating: a second delete changes nothing
        try:
            self.client.delete(self.res["Pod"], name=pod["metadata"]["name"], namespace=pod["metadata"]["namespace"])
            self.writes += 1
        except Exception as exc:
            if status_of(exc) != 404:
                raise

    # -- waiting ------------------------------------------------------------------------------------------------
    def poll(self, look, timeout, what):
        """Call look() -> (done, detail) until done or timeout; (done, detail, seconds)."""
        start, interval = time.monotonic(), 0.5
        while True:
            done, detail = look()
            elapsed = time.monotonic() - start
            if done or elapsed >= timeout:
                return done, detail, elapsed
            self.progress("{0}: {1}".format(what, detail if isinstance(detail, str) else "waiting"))
            time.sleep(min(interval, max(timeout - elapsed, 0.1)))
            interval = min(interval * 2, self.cfg["wait_sleep"])

    def drain(self, names):
        """Evict the GPU pods of the nodes (PodDisruptionBudgets decide); at the timeout delete them only if asked."""
        refused = {}

        def look():
            left = {}
            for name in names:
                for pod in plan.gpu_pods(self.pods_on(name)):
                    left.setdefault(name, []).append(pod)
                    if pod["metadata"].get("deletionTimestamp"):
                        continue
                    why = self.evict(pod)
                    if why:
                        refused[_key(pod)] = why
                    else:
                        refused.pop(_key(pod), None)
            return not left, left

        done, left, dummy = self.poll(look, self.cfg["drain_timeout"], "drain " + ", ".join(names))
        if not done and self.cfg["delete_after_timeout"]:
            for pods in left.values():
                for pod in pods:
                    self.progress("deleting {0} (delete_after_timeout)".format(_key(pod)))
                    self.delete_pod(pod)
            done, left, dummy = self.poll(look, self.cfg["drain_timeout"], "deleted GPU pods leaving")
        if done:
            return {}
        failures = {}
        for name, pods in left.items():
            words = [
                "{0}: {1}".format(
                    _key(p), self.refusal(p, refused[_key(p)]) if _key(p) in refused else "still terminating"
                )
                for p in pods
            ]
            failures[name] = "GPU pods still on the node after drain_timeout ({0}s): {1}{2}".format(
                self.cfg["drain_timeout"],
                "; ".join(words),
                "" if self.cfg["delete_after_timeout"] else " (set delete_after_timeout to delete them)",
            )
        return failures

    def refusal(self, pod, why):
        """The eviction's refusal, with the PodDisruptionBudget that caused it."""
        budgets = list_items(self.client, self.res["PodDisruptionBudget"], pod["metadata"]["namespace"])
        labels = pod["metadata"].get("labels") or {}
        named = [
            "PodDisruptionBudget {0} (disruptionsAllowed {1})".format(
                b["metadata"]["name"], (b.get("status") or {}).get("disruptionsAllowed", "?")
            )
            for b in budgets
            if selector_matches((b.get("spec") or {}).get("selector"), labels)
        ]
        return "eviction refused: {0}{1}".format(one_line(why, 200), " - " + ", ".join(named) if named else "")

    def operands_gone(self, names):
        """Wait until no GPU client is left on the nodes: no pod of a GPU-client DaemonSet (any namespace) and no
        pod that requests an NVIDIA resource. A pod still terminating holds the device as long as it runs."""

        def look():
            left = {}
            for name in names:
                for pod in self.pods_on(name):
                    if dig(pod, ("status", "phase")) in plan.TERMINAL:
                        continue  # its containers have exited: nothing holds the device
                    if plan.pod_owner_key(pod) in self.client_keys or plan.gpu_requests(pod):
                        left.setdefault(name, []).append(_key(pod))
            return not left, left

        done, left, seconds = self.poll(look, self.cfg["drain_timeout"], "operands leaving")
        return dict(
            (n, "GPU clients still on the node after {0:.0f}s: {1}".format(seconds, ", ".join(pods[:5])))
            for n, pods in ({} if done else left).items()
        )

    def driver_pod(self, st):
        pods = [
            p
            for p in self.pods_on(st["node"], self.cfg["namespace"])
            if owner_daemonset(p) == st["daemonset"] and not p["metadata"].get("deletionTimestamp")
        ]
        return pods[-1] if pods else None

    def wait_drivers(self, states):
        def look():
            waiting = []
            for st in states:
                pod = self.driver_pod(st)
                if pod is None or pod_revision(pod) != st["revision"] or not plan.pod_ready(pod):
                    waiting.append((st, pod))
            return not waiting, waiting

        done, waiting, seconds = self.poll(look, self.cfg["wait_timeout"], "new drivers")
        return dict(
            (
                st["node"],
                "the new driver pod is not ready after {0:.0f}s: {1}{2}".format(
                    seconds, pod_state(pod)[1] if pod else "no pod", self.log_tail(pod)
                ),
            )
            for st, pod in ([] if done else waiting)
        )

    def log_tail(self, pod, lines=3):
        if pod is None:
            return ""
        try:
            text = read_log(self.core, pod["metadata"]["name"], pod["metadata"]["namespace"], tail=lines)
        except Exception:  # no log yet (a pod that never started): the state says enough
            return ""
        text = " | ".join(line.strip() for line in to_text(text).splitlines() if line.strip())
        return " (log: {0})".format(one_line(text, 300)) if text else ""

    def wait_operands(self, names, gpus):
        """Every GPU-client DaemonSet that wants the node has a ready pod on it, and the node advertises GPUs again
        (when it did before: ``gpus``)."""

        def look():
            waiting = {}
            for name in names:
                node = self.node(name)
                pods = self.pods_on(name)
                for ds in self.clients:
                    if not daemonset_wants(ds, node)[0]:
                        continue
                    mine = [p for p in pods if plan.pod_owner_key(p) == plan.ds_key(ds)]
                    if not any(plan.pod_ready(p) for p in mine):
                        words = "{0} ({1})".format(plan.ds_key(ds), pod_state(mine[-1] if mine else None)[1])
                        waiting.setdefault(name, []).append(words)
                if name in gpus and not plan.has_gpus(node):
                    waiting.setdefault(name, []).append("no allocatable GPU")
            return not waiting, waiting

        done, waiting, seconds = self.poll(look, self.cfg["wait_timeout"], "operands")
        return dict(
            (n, "the operands are not ready after {0:.0f}s: {1}".format(seconds, "; ".join(words)))
            for n, words in ({} if done else waiting).items()
        )

    def plugin_serves(self, name):
        """Whether the collection's device plugin runs on the node once it is out of its roll (a resumed node lost
        its GPUs with its operands; it gets them back)."""
        node = self.node(name)
        labels = dict(dig(node, ("metadata", "labels")) or {})
        labels.pop(plan.STATE_LABEL, None)
        node = dict(node, metadata=dict(node["metadata"], labels=labels))
        return any(
            (dig(ds, ("metadata", "labels")) or {}).get(plan.OWNER_LABEL) == "device_plugin"
            and daemonset_wants(ds, node)[0]
            for ds in self.clients
        )

    def validate(self, names, gpus):
        """gpu_validate on the nodes: every check asked for on those that advertised GPUs before their roll, the
        driver check alone on the others (no device plugin serves them yet)."""
        failures = {}
        if not self.cfg["validate"]:
            return failures
        with_gpus = [n for n in names if n in gpus]
        without = [n for n in names if n not in gpus]
        if with_gpus:
            failures.update(self._validate(with_gpus, self.cfg["validate_checks"]))
        if without and "driver" in self.cfg["validate_checks"]:
            failures.update(self._validate(without, ["driver"]))
        return failures

    def _validate(self, names, checks):
        params = validation_params(self.cfg, names, checks)
        result = validate_runner.run(BorrowedModule(self.module, params), self.client, self.svc)
        failures = {}
        for entry in result.get("nodes") or []:
            checks = entry.get("checks") or {}
            node = self.node(entry["node"])
            words = [
                "{0}: {1}".format(name, one_line(checks[name].get("message") or "", 300))
                for name in [NODE_CHECK] + list(checks)
                if (checks.get(name) or {}).get("status") in (FAIL, UNREACHABLE)
                # the node is cordoned on purpose: the pods are pinned to it by nodeName
                and not (name == NODE_CHECK and dig(node, ("spec", "unschedulable")) and condition_true(node, "Ready"))
            ]
            if words and entry["node"] in names:
                failures[entry["node"]] = "gpu_validate failed: " + "; ".join(words)
        return failures

    # -- one wave -----------------------------------------------------------------------------------------------
    def each(self, states, failed, stage):
        """Mark the nodes' stage; a node deleted meanwhile fails alone."""
        for st in states:
            try:
                self.mark(st["node"], stage)
            except NodeGone:
                failed[st["node"]] = "the node was deleted during its roll"

    def steps(self, states, failed):
        """Drain, reload, validate; each node from the stage an earlier run left it in (plan.start_stage)."""
        start = dict((s["node"], plan.start_stage(s)) for s in states)

        def active(*stages):
            return [s for s in states if s["node"] not in failed and start[s["node"]] in stages]

        for st in states:
            self.progress("{0}: from stage {1}".format(st["node"], start[st["node"]]))
        self.each(active(plan.DRAIN), failed, plan.DRAIN)
        # A node resumed in reload is drained too (without going back a stage): a GPU pod bound to it by nodeName
        # may have come since.
        failed.update(self.drain([s["node"] for s in active(plan.DRAIN, plan.RELOAD)]))
        self.each(active(plan.DRAIN, plan.RELOAD), failed, plan.RELOAD)
        failed.update(self.operands_gone([s["node"] for s in active(plan.DRAIN, plan.RELOAD)]))
        for st in active(plan.DRAIN, plan.RELOAD):
            if plan.replace_driver(st):
                self.progress("{0}: replacing driver pod {1}".format(st["node"], st["pod"]["metadata"]["name"]))
                self.delete_pod(st["pod"])
        failed.update(self.wait_drivers(active(plan.DRAIN, plan.RELOAD)))
        everyone = (plan.DRAIN, plan.RELOAD, plan.VALIDATE)
        self.each(active(*everyone), failed, plan.VALIDATE)
        gpus = set(s["node"] for s in states if s["had_gpus"] or (s["stage"] and self.plugin_serves(s["node"])))
        failed.update(self.wait_operands([s["node"] for s in active(*everyone)], gpus))
        failed.update(self.validate([s["node"] for s in active(*everyone)], gpus))

    def wave(self, states):
        """Roll the wave's nodes; {node: why} of those that failed. An error of the API stops the wave: its
        unfinished nodes are marked failed with it (they stay cordoned, named), and it is raised."""
        started, failed, error = time.monotonic(), {}, None
        try:
            self.steps(states, failed)
        except NodeGone as exc:
            failed[str(exc)] = "the node was deleted during its roll"
        except Exception as exc:  # every node of the wave must end labelled: failed or done
            error = exc
            why = "stopped by an error: {0}".format(one_line(to_text(exc), 300))
            for st in states:
                failed.setdefault(st["node"], why)
        for st in states:
            try:
                if st["node"] in failed:
                    self.mark(st["node"], plan.FAILED, failed[st["node"]])
                else:
                    self.patch_node(st["node"], plan.finish_patch(self.node(st["node"])))
            except NodeGone:
                continue
        if error is not None:
            raise GpuopsError(
                "driver rollout stopped by an error in the wave of {0}: {1}. Those nodes are cordoned and labelled "
                "{2}=failed; run again to resume.".format(
                    ", ".join(s["node"] for s in states), one_line(to_text(error), 300), plan.STATE_LABEL
                )
            )
        return failed, time.monotonic() - started


def _row(st, result, note=None, seconds=None, after=None):
    return {
        "node": st["node"],
        "result": result,
        "image_before": st["image"],
        "image_after": after,
        "seconds": None if seconds is None else round(seconds, 1),
        "note": note,
        "stage": st["stage"],
    }


def _refuse_before_writes(cfg, ro, states, todo):
    """The waves, or a GpuopsError naming what stops the rollout before any write."""
    width = plan.parse_max_unavailable(cfg["max_unavailable"], len(states))
    groups, slots, down = plan.plan_waves(states, todo, cfg["canary"], width)
    fresh = [s for s in todo if s["reachable"] and not (s["stage"] or s["unschedulable"])]
    if fresh and slots < 1:
        raise GpuopsError(
            "is {0} and {1} GPU node(s) stay out of service ({2}): no node can be taken out for its driver now. "
            "Bring them back, or raise max_unavailable".format(
                cfg["max_unavailable"],
                width - slots,
                ", ".join(down + [s["node"] for s in todo if s["reachable"] and s["stays_cordoned"]]),
            ),
            param="max_unavailable",
        )
    reachable = [ro.nodes[s["node"]] for s in todo if s["reachable"]]
    unpaused = plan.unpaused_operands(ro.clients, reachable)
    if unpaused:
        raise GpuopsError(
            "DaemonSet(s) {0} would keep running on a node while its driver is replaced (no '{1} NotIn [{2}]' in "
            "their node affinity), so the new driver could not unload the old one (driver is in use). They come "
            "from an earlier release of gpuops.cluster or from another tool: apply this release's operand states "
            "first (run site.yml with driver_upgrade: false), then roll the driver".format(
                ", ".join(unpaused), plan.STATE_LABEL, plan.PAUSED
            )
        )
    return groups


def run(module, client, svc):
    cfg = check_params(module.params)
    ro = Rollout(module, client, svc, cfg)
    t0 = time.monotonic()
    states = ro.read()
    if not ro.driver_sets:
        raise GpuopsError(
            "no DaemonSet in {0} matches {1!r}: run the driver state first".format(
                cfg["namespace"], cfg["driver_selector"]
            ),
            param="driver_selector",
        )
    todo = plan.order(states)
    rows = [
        _row(s, "current", after=s["image"]) if s["pod"] else _row(s, "no driver pod", "its DaemonSet has no pod there")
        for s in states
        if not plan.needs_roll(s)
    ]
    unreachable = [s for s in todo if not s["reachable"]]
    rows += [_row(s, "unreachable", "node NotReady: not rolled") for s in unreachable]
    result = {"changed": False, "nodes": rows, "waves": [], "failed_nodes": [], "not_reached": [], "writes": 0}
    if len(unreachable) == len(todo):
        _verify(ro, states, result)
        result.update(table=plan.table(rows), seconds=round(time.monotonic() - t0, 3), progress=ro.progress.events)
        result["msg"] = "nothing to roll: {0} GPU node(s) current{1}".format(
            len([r for r in rows if r["result"] == "current"]),
            ", {0} NotReady with an older driver".format(len(unreachable)) if unreachable else "",
        )
        return result
    groups = _refuse_before_writes(cfg, ro, states, todo)
    result["waves"] = [[s["node"] for s in g] for g in groups]
    if module.check_mode:
        for i, group in enumerate(groups):
            rows += [_row(s, "would upgrade", "wave {0}".format(i + 1), after=s["target_image"]) for s in group]
        result.update(changed=True, table=plan.table(rows), progress=ro.progress.events)
        result["seconds"] = round(time.monotonic() - t0, 3)
        result["msg"] = "would roll the driver on {0} GPU node(s) in {1} wave(s)".format(
            sum(len(g) for g in groups), len(groups)
        )
        return result
    stopped = None
    for i, group in enumerate(groups):
        if stopped:
            rows += [_row(s, "not reached", "keeps its driver and its GPU pods") for s in group]
            result["not_reached"] += [s["node"] for s in group]
            continue
        ro.progress("wave {0} of {1}: {2}".format(i + 1, len(groups), ", ".join(s["node"] for s in group)))
        failed, seconds = ro.wave(group)
        for st in group:
            if st["node"] in failed:
                rows.append(_row(st, "failed", failed[st["node"]], seconds))
                result["failed_nodes"].append(st["node"])
            else:
                rows.append(_row(st, "upgraded", None, seconds, st["target_image"]))
        stopped = i + 1 if failed else None
    result.update(changed=ro.writes > 0, table=plan.table(rows), progress=ro.progress.events, writes=ro.writes)
    result["seconds"] = round(time.monotonic() - t0, 3)
    done = [r["node"] for r in rows if r["result"] == "upgraded"]
    if stopped:
        first = result["failed_nodes"][0]
        why = next(r["note"] for r in rows if r["node"] == first)
        raise GpuopsError(
            "driver rollout stopped in wave {0}: {1} failed ({2}). It stays cordoned with label {3}=failed; {4} "
            "upgraded, {5} not reached (they keep their driver and workloads). Fix the cause and run again: the "
            "rollout resumes with the failed node(s).".format(
                stopped,
                ", ".join(result["failed_nodes"]),
                why,
                plan.STATE_LABEL,
                len(done),
                len(result["not_reached"]),
            ),
            **dict((k, v) for k, v in result.items() if k != "changed"),
        )
    _verify(ro, states, result)
    result["seconds"] = round(time.monotonic() - t0, 3)
    result["msg"] = "driver rolled on {0} GPU node(s) in {1} wave(s), {2:.0f}s".format(
        len(done), len(groups), result["seconds"]
    )
    return result


def _verify(ro, states, result):
    """verify_checks on every GPU node once the rollout is done (also when it had nothing to roll), as
    gpu_validate returns them, under ``verify``: the driver role's verify step reads them instead of starting
    gpu_validate again."""
    if ro.cfg["verify_checks"] and not ro.module.check_mode:
        params = verify_params(ro.cfg, ro.cfg.get("node_names") or [s["node"] for s in states])
        ro.progress("verifying {0} GPU node(s): {1}".format(len(params["node_names"]), ", ".join(params["checks"])))
        result["verify"] = validate_runner.run(BorrowedModule(ro.module, params), ro.client, ro.svc)
