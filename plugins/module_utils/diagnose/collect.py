# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_diagnose: read what a support case needs, find each GPU node's likely cause, write one archive.

Reads only: the GPU nodes; the DaemonSets the collection made (its owner label) and NFD's, with their pods;
each pod's log and, after a restart, its previous log (in a thread pool); the Warning and Normal events of
those namespaces and of the GPU nodes; Builds and BuildConfigs (OpenShift); the ledger and the validation
record. Secrets are never read; every text that goes into the archive or the result is redacted (analyse.redact).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import json
import os
import tarfile
import time

from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.common import MANAGED_BY, MANAGED_BY_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose import analyse
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.normalize import OWNER_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import list_gpu_nodes
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    api_message,
    core_api,
    get_item,
    label_selector,
    list_items,
    parallel_map,
    pool_size,
    read_log,
    status_of,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.reports import check_report_path
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import check_dns_label

OPERAND_STATES = ("driver", "container_toolkit", "device_plugin", "gpu_feature_discovery", "monitoring")
REPORT_FILES = ("timeline.json", "gpu-validation.json", "gpu-validation.md")


def check_params(params):
    """The checked options (a dict)."""
    cfg = dict(params)
    for position, namespace in enumerate(cfg.get("namespaces") or []):
        check_dns_label(namespace, "namespaces", "namespace name (item {0})".format(position))
    check_dns_label(cfg.get("ledger_namespace"), "ledger_namespace", "namespace name")
    if cfg.get("log_lines") is not None and not 1 <= cfg["log_lines"] <= 100000:
        raise GpuopsError("must be between 1 and 100000 lines, got {0}.".format(cfg["log_lines"]), param="log_lines")
    cfg["archive"] = check_report_path(cfg.get("archive"), "archive")
    cfg["reports_dir"] = os.path.abspath(os.path.expanduser(cfg["reports_dir"])) if cfg.get("reports_dir") else None
    return cfg


def _daemonsets(client, svc, cfg):
    """[(component, DaemonSet)]: the collection's operands (by owner label) and every DaemonSet of ``namespaces``."""
    resource = svc.find_resource("DaemonSet", "apps/v1", fail=True)
    found = {}
    for ds in list_items(client, resource, label_selector=label_selector({MANAGED_BY_LABEL: MANAGED_BY})):
        owner = ((ds.get("metadata") or {}).get("labels") or {}).get(OWNER_LABEL)
        if owner in OPERAND_STATES:
            found[ds["metadata"]["uid"]] = (owner, ds)
    for namespace in cfg.get("namespaces") or []:
        for ds in list_items(client, resource, namespace=namespace):
            owner = ((ds.get("metadata") or {}).get("labels") or {}).get(OWNER_LABEL)
            found.setdefault(ds["metadata"]["uid"], (analyse.component_of(ds, owner), ds))
    return sorted(found.values(), key=lambda cd: (cd[1]["metadata"]["namespace"], cd[1]["metadata"]["name"]))


