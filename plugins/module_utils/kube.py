# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Kubernetes helpers shared by every module: read, compare, patch, fan out.

Connection, discovery, apply and waits stay kubernetes.core's; these are the
small things it does not offer and that each module used to carry a copy of.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import time
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError

SERVER_FIELDS = ("resourceVersion", "uid", "generation", "creationTimestamp", "managedFields", "selfLink")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
DEFAULT_POOL = 4


def dig(obj, path, default=None):
    """obj[path[0]][path[1]]... or ``default`` when any step is missing."""
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return default
        obj = obj[key]
    return obj


def name_of(obj):
    return dig(obj, ("metadata", "name"))


def api_message(exc, limit=300):
    """The API server's own message from an ApiException body (else the exception text)."""
    body = getattr(exc, "body", None)
    try:
        return json.loads(to_text(body)).get("message") or to_text(exc)
    except Exception:  # the body is not always JSON
        return " ".join(to_text(body or exc).split())[:limit]


def status_of(exc):
    return getattr(exc, "status", None)


def label_selector(selector):
    """{'a': 'b', 'c': ''} -> 'a=b,c=' (a server-side label selector string)."""
    return ",".join("{0}={1}".format(k, "" if v is None else v) for k, v in sorted((selector or {}).items()))


def list_items(client, resource, namespace=None, label_selector=None, field_selector=None, param=None, typed=False):
    """All matching objects as plain dicts, in one request.

    Reads the raw response (``serialize=False``): wrapping 1,000 Nodes in
    ResourceInstance objects costs more CPU than the request itself. A 400
    on the selector is reported against ``param`` (the option that gave it).
    ``typed``: give each item the ``kind`` and ``apiVersion`` a list response leaves out.
    """
    kwargs = {"serialize": False}
    if namespace:
        kwargs["namespace"] = namespace
    if label_selector:
        kwargs["label_selector"] = label_selector
    if field_selector:
        kwargs["field_selector"] = field_selector
    try:
        response = client.get(resource, **kwargs)
    except Exception as exc:
        if param and status_of(exc) == 400:
            raise GpuopsError(
                "the API server rejected the selector {0!r}: {1}. Use the kubectl label selector syntax, "
                "e.g. 'app=nvidia-dcgm-exporter' or 'node-role.kubernetes.io/gpu'.".format(
                    label_selector, api_message(exc)
                ),
                param=param,
            )
        raise
    items = json.loads(to_text(response.data)).get("items") or []
    if typed:
        for obj in items:
            obj.setdefault("kind", resource.kind)
            obj.setdefault("apiVersion", resource.group_version)
    return items


def get_item(client, resource, name, namespace=None):
    """One object as a plain dict, or None when it does not exist."""
    try:
        response = client.get(resource, name=name, namespace=namespace, serialize=False)
    except Exception as exc:
        if status_of(exc) == 404:
            return None
        raise
    return json.loads(to_text(response.data))


def condition(obj, ctype):
    """The condition of type ``ctype`` in status.conditions (a dict), or None."""
    for cond in dig(obj, ("status", "conditions")) or []:
        if cond.get("type") == ctype:
            return cond
    return None


def condition_true(obj, ctype):
    cond = condition(obj, ctype)
    return bool(cond) and cond.get("status") == "True"


def node_ready(node):
    """(ready, why-not) from the Node's Ready condition and spec.unschedulable."""
    cond = condition(node, "Ready")
    if cond is None:
        return False, "node NotReady (no Ready condition)"
    if cond.get("status") != "True":
        return False, "node NotReady ({0})".format(cond.get("reason") or cond.get("message") or cond.get("status"))
    if dig(node, ("spec", "unschedulable")):
        return False, "node cordoned (spec.unschedulable)"
    return True, ""


# How long a wait keeps looking while the API server does not answer at all: a restart or a failover is over in
# seconds, a control plane that is gone is said so now, not at the end of a wait that can be 15 minutes long.
UNREACHABLE_SECONDS = 60


