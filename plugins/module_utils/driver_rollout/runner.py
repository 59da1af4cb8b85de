# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_rollout: replace outdated driver pods (OnDelete DaemonSets) node by node, each node drained of its GPU pods
and its operands first, validated before it serves again. plan.py decides; this file reads, writes and waits."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.module_utils.common.text.converters import to_text

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
)
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.pools import selector_matches
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import runner as validate_runner
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import FAIL, NODE_CHECK, UNREACHABLE
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.podrun import core_api, read_log
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.pods import one_line
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    api_message,
    condition_true,
    dig,
    get_item,
    list_items,
    status_of,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods import pod_state


class NodeFailed(Exception):
    """One node's rollout stopped: the stage it was in and why."""


class _Validation(object):
    """gpu_validate's runner reads its module's params, check mode and warnings only."""

    def __init__(self, module, params):
        self.params = params
        self.check_mode = False
        self.warn = module.warn
        if hasattr(module, "_module"):
            self._module = module._module


class Rollout(object):
    def __init__(self, module, client, svc, cfg):
        self.module, self.client, self.cfg = module, client, cfg
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
        self.svc = svc
        self.core = core_api(client)
        self.writes = 0

    # -- reads --------------------------------------------------------------------------------------------------
    def read(self):
        ns = self.cfg["namespace"]
        self.driver_sets = list_items(
            self.client, self.res["DaemonSet"], ns, label_selector=self.cfg["driver_selector"], param="driver_selector"
        )
        self.daemonsets = list_items(self.client, self.res["DaemonSet"], ns)
        revisions = list_items(self.client, self.res["ControllerRevision"], ns)
        pods = list_items(self.client, self.res["Pod"], ns, label_selector=self.cfg["driver_selector"])
        nodes = list_items(self.client, self.res["Node"])
        if self.cfg.get("node_names"):
            wanted = set(self.cfg["node_names"])
            nodes = [n for n in nodes if n["metadata"]["name"] in wanted]
        self.nodes = dict((n["metadata"]["name"], n) for n in nodes)
        return plan.driver_states(nodes, self.driver_sets, revisions, pods)

    def node(self, name):
        node = get_item(self.client, self.res["Node"], name)
        if node is None:
            raise NodeFailed("the node was deleted")
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
        try:
            self.client.delete(self.res["Pod"], name=pod["metadata"]["name"], namespace=pod["metadata"]["namespace"])
            self.writes += 1
        except Exception as exc:
            if status_of(exc) != 404:
                raise

    # -- one wave -----------------------------------------------------------------------------------------------
    def poll(self, look, timeout, what):
        """Call look() -> (done, detail) until done or timeout; (done, detail)."""
        start, interval = time.monotonic(), 0.5
        while True:
            done, detail = look()
            if done or time.monotonic() - start >= timeout:
                return done, detail
            self.progress("{0}: {1}".format(what, detail))
            time.sleep(min(interval, max(timeout - (time.monotonic() - start), 0.1)))
            interval = min(interval * 2, self.cfg["wait_sleep"])

    def drain(self, names):
        """Evict the GPU pods of the nodes (PodDisruptionBudgets decide); at the timeout delete them only if asked."""
        refused = {}

        def look():
            left = []
            for name in names:
                for pod in plan.gpu_pods(self.pods_on(name)):
                    left.append(pod)
                    if pod["metadata"].get("deletionTimestamp"):
                        continue
                    why = self.evict(pod)
                    key = "{0}/{1}".format(pod["metadata"]["namespace"], pod["metadata"]["name"])
                    if why:
                        refused[key] = (name, pod, why)
                    else:
                        refused.pop(key, None)
            return not left, "waiting for {0} GPU pod(s) to leave: {1}".format(
                len(left), ", ".join(sorted(p["metadata"]["name"] for p in left)[:5])
            )

        done, dummy = self.poll(look, self.cfg["drain_timeout"], "drain " + ", ".join(names))
        if done:
            return {}
        if self.cfg["delete_after_timeout"]:
            for name in names:
                for pod in plan.gpu_pods(self.pods_on(name)):
                    self.progress(
                        "deleting {0}/{1} (delete_after_timeout)".format(
                            pod["metadata"]["namespace"], pod["metadata"]["name"]
                        )
                    )
                    self.delete_pod(pod)
            done, dummy = self.poll(look, self.cfg["drain_timeout"], "deleted GPU pods leaving")
            if done:
                return {}
        failures = {}
        for name in names:
            left = plan.gpu_pods(self.pods_on(name))
            if not left:
                continue
            words = []
            for pod in left:
                key = "{0}/{1}".format(pod["metadata"]["namespace"], pod["metadata"]["name"])
                why = refused.get(key, (None, None, None))[2]
                words.append("{0}: {1}".format(key, self.refusal(pod, why) if why else "still terminating"))
            failures[name] = "GPU pods still on the node after drain_timeout ({0}s): {1}".format(
                self.cfg["drain_timeout"], "; ".join(words)
            ) + (" (set delete_after_timeout to delete them)" if not self.cfg["delete_after_timeout"] else "")
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
        """Wait until no operand pod (a DaemonSet pod other than the driver's) and no GPU pod is left on the nodes:
        a pod still terminating holds the device as long as its containers run."""
        driver_names = set(d["metadata"]["name"] for d in self.driver_sets)

        def look():
            left = []
            for name in names:
                for pod in self.pods_on(name):
                    owner = owner_daemonset(pod)
                    mine = pod["metadata"]["namespace"] == self.cfg["namespace"] and owner and owner not in driver_names
                    if mine or pod in plan.gpu_pods([pod]):
                        left.append("{0} on {1}".format(pod["metadata"]["name"], name))
            return not left, "waiting for the operands to leave: " + ", ".join(left[:5])

        done, detail = self.poll(look, self.cfg["drain_timeout"], "pause")
        if done:
            return {}
        return dict(
            (n, "GPU clients still on the node after {0}s: {1}".format(self.cfg["drain_timeout"], detail))
            for n in names
        )

    def replace_drivers(self, states):
        """Delete each node's driver pod unless it already runs the current revision and is ready."""
        for st in states:
            pod = st["pod"]
            if pod is not None and not (st["current"] and plan.pod_ready(pod)):
                self.progress("{0}: replacing driver pod {1}".format(st["node"], pod["metadata"]["name"]))
                self.delete_pod(pod)

    def driver_pod(self, st):
        ds = st["daemonset"]
        pods = [
            p
            for p in self.pods_on(st["node"], self.cfg["namespace"])
            if owner_daemonset(p) == ds and not p["metadata"].get("deletionTimestamp")
        ]
        return pods[-1] if pods else None

    def wait_drivers(self, states, deadline):
        failures = {}

        def look():
            waiting = []
            for st in states:
                if st["node"] in failures:
                    continue
                pod = self.driver_pod(st)
                if pod is None or pod_revision(pod) != st["revision"] or not plan.pod_ready(pod):
                    waiting.append((st, pod))
            return not waiting, waiting

        done, waiting = self.poll(look, max(deadline - time.monotonic(), 1), "new drivers")
        if not done:
            for st, pod in waiting:
                failures[st["node"]] = "the new driver pod is not ready after {0}s: {1}{2}".format(
                    self.cfg["wait_timeout"], pod_state(pod)[1] if pod else "no pod", self.log_tail(pod)
                )
        return failures

    def log_tail(self, pod, lines=3):
        if pod is None:
            return ""
        try:
            text = read_log(self.core, pod["metadata"]["name"], pod["metadata"]["namespace"], tail=lines)
        except Exception:  # no log yet (a pod that never started): the state says enough
            return ""
        text = " | ".join(line.strip() for line in to_text(text).splitlines() if line.strip())
        return " (log: {0})".format(one_line(text, 300)) if text else ""

    def wait_operands(self, names, deadline):
        """Every DaemonSet of the namespace that wants the node has a ready pod on it, and the node has GPUs."""

        def look():
            waiting = []
            for name in names:
                node = self.node(name)
                pods = self.pods_on(name, self.cfg["namespace"])
                for ds in self.daemonsets:
                    if not daemonset_wants(ds, node)[0]:
                        continue
                    mine = [p for p in pods if owner_daemonset(p) == ds["metadata"]["name"]]
                    if not any(plan.pod_ready(p) for p in mine):
                        waiting.append(
                            "{0} on {1} ({2})".format(
                                ds["metadata"]["name"], name, pod_state(mine[-1] if mine else None)[1]
                            )
                        )
                alloc = (node.get("status") or {}).get("allocatable") or {}
                if not any(plan.GPU_RESOURCE_RE.match(k) and str(v) not in ("0", "") for k, v in alloc.items()):
                    waiting.append("{0}: no allocatable GPU yet".format(name))
            return not waiting, "; ".join(waiting)

        done, detail = self.poll(look, max(deadline - time.monotonic(), 1), "operands")
        if done:
            return {}
        return dict(
            (n, "the operands are not ready after {0}s: {1}".format(self.cfg["wait_timeout"], detail))
            for n in names
            if n in detail
        )

    def validate(self, names):
        if not self.cfg["validate"] or not names:
            return {}, None
        params = validation_params(self.cfg, names)
        result = validate_runner.run(_Validation(self.module, params), self.client, self.svc)
        failures = {}
        for entry in result.get("nodes") or []:
            checks = entry.get("checks") or {}
            words = [
                "{0}: {1}".format(name, one_line(checks[name].get("message") or "", 300))
                for name in [NODE_CHECK] + list(self.cfg["validate_checks"])
                if (checks.get(name) or {}).get("status") in (FAIL, UNREACHABLE)
                # the node is cordoned on purpose: the pods are pinned to it by nodeName
                and not (name == NODE_CHECK and dig(self.node(entry["node"]), ("spec", "unschedulable")) and
                         condition_true(self.node(entry["node"]), "Ready"))
            ]  # fmt: skip
            if words and entry["node"] in names:
                failures[entry["node"]] = "gpu_validate failed: " + "; ".join(words)
        return failures, result.get("table")

    def wave(self, states):
        names = [s["node"] for s in states]
        started = time.monotonic()
        failed = {}

        def active():
            return [s for s in states if s["node"] not in failed]

        for name in names:
            self.progress("{0}: cordon, drain its GPU pods".format(name))
            self.mark(name, plan.DRAIN)
        failed.update(self.drain(names))
        for st in active():
            self.mark(st["node"], plan.RELOAD)
        failed.update(self.operands_gone([s["node"] for s in active()]))
        self.replace_drivers(active())
        deadline = time.monotonic() + self.cfg["wait_timeout"]
        failed.update(self.wait_drivers(active(), deadline))
        for st in active():
            self.mark(st["node"], plan.VALIDATE)
        failed.update(self.wait_operands([s["node"] for s in active()], deadline))
        checks, table = self.validate([s["node"] for s in active()])
        failed.update(checks)
        for st in states:
            if st["node"] in failed:
                self.mark(st["node"], plan.FAILED, failed[st["node"]])
            else:
                self.patch_node(st["node"], plan.finish_patch(self.node(st["node"])))
        seconds = time.monotonic() - started
        return failed, seconds, table


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
    rows = [_row(s, "current", after=s["image"]) for s in states if not plan.needs_roll(s)]
    result = {"changed": False, "nodes": [], "waves": [], "failed_nodes": [], "not_reached": []}
    if not todo:
        result.update(
            nodes=rows, table=plan.table(rows), seconds=round(time.monotonic() - t0, 3), progress=ro.progress.events
        )
        result["msg"] = "every driver pod runs its DaemonSet's current revision ({0} GPU node(s))".format(len(states))
        return result
    width = plan.parse_max_unavailable(cfg["max_unavailable"], len(states))
    allowed, down = plan.budget(states, todo, width)
    if allowed < 1:
        raise GpuopsError(
            "is {0} and {1} GPU node(s) are already unavailable ({2}): no node can be taken out for its driver "
            "now. Bring them back, or raise max_unavailable".format(cfg["max_unavailable"], len(down), ", ".join(down)),
            param="max_unavailable",
        )
    unreachable = [s for s in todo if not s["reachable"]]
    todo = [s for s in todo if s["reachable"]]
    unpaused = plan.unpaused_operands(
        ro.daemonsets, set(d["metadata"]["name"] for d in ro.driver_sets), [ro.nodes[s["node"]] for s in todo]
    )
    if unpaused:
        raise GpuopsError(
            "DaemonSet(s) {0} would keep running on a node while its driver is replaced (no '{1} NotIn [{2}]' in "
            "their node affinity), so the new driver could not unload the old one (driver is in use). They come "
            "from an earlier release of gpuops.cluster or from another tool: apply this release's operand states "
            "first (run site.yml with driver_upgrade: false), then roll the driver".format(
                ", ".join(unpaused), plan.STATE_LABEL, plan.PAUSED
            )
        )
    groups = plan.waves(todo, cfg["canary"], allowed)
    result["waves"] = [[s["node"] for s in g] for g in groups]
    if module.check_mode:
        for i, group in enumerate(groups):
            rows += [
                _row(
                    s,
                    "would upgrade",
                    "wave {0}{1}".format(i + 1, " (canary)" if i == 0 and cfg["canary"] else ""),
                    after=s["target_image"],
                )
                for s in group
            ]
        rows += [_row(s, "unreachable", "node NotReady: not rolled") for s in unreachable]
        result.update(
            changed=True,
            nodes=rows,
            table=plan.table(rows),
            progress=ro.progress.events,
            seconds=round(time.monotonic() - t0, 3),
        )
        result["msg"] = "would roll the driver on {0} GPU node(s) in {1} wave(s)".format(len(todo), len(groups))
        return result
    stopped = None
    for i, group in enumerate(groups):
        if stopped:
            rows += [_row(s, "not reached", "keeps its driver and its GPU pods") for s in group]
            result["not_reached"] += [s["node"] for s in group]
            continue
        ro.progress("wave {0} of {1}: {2}".format(i + 1, len(groups), ", ".join(s["node"] for s in group)))
        failed, seconds, dummy = ro.wave(group)
        for st in group:
            if st["node"] in failed:
                rows.append(_row(st, "failed", failed[st["node"]], seconds))
                result["failed_nodes"].append(st["node"])
            else:
                rows.append(_row(st, "upgraded", None, seconds, st["target_image"]))
        if failed:
            stopped = i + 1
    rows += [_row(s, "unreachable", "node NotReady: not rolled") for s in unreachable]
    result.update(changed=ro.writes > 0, nodes=rows, table=plan.table(rows), progress=ro.progress.events)
    result["seconds"] = round(time.monotonic() - t0, 3)
    result["writes"] = ro.writes
    done = [r["node"] for r in rows if r["result"] == "upgraded"]
    if stopped:
        first = result["failed_nodes"][0]
        why = next(r["note"] for r in rows if r["node"] == first)
        raise GpuopsError(
            "driver rollout stopped in wave {0}: {1} failed ({2}). It stays cordoned with label {3}=failed; {4} "
            "upgraded, {5} not reached (they keep their driver and workloads). Fix the cause and run again: the "
            "rollout resumes with the failed node(s).".format(
                stopped, ", ".join(result["failed_nodes"]), why, plan.STATE_LABEL, len(done), len(result["not_reached"])
            ),
            **dict((k, v) for k, v in result.items() if k != "changed"),
        )
    result["msg"] = "driver rolled on {0} GPU node(s) in {1} wave(s), {2:.0f}s".format(
        len(done), len(groups), result["seconds"]
    )
    return result
