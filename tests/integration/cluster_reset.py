# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Put a shared local cluster back to its seed state between test files (tests/integration/conftest.py).

``Seed.take(api)`` records, right after the cluster is up, every object of every listable kind (discovery, so
CRDs that appear later are seen too) and the inventory of ``inventory.py``. ``Seed.reset(api)`` then:

1. restores, on the seed objects of the kinds the collection touches (``inventory.KINDS``, Nodes,
   MachineConfigPools), their labels, the ``gpuops`` annotations, Node taints and ``unschedulable`` (not while the
   MCO updates the node), MachineSet replicas and template taints, MachineConfigPool ``maxUnavailable`` and
   ``paused``, and ConfigMap/Secret data;
2. deletes every object that was not there, except what controllers churn (Events, Leases, Endpoints,
   EndpointSlices), what has an owner (the garbage collector takes it with its owner) and the MCO's
   ``rendered-*`` MachineConfigs: extra objects in the seed namespaces and cluster-scoped ones (MachineSets,
   MachineConfigs, Subscriptions, NodeFeatureDiscoveries, RuntimeClasses, ClusterRoles, ...), then the extra
   Namespaces and CRDs, and waits until they are gone, with what a test deleted without waiting (a Namespace
   still Terminating still holds its objects);
3. until the inventory equals the seed's: restores again, deletes extra Nodes once no Machine holds them
   (hand-made GPU nodes; a GPU MachineSet's nodes go with their Machines), and lets the controllers settle (the
   MachineConfigPools roll back to their seed rendered config once extra MachineConfigs are gone). If that does
   not happen within the timeout, ``reset`` raises ``ResetFailed`` naming every difference, and the caller
   starts the cluster afresh.

What a reset cannot undo and no test reads: ``rendered-*`` MachineConfigs (the MCO keeps old ones on a real
cluster too), node boot IDs after an MCO reboot, the audit log's length.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import time

from inventory import KINDS, differences
from inventory import _summary as summary
from kubernetes.client.rest import ApiException

# (API group, resource) never compared or deleted: churn of controllers, or not objects at all.
CHURN = {
    ("", "events"),
    ("events.k8s.io", "events"),
    ("coordination.k8s.io", "leases"),
    ("", "endpoints"),
    ("discovery.k8s.io", "endpointslices"),
    ("", "componentstatuses"),
    ("", "bindings"),
}


# The harness's own objects, made by kwok and the simulator as they start (and again when they restart): never
# deleted nor compared. A seed taken a moment before they appeared had the reset delete them, and a seed taken
# after had the next reset wait its whole timeout for the one kwok had not made again (seen in CI: 247 s, then a
# fresh start).
def harness_object(kind, namespace, name):
    return (kind in ("CustomResourceDefinition", "APIService") and name.endswith("kwok.x-k8s.io")) or (
        kind == "ConfigMap" and (namespace, name) == ("kube-system", "simopenshift")
    )


def without_harness(inv):
    """``inventory.inventory`` less the harness's objects."""
    out = {}
    for kind, entries in inv.items():
        out[kind] = dict((key, value) for key, value in entries.items() if not harness_object(kind, *key.split("/", 1)))
    return out


# Restored on seed objects (and compared by inventory.py): the kinds the collection creates or changes.
RESTORED_KINDS = set(kind for _v, kind in KINDS) | {"Node", "MachineConfigPool"}
# Taints the node lifecycle controller and the simulated MCO manage themselves.
CONTROLLER_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")


# How ``reset`` names what it only waited for (a test deleted it): not a write of the reset.
WAITED = "waited for "


class ResetFailed(Exception):
    pass


class Resource(object):
    def __init__(self, group, group_version, name, kind, namespaced):
        self.group = group
        self.base = "/api/v1" if group == "" else "/apis/" + group_version
        self.api_version = group_version
        self.name = name
        self.kind = kind
        self.namespaced = namespaced

    @property
    def key(self):
        return (self.group, self.name)

    def path(self, namespace=None, name=None):
        parts = [self.base]
        if namespace:
            parts += ["namespaces", namespace]
        parts.append(self.name)
        if name:
            parts.append(name)
        return "/".join(parts)


def _call(api, method, path, body=None, content_type=None):
    headers = {"Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    return api.call_api(
        path,
        method,
        header_params=headers,
        body=body,
        response_type="object",
        auth_settings=["BearerToken"],
        _return_http_data_only=True,
        _request_timeout=30,
    )


