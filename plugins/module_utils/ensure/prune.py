# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure: objects of this owner that left the list (a kernel no node runs any more, ...).

Only objects carrying both the collection's managed-by label and the owner
label are candidates: nothing a person or another owner created is touched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    MANAGED_BY,
    MANAGED_BY_LABEL,
    GpuopsError,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.manifests import Item
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.normalize import OWNER_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.resolve import find_resource
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import label_selector, list_items


def _kinds(items, prune_kinds):
    kinds = {}
    for item in items:
        if item.resource is not None:
            kinds[(item.api_version, item.kind)] = item.resource
    for entry in prune_kinds or []:
        key = (entry.get("api_version") or "v1", entry["kind"])
        if key not in kinds:
            kinds[key] = None
    return kinds


def stale_items(client, items, owner, prune_kinds=None):
    """[Item] on the server, managed by us for ``owner``, of the listed kinds, not in ``items``."""
    wanted = set((i.kind, i.namespace, i.name) for i in items)
    selector = label_selector({MANAGED_BY_LABEL: MANAGED_BY, OWNER_LABEL: owner})
    stale = []
    for (api_version, kind), resource in sorted(_kinds(items, prune_kinds).items()):
        resource = resource or find_resource(client, api_version, kind)
        if resource is None:
            raise GpuopsError(
                "the server has no kind {0} in {1}; fix or remove that entry.".format(kind, api_version),
                param="prune_kinds",
            )
        # One cluster-wide list per kind: the owner label, not the namespace, says what is ours.
        for obj in list_items(client, resource, label_selector=selector):
            meta = obj["metadata"]
            if (kind, meta.get("namespace"), meta["name"]) in wanted:
                continue
            item = Item(
                -1,
                {
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": {"name": meta["name"], "namespace": meta.get("namespace")},
                },
            )
            item.resource, item.namespaced, item.existing = resource, bool(resource.namespaced), obj
            item.action = "deleted"
            stale.append(item)
    return stale
