# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_validate pod lifecycle: create the validation pods, follow them, read their logs, delete them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import RUN_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.pods import one_line, pod_finished
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    api_message,
    condition,
    dig,
    label_selector,
    list_items,
    pool_size,
    read_log,
    status_of,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods import (
    SETTLE_SECONDS,
    marked_by_node_controller,
)

# How often the nodes of the pods still running are read while following them (a node lost mid-run would
# otherwise be found only at the timeout: its pods never finish).
NODE_LOOK_SECONDS = 10

DELETE_NOW = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}


def delete_leftovers(client, pod_api, namespace):
    """Delete the validation pods an interrupted run left (its job killed, or the API server gone before its
    cleanup), whatever their phase: one still pending or running holds a GPU this run's pods wait for, and would
    finish after this run, with nobody left to delete it. Validation runs one at a time per namespace (the record
    ConfigMap has one writer), so before this run creates its pods every labelled pod is another run's.
    Returns ([names], number not finished)."""
    left = list_items(client, pod_api, namespace, RUN_LABEL)
    for pod in left:
        try:
            client.delete(pod_api, name=pod["metadata"]["name"], namespace=namespace, body=dict(DELETE_NOW))
        except Exception as exc:
            if status_of(exc) != 404:
                raise
    running = [p for p in left if dig(p, ("status", "phase")) not in ("Succeeded", "Failed")]
    return [p["metadata"]["name"] for p in left], len(running)


# Reads of a finished pod's log before the verdict falls back to its termination message, and the pause between.
LOG_READS = 3
LOG_RETRY_SECONDS = 1


