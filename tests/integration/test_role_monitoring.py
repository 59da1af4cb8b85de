# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The monitoring role on the simulated clusters.

Kubernetes (``k8s_cluster``, two bare GPU nodes): NFD and the driver role once per module, a stand-in for the
container toolkit (the simulated exporter is Ready once the node's driver and toolkit are), then the role: bad inputs
(each named in preflight, zero writes), check mode (zero writes), converge (an exporter Ready on each GPU node, the
Service with an endpoint on each, no ServiceMonitor without the CRDs, the Grafana dashboard), a no-op re-run (zero
writes), an exporter not ready on one node (named with node, pod and cause), absent twice.
OpenShift (the shared ``cluster``, no GPU node: GPU MachineSets scale from zero): check mode on the fresh cluster
(zero writes), converge with the OpenShift objects (namespace label under the role's own field manager, the driver's
labels untouched; prometheus-k8s RBAC; ServiceMonitor; PrometheusRule = the rules file promtool tests; console
dashboard), no-op re-run, absent twice (the label goes, the namespace stays).

These runs set monitoring_validate_metrics false: the metrics check end to end (every GPU node's exporter
read through the API server) is proven by test_site.py and test_sim_exporter_metrics.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys
import uuid

import pytest
import yaml
from conftest import changed_tasks, failed_message, run_bad_inputs, run_playbook, run_role, task_results

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis  # noqa: E402
from simopenshift.control import wait_for  # noqa: E402
from simopenshift.kube import (
    CONFIGMAPS,
    DAEMONSETS,
    NAMESPACES,
    NODES,
    PODS,
    Resource,
    labels_of,
)  # noqa: E402
from simopenshift.testing import (
    Client,
    ensure_runtime_class,
    remove_runtime_class,
    start_nfd_worker,
    stop_nfd_worker,
)  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NS = "nvidia-gpu-driver"
NFD = "feature.node.kubernetes.io/"
GPU_LABELS = [NFD + g + ".present" for g in ("pci-10de", "pci-0302_10de", "pci-0300_10de")]
KERNEL_LABEL = NFD + "kernel-version.full"
SERVICES = Resource("", "v1", "services", "Service")
SERVICEACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
ENDPOINTSLICES = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLEBINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
EXPORTER = "nvidia-dcgm-exporter"
MONITORING_LABEL = "openshift.io/cluster-monitoring"
# The role waits 25 min by default (a real driver build); the simulated stack is ready in seconds.
NO_METRICS = {"monitoring_validate_metrics": False, "monitoring_wait_timeout": 120}
APPLY = "gpuops.cluster.monitoring : Ensure the DCGM exporter, its Service, scrape configuration, alerts and dashboards"
FIND_PODS = (
    "gpuops.cluster.monitoring : Find the GPU nodes without a ready exporter, and those without a ready endpoint of "
    "its Service"
)
OWNED = (DAEMONSETS, SERVICES, CONFIGMAPS, SERVICEACCOUNTS, ROLES, ROLEBINDINGS)


def monitoring(cluster, role_vars=None, check=False):
    return run_role(cluster, "monitoring", dict(NO_METRICS, **(role_vars or {})), check=check)


def writes(cluster, mark):
    return cluster.audit.writes_since(mark, include_dry_run=True)


def debug_msg(out, task):
    for name, res in task_results(out):
        if name.endswith(" : " + task):
            msg = res.get("msg")
            return " ".join(msg) if isinstance(msg, list) else str(msg)
    return ""


def result_fact(out):
    found = None
    for _name, res in task_results(out):
        found = (res.get("ansible_facts") or {}).get("monitoring_result", found)
    return found


def owned(kube, resource, namespace=None):
    return sorted(
        o["metadata"]["name"]
        for o in kube.list(resource, namespace)[0]
        if labels_of(o).get("gpuops.cluster/owner") == "monitoring"
    )


def everything_owned(kube, crds=False):
    kinds = OWNED + ((apis.SERVICEMONITORS, apis.PROMETHEUSRULES) if crds else ())
    return {r.kind: owned(kube, r) for r in kinds if owned(kube, r)}


def toolkit_standin(selector=None):
    """Plays the container toolkit role's DaemonSet for the simulator (its agent readies the exporter after it)."""
    spec = {
        "tolerations": [{"operator": "Exists"}],
        "containers": [
            {
                "name": "toolkit",
                "image": "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0",
                # As the container_toolkit role renders it for containerd in CDI mode (the simulator's node runtime
                # gets an nvidia handler from these).
                "env": [
                    {"name": "CDI_ENABLED", "value": "true"},
                    {"name": "NVIDIA_CONTAINER_RUNTIME_MODE", "value": "cdi"},
                    {"name": "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND", "value": "management.nvidia.com/gpu"},
                    {"name": "NVIDIA_RUNTIME_SET_AS_DEFAULT", "value": "false"},
                    {"name": "RUNTIME_DROP_IN_CONFIG", "value": "/runtime/config-dir.d/99-nvidia.toml"},
                    {"name": "RUNTIME_DROP_IN_CONFIG_HOST_PATH", "value": "/etc/containerd/conf.d/99-nvidia.toml"},
                ],
            }
        ],
    }
    if selector:
        spec["nodeSelector"] = selector
    labels = {"app": "test-toolkit-standin", "app.kubernetes.io/component": "nvidia-container-toolkit"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "test-toolkit-standin", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "test-toolkit-standin"}},
            "template": {
                "metadata": {"labels": labels},
                "spec": dict(
                    spec,
                    affinity={
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": label, "operator": "In", "values": ["true"]}]}
                                    for label in GPU_LABELS
                                ]
                            }
                        }
                    },
                ),
            },
        },
    }


