# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The entitlement role on the simulated OpenShift cluster (forced with entitlement_enabled: true).

The tests run in file order and share the cluster state: skipped / bad inputs
/ check mode and a Degraded pool on the clean cluster, then converge, a failing
test pod, the no-op re-run at -vvv (zero writes, the PEM never printed), an
entitled driver build, and absent twice. Certificates are generated here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import subprocess
import sys
import tempfile

import pytest
from conftest import (
    BUILD,
    ROOT,
    _collection_env,
    changed_tasks,
    failed_message,
    run_playbook,
    run_role,
    short_name,
    task_results,
)
from gpu_nodes import RHCOS_416, SET_LABEL, GpuNodes, kernel_of
from kubernetes import client
from kubernetes.dynamic import DynamicClient
from secrets_checks import make_pem, secret_forms
from waiting import wait_until

pytestmark = pytest.mark.integration

MCO = "machineconfiguration.openshift.io/v1"
OURS = ("50-rhsm-conf", "50-entitlement-pem", "50-entitlement-key-pem")
BAD_MC = "99-gpuops-test-bad-ignition"
PEM_PATH = "/etc/pki/entitlement/entitlement.pem"
TESTED = "gpuops.cluster/entitlement-tested"


# ---------------------------------------------------------------- PEM files


@pytest.fixture(scope="module")
def pems(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("entitlement"))
    good = make_pem()
    path = os.path.join(tmp, "entitlement.pem")
    with open(path, "w") as handle:
        handle.write(good)
    lines = good.splitlines()
    return {"dir": tmp, "good": good, "file": path, "malformed": "\n".join(lines[:3] + ["!!!!"] + lines[4:]) + "\n"}


# ------------------------------------------------------------ cluster helpers


@pytest.fixture(scope="module")
def dyn(cluster):
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile")
    return DynamicClient(cluster.api)


def api(dyn, kind, version=MCO):
    return dyn.resources.get(api_version=version, kind=kind)


def pool(dyn, name="worker"):
    return api(dyn, "MachineConfigPool").get(name=name).to_dict()


def our_mcs(dyn):
    names = [m.metadata.name for m in api(dyn, "MachineConfig").get().items]
    return sorted(n for n in names if n in OURS)


def pool_settled(dyn, rendered=None):
    p = pool(dyn)
    st = p.get("status") or {}
    conds = dict((c["type"], c["status"]) for c in st.get("conditions") or [])
    want = (p.get("spec") or {}).get("configuration", {}).get("name")
    ok = conds.get("Updated") == "True" and (st.get("configuration") or {}).get("name") == want
    ok = ok and st.get("updatedMachineCount") == st.get("machineCount")
    return ok and (rendered is None or want == rendered)


@pytest.fixture(scope="module")
def original(dyn):
    """The worker pool as the tests found it; restored (maxUnavailable, rendered config) at the end."""
    before = pool(dyn)
    yield before
    mcs = api(dyn, "MachineConfig")
    for name in OURS + (BAD_MC,):
        try:
            mcs.delete(name=name)
        except Exception:  # already gone
            pass
    pools = api(dyn, "MachineConfigPool")
    pools.patch(
        name="worker",
        body={"spec": {"maxUnavailable": before["spec"].get("maxUnavailable")}},
        content_type="application/merge-patch+json",
    )
    wait_until(lambda: pool_settled(dyn, before["spec"]["configuration"]["name"]), 180, 1, "worker pool restored")


def tasks_of(out):
    """(task name without the role prefix, result) for every task run."""
    return [(short_name(name), res) for name, res in task_results(out)]


def changed(out):
    return [short_name(name) for name in changed_tasks(out)]


# What preflight records (site.yml runs it first); the first test lets the role detect it itself.
PLATFORM = {"openshift": True, "openshift_version": "4.16.0"}
TEST_NS = "gpuops-entitlement-test"


def namespaces(dyn):
    return [n.metadata.name for n in api(dyn, "Namespace", "v1").get().items]


def base_vars(**kw):
    out = {
        "entitlement_enabled": True,
        "entitlement_max_unavailable": 3,
        "entitlement_test_timeout": 60,
        "preflight_platform": PLATFORM,
    }
    out.update(kw)
    return out


