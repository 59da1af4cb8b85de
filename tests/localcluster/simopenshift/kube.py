# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""A small controller runtime on top of the kubernetes Python client.

Objects are plain dicts (the JSON the apiserver sends), which suits custom
resources and keeps core objects in the same shape. ``Client`` is a thin REST
layer over ``kubernetes.client.ApiClient.call_api``; ``Informer`` is list+watch
with a local cache that re-lists after 410 Gone and after connection errors (an
apiserver restart), emitting synthetic DELETED events for objects that vanished
meanwhile; ``WorkQueue`` deduplicates keys and supports delayed re-adds, so
controllers are level-triggered reconcilers like client-go ones.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import heapq
import json
import logging
import threading
import time

from kubernetes.client.rest import ApiException

try:
    from kubernetes.watch.watch import iter_resp_lines
except ImportError:  # pragma: no cover - older clients
    iter_resp_lines = None

LOG = logging.getLogger("simopenshift")


class Resource(object):
    """group/version/plural of an API resource; group "" is the core API."""

    def __init__(self, group, version, plural, kind, namespaced=True):
        self.group = group
        self.version = version
        self.plural = plural
        self.kind = kind
        self.namespaced = namespaced

    @property
    def api_version(self):
        return "%s/%s" % (self.group, self.version) if self.group else self.version

    def path(self, namespace=None, name=None, subresource=None):
        base = "/apis/%s/%s" % (self.group, self.version) if self.group else "/api/%s" % self.version
        if self.namespaced and namespace:
            base += "/namespaces/%s" % namespace
        base += "/" + self.plural
        if name:
            base += "/" + name
            if subresource:
                base += "/" + subresource
        return base

    def __repr__(self):
        return "%s.%s" % (self.plural, self.group or "core")


# Core resources the controllers use.
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
PODS = Resource("", "v1", "pods", "Pod")
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
SECRETS = Resource("", "v1", "secrets", "Secret")
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap")
SERVICEACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
SERVICES = Resource("", "v1", "services", "Service")
EVENTS = Resource("", "v1", "events", "Event")
DAEMONSETS = Resource("apps", "v1", "daemonsets", "DaemonSet")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False)
RUNTIMECLASSES = Resource("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", namespaced=False)
KWOK_LOGS = Resource("kwok.x-k8s.io", "v1alpha1", "logs", "Logs")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLEBINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
CLUSTERROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False)
CLUSTERROLEBINDINGS = Resource(
    "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False
)
VALIDATINGADMISSIONPOLICIES = Resource(
    "admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", namespaced=False
)
VALIDATINGADMISSIONPOLICYBINDINGS = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicybindings",
    "ValidatingAdmissionPolicyBinding",
    namespaced=False,
)


def owner_ref(res, obj, controller=True, block=True):
    """An ownerReferences entry naming ``obj`` (of resource ``res``) as its owner (the garbage collector's link)."""
    return {
        "apiVersion": res.api_version,
        "kind": res.kind,
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"].get("uid"),
        "controller": controller,
        "blockOwnerDeletion": block,
    }


def meta(obj):
    return obj.get("metadata") or {}


def name_of(obj):
    return meta(obj).get("name")


def namespace_of(obj):
    return meta(obj).get("namespace")


def labels_of(obj):
    return meta(obj).get("labels") or {}


def annotations_of(obj):
    return meta(obj).get("annotations") or {}


def key_of(obj):
    namespace = namespace_of(obj)
    return "%s/%s" % (namespace, name_of(obj)) if namespace else name_of(obj)


def split_key(key):
    if "/" in key:
        namespace, name = key.split("/", 1)
        return namespace, name
    return None, key


def now_rfc3339(ts=None):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts if ts is not None else time.time()))


def parse_rfc3339(value):
    if not value:
        return None
    import calendar

    value = value.rstrip("Z").split(".")[0]
    return calendar.timegm(time.strptime(value, "%Y-%m-%dT%H:%M:%S"))