def identity(api):
    """The uid of the cluster's kube-system Namespace: a new one for every cluster started from an empty etcd."""
    return _call(api, "GET", "/api/v1/namespaces/kube-system")["metadata"]["uid"]


def _gone(exc):
    return isinstance(exc, ApiException) and exc.status in (404, 410)


def discover(api):
    """Every resource that can be listed and deleted, once (in its group's preferred version when it has it)."""
    found = {}
    versions = [("", "v1")]
    for group in _call(api, "GET", "/apis")["groups"]:
        preferred = group["preferredVersion"]["groupVersion"]
        others = [v["groupVersion"] for v in group["versions"] if v["groupVersion"] != preferred]
        versions.extend((group["name"], gv) for gv in [preferred] + others)
    for group, group_version in versions:
        base = "/api/v1" if group == "" else "/apis/" + group_version
        try:
            listed = _call(api, "GET", base)["resources"]
        except ApiException as exc:
            if exc.status in (404, 503):  # a group going away (a CRD being deleted)
                continue
            raise
        for res in listed:
            verbs = set(res.get("verbs") or [])
            if "/" in res["name"] or not {"list", "delete"} <= verbs or (group, res["name"]) in CHURN:
                continue
            if (group, res["name"]) not in found:
                found[(group, res["name"])] = Resource(
                    group, group_version, res["name"], res["kind"], res["namespaced"]
                )
    return list(found.values())


def list_objects(api, resource, namespace=None):
    """{(namespace, name): object} of one resource, cluster-wide (or in ``namespace``)."""
    try:
        items = _call(api, "GET", resource.path(namespace)).get("items") or []
    except ApiException as exc:
        if exc.status in (404, 405, 503):
            return {}
        raise
    out = {}
    for obj in items:
        meta = obj.get("metadata") or {}
        meta.pop("managedFields", None)
        out[(meta.get("namespace") or "", meta["name"])] = obj
    return out


def live_inventory(api, resources):
    """``inventory.inventory`` of the objects not being deleted (nor in a Namespace being deleted): what a test
    deleted is gone for the next file, which never sees it again."""
    by_kind = {}
    for res in resources:
        by_kind.setdefault(res.kind, []).append(res)
    namespaces = next((r for r in resources if r.key == ("", "namespaces")), None)
    leaving = set(
        name for (_ns, name), obj in list_objects(api, namespaces).items() if obj["metadata"].get("deletionTimestamp")
    )
    out = {}
    for api_version, kind in list(KINDS) + [
        ("v1", "Node"),
        ("machineconfiguration.openshift.io/v1", "MachineConfigPool"),
    ]:
        group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
        res = next((r for r in by_kind.get(kind, []) if r.group == group), None)
        if res is None:
            continue
        entries = {}
        for (ns, name), obj in list_objects(api, res).items():
            if obj["metadata"].get("deletionTimestamp") or ns in leaving:
                continue
            if kind == "MachineConfig" and name.startswith("rendered-"):
                continue
            entries["{0}/{1}".format(ns, name)] = summary(kind, obj)
        out[kind] = entries
    return out


def _ours(annotations):
    return dict((k, v) for k, v in (annotations or {}).items() if "gpuops" in k)


def _taints(node):
    return [
        t for t in ((node.get("spec") or {}).get("taints") or []) if not t["key"].startswith(CONTROLLER_TAINT_PREFIXES)
    ]


def _mco_busy(node):
    """True while the simulated MCO daemon updates the node (it cordons and uncordons it itself)."""
    ann = (node.get("metadata") or {}).get("annotations") or {}
    current = ann.get("machineconfiguration.openshift.io/currentConfig")
    return ann.get("machineconfiguration.openshift.io/state") == "Working" or (
        current is not None and current != ann.get("machineconfiguration.openshift.io/desiredConfig")
    )


def _label_patch(seed, live):
    """Merge-patch metadata putting back the seed's labels and gpuops annotations; None when equal."""
    seed_meta, live_meta = seed.get("metadata") or {}, live.get("metadata") or {}
    patch = {}
    want, have = seed_meta.get("labels") or {}, live_meta.get("labels") or {}
    if want != have:
        labels = dict((k, None) for k in have if k not in want)
        labels.update(want)
        patch["labels"] = labels
    want, have = _ours(seed_meta.get("annotations")), _ours(live_meta.get("annotations"))
    if want != have:
        annotations = dict((k, None) for k in have if k not in want)
        annotations.update(want)
        patch["annotations"] = annotations
    return patch or None


