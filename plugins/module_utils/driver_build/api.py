# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_container_build: the requests it sends (apply, start a build, prune) and the build pod it reads.

Writes happen only here; the planning in plan.py decided beforehand that each
one is needed. The build pod's log and events are read when a build failed or
did not finish, to say why.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.common import MANAGED_BY, GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.render import BC_NAME_KEY, render_build
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.state import next_build_number
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    dig,
    label_selector,
    list_items,
    name_of,
    status_of,
)

# OpenShift names the build pod <build>-build and records it in this annotation.
BUILD_POD_KEY = "openshift.io/build.pod-name"
LOG_LINES = 20


def resource(svc, kind, api_version):
    """The API resource, or None when the cluster does not serve it."""
    return svc.find_resource(kind, api_version, fail=False)


def apply(svc, api, definition):
    """Server-side apply (field manager gpuops.cluster) of an object we own."""
    svc.module.params["server_side_apply"] = {"field_manager": MANAGED_BY, "force_conflicts": True}
    obj, dummy = svc.apply(api, definition)
    return obj


def start_build(client, build_api, bc, builds, attempts=5):
    """Create <bc>-<n>; on a name conflict (someone else started one) take the next number."""
    number = next_build_number(bc, builds)
    last = None
    for dummy in range(attempts):
        body = render_build(bc, number, dig(bc, ("metadata", "uid")))
        try:
            return client.create(build_api, body, namespace=body["metadata"]["namespace"]).to_dict()
        except Exception as exc:
            if status_of(exc) != 409:
                raise
            last = exc
            number += 1
    raise GpuopsError(
        "could not start a build for {0}: build names up to {1} already exist ({2})".format(name_of(bc), number, last)
    )


def build_pod_name(build):
    return dig(build, ("metadata", "annotations", BUILD_POD_KEY)) or "{0}-build".format(name_of(build))


def build_log_tail(client, build):
    """Tail of the build pod's log (used only when status.logSnippet is empty)."""
    from kubernetes.client import CoreV1Api

    try:
        return CoreV1Api(client.client.client).read_namespaced_pod_log(
            build_pod_name(build), build["metadata"]["namespace"], tail_lines=LOG_LINES
        )
    except Exception:  # the log is a courtesy; status carries the verdict
        return None


def build_pod_warnings(client, svc, build):
    """The Warning events of a build's pod, oldest first: [{reason, message, count}].

    Read when a build did not finish: a pod stuck Pending says why only in its
    events (FailedMount of a missing secret, FailedScheduling, ...).
    """
    events_api = resource(svc, "Event", "v1")
    if events_api is None:
        return []
    pod = build_pod_name(build)
    try:
        events = list_items(
            client,
            events_api,
            namespace=build["metadata"]["namespace"],
            field_selector="involvedObject.name={0}".format(pod),
        )
    except Exception:  # events explain; they never decide
        return []
    warnings = [
        e
        for e in events
        if e.get("type") == "Warning"
        and dig(e, ("involvedObject", "name")) == pod
        and dig(e, ("involvedObject", "kind"), "Pod") == "Pod"
    ]
    warnings.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    return [{"reason": e.get("reason"), "message": e.get("message"), "count": e.get("count") or 1} for e in warnings]


def _delete(client, api, **kwargs):
    try:
        client.delete(api, **kwargs)
    except Exception as exc:
        if status_of(exc) != 404:
            raise


def prune(cfg, client, svc, apis, stale, progress):
    """Delete the BuildConfigs (their Builds go with them) and image tags of stale kernels."""
    pruned = []
    ist_api = resource(svc, "ImageStreamTag", "image.openshift.io/v1")
    namespace = cfg.namespace
    for item in stale:
        entry = {"kernel": item["kernel"], "buildconfig": item["buildconfig"], "tags": list(item["tags"])}
        entry["tags_not_removed"] = [] if ist_api or cfg.check_mode else list(item["tags"])
        if not cfg.check_mode:
            body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
            _delete(client, apis["bc"], name=item["buildconfig"], namespace=namespace, body=body)
            selector = label_selector({BC_NAME_KEY: item["buildconfig"]})
            if list_items(client, apis["build"], namespace, label_selector=selector):
                client.delete(apis["build"], namespace=namespace, label_selector=selector)
            for tag in item["tags"] if ist_api else []:
                _delete(client, ist_api, name="{0}:{1}".format(cfg.name, tag), namespace=namespace)
            progress("pruned {0} (kernel {1})".format(item["buildconfig"], item["kernel"]))
        pruned.append(entry)
    return pruned
