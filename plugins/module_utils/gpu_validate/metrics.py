# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_validate metrics check: read the DCGM exporter through the API server proxy, judge per node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    FAIL,
    PASS,
    TEMP_METRIC,
    UNREACHABLE,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.pods import one_line, pods_on
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import api_message, dig, parallel_map

METRIC_LINE_RE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s+(\S+)")
LABEL_RE = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metric(text, name=TEMP_METRIC):
    """[(labels dict, value)] of one metric from Prometheus text exposition."""
    out = []
    for line in to_text(text or "").splitlines():
        if not line.startswith(name):
            continue
        match = METRIC_LINE_RE.match(line)
        if not match or match.group(1) != name:
            continue
        try:
            value = float(match.group(4))
        except ValueError:
            continue
        out.append((dict(LABEL_RE.findall(match.group(3) or "")), value))
    return out


HOST_LABELS = ("Hostname", "hostname")  # dcgm-exporter renamed Hostname to hostname; --no-hostname drops both
NO_HOST = (
    "the exporter's series carry no Hostname/hostname label (dcgm-exporter run with --no-hostname?), so none can be "
    "credited to a node: use metrics_via: pod, or drop --no-hostname"
)


def series_host(labels):
    for key in HOST_LABELS:
        if labels.get(key):
            return labels[key]
    return None


def names_node(host, node_name):
    """The series' host label names the node (the exporter may give the short host name of an FQDN node)."""
    return host == node_name or host.split(".")[0] == node_name.split(".")[0]


def gpu_key(labels):
    """One key per physical GPU: MIG instances (GPU_I_ID) and time-sliced replicas share their GPU's."""
    return labels.get("UUID") or labels.get("pci_bus_id") or labels.get("gpu") or labels.get("device")


def check_metrics(text, expected=None, node_name=None):
    """DCGM_FI_DEV_GPU_TEMP present for every physical GPU (distinct UUID).

    With ``node_name`` (text read through the Service, from any node's exporter)
    only the series whose host label names the node count.
    """
    series = parse_metric(text)
    if node_name is not None:
        if series and not any(series_host(labels) for labels, _value in series):
            return {"status": FAIL, "message": NO_HOST, "gpus": 0}
        series = [s for s in series if series_host(s[0]) and names_node(series_host(s[0]), node_name)]
    gpus = {}
    for labels, value in series:
        gpus[gpu_key(labels) or str(len(gpus))] = value
    want = expected or 1
    if len(gpus) >= want:
        return {
            "status": PASS,
            "message": "{0} for {1} GPU(s) (max {2:g} C)".format(TEMP_METRIC, len(gpus), max(gpus.values())),
            "gpus": len(gpus),
        }
    return {
        "status": FAIL,
        "message": "{0} for {1} GPU(s), expected {2}".format(TEMP_METRIC, len(gpus), expected or "at least 1"),
        "gpus": len(gpus),
    }


def unreachable(what, error):
    return {"status": UNREACHABLE, "message": "metrics unreachable via {0}: {1}".format(what, one_line(error, 240))}


def proxy_get(client, path):
    """GET through the API server proxy (services/.../proxy or pods/.../proxy)."""
    api = client.client.client
    response = api.call_api(
        path,
        "GET",
        auth_settings=["BearerToken"],
        response_type="str",
        _preload_content=False,
        _request_timeout=10,
        header_params={"Accept": "text/plain"},
    )
    data = response[0].data if isinstance(response, tuple) else response.data
    return to_text(data)


SERVICE_READS_PER_NODE = 8  # the proxy picks one ready endpoint at random per request


def _read_every_exporter(client, url, node_names):
    """Concatenated answers of repeated service proxy reads, until every node's host label was seen.

    Each request reaches ONE exporter (a random ready endpoint), so one read only ever covers one node;
    at most ``SERVICE_READS_PER_NODE`` reads per node are made (a node whose exporter is not an endpoint
    is never seen and is reported from the last answers).
    """
    texts, missing = [], set(node_names)
    for _attempt in range(max(1, SERVICE_READS_PER_NODE * len(node_names))):
        text = proxy_get(client, url)
        texts.append(text)
        hosts = [series_host(labels) for labels, _value in parse_metric(text)]
        if not any(hosts):
            break  # no host labels (--no-hostname): more reads cannot tell nodes apart
        missing = set(n for n in missing if not any(h and names_node(h, n) for h in hosts))
        if not missing:
            break
    return "\n".join(texts)


def _via_service(cfg, client, nodes, expected):
    ns, port, path = cfg["metrics_namespace"], cfg["metrics_port"], cfg["metrics_path"]
    service = cfg["metrics_service"] or "nvidia-dcgm-exporter"
    url = "/api/v1/namespaces/{0}/services/{1}:{2}/proxy{3}".format(ns, service, port, path)
    where = "service proxy " + url
    try:
        text = _read_every_exporter(client, url, [n["metadata"]["name"] for n in nodes])
    except Exception as exc:
        return dict((n["metadata"]["name"], unreachable(where, api_message(exc))) for n in nodes)
    results = {}
    for node in nodes:
        name = node["metadata"]["name"]
        res = check_metrics(text, expected[name], node_name=name)
        if res["gpus"] == 0 and res["message"] != NO_HOST:
            res = unreachable(
                where,
                "the answer holds no series with Hostname/hostname={0} (a service proxy request reaches one exporter; "
                "use metrics_via: pod to read every node)".format(name),
            )
        results[name] = res
    return results


def _via_pods(cfg, client, nodes, exporter_pods, expected):
    ns, port, path = cfg["metrics_namespace"], cfg["metrics_port"], cfg["metrics_path"]
    results, jobs = {}, []
    for node in nodes:
        name = node["metadata"]["name"]
        pods = [p for p in pods_on(exporter_pods, name) if not dig(p, ("metadata", "deletionTimestamp"))]
        if not pods:
            results[name] = {
                "status": FAIL,
                "message": "no DCGM exporter pod on the node ({0} in {1})".format(cfg["metrics_selector"], ns),
            }
            continue
        jobs.append(
            (name, "/api/v1/namespaces/{0}/pods/{1}:{2}/proxy{3}".format(ns, pods[0]["metadata"]["name"], port, path))
        )

    for (name, url), text, exc in parallel_map(lambda job: proxy_get(client, job[1]), jobs, cfg["parallel"]):
        if exc is not None:
            results[name] = unreachable("pod proxy " + url, api_message(exc))
        else:
            results[name] = check_metrics(text, expected[name])
    return results


def metrics_for(cfg, client, nodes, exporter_pods, expected):
    """{node: result} for the metrics check (read through the API server proxy)."""
    if cfg["metrics_via"] == "service":
        return _via_service(cfg, client, nodes, expected)
    return _via_pods(cfg, client, nodes, exporter_pods, expected)
