# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure: the only requests that change the cluster (server-side apply and delete).

Creates and updates are one server-side apply each, with the field manager
``gpuops.cluster`` owning the fields of the manifest (force: the collection is
the source of truth for what it manages). They are sent only for objects the
compare found different; every one of them is first sent as a server-side dry
run, so an object the server would refuse (422, admission) stops the run
before anything is written.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.manifests import PARAM
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    api_message,
    condition_true,
    get_item,
    status_of,
)


def apply(client, item, field_manager, dry_run=False):
    """Server-side apply of one item; returns the object as the server holds it (dict)."""
    kwargs = {"field_manager": field_manager, "force_conflicts": True, "serialize": False}
    if dry_run:
        kwargs["dry_run"] = "All"
    try:
        response = client.client.server_side_apply(
            item.resource, body=item.body, name=item.name, namespace=item.namespace, **kwargs
        )
    except Exception as exc:
        status = status_of(exc)
        if status in (400, 404, 409, 422):
            raise GpuopsError(
                "{0}: the API server refused it ({1}): {2}. Fix the manifest.".format(
                    item.describe(), status, api_message(exc, 600)
                ),
                param=PARAM,
            )
        raise
    return json.loads(to_text(response.data))


def delete(client, item):
    """Delete one object (foreground), ignoring one that is already gone."""
    try:
        client.delete(item.resource, name=item.name, namespace=item.namespace, body={"propagationPolicy": "Foreground"})
    except Exception as exc:
        if status_of(exc) != 404:
            raise


def wait_established(client, items, timeout, sleep, progress, clock=time.monotonic, pause=time.sleep):
    """Wait until the CRDs among ``items`` are Established (their kinds are then served).

    A CRD is Established within about a second of its creation, so the looks start 0.2 s apart and double up
    to ``sleep``: polling every ``sleep`` (5 s by default) made each run that creates CRDs wait 5 s for nothing.
    """
    crds = [i for i in items if i.kind == "CustomResourceDefinition"]
    if not crds:
        return
    deadline = clock() + timeout
    pending = list(crds)
    interval = min(0.2, sleep)
    while pending:
        pending = [i for i in pending if not condition_true(get_item(client, i.resource, i.name), "Established")]
        if not pending:
            return
        progress("CustomResourceDefinitions not Established yet: {0}".format(", ".join(i.name for i in pending)))
        if clock() >= deadline:
            raise GpuopsError(
                "CustomResourceDefinition {0} not Established after {1}s; read its status.conditions.".format(
                    ", ".join(i.name for i in pending), timeout
                ),
                param="wait_timeout",
            )
        pause(interval)
        interval = min(interval * 2, sleep)