@pytest.fixture(scope="module")
def k8s_stack(k8s_cluster):
    """The two GPU nodes labelled by NFD, their drivers ready (driver role) and a toolkit stand-in; all undone after."""
    kube = Client(k8s_cluster.api)
    nfd_ns = "nfd-mon-" + uuid.uuid4().hex[:4]
    start_nfd_worker(kube, nfd_ns)
    made_runtime_class = False
    try:

        def labelled():
            nodes = [
                n["metadata"]["name"]
                for n in kube.list(NODES)[0]
                if any(labels_of(n).get(label) == "true" for label in GPU_LABELS)
            ]
            return sorted(nodes) if len(nodes) >= 2 else None

        gpu_nodes = wait_for(labelled, 60, what="NFD labels on the two GPU nodes")
        out = run_role(k8s_cluster, "driver", {"driver_wait_timeout": 60})
        assert failed_message(out) is None
        kube.create(DAEMONSETS, toolkit_standin())
        # The toolkit role's RuntimeClass, which the exporter pods name.
        made_runtime_class = ensure_runtime_class(kube)
        yield kube, gpu_nodes
    finally:
        monitoring(k8s_cluster, {"monitoring_state": "absent"})
        remove_runtime_class(kube, made_runtime_class)
        if kube.get(DAEMONSETS, "test-toolkit-standin", NS) is not None:
            kube.delete(DAEMONSETS, "test-toolkit-standin", NS)
        run_role(k8s_cluster, "driver", {"driver_state": "absent"})
        stop_nfd_worker(kube, nfd_ns)
        for node in kube.list(NODES)[0]:
            drop = {k: None for k in labels_of(node) if k.startswith(NFD)}
            notes = {
                k: None for k in node["metadata"].get("annotations") or {} if k.startswith("nfd.node.kubernetes.io/")
            }
            if drop or notes:
                kube.patch(NODES, node["metadata"]["name"], {"metadata": {"labels": drop, "annotations": notes}})


ARGSPEC = "Validation of arguments failed:\nvalue of "
PREFLIGHT_STOPS = (
    "Stop on a bad monitoring input",
    "Check the counters hold every metric the alerts read",
    "Check the namespace exists (the driver role makes it)",
)