def test_skipped_with_one_line_when_not_needed(cluster, dyn):
    """Default auto on OpenShift 4.16 (Driver Toolkit), on plain Kubernetes, and when disabled: one line, no write."""
    # The Kubernetes case first: it gives preflight_platform as a variable; the next ones detect the cluster.
    cases = [
        ({"entitlement_enabled": True, "preflight_platform": {"openshift": False}}, "plain Kubernetes has no Machine"),
        ({}, "driver build mode auto on OpenShift 4.16.0 uses the Driver Toolkit"),
        ({"entitlement_enabled": False, "gpuops_driver_build_mode": "entitlement"}, "entitlement_enabled is false"),
        ({"gpuops_driver_build_mode": "driver-toolkit"}, "driver build mode driver-toolkit needs no entitlement"),
    ]
    tasks = [
        {"name": "case %d" % i, "ansible.builtin.include_role": {"name": "gpuops.cluster.entitlement"}, "vars": v}
        for i, (v, dummy) in enumerate(cases)
    ]
    mark = cluster.audit.mark()
    out = run_playbook(cluster, tasks)
    assert failed_message(out) is None, failed_message(out)
    lines = [
        r.get("msg")
        for name, r in tasks_of(out)
        if name == "Show the plan, or why entitlement is skipped" and "msg" in r
    ]
    assert len(lines) == len(cases), lines
    for line, (dummy, reason) in zip(lines, cases):
        assert line.startswith("entitlement: skipped - ") and reason in line, line
    ran = [name for name, r in tasks_of(out) if not r.get("skipped")]
    assert not any(n.startswith(("Write the", "Read the MachineConfigPools")) for n in ran), ran
    assert cluster.audit.writes_since(mark) == []


BAD_INPUTS = [
    ("malformed", {"entitlement_pem": "MALFORMED"}, "entitlement: entitlement_pem: malformed PEM (CERTIFICATE"),
    ("expired", {"entitlement_pem": "EXPIRED"}, "entitlement: entitlement_pem: the certificate gpuops-test-entitlement expired"),
    ("no key", {"entitlement_pem": "CERT_ONLY"}, "entitlement: entitlement_pem: no private key in it"),
    ("no cert", {"entitlement_pem": "KEY_ONLY"}, "entitlement: entitlement_pem: no certificate in it"),
    ("not a pem", {"entitlement_pem": "just text"}, "entitlement: entitlement_pem: no PEM certificate or private key"),
    ("foreign key", {"entitlement_pem": "OTHER_KEY"}, "entitlement: entitlement_pem: the private key does not belong"),
    ("both", {"entitlement_pem": "GOOD", "entitlement_pem_file": "FILE"},
     "entitlement: entitlement_pem_file and entitlement_pem: give exactly one of them (the path of the entitlement PEM"
        " on the controller, or the PEM text from a vaulted variable); both are set"),
    ("neither", {}, "entitlement: entitlement_pem_file and entitlement_pem: give exactly one of them (the path of the entitlement PEM"
        " on the controller, or the PEM text from a vaulted variable); neither is set"),
    ("missing file", {"entitlement_pem_file": "/nonexistent/entitlement.pem"}, "entitlement: entitlement_pem_file /nonexistent/entitlement.pem cannot be read"),
    ("bad pool name", {"entitlement_pem": "GOOD", "entitlement_pool": "Bad_Pool"}, "entitlement: entitlement_pool Bad_Pool is not a MachineConfigPool"),
    ("unknown pool", {"entitlement_pem": "GOOD", "entitlement_pool": "gpu"},
     "entitlement: entitlement_pool gpu is not a MachineConfigPool of this cluster (pools: master, worker)"),
    ("max unavailable 0", {"entitlement_pem": "GOOD", "entitlement_max_unavailable": 0}, "entitlement: entitlement_max_unavailable 0 is not an integer >= 1"),
    ("max unavailable 150%", {"entitlement_pem": "GOOD", "entitlement_max_unavailable": "150%"}, "entitlement: entitlement_max_unavailable 150% is not"),
    ("ignition 2.2", {"entitlement_pem": "GOOD", "entitlement_ignition_version": "2.2.0"}, "entitlement: entitlement_ignition_version 2.2.0 is not one of"),
    ("namespace", {"entitlement_pem": "GOOD", "entitlement_test_namespace": "Bad_NS"},
     "entitlement: entitlement_test_namespace Bad_NS must be a DNS-1123 label"),
    ("enabled typo", {"entitlement_pem": "GOOD", "entitlement_enabled": "maybe"}, "entitlement: entitlement_enabled must be auto, true or false (got maybe)"),
]  # fmt: skip


