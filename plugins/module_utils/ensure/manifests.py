# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure: the list of manifests as given, checked and normalised (pure functions).

Every problem a manifest can have on its own is found here, before the module
talks to the server, and reported against ``definitions`` with the position
and identity of the object, so the user can find it in a long template.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.normalize import prepare
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import check_labels, dns_subdomain_problem

# Created before everything else: other objects live in them or are of their kinds.
FOUNDATION_KINDS = ("Namespace", "CustomResourceDefinition")
PARAM = "definitions"


class Item(object):
    """One desired object and what the run learns about it."""

    def __init__(self, index, body):
        self.index = index
        self.body = body
        self.resource = None  # kubernetes Resource once discovered
        self.namespaced = None  # True / False once known
        self.existing = None  # the object on the server (dict) or None
        self.action = None  # created | updated | unchanged | deleted | absent
        self.default_namespace = None

    @property
    def api_version(self):
        return self.body["apiVersion"]

    @property
    def kind(self):
        return self.body["kind"]

    @property
    def name(self):
        return self.body["metadata"]["name"]

    @property
    def namespace(self):
        return self.body["metadata"].get("namespace")

    @property
    def key(self):
        return (self.api_version.split("/")[0] if "/" in self.api_version else "", self.kind, self.namespace, self.name)

    def describe(self):
        where = "{0}/{1}".format(self.namespace, self.name) if self.namespace else self.name
        return "{0} {1}".format(self.kind, where)

    def summary(self):
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "action": self.action,
        }


def flatten(definitions):
    """Manifests with every ``*List`` kind expanded into its items (kubectl does the same)."""
    flat = []
    for position, body in enumerate(definitions or []):
        if isinstance(body, dict) and str(body.get("kind", "")).endswith("List") and "items" in body:
            flat.extend((position, item) for item in body.get("items") or [])
        else:
            flat.append((position, body))
    return flat


def _bad(position, what, body=None):
    ident = ""
    if isinstance(body, dict):
        meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        ident = " ({0} {1})".format(body.get("kind", "?"), meta.get("name", "?"))
    return GpuopsError("item {0}{1}: {2}".format(position, ident, what), param=PARAM)


def _check_shape(position, body):
    if not isinstance(body, dict):
        raise _bad(
            position,
            "is a {0}, not a manifest (a dictionary with apiVersion, kind and metadata)".format(type(body).__name__),
        )
    for field in ("apiVersion", "kind"):
        if not isinstance(body.get(field), str) or not body.get(field):
            raise _bad(
                position, "has no {0}; every manifest needs apiVersion, kind and metadata.name".format(field), body
            )
    meta = body.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise _bad(
            position,
            "has no metadata.name (generateName is not supported: the object could not be "
            "found again on the next run)",
            body,
        )
    problem = dns_subdomain_problem(meta["name"])
    if problem and body["kind"] not in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        raise _bad(position, "metadata.name {0!r} is not a valid object name: {1}".format(meta["name"], problem), body)
    if meta.get("namespace") is not None:
        problem = dns_subdomain_problem(meta["namespace"])
        if problem:
            raise _bad(position, "metadata.namespace {0!r} is invalid: {1}".format(meta["namespace"], problem), body)


def _prune_nulls(obj):
    """Drop None values: in a manifest they mean "not set", never "delete"."""
    if isinstance(obj, dict):
        return dict((k, _prune_nulls(v)) for k, v in obj.items() if v is not None)
    if isinstance(obj, list):
        return [_prune_nulls(v) for v in obj]
    return obj


def normalise(position, body, owner=None):
    """The manifest as it will be sent (normalize.prepare), its labels checked first."""
    try:
        check_labels(body["metadata"].get("labels") or {}, PARAM, allow_remove=False)
    except GpuopsError as exc:
        raise _bad(position, str(exc).split(": ", 1)[-1], body)
    return prepare(_prune_nulls(copy.deepcopy(body)), owner)


def build_items(definitions, default_namespace=None, owner=None):
    """[Item] for the definitions, with duplicates refused."""
    items, seen = [], {}
    for index, (position, body) in enumerate(flatten(definitions)):
        _check_shape(position, body)
        body = normalise(position, body, owner)
        item = Item(index, body)
        item.default_namespace = default_namespace
        if item.key in seen:
            raise _bad(
                position, "{0} is also item {1}: give each object once".format(item.describe(), seen[item.key]), body
            )
        seen[item.key] = position
        items.append(item)
    return items


def settle_namespace(item):
    """Set the namespace of a namespaced object from the default; drop it from cluster-scoped ones."""
    meta = item.body["metadata"]
    if item.namespaced:
        if not meta.get("namespace"):
            if not item.default_namespace:
                raise GpuopsError(
                    "{0} is namespaced but has no metadata.namespace; set it in the manifest or give the "
                    "module's namespace option.".format(item.describe()),
                    param="namespace",
                )
            meta["namespace"] = item.default_namespace
    else:
        meta.pop("namespace", None)


def foundation_first(items):
    """Namespaces and CRDs first (in their given order), then the rest in the given order."""
    first = [i for i in items if i.kind in FOUNDATION_KINDS]
    return first + [i for i in items if i.kind not in FOUNDATION_KINDS]


def crd_kinds(items):
    """{(group/version, kind): namespaced} for the CRDs in the list."""
    kinds = {}
    for item in items:
        if item.kind != "CustomResourceDefinition":
            continue
        spec = item.body.get("spec") or {}
        kind = (spec.get("names") or {}).get("kind")
        for version in spec.get("versions") or []:
            kinds[("{0}/{1}".format(spec.get("group"), version.get("name")), kind)] = spec.get("scope") != "Cluster"
    return kinds