def restore_patch(kind, seed, live):
    """The merge patch that puts back what the reset restores on a seed object of ``kind``; None when equal."""
    patch = {}
    meta = _label_patch(seed, live)
    if meta:
        patch["metadata"] = meta
    seed_spec, live_spec = seed.get("spec") or {}, live.get("spec") or {}
    spec = {}
    if kind == "Node" and not _mco_busy(live):
        want, have = _taints(seed), _taints(live)
        if want != have:
            # A merge patch replaces the list: keep the controllers' taints as they are now.
            spec["taints"] = want + [t for t in (live_spec.get("taints") or []) if t not in have]
        if bool(seed_spec.get("unschedulable")) != bool(live_spec.get("unschedulable")):
            spec["unschedulable"] = bool(seed_spec.get("unschedulable"))
    elif kind == "MachineSet":
        if seed_spec.get("replicas") != live_spec.get("replicas"):
            spec["replicas"] = seed_spec.get("replicas")
        want = ((seed_spec.get("template") or {}).get("spec") or {}).get("taints")
        have = ((live_spec.get("template") or {}).get("spec") or {}).get("taints")
        if (want or []) != (have or []):
            spec["template"] = {"spec": {"taints": want}}
    elif kind == "MachineConfigPool":
        for field in ("maxUnavailable", "paused"):
            if seed_spec.get(field) != live_spec.get(field):
                spec[field] = seed_spec.get(field)
    if spec:
        patch["spec"] = spec
    if kind in ("ConfigMap", "Secret"):
        for field in ("data", "binaryData", "stringData"):
            want, have = seed.get(field) or {}, live.get(field) or {}
            if want != have:
                patch[field] = dict((k, None) for k in have if k not in want)
                patch[field].update(want)
    return patch or None