def test_bad_inputs_fail_in_preflight_naming_the_variable_with_zero_writes(cluster, dyn, pems, original):
    texts = {
        "MALFORMED": pems["malformed"],
        "EXPIRED": make_pem(days_valid=30, days_ago=40),
        "CERT_ONLY": make_pem(key=False),
        "KEY_ONLY": make_pem(cert=False),
        "OTHER_KEY": make_pem(other_key=True),
        "GOOD": pems["good"],
        "FILE": pems["file"],
    }
    tasks = []
    for name, given, dummy in BAD_INPUTS:
        role_vars = base_vars(**{k: texts.get(v, v) if isinstance(v, str) else v for k, v in given.items()})
        if "entitlement_enabled" in given:
            role_vars["entitlement_enabled"] = given["entitlement_enabled"]
        include = {"name": "bad input: " + name, "ansible.builtin.include_role": {"name": "gpuops.cluster.entitlement"}}
        rescue = {"name": "go on with the next bad input", "ansible.builtin.meta": "clear_host_errors"}
        tasks.append({"block": [dict(include, vars=role_vars)], "rescue": [rescue]})
    mark = cluster.audit.mark()
    out = run_playbook(cluster, tasks)
    failures = [(n, r.get("msg", "")) for n, r in tasks_of(out) if r.get("failed")]
    assert len(failures) == len(BAD_INPUTS), failures
    for (case, dummy, expected), (task, msg) in zip(BAD_INPUTS, failures):
        assert msg.startswith(expected), (case, task, msg)
        assert task.startswith("Check"), (case, task)  # an assert of preflight, before any write
    assert cluster.audit.writes_since(mark) == []
    assert our_mcs(dyn) == []


def test_check_mode_on_a_fresh_cluster_runs_to_the_end_with_zero_writes(cluster, dyn, pems, original):
    """auto + OpenShift < 4.9 (platform given as preflight would record it) -> entitlement applies."""
    platform = {"openshift": True, "openshift_version": "4.8.51"}
    mark = cluster.audit.mark()
    out = run_role(
        cluster,
        "entitlement",
        {"entitlement_enabled": "auto", "entitlement_pem_file": pems["file"], "preflight_platform": platform},
        check=True,
    )
    assert failed_message(out) is None, failed_message(out)
    results = dict(tasks_of(out))
    plan = results["Show the plan, or why entitlement is skipped"]["msg"]
    assert plan.startswith("entitlement: would entitle pool worker (3 machines"), plan
    shown = results["Show the rollout"]["msg"]
    assert "entitlement: MachineConfig 50-entitlement-pem: would be created" in shown, shown
    assert cluster.audit.writes_since(mark) == []
    assert our_mcs(dyn) == []


def test_a_degraded_pool_stops_the_run_with_its_reason(cluster, dyn, pems, original):
    rendered = original["spec"]["configuration"]["name"]
    bad = {
        "apiVersion": MCO,
        "kind": "MachineConfig",
        "metadata": {"name": BAD_MC, "labels": {"machineconfiguration.openshift.io/role": "worker"}},
        "spec": {"config": {"ignition": {"version": "9.9.9"}}},
    }
    mcs = api(dyn, "MachineConfig")
    mcs.create(body=bad)
    try:
        role_vars = base_vars(
            entitlement_pem_file=pems["file"], entitlement_wait_timeout=120, entitlement_max_unavailable=""
        )
        out = run_role(cluster, "entitlement", role_vars)
        msg = failed_message(out)
        assert msg is not None and msg.startswith("entitlement: MachineConfigPool worker: "), msg
        assert "MachineConfigPool worker is degraded, RenderDegraded" in msg, msg
        assert "MachineConfig %s: parsing Ignition config failed: unknown version" % BAD_MC in msg, msg
        assert [n for n, r in tasks_of(out) if r.get("failed")] == [
            "Stop when the MachineConfigs could not be rolled out"
        ]
    finally:
        # Ours first: with the bad one gone first, the pool would render ours and reboot every node.
        for name in OURS + (BAD_MC,):
            try:
                mcs.delete(name=name)
            except Exception:
                pass
    wait_until(lambda: pool_settled(dyn, rendered), 60, 0.5, "worker pool back on %s" % rendered)
    after = pool(dyn)
    assert after["status"]["configuration"]["name"] == rendered  # never rolled out: no node rebooted
    assert after["spec"].get("maxUnavailable") == original["spec"].get("maxUnavailable")