def bad_inputs(tmp_path):
    no_ecc = tmp_path / "no-ecc.csv"
    with open(os.path.join(ROOT, "roles", "monitoring", "files", "dcgm-counters.csv")) as f:
        no_ecc.write_text("".join(line for line in f if not line.startswith("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")))
    return [
        ({"monitoring_namespace": "GPU_Stack"}, "monitoring: monitoring_namespace (gpuops_gpu_namespace) must be"),
        (
            {"monitoring_namespace": "no-such-namespace"},
            "monitoring: monitoring_namespace no-such-namespace does not exist",
        ),
        ({"monitoring_image_tag": "4.6.0 latest"}, "monitoring: monitoring_image_tag must be"),
        ({"monitoring_port": 70000}, "monitoring: monitoring_port must be"),
        ({"monitoring_counters_csv": str(tmp_path / "missing.csv")}, "monitoring: monitoring_counters_csv must be"),
        ({"monitoring_counters_csv": str(no_ecc)}, "monitoring: monitoring_counters_csv %s does not collect" % no_ecc),
        ({"monitoring_state": "gone"}, ARGSPEC + "monitoring_state must be one of"),
    ]


def test_bad_inputs_fail_in_preflight_with_zero_writes(k8s_cluster, k8s_stack, tmp_path):
    """Each bad input alone, in one playbook (one rescued block per input): named in preflight, nothing written."""
    cases = bad_inputs(tmp_path)
    mark = k8s_cluster.audit.mark()
    out, failures = run_bad_inputs(k8s_cluster, [("monitoring", dict(NO_METRICS, **bad)) for bad, _msg in cases])
    assert len(failures) == len(cases), failures
    for (name, msg), (bad, expected) in zip(failures, cases):
        assert msg.startswith(expected), (bad, msg)
        assert name.endswith(PREFLIGHT_STOPS) or msg.startswith(ARGSPEC), (bad, name)
    ran = [name for name, _res in task_results(out)]
    assert not [n for n in ran if "Ensure the DCGM exporter" in n], ran
    assert writes(k8s_cluster, mark) == []