def unreachable(exc):
    """True for an error that says the API server did not answer (down, restarting, the connection cut), not
    that it answered no. kubernetes.core's Waiter wraps exactly these (urllib3's HTTPError) in CoreException."""
    status = getattr(exc, "status", None)
    if status is not None:
        return status in (502, 503, 504)  # an API server starting up, or a load balancer without one behind it
    if type(exc).__name__ == "CoreException" or type(exc).__module__.partition(".")[0] in ("urllib3", "http"):
        return True
    return isinstance(exc, (ConnectionError, TimeoutError))


class Outage(object):
    """How long the API server has not answered across the looks of one wait; ends the wait after ``limit``."""

    def __init__(self, clock, limit=UNREACHABLE_SECONDS, client=None):
        self.clock, self.limit, self.client, self.since = clock, limit, client, None

    def answered(self):
        self.since = None

    def failed(self, exc, timeout):
        """A look failed: re-raise what is not an outage, or one that lasted ``limit`` seconds."""
        from ansible_collections.gpuops.cluster.plugins.module_utils.common import describe_api_error, server_of

        if not unreachable(exc):
            raise exc
        now = self.clock()
        self.since = now if self.since is None else self.since
        if now - self.since >= self.limit:
            raise GpuopsError(
                "{0} It did not answer for {1:.0f}s in a row during a wait of up to {2}s.".format(
                    describe_api_error(exc, server=server_of(self.client)), now - self.since, timeout
                )
            )


def read_until(read, done, seconds, interval, clock=None, pause=None):
    """``read()`` again every ``interval`` seconds until ``done(value)`` or ``seconds`` passed; the last value.

    For reads that settle within seconds by themselves (a pod its node controller marked, an endpoint the
    EndpointSlice controller has yet to publish), not for waits on a user's timeout (``wait_backoff``).
    """
    clock = clock or time.monotonic
    pause = pause or time.sleep
    deadline = clock() + seconds
    while True:
        value = read()
        if done(value) or clock() >= deadline:
            return value
        pause(interval)


def _progress_mark(instance):
    """What moves while a wait makes progress: an object's ``status``, or how many objects a list look matched."""
    if not isinstance(instance, dict):
        return None
    if instance.get("status"):
        return instance["status"]
    if isinstance(instance.get("items"), list):
        return len(instance["items"])
    return None


def wait_backoff(
    waiter, timeout, sleep, first=0.5, clock=None, pause=None, unreachable_limit=UNREACHABLE_SECONDS, **kwargs
):
    """kubernetes.core's ``Waiter.wait``, with looks ``first`` seconds apart at the start, doubling up to ``sleep``;
    while the object's ``status`` (or the number of objects a list look matched) changes from one look to the next
    (a rollout under way), the next look comes ``2 * first`` seconds later again.

    A condition met a second after the first look ends the wait then, not a whole ``sleep`` (5 s by default)
    later; a long wait still looks every ``sleep``. Without the reset, a DaemonSet ready 4 s after its write was
    seen at the look at 7.5 s (looks at 0.5, 1.5, 3.5, 7.5 s): the five GPU DaemonSets' applies on 100 GPU nodes
    took 45 s together, 34 s with it (README, Benchmarks). A look that cannot reach the API server is made again, as
    Waiter does, but for at most ``unreachable_limit`` seconds in a row (:class:`Outage`). Returns Waiter.wait's
    (ok, instance, elapsed seconds).
    """
    clock = clock or time.monotonic
    pause = pause or time.sleep
    start = clock()
    interval = min(first, sleep)
    outage = Outage(clock, unreachable_limit, getattr(waiter, "client", None))
    seen = None
    while True:
        try:
            ok, instance, dummy = waiter.wait(timeout=0, sleep=sleep, **kwargs)  # timeout 0: one look
            failure = None
            outage.answered()
        except Exception as exc:  # the API server away on one look (else re-raised): look again
            outage.failed(exc, timeout)
            ok, instance, failure = False, {}, exc
        elapsed = clock() - start
        if ok or elapsed >= timeout:
            if failure is not None:
                raise failure
            return ok, instance, int(elapsed)
        mark = _progress_mark(instance)
        if mark is not None and seen is not None and mark != seen:
            interval = min(2 * first, sleep)
        seen = mark if mark is not None else seen
        pause(min(interval, timeout - elapsed))
        interval = min(interval * 2, sleep)