def test_the_simulated_node_is_not_entitled_before_the_rollout(cluster, dyn, namespace):
    """The node agent answers an entitlement-test pod from the node's current config: none yet, dnf fails."""
    pods = api(dyn, "Pod", "v1")
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "dnf", "labels": {"app.kubernetes.io/component": "entitlement-test"}},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"node-role.kubernetes.io/worker": ""},
            "containers": [
                {
                    "name": "dnf",
                    "image": "registry.access.redhat.com/ubi9/ubi:latest",
                    "command": ["dnf", "search", "kernel-devel"],
                }
            ],
        },
    }
    pods.create(body=body, namespace=namespace)
    wait_until(lambda: pods.get(name="dnf", namespace=namespace).status.phase == "Failed", 60, 0.5, "dnf pod Failed")
    log = client.CoreV1Api(cluster.api).read_namespaced_pod_log("dnf", namespace)
    assert "This system is not registered with an entitlement server" in log and "No matches found." in log, log


def test_converge_rolls_out_and_the_test_pod_sees_the_entitlement(cluster, dyn, pems, original):
    mark = cluster.audit.mark()
    out = run_role(cluster, "entitlement", base_vars(entitlement_pem=pems["good"]))
    assert failed_message(out) is None, failed_message(out)
    results = dict(tasks_of(out))
    shown = results["Show the rollout"]["msg"]
    assert any("MachineConfigPool worker: 3/3 updated, 0 updating, 3 ready" in line for line in shown), shown
    assert "entitlement: MachineConfig 50-entitlement-key-pem: created" in shown
    assert "reached the RHEL repositories" in results["Check the test pod saw the entitlement"]["msg"]
    p = pool(dyn)
    assert p["spec"]["maxUnavailable"] == 3 and p["status"]["updatedMachineCount"] == p["status"]["machineCount"] == 3
    rendered = p["status"]["configuration"]["name"]
    assert rendered != original["spec"]["configuration"]["name"]
    assert {s["name"] for s in p["status"]["configuration"]["source"]} >= set(OURS)
    mc = api(dyn, "MachineConfig").get(name="50-entitlement-pem").to_dict()
    assert mc["metadata"]["labels"]["machineconfiguration.openshift.io/role"] == "worker"
    assert mc["metadata"]["annotations"][TESTED].startswith(rendered + "/")
    entry = mc["spec"]["config"]["storage"]["files"][0]
    assert entry["path"] == PEM_PATH and entry["mode"] == 420 and mc["spec"]["config"]["ignition"]["version"] == "3.2.0"
    assert base64.b64decode(entry["contents"]["source"].split(",", 1)[1]).decode() == pems["good"]
    writes = cluster.audit.writes_since(mark)
    pool_writes = [w for w in writes if w["resource"] == "machineconfigpools"]
    assert len(pool_writes) == 1 and pool_writes[0]["verb"] == "patch", pool_writes  # maxUnavailable only
    assert api(dyn, "Pod", "v1").get(namespace=TEST_NS).items == []  # the pod is deleted after the test
    assert TEST_NS in namespaces(dyn)  # the namespace stays until state=absent


def test_a_failing_test_pod_names_pod_node_and_cause(cluster, dyn, pems, original):
    """The pool already runs the entitlement: only the test pod runs (and fails: the package does not exist)."""
    command = ["/bin/sh", "-c", "dnf search no-such-package --showduplicates"]
    out = run_role(
        cluster, "entitlement", base_vars(entitlement_pem_file=pems["file"], entitlement_test_command=command)
    )
    msg = failed_message(out)
    assert msg is not None and msg.startswith("entitlement: pod gpuops-entitlement-test/entitlement-test on node "), msg
    assert ": Failed: " in msg and "No matches found." in msg, msg
    assert "the node runs rendered-worker-" in msg
    # No MachineConfig changed, and the pod is gone again.
    assert [n for n in changed(out) if n.startswith("Write")] == []
    assert api(dyn, "Pod", "v1").get(namespace=TEST_NS).items == []
    # The marker still names the default test: the next run (below, at -vvv) does not run the pod.
    mc = api(dyn, "MachineConfig").get(name="50-entitlement-pem").to_dict()
    assert mc["metadata"]["annotations"][TESTED].startswith(pool(dyn)["status"]["configuration"]["name"] + "/")