class PodRun(object):
    """The validation pods of one run, handled together.

    All pods are created at once (thread pool), then followed with one watch
    (list + watch on the run label; polling with one list per wait_sleep
    when the watch is not available). Each pod is handled as soon as it has
    finished: its log is read and the pod deleted, in the pool, while the
    others still run. ``cleanup()`` deletes whatever is left (timeouts,
    failures) and waits until no pod of the run is listed.
    """

    def __init__(self, cfg, client, pod_api, core, progress, clock=time.monotonic, sleep=time.sleep):
        self.cfg = cfg
        self.client = client
        self.pod_api = pod_api
        self.core = core
        self.progress = progress
        self.clock = clock
        self.sleep = sleep
        self.namespace = cfg["namespace"]
        self.selector = label_selector({RUN_LABEL: cfg["run"]})
        # No more threads than the client keeps connections: extra ones would each open a new TLS connection.
        self.pool = ThreadPoolExecutor(max_workers=max(1, min(cfg["parallel"], pool_size(client))))
        self.created = []
        self.errors = {}
        self.log_errors = {}
        self.pods = {}
        self.finished = {}
        self.futures = {}
        self.deleted = set()
        self.lock = threading.Lock()
        self.start = clock()
        self._last_progress = None
        # {pod: node}, set by the caller; {pod: why} for pods whose node stopped being Ready while they ran.
        self.node_of = {}
        self.lost = {}
        self._not_ready_since = {}
        self._nodes_looked = None

    # -- create
    def create(self, bodies):
        def create(body):
            self.client.create(self.pod_api, body, namespace=self.namespace)

        futures = [(body["metadata"]["name"], self.pool.submit(create, body)) for body in bodies]
        unauthorized = None
        for name, future in futures:
            try:
                future.result()
                self.created.append(name)
            except Exception as exc:  # reported per pod; 401 ends the run (after cleanup)
                if status_of(exc) == 401:
                    unauthorized = exc
                self.errors[name] = api_message(exc)
        if unauthorized is not None:
            raise unauthorized
        self.start = self.clock()
        return self.created

    # -- follow
    def done(self):
        return all(name in self.finished for name in self.created)

    def look_at_nodes(self, read_nodes=None):
        """Every NODE_LOOK_SECONDS: the pods on a node not Ready on two looks in a row are lost (finished, with
        why). A node lifecycle controller says NotReady only after its grace period, so one look is enough to
        believe it; the second look keeps a node that recovers at once. A node the node lifecycle controller marked
        (Ready Unknown) is given SETTLE_SECONDS, as at the start of a run: after an API server restart its informers
        can believe every lease stale, and the kubelet re-posts Ready on its next status sync (10 s) plus its
        backoff; a node really lost stays Unknown and is named then."""
        now = self.clock()
        if self._nodes_looked is not None and now - self._nodes_looked < NODE_LOOK_SECONDS:
            return
        self._nodes_looked = now
        pending = [p for p in self.created if p not in self.finished and p in self.node_of]
        if not pending:
            return
        nodes = (read_nodes or self._read_nodes)()
        for node_name in sorted(set(self.node_of[p] for p in pending)):
            ready = condition(nodes.get(node_name) or {}, "Ready") if node_name in nodes else None
            if ready is not None and ready.get("status") == "True":
                self._not_ready_since.pop(node_name, None)
                continue
            if node_name not in self._not_ready_since:
                self._not_ready_since[node_name] = now
                continue
            marked = node_name in nodes and marked_by_node_controller(nodes[node_name])
            if marked and now - self._not_ready_since[node_name] < SETTLE_SECONDS:
                continue
            if node_name not in nodes:
                why = "node {0} is gone".format(node_name)
            else:
                why = "node {0} went NotReady ({1}: {2})".format(
                    node_name,
                    (ready or {}).get("reason") or "no Ready condition",
                    one_line((ready or {}).get("message") or "", 120),
                )
            for pod in pending:
                if self.node_of[pod] == node_name:
                    self.lost[pod] = why
                    self.finished[pod] = round(now - self.start, 3)

    def _read_nodes(self):
        listing = self.core.list_node(_preload_content=False)
        return dict((n["metadata"]["name"], n) for n in json.loads(to_text(listing.data)).get("items") or [])

    def _delete(self, name):
        with self.lock:
            self.deleted.add(name)
        try:
            self.client.delete(self.pod_api, name=name, namespace=self.namespace, body=dict(DELETE_NOW))
        except Exception as exc:
            if status_of(exc) != 404:
                raise

    def _finish(self, name, phase):
        """Read the log of a finished pod (Succeeded/Failed), then delete it."""
        log = None
        try:
            if phase in ("Succeeded", "Failed"):
                log = self._read_log(name)
        finally:
            self._delete(name)
        return log

    def _read_log(self, name):
        """The log, read again after a failed read: a kubelet busy or restarting answers 5xx or a timeout for a
        moment, and the termination message the verdict would fall back to holds only the output's last lines."""
        for attempt in range(LOG_READS):
            try:
                return read_log(self.core, name, self.namespace)
            except Exception as exc:
                if attempt == LOG_READS - 1 or status_of(exc) in (401, 403, 404):
                    raise
                self.sleep(LOG_RETRY_SECONDS)

    def _gone(self, name):
        with self.lock:
            ours = name in self.deleted
        if not ours:
            self.finished[name] = round(self.clock() - self.start, 3)
            self.pods[name] = None

    def _seen(self, pod, gone=False):
        name = dig(pod, ("metadata", "name"))
        if name not in self.created or name in self.finished:
            return
        if gone:
            self._gone(name)
            return
        self.pods[name] = pod
        if pod_finished(pod):
            self.finished[name] = round(self.clock() - self.start, 3)
            self.futures[name] = self.pool.submit(self._finish, name, dig(pod, ("status", "phase")))

    def _seen_listing(self, items):
        listed = set()
        for pod in items:
            listed.add(pod["metadata"]["name"])
            self._seen(pod)
        for name in self.created:
            if name not in listed:
                self._seen({"metadata": {"name": name}}, gone=True)
        self._report()

    def _report(self, force=False):
        now = self.clock()
        if not force and self._last_progress is not None and now - self._last_progress < self.cfg["wait_sleep"]:
            return
        self._last_progress = now
        counts = {}
        for name in self.created:
            pod = self.pods.get(name)
            phase = dig(pod, ("status", "phase")) or ("Gone" if name in self.pods else "Pending")
            counts[phase] = counts.get(phase, 0) + 1
        self.progress(
            "validation pods: {0}".format(", ".join("{0} {1}".format(v, k) for k, v in sorted(counts.items())))
        )

    def _listed(self):
        return list_items(self.client, self.pod_api, self.namespace, self.selector)

    def poll(self, deadline):
        """Follow the pods with one list per wait_sleep. Returns True on timeout."""
        while True:
            self._seen_listing(self._listed())
            self.look_at_nodes()
            if self.done():
                return False
            now = self.clock()
            if now >= deadline:
                return True
            self.sleep(min(self.cfg["wait_sleep"], max(0.05, deadline - now)))

    def _list_for_watch(self):
        listing = self.core.list_namespaced_pod(self.namespace, label_selector=self.selector, _preload_content=False)
        data = json.loads(to_text(listing.data))
        self._seen_listing(data.get("items") or [])
        return dig(data, ("metadata", "resourceVersion"))

    def _watch_once(self, version, deadline):
        """Follow one watch stream; the resourceVersion to go on from (None: list again)."""
        from kubernetes import watch as k8s_watch

        # A window of NODE_LOOK_SECONDS at most, so that the nodes are looked at between windows.
        remaining = min(deadline - self.clock(), NODE_LOOK_SECONDS)
        stream = k8s_watch.Watch()
        try:
            for event in stream.stream(
                self.core.list_namespaced_pod,
                self.namespace,
                label_selector=self.selector,
                resource_version=version,
                timeout_seconds=max(1, int(remaining + 0.999)),
                _request_timeout=remaining + 30,
            ):
                obj = event.get("raw_object") or {}
                if event.get("type") == "ERROR":
                    return None  # 410 Gone (too old): list again
                version = dig(obj, ("metadata", "resourceVersion")) or version
                self._seen(obj, gone=event.get("type") == "DELETED")
                self._report()
                if self.done() or self.clock() >= deadline:
                    break
        except Exception as exc:
            if status_of(exc) == 410:
                return None
            raise
        finally:
            stream.stop()
        return version

    def watch(self, deadline):
        """Follow the pods with a watch (events arrive as they happen). Returns True on timeout."""
        version = None
        while not self.done():
            if deadline - self.clock() <= 0:
                return True
            if version is None:
                version = self._list_for_watch()
                continue
            version = self._watch_once(version, deadline)
            self.look_at_nodes()
        return False

    def follow(self):
        """Wait until every pod finished or the timeout; True when it timed out."""
        deadline = self.start + self.cfg["wait_timeout"]
        try:
            timed_out = self.watch(deadline)
        except Exception as exc:  # a proxy in between may not pass watches: poll instead
            if status_of(exc) in (401, 403):
                raise
            self.progress(
                "watch unavailable ({0}); polling every {1}s".format(
                    one_line(to_text(exc), 120), self.cfg["wait_sleep"]
                )
            )
            timed_out = self.poll(deadline)
        self._report(force=True)
        return timed_out

    def logs(self):
        """{pod: log text} of the finished pods (None where the log could not be read; ``log_errors`` says why)."""
        out = {}
        for name, future in self.futures.items():
            try:
                out[name] = future.result()
            except Exception as exc:  # the verdict falls back to the termination message
                out[name] = None
                self.log_errors[name] = api_message(exc)
        return out

    # -- cleanup
    def _left(self):
        return [p["metadata"]["name"] for p in self._listed()]

    def cleanup(self):
        """Delete every pod of the run that is still there; wait until none is listed. Returns leftovers."""
        try:
            for future in self.futures.values():
                try:
                    future.result()
                except Exception:  # a failed delete is retried below
                    pass
            with self.lock:
                pending = [n for n in self.created if n not in self.deleted]
            list(self.pool.map(self._delete, pending))
            left = self._left()
            if left:
                body = dict(DELETE_NOW, propagationPolicy="Background")
                self.client.delete(self.pod_api, namespace=self.namespace, label_selector=self.selector, body=body)
            deadline = self.clock() + 30
            while left and self.clock() < deadline:
                self.sleep(0.2)
                left = self._left()
            if not left:
                self.progress("validation pods deleted")
            return left
        finally:
            self.pool.shutdown(wait=True)