def test_kubernetes_check_converge_noop_named_failure_absent(k8s_cluster, k8s_stack):
    kube, gpu_nodes = k8s_stack
    assert everything_owned(kube) == {}

    # Check mode: says what it would do, writes nothing (not even dry runs).
    mark = k8s_cluster.audit.mark()
    out = monitoring(k8s_cluster, check=True)
    assert failed_message(out) is None
    assert writes(k8s_cluster, mark) == []

    out = monitoring(k8s_cluster)
    assert failed_message(out) is None
    assert "ServiceMonitor and PrometheusRule skipped - the monitoring.coreos.com CRDs are not installed" in debug_msg(
        out, "Check every GPU node is monitored"
    )
    ds = kube.get(DAEMONSETS, EXPORTER, NS)
    pod_labels = ds["spec"]["template"]["metadata"]["labels"]
    assert pod_labels["app"] == EXPORTER and pod_labels["app.kubernetes.io/component"] == "dcgm-exporter"
    container = ds["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless"
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["DCGM_EXPORTER_LISTEN"] == ":9400" and env["DCGM_EXPORTER_KUBERNETES"] == "true"
    assert env["DCGM_EXPORTER_COLLECTORS"] == "/etc/dcgm-exporter/dcp-metrics-included.csv"
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": 9400, "scheme": "HTTP"}
    counters = kube.get(CONFIGMAPS, "nvidia-dcgm-exporter-counters", NS)["data"]["dcp-metrics-included.csv"]
    assert "\nDCGM_FI_DEV_ECC_DBE_VOL_TOTAL, counter" in counters
    # Ready on every GPU node, one Service endpoint on each.
    pods = [p for p in kube.list(PODS, NS)[0] if labels_of(p).get("app") == EXPORTER]
    assert sorted(p["spec"]["nodeName"] for p in pods) == gpu_nodes
    assert all(c["ready"] for p in pods for c in p["status"]["containerStatuses"])
    svc = kube.get(SERVICES, EXPORTER, NS)
    assert svc["spec"]["ports"][0]["name"] == "gpu-metrics" and svc["spec"]["ports"][0]["port"] == 9400
    slices = [s for s in kube.list(ENDPOINTSLICES, NS)[0] if labels_of(s).get("kubernetes.io/service-name") == EXPORTER]
    assert sorted(e["nodeName"] for s in slices for e in s.get("endpoints") or []) == gpu_nodes
    dashboard = kube.get(CONFIGMAPS, "nvidia-dcgm-exporter-dashboard", NS)
    assert labels_of(dashboard)["grafana_dashboard"] == "1"
    assert json.loads(dashboard["data"]["dcgm-exporter-dashboard.json"])["uid"] == "Oxed_c6Wz"
    result = result_fact(out)
    assert result["ready"] is True and result["monitored_nodes"] == gpu_nodes
    assert result["service_monitor"] is False and result["metrics_validated"] is False
    assert everything_owned(kube) == {
        "DaemonSet": [EXPORTER],
        "Service": [EXPORTER],
        "ConfigMap": ["nvidia-dcgm-exporter-counters", "nvidia-dcgm-exporter-dashboard"],
        "ServiceAccount": [EXPORTER],
    }

    # No-op re-run: nothing changed, nothing written.
    mark = k8s_cluster.audit.mark()
    out = monitoring(k8s_cluster)
    assert failed_message(out) is None
    assert changed_tasks(out) == []
    assert writes(k8s_cluster, mark) == []
    # The apply step reported the exporter pods (k8s_ensure's operand_pods): the verify step did not read them again.
    ran = [name for name, res in task_results(out) if not res.get("skipped")]
    assert FIND_PODS not in ran and result_fact(out)["monitored_nodes"] == gpu_nodes, ran

    # The phases by tag, without apply: the verify step reads the exporter pods itself.
    whole_role = {
        "name": "role under test",
        "ansible.builtin.include_role": {"name": "gpuops.cluster.monitoring"},
        "vars": NO_METRICS,
        "tags": ["always"],
    }
    out = run_playbook(k8s_cluster, [whole_role], extra_args=["--tags", "monitoring_preflight,monitoring_verify"])
    assert failed_message(out) is None
    ran = [name for name, res in task_results(out) if not res.get("skipped")]
    assert FIND_PODS in ran and APPLY not in ran, ran
    assert result_fact(out)["monitored_nodes"] == gpu_nodes

    # The toolkit leaves the second GPU node: its exporter is not ready, named with node, pod and cause.
    kube.delete(DAEMONSETS, "test-toolkit-standin", NS)
    kube.create(DAEMONSETS, toolkit_standin({"kubernetes.io/hostname": gpu_nodes[0]}))
    try:

        def not_ready():
            pods = [
                p
                for p in kube.list(PODS, NS)[0]
                if labels_of(p).get("app") == EXPORTER and p["spec"].get("nodeName") == gpu_nodes[1]
            ]
            return (
                pods if pods and not all(c["ready"] for p in pods for c in p["status"]["containerStatuses"]) else None
            )

        (pod,) = wait_for(not_ready, 60, what="the exporter on %s not ready" % gpu_nodes[1])
        out = monitoring(k8s_cluster, {"monitoring_wait_timeout": 10})
        msg = failed_message(out)
        assert msg.startswith("monitoring: node %s: pod %s not ready: " % (gpu_nodes[1], pod["metadata"]["name"])), msg
        assert gpu_nodes[0] not in msg
    finally:
        kube.delete(DAEMONSETS, "test-toolkit-standin", NS)
        kube.create(DAEMONSETS, toolkit_standin())

    # Absent removes everything; a second absent changes and writes nothing.
    out = monitoring(k8s_cluster, {"monitoring_state": "absent"})
    assert failed_message(out) is None
    assert everything_owned(kube) == {}
    assert kube.get(NAMESPACES, NS) is not None  # the driver role's
    mark = k8s_cluster.audit.mark()
    out = monitoring(k8s_cluster, {"monitoring_state": "absent"})
    assert failed_message(out) is None and changed_tasks(out) == []
    assert writes(k8s_cluster, mark) == []


def test_openshift_objects_check_converge_noop_absent(cluster, tmp_path):
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile")
    kube = Client(cluster.api)
    assert kube.get(NAMESPACES, NS) is None, "another test left the GPU namespace behind"

    # Check mode on the fresh cluster: the namespace does not exist yet; nothing is written, the plan is said.
    mark = cluster.audit.mark()
    out = monitoring(cluster, check=True)
    assert failed_message(out) is None
    said = debug_msg(out, "Say what the state would do (check mode)")
    assert "would run the DCGM exporter" in said and "ServiceMonitor, PrometheusRule" in said
    assert "the platform-monitoring label and prometheus-k8s RBAC" in said and "the console dashboard" in said
    assert writes(cluster, mark) == []

    # The driver role's namespace (made here with the driver's field manager and labels).
    kube.create(
        NAMESPACES,
        {
            "metadata": {
                "name": NS,
                "labels": {
                    "app.kubernetes.io/component": "nvidia-driver",
                    "pod-security.kubernetes.io/enforce": "privileged",
                    "app.kubernetes.io/managed-by": "gpuops.cluster",
                    "gpuops.cluster/owner": "driver",
                },
            }
        },
    )
    try:
        out = monitoring(cluster)
        assert failed_message(out) is None
        ns = kube.get(NAMESPACES, NS)
        labels = labels_of(ns)
        assert labels[MONITORING_LABEL] == "true"
        assert (
            labels["gpuops.cluster/owner"] == "driver" and labels["pod-security.kubernetes.io/enforce"] == "privileged"
        )
        mine = [m for m in ns["metadata"]["managedFields"] if m["manager"] == "gpuops.cluster-monitoring"]
        assert len(mine) == 1 and set(mine[0]["fieldsV1"]["f:metadata"]["f:labels"]) == {
            "f:" + MONITORING_LABEL,
            "f:app.kubernetes.io/managed-by",
        }
        role = kube.get(ROLES, "prometheus-k8s", NS)
        assert role["rules"][0]["resources"] == ["services", "endpoints", "pods"]
        binding = kube.get(ROLEBINDINGS, "prometheus-k8s", NS)
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "prometheus-k8s", "namespace": "openshift-monitoring"}
        ]
        assert kube.get(ROLES, "nvidia-dcgm-exporter-privileged-scc", NS) is not None
        monitor = kube.get(apis.SERVICEMONITORS, EXPORTER, NS)
        endpoint = monitor["spec"]["endpoints"][0]
        assert endpoint["port"] == "gpu-metrics" and endpoint["path"] == "/metrics"
        assert monitor["spec"]["selector"] == {"matchLabels": {"app": EXPORTER}}
        assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NS]}
        # The PrometheusRule holds exactly the rules promtool tests (one template).
        rule = kube.get(apis.PROMETHEUSRULES, "gpuops-gpu-alerts", NS)
        rules_file = str(tmp_path / "rules.yml")
        out_rules = run_role(cluster, "monitoring", {"monitoring_rules_file": rules_file}, tasks_from="rules_file.yml")
        assert failed_message(out_rules) is None
        with open(rules_file) as f:
            assert rule["spec"] == yaml.safe_load(f)
        alerts = [r["alert"] for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r]
        assert len(alerts) == 7
        console = kube.get(CONFIGMAPS, "nvidia-dcgm-exporter-dashboard", "openshift-config-managed")
        assert labels_of(console)["console.openshift.io/dashboard"] == "true"
        assert labels_of(console)["console.openshift.io/odc-dashboard"] == "true"
        result = result_fact(out)
        assert result["openshift_platform_monitoring"] is True and result["prometheus_rule"] is True

        mark = cluster.audit.mark()
        out = monitoring(cluster)
        assert failed_message(out) is None and changed_tasks(out) == []
        assert writes(cluster, mark) == []

        out = monitoring(cluster, {"monitoring_state": "absent"})
        assert failed_message(out) is None
        assert everything_owned(kube, crds=True) == {}
        labels = labels_of(kube.get(NAMESPACES, NS))
        assert MONITORING_LABEL not in labels and labels["gpuops.cluster/owner"] == "driver"
        mark = cluster.audit.mark()
        out = monitoring(cluster, {"monitoring_state": "absent"})
        assert failed_message(out) is None and changed_tasks(out) == []
        assert writes(cluster, mark) == []
    finally:
        if everything_owned(kube, crds=True):
            monitoring(cluster, {"monitoring_state": "absent"})
        kube.delete(NAMESPACES, NS)
        wait_for(lambda: kube.get(NAMESPACES, NS) is None, 60, what="namespace %s gone" % NS)