def run_verbose(cluster, role_vars):
    """ansible-playbook -vvv with the default output, as a user would run it: (rc, stdout + stderr)."""
    play = [
        {
            "name": "entitlement at -vvv",
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [{"name": "role", "ansible.builtin.include_role": {"name": "gpuops.cluster.entitlement"}}],
            "vars": role_vars,
        }
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False, dir=BUILD) as f:
        json.dump(play, f)
        path = f.name
    # At -vvv with the default engine: what most users run, and its log shows every module's arguments.
    env = _collection_env(
        cluster,
        {"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default", "ANSIBLE_CALLBACK_RESULT_FORMAT": None},
        engine="default",
    )
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-vvv", "-i", "localhost,"]
    cmd += ["-e", "ansible_connection=local", "-e", "ansible_python_interpreter=" + sys.executable, path]
    try:
        proc = subprocess.run(
            cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900, check=False
        )
    finally:
        os.remove(path)
    return proc.returncode, proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")


def test_noop_rerun_at_vvv_changes_nothing_and_never_prints_the_pem(cluster, dyn, pems, original):
    mark = cluster.audit.mark()
    rc, output = run_verbose(cluster, base_vars(entitlement_pem=pems["good"]))
    assert rc == 0, output[-3000:]
    assert "changed=0" in output and "failed=0" in output, output[-2000:]
    assert "changed: [localhost]" not in output
    assert "MachineConfigPool worker: 3/3 updated, 0 updating, 3 ready" in output
    for secret in secret_forms(pems["good"]):
        assert secret not in output, "the PEM leaked at -vvv"
    assert cluster.audit.writes_since(mark) == []


def test_the_pem_is_not_printed_when_a_bad_one_is_refused(cluster, dyn, pems, original):
    rc, output = run_verbose(cluster, base_vars(entitlement_pem=pems["malformed"]))
    assert rc != 0 and "entitlement: entitlement_pem: malformed PEM" in output
    for secret in secret_forms(pems["malformed"]):
        assert secret not in output, "the PEM leaked at -vvv"


def test_an_entitled_build_succeeds_on_the_entitled_pool(cluster, dyn, namespace, ansible_task):
    nodes = GpuNodes(cluster.api)
    try:
        tag, _names = nodes.make(1, build=RHCOS_416)
        args = {
            "driver_version": "550.90.07",
            "namespace": namespace,
            "node_selector": {SET_LABEL: tag},
            "strategy": "entitlement",
            "entitlement_secret": "",
            "wait_timeout": 120,
            "wait_sleep": 1,
        }
        result = ansible_task("gpuops.cluster.driver_container_build", args)
        assert not result.get("failed"), result
        kernel = kernel_of(RHCOS_416)
        assert result["strategy"] == "entitlement" and result["kernels"][kernel]["ready"] is True, result
    finally:
        nodes.cleanup()


def test_absent_rolls_back_and_a_second_absent_changes_nothing(cluster, dyn, original):
    out = run_role(cluster, "entitlement", {"entitlement_state": "absent", "preflight_platform": PLATFORM})
    assert failed_message(out) is None, failed_message(out)
    shown = dict(tasks_of(out))["Show the rollback"]["msg"]
    assert "entitlement: MachineConfig 50-rhsm-conf: deleted" in shown, shown
    assert our_mcs(dyn) == [] and TEST_NS not in namespaces(dyn)
    assert pool_settled(dyn, original["spec"]["configuration"]["name"])  # rolled back, waited for
    mark = cluster.audit.mark()
    again = run_role(cluster, "entitlement", {"entitlement_state": "absent", "preflight_platform": PLATFORM})
    assert failed_message(again) is None and changed(again) == [], changed(again)
    assert cluster.audit.writes_since(mark) == []