def match_selector(selector, labels):
    """metav1.LabelSelector semantics (matchLabels + matchExpressions).

    An empty selector ({}) matches everything, a missing one (None) nothing.
    """
    if selector is None:
        return False
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def condition(obj, ctype):
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return cond
    return None


def node_ready(node):
    cond = condition(node, "Ready")
    return bool(cond and cond.get("status") == "True")


class Client(object):
    """REST calls on dicts. Errors other than 404 (on get) raise ApiException."""

    def __init__(self, api_client, request_timeout=30):
        self.api = api_client
        self.request_timeout = request_timeout

    def _call(self, method, path, query=None, body=None, content_type=None, timeout=None):
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        return self.api.call_api(
            path,
            method,
            query_params=query or [],
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
            response_type="object",
            _return_http_data_only=True,
            _preload_content=True,
            _request_timeout=timeout or self.request_timeout,
        )

    def get(self, res, name, namespace=None, subresource=None):
        try:
            return self._call("GET", res.path(namespace, name, subresource))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def _get_raw(self, path, query, accept, timeout):
        """A GET whose body the caller reads (a stream or text): the urllib3 response, not yet read."""
        return self.api.call_api(
            path,
            "GET",
            query_params=query,
            header_params={"Accept": accept},
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
            _preload_content=False,
            _request_timeout=timeout,
        )

    def read_log(self, res, name, namespace, container, limit_bytes=None):
        """pods/log as text (what `kubectl logs` reads); an error raises ApiException with the kubelet's answer."""
        query = [("container", container)] + ([("limitBytes", str(limit_bytes))] if limit_bytes else [])
        response = self._get_raw(res.path(namespace, name, "log"), query, "*/*", self.request_timeout)
        try:
            return response.data.decode("utf-8", "replace")
        finally:
            response.release_conn()

    def list(self, res, namespace=None, label_selector=None):
        query = []
        if label_selector:
            query.append(("labelSelector", label_selector))
        result = self._call("GET", res.path(namespace), query=query)
        return result.get("items") or [], (result.get("metadata") or {}).get("resourceVersion")

    def create(self, res, body, namespace=None):
        namespace = namespace or namespace_of(body)
        body.setdefault("apiVersion", res.api_version)
        body.setdefault("kind", res.kind)
        return self._call("POST", res.path(namespace), body=body)

    def replace(self, res, body, subresource=None):
        return self._call("PUT", res.path(namespace_of(body), name_of(body), subresource), body=body)

    def patch(self, res, name, body, namespace=None, subresource=None, patch_type="merge", field_manager=None):
        """``field_manager``: the managedFields entry the write is recorded under (default: the API server takes
        the User-Agent up to its first "/", i.e. OpenAPI-Generator for this client)."""
        content_type = {
            "merge": "application/merge-patch+json",
            "json": "application/json-patch+json",
            "strategic": "application/strategic-merge-patch+json",
        }[patch_type]
        query = [("fieldManager", field_manager)] if field_manager else None
        return self._call(
            "PATCH", res.path(namespace, name, subresource), query=query, body=body, content_type=content_type
        )

    def delete(self, res, name, namespace=None, propagation=None, grace_period=None):
        body = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation:
            body["propagationPolicy"] = propagation
        if grace_period is not None:
            body["gracePeriodSeconds"] = grace_period
        try:
            return self._call("DELETE", res.path(namespace, name), body=body)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def ensure(self, res, body):
        """Create unless it exists; returns (object, created)."""
        try:
            return self.create(res, body), True
        except ApiException as exc:
            if exc.status != 409:
                raise
            return self.get(res, name_of(body), namespace_of(body)), False

    def event(self, involved, reason, message, etype="Normal", component="simopenshift"):
        """Record a core/v1 Event about an object (best effort)."""
        namespace = namespace_of(involved) or "default"
        stamp = now_rfc3339()
        body = {
            "metadata": {"generateName": "%s." % name_of(involved), "namespace": namespace},
            "involvedObject": {
                "apiVersion": involved.get("apiVersion"),
                "kind": involved.get("kind"),
                "name": name_of(involved),
                "namespace": namespace_of(involved),
                "uid": meta(involved).get("uid"),
            },
            "reason": reason,
            "message": message,
            "type": etype,
            "source": {"component": component},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        try:
            self.create(EVENTS, body, namespace)
        except ApiException as exc:
            LOG.debug("event %s on %s not recorded: %s", reason, key_of(involved), exc.status)

    def watch_stream(self, res, resource_version, namespace=None, timeout_seconds=60):
        """Yield (type, object) from one watch request; ends when the server closes it."""
        query = [("watch", "true"), ("allowWatchBookmarks", "true"), ("timeoutSeconds", str(timeout_seconds))]
        if resource_version:
            query.append(("resourceVersion", resource_version))
        resp = self._get_raw(res.path(namespace), query, "application/json", (10, timeout_seconds + 15))
        try:
            for line in iter_resp_lines(resp):
                if not line:
                    continue
                event = json.loads(line)
                yield event.get("type"), event.get("object") or {}
        finally:
            resp.release_conn()


class WatchExpired(Exception):
    pass


class Informer(object):
    """list+watch one resource into a cache and fan events out to handlers.

    Handlers are called as handler(event_type, obj, old) from the informer's
    thread; they should only enqueue keys. The watch is re-established forever:
    after a clean server timeout from the last resourceVersion, after 410 Gone or
    a connection error (apiserver restart) by re-listing, diffing the new list
    against the cache so no change or deletion is lost.
    """

    def __init__(self, client, res, namespace=None, stop=None, backoff_max=2.0):
        self.client = client
        self.res = res
        self.namespace = namespace
        self.stop = stop or threading.Event()
        self.backoff_max = backoff_max
        self.cache = {}
        # keys of the cached objects by spec.nodeName (pods): per-node reconcilers read their node's pods from it
        # instead of scanning every pod of the cluster, which made them O(pods) per node at 1,000 nodes.
        self.node_index = {}
        self.lock = threading.RLock()
        self.handlers = []
        self.synced = threading.Event()
        self.relists = 0
        self.thread = None

    def add_handler(self, handler):
        self.handlers.append(handler)

    def get(self, name, namespace=None):
        key = "%s/%s" % (namespace, name) if namespace else name
        with self.lock:
            return self.cache.get(key)

    def on_node(self, node_name, predicate=None):
        """The cached objects whose spec.nodeName is node_name (and that match predicate)."""
        with self.lock:
            items = [self.cache[k] for k in self.node_index.get(node_name, ()) if k in self.cache]
        return [obj for obj in items if predicate is None or predicate(obj)]

    def _index(self, key, old, obj):
        """Keep node_index in step with one cache change (lock held)."""
        old_node = ((old or {}).get("spec") or {}).get("nodeName")
        new_node = ((obj or {}).get("spec") or {}).get("nodeName")
        if old_node and old_node != new_node:
            keys = self.node_index.get(old_node)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self.node_index[old_node]
        if new_node:
            self.node_index.setdefault(new_node, set()).add(key)

    def list(self, namespace=None, selector=None, predicate=None):
        with self.lock:
            items = list(self.cache.values())
        out = []
        for obj in items:
            if namespace is not None and namespace_of(obj) != namespace:
                continue
            if selector is not None and not match_selector(selector, labels_of(obj)):
                continue
            if predicate is not None and not predicate(obj):
                continue
            out.append(obj)
        return out

    def _emit(self, etype, obj, old):
        for handler in self.handlers:
            try:
                handler(etype, obj, old)
            except Exception:  # a handler bug must not kill the watch
                LOG.exception("handler for %s failed", self.res)

    def _relist(self):
        items, rv = self.client.list(self.res, self.namespace)
        fresh = {key_of(obj): obj for obj in items}
        with self.lock:
            old_cache = self.cache
            self.cache = fresh
            self.node_index = {}
            for key, obj in fresh.items():
                self._index(key, None, obj)
        for key, obj in fresh.items():
            old = old_cache.get(key)
            if old is None:
                self._emit("ADDED", obj, None)
            elif meta(old).get("resourceVersion") != meta(obj).get("resourceVersion"):
                self._emit("MODIFIED", obj, old)
        for key, old in old_cache.items():
            if key not in fresh:
                self._emit("DELETED", old, old)
        self.relists += 1
        return rv

    def _apply(self, etype, obj):
        key = key_of(obj)
        with self.lock:
            old = self.cache.get(key)
            if etype == "DELETED":
                self.cache.pop(key, None)
                self._index(key, old, None)
            else:
                self.cache[key] = obj
                self._index(key, old, obj)
        self._emit(etype, obj, old)

    def run(self):
        backoff = 0.2
        rv = None
        while not self.stop.is_set():
            try:
                if rv is None:
                    rv = self._relist()
                    self.synced.set()
                    backoff = 0.2
                for etype, obj in self.client.watch_stream(self.res, rv, self.namespace):
                    if self.stop.is_set():
                        return
                    if etype == "ERROR":
                        if obj.get("code") == 410:
                            raise WatchExpired()
                        raise RuntimeError("watch error: %s" % obj.get("message"))
                    new_rv = meta(obj).get("resourceVersion")
                    if new_rv:
                        rv = new_rv
                    if etype == "BOOKMARK":
                        continue
                    self._apply(etype, obj)
                    backoff = 0.2
            except WatchExpired:
                LOG.info("watch on %s expired, re-listing", self.res)
                rv = None
            except Exception as exc:  # connection refused/reset, apiserver restart, 5xx
                LOG.info(
                    "watch on %s interrupted (%s: %s); re-listing in %.1fs",
                    self.res,
                    type(exc).__name__,
                    str(exc)[:200],
                    backoff,
                )
                rv = None
                self.stop.wait(backoff)
                backoff = min(backoff * 2, self.backoff_max)

    def start(self):
        self.thread = threading.Thread(target=self.run, name="informer-%s" % self.res.plural, daemon=True)
        self.thread.start()
        return self


class WorkQueue(object):
    """Keys to reconcile, each at most once in the queue, with delayed adds."""

    def __init__(self):
        self.cond = threading.Condition()
        self.heap = []
        self.due = {}  # key -> earliest due time queued
        self.processing = set()
        self.dirty = {}  # key -> due time, re-added after done()

    def add(self, key, delay=0.0):
        due = time.time() + max(delay, 0.0)
        with self.cond:
            if key in self.processing:
                if key not in self.dirty or due < self.dirty[key]:
                    self.dirty[key] = due
                return
            if key in self.due and self.due[key] <= due:
                return
            self.due[key] = due
            heapq.heappush(self.heap, (due, key))
            self.cond.notify()

    def get(self, stop, poll=0.5):
        with self.cond:
            while not stop.is_set():
                now = time.time()
                while self.heap:
                    due, key = self.heap[0]
                    if self.due.get(key) != due:  # superseded by an earlier add
                        heapq.heappop(self.heap)
                        continue
                    break
                if self.heap and self.heap[0][0] <= now:
                    due, key = heapq.heappop(self.heap)
                    del self.due[key]
                    self.processing.add(key)
                    return key
                wait = poll if not self.heap else min(poll, self.heap[0][0] - now)
                self.cond.wait(max(wait, 0.01))
        return None

    def done(self, key):
        with self.cond:
            self.processing.discard(key)
            due = self.dirty.pop(key, None)
        if due is not None:
            self.add(key, due - time.time())

    def __len__(self):
        with self.cond:
            return len(self.due)


class Controller(object):
    """Base class: subclasses set ``name``, register handlers, implement reconcile(key).

    reconcile returns None or a delay in seconds after which the key is looked at
    again (time-driven phases); an exception re-queues with backoff.
    """

    name = "controller"
    # Worker threads; the queue never hands the same key to two of them, as
    # in client-go. Per-node controllers use several, like kubelets in parallel.
    workers = 1

    def __init__(self, manager):
        self.manager = manager
        self.client = manager.client
        self.timing = manager.timing
        self.queue = WorkQueue()
        self.failures = {}
        self.log = logging.getLogger("simopenshift." + self.name)

    def informer(self, res):
        return self.manager.informer(res)

    def enqueue(self, key, delay=0.0):
        if key:
            self.queue.add(key, delay)

    def enqueue_obj(self, etype, obj, old):
        self.enqueue(key_of(obj))

    def setup(self):
        raise NotImplementedError

    def resync_keys(self):
        """Keys to look at once all informers are synced."""
        return []

    def reconcile(self, key):
        raise NotImplementedError

    def run(self, stop):
        while not stop.is_set():
            key = self.queue.get(stop)
            if key is None:
                return
            try:
                delay = self.reconcile(key)
                self.failures.pop(key, None)
                if delay is not None:
                    self.queue.done(key)
                    self.enqueue(key, delay)
                    continue
            except ApiException as exc:
                if exc.status == 403 and "being terminated" in (exc.body or ""):
                    # Namespace going away: the object goes with it, nothing to do.
                    self.log.debug("reconcile %s: namespace terminating", key)
                    self.queue.done(key)
                    continue
                self._failed(key, exc)
                continue
            except Exception as exc:
                self._failed(key, exc)
                continue
            self.queue.done(key)

    def _failed(self, key, exc):
        """Log and re-queue with exponential backoff (0.4 s .. 5 s)."""
        count = self.failures.get(key, 0) + 1
        self.failures[key] = count
        level = logging.WARNING if count < 5 else logging.ERROR
        if isinstance(exc, ApiException):
            self.log.log(level, "reconcile %s failed (%s %s): %s", key, exc.status, exc.reason, (exc.body or "")[:300])
        else:
            self.log.log(level, "reconcile %s failed", key, exc_info=True)
        self.queue.done(key)
        self.enqueue(key, min(0.2 * (2**count), 5.0))


class Timing(object):
    """Phase durations, all scaled from one knob so tests can run fast."""

    def __init__(self, phase_seconds=1.0):
        self.phase = float(phase_seconds)

    def __call__(self, phases=1.0):
        return self.phase * phases


class Manager(object):
    """Shared informers plus controllers, all in one process."""

    def __init__(self, api_client, timing=None, workdir=None, profile="openshift"):
        self.client = Client(api_client)
        self.timing = timing or Timing()
        self.workdir = workdir or "."
        self.profile = profile
        self.stop = threading.Event()
        self.informers = {}
        self.controllers = []
        self.threads = []

    def informer(self, res):
        key = (res.group, res.version, res.plural)
        if key not in self.informers:
            self.informers[key] = Informer(self.client, res, stop=self.stop)
        return self.informers[key]

    def add(self, controller_cls):
        controller = controller_cls(self)
        controller.setup()
        self.controllers.append(controller)
        return controller

    def start(self, sync_timeout=60):
        for informer in self.informers.values():
            informer.start()
        deadline = time.time() + sync_timeout
        for informer in self.informers.values():
            informer.synced.wait(max(deadline - time.time(), 0.1))
            if not informer.synced.is_set():
                LOG.warning("informer %s not synced after %ss; controllers start anyway", informer.res, sync_timeout)
        for controller in self.controllers:
            for key in controller.resync_keys():
                controller.enqueue(key)
            for i in range(controller.workers):
                thread = threading.Thread(
                    target=controller.run, args=(self.stop,), name="%s-%d" % (controller.name, i), daemon=True
                )
                thread.start()
                self.threads.append(thread)

    def shutdown(self):
        self.stop.set()
