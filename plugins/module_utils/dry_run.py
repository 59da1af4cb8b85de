# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_dry_run: what the API server's admission would make of a create, without persisting anything.

Each definition is sent as a create with ``dryRun=All``: defaulting, mutating
admission (LimitRanger), validating admission (ResourceQuota, Pod Security) all
run, nothing is stored. A refusal is a result, not a failure.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.args import module_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import api_message, status_of


def argument_spec():
    """k8s_dry_run's options (here, not in the module: k8s_ensure's ``k8s_dry_run`` takes them too)."""
    return module_spec(
        definitions=dict(type="list", elements="dict", required=True),
        namespace=dict(type="str"),
    )


def check_params(params):
    """Every definition names its apiVersion and kind (checked before any request)."""
    for definition in params["definitions"]:
        if not isinstance(definition, dict) or not definition.get("kind") or not definition.get("apiVersion"):
            raise GpuopsError("every definition needs apiVersion and kind.", param="definitions")


def one(client, svc, definition, namespace=None):
    meta = definition.get("metadata") or {}
    ns = meta.get("namespace") or namespace
    resource = svc.find_resource(definition["kind"], definition["apiVersion"], fail=True)
    entry = {
        "kind": definition["kind"],
        "namespace": ns if resource.namespaced else None,
        "name": meta.get("name") or meta.get("generateName"),
    }
    if resource.namespaced and not ns:
        raise GpuopsError("{kind} {name} needs metadata.namespace.".format(**entry), param="definitions")
    try:
        response = client.client.create(
            resource, body=definition, namespace=ns if resource.namespaced else None, dry_run="All", serialize=False
        )
        entry.update(allowed=True, status=201, reason="", message="", object=json.loads(to_text(response.data)))
    except Exception as exc:
        code = status_of(exc)
        if code is None:
            raise
        reason = ""
        try:
            reason = json.loads(to_text(exc.body)).get("reason") or ""
        except (AttributeError, TypeError, ValueError):
            pass
        entry.update(allowed=False, status=code, reason=reason, message=api_message(exc, limit=1000), object=None)
    return entry


def run(module, client, svc):
    check_params(module.params)
    namespace = module.params.get("namespace")
    results = [one(client, svc, d, namespace) for d in module.params["definitions"]]
    return {"changed": False, "results": results}