class Seed(object):
    """What a cluster held when it was up; ``reset`` goes back to it."""

    def __init__(self, objects, inv):
        self.objects = objects  # {(group, resource): {(ns, name): object}}
        self.inventory = inv
        self.timings = {}  # of the last reset: seconds waiting for its deletions, then for the seed inventory

    @classmethod
    def take(cls, api):
        objects = {}
        resources = discover(api)
        for res in resources:
            objects[res.key] = list_objects(api, res)
        return cls(objects, live_inventory(api, resources))

    def namespaces(self):
        return set(name for _ns, name in self.objects.get(("", "namespaces"), {}))

    def extras(self, api, resources):
        """[(resource, namespace, name)] not in the seed and not owned, cluster-scoped and in seed namespaces;
        [(resource, namespace, name)] of those already being deleted."""
        seed_ns = self.namespaces()
        found, leaving = [], []
        for res in resources:
            if res.key in (("", "namespaces"), ("", "nodes"), ("apiextensions.k8s.io", "customresourcedefinitions")):
                continue
            seed = self.objects.get(res.key, {})
            for (ns, name), obj in list_objects(api, res).items():
                meta = obj["metadata"]
                if (ns, name) in seed or meta.get("ownerReferences"):
                    continue
                if harness_object(res.kind, ns, name):
                    continue
                if res.kind == "MachineConfig" and name.startswith("rendered-"):
                    continue  # the MCO's own (a pool may still run it while it rolls back)
                if res.namespaced and ns not in seed_ns:
                    continue  # goes with its namespace
                (leaving if meta.get("deletionTimestamp") else found).append((res, ns, name))
        return found, leaving

    def reset(self, api, timeout=240):
        """Delete what is new, restore what changed, wait for the seed inventory; -> lines saying what it did."""
        done = []
        deadline = time.time() + timeout
        resources = discover(api)
        by_key = dict((res.key, res) for res in resources)
        # Seed objects first (a seed MachineSet scaled up scales down and takes its extra Machines and Nodes).
        self._restore(api, resources, done)
        # Extras in the seed namespaces and cluster-scoped ones: their controllers (machine-api, OLM, NFD) clean up
        # after them; then the extra Namespaces (with everything in them) and CRDs (with their objects).
        # What a test deleted without waiting is waited for too: a Namespace being deleted still holds its
        # objects, and the next file's cluster-wide reads see them (a Subscription left Terminating in
        # nvidia-gpu-operator stopped the next file's preflight: "the GPU Operator already manages this cluster").
        extra, leaving = self.extras(api, resources)
        pending = self._delete(api, extra, done) + self._leaving(leaving, done)
        for key in (("", "namespaces"), ("apiextensions.k8s.io", "customresourcedefinitions")):
            res = by_key.get(key)
            if res is None:
                continue
            seed = self.objects.get(key, {})
            extra, leaving = [], []
            for (ns, name), obj in list_objects(api, res).items():
                if (ns, name) not in seed and not harness_object(res.kind, ns, name):
                    (leaving if obj["metadata"].get("deletionTimestamp") else extra).append((res, ns, name))
            pending += self._delete(api, extra, done) + self._leaving(leaving, done)
            if key == ("", "namespaces"):
                self._drop_pods(api, by_key[("", "pods")], [name for _r, _ns, name in extra + leaving])
        waited = time.time()
        self._wait_gone(api, pending, deadline)
        self.timings = {"deleted": time.time() - waited}
        waited = time.time()
        # Then until the inventory is the seed's: seed objects restored again (a controller may have moved them
        # meanwhile), extra Nodes deleted once no Machine holds them (machine-api deletes a Machine's node itself),
        # and time for the controllers (the MCO rolling the pools back to their seed rendered config).
        while True:
            self._restore(api, resources, done)
            self._delete(api, self._extra_nodes(api, by_key), done)
            last = differences(without_harness(self.inventory), without_harness(live_inventory(api, resources)))
            if not last:
                self.timings["settled"] = time.time() - waited
                return done
            if time.time() > deadline:
                raise ResetFailed(
                    "cluster not back to its seed state after {0}s:\n  {1}".format(timeout, "\n  ".join(last))
                )
            time.sleep(1)

    def _drop_pods(self, api, pods, namespaces):
        """Delete the pods of namespaces being deleted at once (grace 0): the namespace goes without waiting for
        each pod's grace period (nothing runs in a simulated pod)."""
        for ns in namespaces:
            for (_ns, name), _pod in list_objects(api, pods, ns).items():
                try:
                    _call(api, "DELETE", pods.path(ns, name), body={"gracePeriodSeconds": 0})
                except ApiException as exc:
                    if not _gone(exc):
                        raise

    def _extra_nodes(self, api, by_key):
        nodes = by_key[("", "nodes")]
        machines = by_key.get(("machine.openshift.io", "machines"))
        live_machines = set(list_objects(api, machines)) if machines else set()
        extra = []
        for (_ns, name), node in list_objects(api, nodes).items():
            if ("", name) in self.objects[nodes.key] or node["metadata"].get("deletionTimestamp"):
                continue
            machine = (node["metadata"].get("annotations") or {}).get("machine.openshift.io/machine", "")
            if "/" in machine and tuple(machine.split("/", 1)) in live_machines:
                continue  # goes with its Machine
            extra.append((nodes, "", name))
        return extra

    def _delete(self, api, targets, done):
        pending = []
        for res, ns, name in targets:
            try:
                _call(api, "DELETE", res.path(ns, name), body={"propagationPolicy": "Background"})
            except ApiException as exc:
                if _gone(exc):
                    continue
                raise
            done.append("deleted {0} {1}".format(res.kind, "{0}/{1}".format(ns, name) if ns else name))
            pending.append((res, ns, name))
        return pending

    @staticmethod
    def _leaving(targets, done):
        done.extend(WAITED + "{0} {1}".format(res.kind, "{0}/{1}".format(ns, name) if ns else name)
                    for res, ns, name in targets)  # fmt: skip
        return list(targets)

    def _wait_gone(self, api, pending, deadline):
        while pending:
            left = []
            for res, ns, name in pending:
                try:
                    _call(api, "GET", res.path(ns, name))
                    left.append((res, ns, name))
                except ApiException as exc:
                    if not _gone(exc):
                        raise
            pending = left
            if not pending:
                return
            if time.time() > deadline:
                names = ["{0} {1}/{2}".format(r.kind, ns, name) for r, ns, name in pending]
                raise ResetFailed("still there after the reset deleted them: {0}".format(", ".join(names)))
            time.sleep(0.5)

    def _restore(self, api, resources, done):
        for res in resources:
            if res.kind not in RESTORED_KINDS or res.key not in self.objects:
                continue
            live = list_objects(api, res)
            for key, seed in self.objects[res.key].items():
                if key not in live:
                    continue  # gone: the inventory comparison names it
                if res.kind == "MachineConfig" and key[1].startswith("rendered-"):
                    continue
                patch = restore_patch(res.kind, seed, live[key])
                if patch is None:
                    continue
                try:
                    _call(api, "PATCH", res.path(key[0], key[1]), copy.deepcopy(patch), "application/merge-patch+json")
                except ApiException as exc:
                    if _gone(exc) or exc.status == 409:
                        continue
                    raise
                done.append("restored {0} {1}: {2}".format(res.kind, "/".join(k for k in key if k), sorted(patch)))
