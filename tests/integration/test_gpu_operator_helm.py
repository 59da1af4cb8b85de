# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""site.yml with gpuops_stack: operator on plain Kubernetes: NVIDIA's GPU Operator Helm chart (v26.7.0, served by
a local chart repository as a mirror of NGC serves it) through kubernetes.core.helm and the real helm v3 program,
on bare GPU nodes of two Ubuntu releases: the driver through NVIDIADriver objects (one DaemonSet per release), zero
writes on a re-run with the ledger off and in check mode, an upgrade (time-slicing), the refusal of one driver image
for two releases, the manual stack refused beside the operator, teardown."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
from http.server import HTTPServer, SimpleHTTPRequestHandler

import pytest
from conftest import assert_rerun_writes_nothing, run_site, state_lines, task_results
from rbac_checks import Installer

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "localcluster"))
sys.path.insert(0, os.path.join(TESTS, "oracles"))

from oracle_bins import oracle  # noqa: E402
from simopenshift import apis  # noqa: E402
from simopenshift.kube import DAEMONSETS, NAMESPACES, NODES  # noqa: E402
from simopenshift.testing import Client, wait_for  # noqa: E402

pytestmark = pytest.mark.integration
# Mitogen's engine (conftest.engine_of): the whole stack runs here many times over, and ansible-core's default engine
# runs it in test_site.py and test_site_kubernetes.py. README, Test suite.
ANSIBLE_ENGINE = "mitogen"

