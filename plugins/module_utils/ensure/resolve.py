# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure: find each object's API (discovery), its namespace and its current state.

Everything here only reads. A kind the server does not serve is an error
before any write, unless a CustomResourceDefinition in the same list brings it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.manifests import (
    PARAM,
    crd_kinds,
    settle_namespace,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import get_item, parallel_map, pool_size

try:
    from kubernetes.dynamic.exceptions import ResourceNotFoundError
except ImportError:  # reported by common.new_module (kubernetes is required)
    ResourceNotFoundError = LookupError


def find_resource(client, api_version, kind):
    """The Resource serving ``kind`` in ``api_version``, or None."""
    try:
        return client.resource(kind, api_version)
    except ResourceNotFoundError:
        return None


def rediscover(client):
    """Forget cached discovery (after CRDs were created in this run)."""
    resources = client.client.resources
    if hasattr(resources, "invalidate_cache"):
        resources.invalidate_cache()
    elif hasattr(resources, "invalidate__cache"):
        resources.invalidate__cache()


def resolve_kinds(client, items):
    """Give every item its Resource and scope; kinds brought by a listed CRD stay pending (resource None)."""
    brought = crd_kinds(items)
    cache = {}
    for item in items:
        key = (item.api_version, item.kind)
        if key not in cache:
            cache[key] = find_resource(client, item.api_version, item.kind)
        item.resource = cache[key]
        if item.resource is not None:
            item.namespaced = bool(item.resource.namespaced)
        elif key in brought:
            item.namespaced = brought[key]
        else:
            group_version = item.api_version if "/" in item.api_version else "core/" + item.api_version
            raise GpuopsError(
                "{0}: the server has no kind {1} in {2}. Install the CustomResourceDefinition (or the operator) "
                "that provides it first, or fix apiVersion/kind.".format(item.describe(), item.kind, group_version),
                param=PARAM,
            )
        settle_namespace(item)


def read_existing(client, items):
    """GET every object (in parallel); objects of kinds not yet served do not exist."""
    known = [i for i in items if i.resource is not None]

    def get(item):
        return get_item(client, item.resource, item.name, item.namespace)

    for item, result, exc in parallel_map(get, known, pool_size(client)):
        if exc is not None:
            raise exc
        item.existing = result
    for item in items:
        if item.resource is None:
            item.existing = None


def check_namespaces(client, items):
    """Every namespace the objects live in exists or is created by this list."""
    listed = set(i.name for i in items if i.kind == "Namespace")
    wanted = sorted(set(i.namespace for i in items if i.namespaced and i.namespace) - listed)
    if not wanted:
        return
    ns_api = client.resource("Namespace", "v1")
    missing = []
    for name in wanted:
        if get_item(client, ns_api, name) is None:
            missing.append(name)
    if missing:
        users = [i.describe() for i in items if i.namespace in missing]
        raise GpuopsError(
            "namespace {0} does not exist (needed by {1}). Add a Namespace manifest to the list or create it "
            "first.".format(", ".join(missing), ", ".join(users[:5]) + (" ..." if len(users) > 5 else "")),
            param=PARAM,
        )