def _pods(client, svc, daemonsets):
    """[(component, pod)] of the DaemonSets (one list per namespace and selector)."""
    resource = svc.find_resource("Pod", "v1", fail=True)
    out, seen = [], set()
    for component, ds in daemonsets:
        match = ((ds.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        namespace, name = ds["metadata"]["namespace"], ds["metadata"]["name"]
        for pod in list_items(client, resource, namespace=namespace, label_selector=label_selector(match)):
            owners = [
                r.get("name") for r in pod["metadata"].get("ownerReferences") or [] if r.get("kind") == "DaemonSet"
            ]
            uid = pod["metadata"].get("uid")
            if name in owners and uid not in seen:
                seen.add(uid)
                out.append((component, pod))
    return out


def _log_requests(pods, node_names, every_pod):
    """(namespace, pod, container, previous) to read: every started container of the pods on GPU nodes (``every_pod``)
    or of those not ready, and the previous container of each that restarted."""
    wanted = []
    for dummy, pod in pods:
        if (pod.get("spec") or {}).get("nodeName") not in node_names:
            continue
        ready = analyse.pod_state(pod)[0]
        if ready and not every_pod:
            continue
        statuses = dict(
            (s.get("name"), s)
            for s in ((pod.get("status") or {}).get("initContainerStatuses") or [])
            + ((pod.get("status") or {}).get("containerStatuses") or [])
        )
        spec = pod.get("spec") or {}
        for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
            cname = container.get("name")
            status = statuses.get(cname) or {}
            key = (pod["metadata"]["namespace"], pod["metadata"]["name"], cname)
            state = status.get("state") or {}
            # A container that ever started has a log (a crash-looping one: its last run's); one still waiting
            # to start has none (the kubelet answers 400).
            if "running" in state or "terminated" in state or status.get("restartCount"):
                wanted.append(key + (False,))
            if status.get("restartCount"):
                wanted.append(key + (True,))
    return wanted


def _read_logs(client, requests, lines):
    """{request: text} (a log that cannot be read: the reason, in brackets), read in the client's pool."""
    core = core_api(client)

    def read(req):
        namespace, pod, container, previous = req
        return read_log(core, pod, namespace, tail=lines, previous=previous, container=container)

    out = {}
    for req, text, exc in parallel_map(read, requests, pool_size(client)):
        out[req] = to_text(text) if exc is None else "{0}: {1}]".format(analyse.LOG_NOT_AVAILABLE, api_message(exc))
    return out


def _events(client, svc, namespaces, node_names):
    resource = svc.find_resource("Event", "v1", fail=True)
    events = []
    for namespace in sorted(namespaces):
        events.extend(list_items(client, resource, namespace=namespace))
    for event in list_items(client, resource, field_selector="involvedObject.kind=Node"):
        if (event.get("involvedObject") or {}).get("name") in node_names:
            events.append(event)
    return events


def _optional_list(client, svc, kind, api_version, namespaces):
    resource = svc.find_resource(kind, api_version, fail=False)
    if resource is None:
        return []
    out = []
    for namespace in sorted(namespaces):
        out.extend(list_items(client, resource, namespace=namespace))
    return out


def _config_map(client, svc, name, namespace):
    try:
        return get_item(client, svc.find_resource("ConfigMap", "v1", fail=True), name, namespace)
    except Exception as exc:  # a reader without that permission still gets the rest
        if status_of(exc) == 403:
            return {"forbidden": api_message(exc)}
        raise


def _local_reports(reports_dir):
    """{file name: text} of the run's reports in ``reports_dir`` (the timeline, the validation report)."""
    out = {}
    for name in REPORT_FILES:
        path = os.path.join(reports_dir or "", name)
        if reports_dir and os.path.isfile(path):
            with open(path, "rb") as handle:
                out[name] = to_text(handle.read(), errors="replace")
    return out


def _json(obj):
    return json.dumps(analyse.redact_object(obj), indent=2, sort_keys=True) + "\n"


def archive_members(collected, rows, table_lines):
    """{path in the archive: text}, every text redacted."""
    members = {
        "summary.txt": "\n".join(table_lines) + "\n",
        "summary.md": analyse.markdown(rows),
        "summary.json": json.dumps(rows, indent=2, sort_keys=True) + "\n",
        "cluster/daemonsets.json": _json([ds for dummy, ds in collected["daemonsets"]]),
        "cluster/events.json": _json(collected["events"]),
        "cluster/builds.json": _json(collected["builds"]),
        "cluster/buildconfigs.json": _json(collected["buildconfigs"]),
        "cluster/ledger.json": _json(collected["ledger"]),
        "cluster/validation-record.json": _json(collected["record"]),
    }
    for node in collected["nodes"]:
        members["nodes/{0}.json".format(node["metadata"]["name"])] = _json(node)
    for dummy, pod in collected["pods"]:
        meta = pod["metadata"]
        members["pods/{0}/{1}.json".format(meta["namespace"], meta["name"])] = _json(pod)
    for (namespace, pod, container, previous), text in sorted(collected["logs"].items()):
        members["logs/{0}/{1}/{2}{3}.log".format(namespace, pod, container, ".previous" if previous else "")] = (
            analyse.redact(text)
        )
    for name, text in sorted(collected["reports"].items()):
        members["reports/" + name] = analyse.redact(text)
    return members


def write_archive(path, members, now=None):
    """A gzip'd tar of ``members`` under one top folder, written through a temporary file and a rename."""
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, exist_ok=True)
    top = os.path.basename(path).split(".tar")[0]
    stamp = now or time.time()
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    # Made 0600 from its first byte: what the pods logged is the cluster's business.
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as raw:
        with tarfile.open(fileobj=raw, mode="w:gz") as tar:
            for name in sorted(members):
                data = to_bytes(members[name])
                info = tarfile.TarInfo("{0}/{1}".format(top, name))
                info.size, info.mtime, info.mode = len(data), int(stamp), 0o600
                tar.addfile(info, io.BytesIO(data))
    os.rename(tmp, path)
    return path


def run(module, client, svc):
    cfg = check_params(module.params)
    started = time.monotonic()
    nodes = list_gpu_nodes(client, svc.find_resource("Node", "v1", fail=True), gpu_label=cfg.get("gpu_label") or None)
    names = set(n["metadata"]["name"] for n in nodes)
    daemonsets = _daemonsets(client, svc, cfg)
    pods = _pods(client, svc, daemonsets)
    logs = _read_logs(client, _log_requests(pods, names, cfg["logs"] == "all"), cfg["log_lines"])
    namespaces = set(ds["metadata"]["namespace"] for dummy, ds in daemonsets)
    events = _events(client, svc, namespaces, names)
    collected = {
        "nodes": nodes,
        "daemonsets": daemonsets,
        "pods": pods,
        "logs": logs,
        "events": events,
        "builds": _optional_list(client, svc, "Build", "build.openshift.io/v1", namespaces),
        "buildconfigs": _optional_list(client, svc, "BuildConfig", "build.openshift.io/v1", namespaces),
        "ledger": _config_map(client, svc, cfg["ledger_name"], cfg["ledger_namespace"]),
        "record": (
            _config_map(client, svc, cfg["record_name"], cfg["record_namespace"])
            if cfg.get("record_namespace")
            else None
        ),
        "reports": _local_reports(cfg.get("reports_dir")),
    }
    report = None
    if "gpu-validation.json" in collected["reports"]:
        try:
            report = json.loads(collected["reports"]["gpu-validation.json"])
        except ValueError:
            report = None
    rows = analyse.diagnose(nodes, daemonsets, pods, logs, events, report)
    lines = analyse.table(rows)
    seconds = round(time.monotonic() - started, 2)
    archive = None
    if cfg.get("archive") and not module.check_mode:
        archive = write_archive(cfg["archive"], archive_members(collected, rows, lines))
    return {
        "changed": False,
        "nodes": rows,
        "table": lines,
        "archive": archive,
        "problems": sum(1 for r in rows if r["status"] == "problem"),
        "unexplained": [r["node"] for r in rows if r["symptoms"] and not r["findings"]],
        "collected": {
            "nodes": len(nodes),
            "daemonsets": len(daemonsets),
            "pods": len(pods),
            "logs": len(logs),
            "events": len(events),
            "reports": sorted(collected["reports"]),
        },
        "seconds": seconds,
    }