def pool_size(client, fallback=DEFAULT_POOL):
    """How many connections the kubernetes client keeps per host (urllib3 pool size)."""
    try:
        return int(client.configuration.connection_pool_maxsize) or fallback
    except (AttributeError, TypeError, ValueError):
        return fallback


def parallel_map(func, items, workers):
    """[(item, result, exception)] for ``func(item)`` run in a thread pool, in input order."""
    items = list(items)
    if not items:
        return []
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(items))))
    try:
        futures = [(item, pool.submit(func, item)) for item in items]
        out = []
        for item, future in futures:
            try:
                out.append((item, future.result(), None))
            except Exception as exc:  # reported per item by the caller
                out.append((item, None, exc))
        return out
    finally:
        pool.shutdown(wait=True)


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch: ``patch`` applied to a copy of ``target``."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def create_merge_patch(source, target):
    """The smallest RFC 7386 merge patch turning ``source`` into ``target``."""
    patch = {}
    for key in source:
        if key not in target:
            patch[key] = None
    for key, value in target.items():
        if key not in source:
            patch[key] = copy.deepcopy(value)
        elif isinstance(value, dict) and isinstance(source[key], dict):
            sub = create_merge_patch(source[key], value)
            if sub:
                patch[key] = sub
        elif value != source[key]:
            patch[key] = copy.deepcopy(value)
    return patch


def object_contains(existing, desired):
    """True when every field of ``desired`` is present with the same value in ``existing``.

    Server defaults (extra keys) are tolerated; lists must have the same length
    and each element must contain the desired element; an empty map or list
    also matches a field the server left out (it drops some empty values on
    write). This is the compare-before-write test that keeps a second run free
    of mutating requests.
    """
    if isinstance(desired, dict):
        if not isinstance(existing, dict):
            return False
        return all(
            (k in existing and object_contains(existing[k], v)) or (k not in existing and v in ({}, []))
            for k, v in desired.items()
        )
    if isinstance(desired, list):
        if not isinstance(existing, list) or len(existing) != len(desired):
            return False
        return all(object_contains(e, d) for e, d in zip(existing, desired))
    if isinstance(desired, bool) or isinstance(existing, bool):
        return type(desired) is type(existing) and desired == existing
    return desired == existing


def strip_server_fields(obj):
    """A copy of an API object without status and server-populated metadata (for diffs)."""
    obj = copy.deepcopy(obj or {})
    obj.pop("status", None)
    meta = obj.get("metadata") or {}
    for key in SERVER_FIELDS:
        meta.pop(key, None)
    annotations = meta.get("annotations") or {}
    annotations.pop(LAST_APPLIED, None)
    if "annotations" in meta and not annotations:
        meta.pop("annotations")
    return obj


def diff_entry(header, before, after):
    """One element of the ``diff`` list every module returns (None when nothing differs).

    ``header`` names the object ("DaemonSet gpu/nvidia-driver-5-14"); Ansible
    renders a list of before/after dicts one object at a time.
    """
    before = strip_server_fields(before) if before else {}
    after = strip_server_fields(after) if after else {}
    if before == after:
        return None
    return {"before_header": header, "after_header": header, "before": before, "after": after}


def core_api(client):
    from kubernetes.client import CoreV1Api

    return CoreV1Api(client.client.client)


def read_log(core, pod, namespace, tail=None, previous=False, container=None):
    """The container's log as the kubelet serves it.

    Read raw (``_preload_content=False``): the client otherwise json-decodes a log that happens to be JSON and
    returns its Python repr, single quotes and all (kubernetes-client/python#1354, #811) - which breaks the burn-in's
    ``dcgmi diag -j`` output.
    """
    kwargs = {"_request_timeout": 15, "_preload_content": False}
    if container:
        kwargs["container"] = container
    if tail:
        kwargs["tail_lines"] = tail
    if previous:
        kwargs["previous"] = True
    return to_text(core.read_namespaced_pod_log(pod, namespace, **kwargs).data, errors="replace")