NS = "nvidia-gpu-operator"
CHART = os.path.join(TESTS, "localcluster", "charts", "gpu-operator")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def chart_repo(tmp_path_factory):
    """(helm path, repository URL): the vendored chart packaged and indexed by helm itself, served over HTTP."""
    helm = oracle("helm", build=True)
    work = tmp_path_factory.mktemp("chart-repo")
    source, repo = str(work / "gpu-operator"), work / "repo"
    shutil.copytree(CHART, source)  # links resolved: the ClusterPolicy CRD is the simulator's copy
    repo.mkdir()
    subprocess.run([helm, "package", source, "-d", str(repo)], check=True, stdout=subprocess.PIPE)
    server = HTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(repo)))
    url = "http://127.0.0.1:%d" % server.server_address[1]
    subprocess.run([helm, "repo", "index", str(repo), "--url", url], check=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield helm, url
    finally:
        server.shutdown()
        server.server_close()


def first_failure(out):
    return [r.get("msg") for dummy, r in task_results(out) if r.get("failed")][0]


def test_operator_chart_on_kubernetes_with_two_os_releases(k8s_cluster, chart_repo, tmp_path):
    helm, url = chart_repo
    kube = Client(k8s_cluster.api)
    operator = {
        "gpuops_stack": "operator",
        "gpu_operator_helm_repo_url": url,
        "gpu_operator_helm_binary": helm,
        "gpu_operator_wait_sleep": 2,
    }
    extra = dict(operator, gpuops_reports_dir=str(tmp_path))
    try:
        # Check mode on the bare cluster: nothing written, and it says what it would install.
        mark = k8s_cluster.audit.mark()
        out = run_site(k8s_cluster, extra_vars=extra, extra_args=["--check"])
        assert k8s_cluster.audit.writes_since(mark) == []

        out = run_site(k8s_cluster, extra_vars=extra)
        notes = [r.get("msg", "") for name, r in task_results(out) if "Stop when the ClusterPolicy" in name]
        assert any("the driver run by NVIDIADriver objects (ubuntu22.04, ubuntu24.04)" in n for n in notes), notes
        namespace = kube.get(NAMESPACES, NS)
        assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
        policy = kube.get(apis.CLUSTERPOLICIES, "cluster-policy")
        assert policy["status"]["state"] == "ready"
        assert policy["spec"]["driver"]["useNvidiaDriverCRD"] is True
        driver = kube.get(apis.NVIDIADRIVERS, "default")
        assert driver["status"]["state"] == "ready"
        daemonsets = {d["metadata"]["name"]: d for d in kube.list(DAEMONSETS, NS)[0]}
        drivers = sorted(n for n in daemonsets if n.startswith("nvidia-gpu-driver-"))
        assert [n.rsplit("-", 1)[0] for n in drivers] == [
            "nvidia-gpu-driver-ubuntu22.04",
            "nvidia-gpu-driver-ubuntu24.04",
        ], drivers
        images = sorted(
            d["spec"]["template"]["spec"]["containers"][0]["image"] for n, d in daemonsets.items() if n in drivers
        )
        assert [i.rsplit("-", 1)[1] for i in images] == ["ubuntu22.04", "ubuntu24.04"], images
        # The toolkit reaches containerd's drop-in by its host path (the operator's transform, the chart's default).
        toolkit = daemonsets["nvidia-container-toolkit-daemonset"]["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: e.get("value") for e in toolkit["env"]}
        assert env["RUNTIME_DROP_IN_CONFIG_HOST_PATH"] == "/etc/containerd/conf.d/99-nvidia.toml"
        # The operator's exporter collects the collection's counters; the monitoring state checks it on every node.
        exporter = daemonsets["nvidia-dcgm-exporter"]["spec"]["template"]["spec"]["containers"][0]
        assert {"name": "DCGM_EXPORTER_COLLECTORS", "value": "/etc/dcgm-exporter/dcgm-metrics.csv"} in exporter["env"]
        said = [r.get("msg", "") for name, r in task_results(out) if "Check every GPU node is monitored" in name]
        assert any("the GPU Operator's DCGM exporter serves gpu-0, gpu-1" in str(m) for m in said), said
        # NFD is the collection's (the nfd state), not the chart's.
        assert not [n for n in daemonsets if "node-feature-discovery" in n]
        nodes = [n for n in kube.list(NODES)[0] if (n["metadata"].get("labels") or {}).get("nvidia.com/gpu.present")]
        assert len(nodes) == 2
        assert all(int(n["status"]["allocatable"].get("nvidia.com/gpu", 0)) == 1 for n in nodes)
        with open(os.path.join(str(tmp_path), "gpu-validation.json")) as handle:
            report = json.load(handle)
        assert report["failures"] == [] and len(report["nodes"]) == 2

        # The timeline times the operator's pods too: every GPU node has its driver, toolkit and plugin phases.
        with open(os.path.join(str(tmp_path), "timeline.json")) as handle:
            table = json.load(handle)["table"]
        head = next(line for line in table if line.startswith("node "))
        for name in ("gpu-0", "gpu-1"):
            row = dict(zip(head.split(), next(line for line in table if line.startswith(name + " ")).split()))
            assert all(row[column] != "-" for column in ("driver", "toolkit", "plugin", "validate")), (name, row)

        # diagnose.yml reads the operator's operands (its namespace) and the validation record there: both nodes ok.
        mark = k8s_cluster.audit.mark()
        archive = os.path.join(str(tmp_path), "case.tar.gz")
        out = run_site(
            k8s_cluster,
            playbook="diagnose.yml",
            extra_vars={
                "gpuops_stack": "operator",
                "gpuops_reports_dir": str(tmp_path),
                "gpuops_diagnose_archive": archive,
            },
        )
        lines = state_lines(out)
        assert "GPU nodes: 2 (0 with a problem, 0 with a warning, 2 ok)" in lines, lines
        read = next(line for line in lines if line.startswith("read "))
        assert int(read.split()[1]) >= 12, read  # driver, toolkit, plugin, GFD, exporter, validator on each node
        with tarfile.open(archive) as tar:
            members = dict((m.name.split("/", 1)[1], tar.extractfile(m).read().decode()) for m in tar.getmembers())
        record = members["cluster/validation-record.json"]
        assert "gpu-0" in record and "gpu-1" in record, record[:500]
        assert k8s_cluster.audit.writes_since(mark) == []

        # A re-run with the ledger off runs every state, helm's idempotency check included: nothing written.
        assert_rerun_writes_nothing(k8s_cluster, extra_vars=dict(extra, gpuops_ledger="false"))

        # One driver image for two Ubuntu releases is refused before any write, naming the nodes and the fix.
        mark = k8s_cluster.audit.mark()
        only = dict(operator, gpuops_from_state="gpu_operator", gpuops_until_state="gpu_operator")
        out = run_site(k8s_cluster, extra_vars=dict(only, gpu_operator_driver_owner="clusterpolicy"), expect_rc=2)
        msg = first_failure(out)
        assert "the GPU nodes run 2 OS releases (ubuntu22.04: gpu-0; ubuntu24.04: gpu-1)" in msg, msg
        assert "gpu_operator_driver_owner: nvidiadriver" in msg
        assert k8s_cluster.audit.writes_since(mark) == []

        # Wrong Kubernetes-mode inputs, each refused before any write, naming the variable and what to do.
        for key, value, needle in (
            ("gpu_operator_helm_repo_url", "helm.ngc.nvidia.com/nvidia", "gpu_operator_helm_repo_url must be a URL"),
            ("gpu_operator_helm_values", {"nfd": {"enabled": True}}, "sets nfd: the collection's nfd state runs"),
            ("gpu_operator_cluster_policy_overrides", {"driver": {"enabled": False}}, "put chart values"),
            ("gpu_operator_driver_owner", "both", "gpu_operator_driver_owner"),
        ):
            mark = k8s_cluster.audit.mark()
            out = run_site(k8s_cluster, extra_vars=only, extra_args=["-e", json.dumps({key: value})], expect_rc=2)
            assert needle in first_failure(out), (key, first_failure(out))
            assert k8s_cluster.audit.writes_since(mark) == [], key

        # Time-slicing: the ConfigMap, a helm upgrade with devicePlugin.config, and the GPUs advertised twice.
        run_site(k8s_cluster, extra_vars=dict(extra, gpu_operator_time_slicing_replicas=2, gpuops_ledger="false"))
        policy = kube.get(apis.CLUSTERPOLICIES, "cluster-policy")
        assert policy["spec"]["devicePlugin"]["config"] == {"name": "time-slicing-config", "default": "any"}
        wait_for(
            lambda: all(
                int(n["status"]["allocatable"].get("nvidia.com/gpu", 0)) == 2
                for n in kube.list(NODES)[0]
                if (n["metadata"].get("labels") or {}).get("nvidia.com/gpu.present")
            ),
            120,
            what="GPUs advertised twice (time-slicing)",
        )

        # The manual stack refuses to run beside the Helm-installed operator, before any write.
        mark = k8s_cluster.audit.mark()
        out = run_site(k8s_cluster, extra_vars={"gpuops_reports_dir": str(tmp_path)}, expect_rc=2)
        assert "the NVIDIA GPU Operator already manages this cluster's GPUs (ClusterPolicy cluster-policy)" in (
            first_failure(out)
        )
        assert k8s_cluster.audit.writes_since(mark) == []
    finally:
        out = run_site(k8s_cluster, playbook="teardown.yml", extra_vars=operator)
    said = [r.get("msg", "") for name, r in task_results(out) if "Say what absent did" in name]
    assert any("uninstalled Helm release gpu-operator" in s for s in said), said
    assert kube.get(apis.CLUSTERPOLICIES, "cluster-policy") is None
    wait_for(lambda: kube.get(NAMESPACES, NS) is None, 120, what="namespace %s gone" % NS)
    released = subprocess.run(
        [helm, "list", "-A", "-q", "--kubeconfig", k8s_cluster.kubeconfig],
        stdout=subprocess.PIPE,
        check=True,
    )
    assert released.stdout.decode().split() == []


def test_the_least_privilege_installer_is_refused_before_any_write_the_chart_needs_a_cluster_admin(
    k8s_cluster, chart_repo, tmp_path
):
    """The chart creates the operator's ClusterRoles, which RBAC lets only an identity holding all they grant create:
    preflight says so before any write, instead of a 403 at the chart after the namespace and ConfigMaps."""
    helm, url = chart_repo
    extra = {
        "gpuops_stack": "operator",
        "gpu_operator_helm_repo_url": url,
        "gpu_operator_helm_binary": helm,
        "gpuops_reports_dir": str(tmp_path),
    }
    installer = Installer(k8s_cluster, run_site)
    try:
        mark = k8s_cluster.audit.mark()
        out = run_site(k8s_cluster, extra_vars=extra, env=installer.env, expect_rc=2)
        msg = first_failure(out)
        assert "lacks 1 permission(s) this run needs, checked before any write" in msg, msg
        assert (
            "every verb on every resource (cluster-admin) (needed by gpu_operator: the GPU Operator's Helm chart" in msg
        )
        assert "playbooks/rbac.yml does not grant cluster-admin: run this as a cluster admin." in msg
        assert k8s_cluster.audit.writes_since(mark) == []
    finally:
        installer.remove()
