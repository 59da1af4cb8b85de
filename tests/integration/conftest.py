# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Fixtures for tests that talk to the real local control plane.

``cluster`` starts the local cluster once per session (profile openshift by
default, GPUOPS_TEST_PROFILE to change), or reuses one that is already
running in .localcluster/ (`make cluster-up`). A cluster this session started
is stopped at the end; a reused one is left running.

``ansible_task`` runs one task through ansible-playbook, for real, and returns
its result as a dict.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json
import os
import subprocess
import sys
import uuid

import pytest
from ansible_env import collection_env, no_json_message, run_tasks
from localcluster.audit import AuditLog
from localcluster.cluster import DEFAULT_WORKDIR, LocalCluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, ".build")


class Cluster(object):
    """What tests get: paths, an API client for the admin user, the audit log."""

    def __init__(self, lc, profile):
        self.lc = lc
        self.profile = profile
        self.workdir = lc.workdir
        self.kubeconfig = lc.kubeconfig
        self.server = lc.server
        self.api = lc.api_client()
        self.audit = AuditLog(lc.audit_log, self.api, user="admin")

    def kubeconfig_of(self, who):
        """kubeconfig of another identity (e.g. 'nobody', authenticated without roles)."""
        return os.path.join(self.workdir, "{0}.kubeconfig".format(who))

    def token_of(self, who):
        from localcluster.cluster import TOKENS

        return TOKENS[who][0]

    @property
    def ca_cert(self):
        return os.path.join(self.workdir, "pki", "apiserver.crt")


def worker_suffix():
    """'' in a plain run and on xdist's first worker, '-gwN' on the others: each worker has its own clusters."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return "" if worker in ("", "gw0") else "-" + worker


@pytest.fixture(scope="session")
def cluster():
    profile = os.environ.get("GPUOPS_TEST_PROFILE", "openshift")
    lc = LocalCluster(os.environ.get("GPUOPS_LOCALCLUSTER_DIR", DEFAULT_WORKDIR) + worker_suffix())
    started = False
    state = lc.read_state()
    if lc.pid_of("kube-apiserver") and state.get("profile") == profile:
        sys.stderr.write("[integration] reusing running local cluster ({0})\n".format(profile))
    else:
        if lc.pid_of("kube-apiserver"):
            lc.down(quiet=True)
        lc.up(profile=profile)
        started = True
    try:
        yield Cluster(lc, profile)
    finally:
        if started and not os.environ.get("GPUOPS_KEEP_CLUSTER"):
            lc.down()


@pytest.fixture(scope="module")
def kube(cluster):
    """The simulation's small API client; tests using it need the openshift profile."""
    from simopenshift.testing import Client

    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile")
    return Client(cluster.api)


@pytest.fixture
def namespace(cluster):
    """A fresh namespace (with its default ServiceAccount), removed afterwards."""
    import time

    from kubernetes import client

    core = client.CoreV1Api(cluster.api)
    name = "t-" + uuid.uuid4().hex[:8]
    core.create_namespace({"metadata": {"name": name}})
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            core.read_namespaced_service_account("default", name)
            break
        except client.exceptions.ApiException:
            time.sleep(0.2)
    yield name
    core.delete_namespace(name)


def _collection_env(cluster, env=None):
    return collection_env(cluster.kubeconfig, env)


def run_playbook(cluster, tasks, check=False, diff=False, env=None, extra_args=None):
    """Run a list of tasks on localhost; return the parsed ansible.posix.json output."""
    out, proc, _wall = run_tasks(cluster.kubeconfig, tasks, check=check, diff=diff, env=env, extra_args=extra_args)
    if out is None:
        raise AssertionError(no_json_message(proc))
    return out


def run_role(cluster, role, role_vars=None, check=False, diff=False, env=None, extra_args=None, tasks_from=None):
    """Run one role of the collection through include_role; return the parsed JSON output."""
    include = {"name": "gpuops.cluster." + role}
    if tasks_from:
        include["tasks_from"] = tasks_from
    task = {"name": "role under test", "ansible.builtin.include_role": include, "vars": role_vars or {}}
    return run_playbook(cluster, [task], check=check, diff=diff, env=env, extra_args=extra_args)


def run_bad_inputs(cluster, cases):
    """Run each (role, role vars) case in one playbook, each in a rescued block so every case runs alone.

    Returns the output and the (task name, message) of every failed task, in order.
    """
    tasks = [
        {
            "name": "bad input %d" % i,
            "block": [
                {
                    "name": "role under test",
                    "ansible.builtin.include_role": {"name": "gpuops.cluster." + role},
                    "vars": role_vars,
                }
            ],
            "rescue": [{"name": "rescued %d" % i, "ansible.builtin.debug": {"msg": "next input"}}],
        }
        for i, (role, role_vars) in enumerate(cases)
    ]
    out = run_playbook(cluster, tasks)
    return out, [(name, res.get("msg")) for name, res in task_results(out) if res.get("failed")]


def task_results(out):
    """(task name, localhost result) for every task the playbook ran, in order."""
    return [(t["task"]["name"], t["hosts"].get("localhost", {})) for t in out["plays"][0]["tasks"]]


def failed_message(out):
    """The message of the task that failed and stopped the run, or None when none did.

    That is the last failed result: a failure that is not ignored ends the play, and the JSON callback does not
    mark ignored ones (a role may wait with ``ignore_errors`` and then fail with a message of its own).
    """
    for dummy, res in reversed(task_results(out)):
        if res.get("failed") and not res.get("ignore_errors"):
            return res.get("msg") or json.dumps(res)[:2000]
    return None


def changed_tasks(out):
    return [name for name, res in task_results(out) if res.get("changed")]


@contextlib.contextmanager
def extra_cluster(name, profile, **up_kwargs):
    """A second local cluster (own work directory and ports) for one test module.

    Reused when already running with the same profile (GPUOPS_KEEP_CLUSTER keeps it after the tests).
    """
    lc = LocalCluster(os.path.join(ROOT, ".localcluster-" + name + worker_suffix()))
    started = False
    state = lc.read_state()
    same = (
        state.get("profile") == profile
        and all(state.get(key) == up_kwargs[key] for key in ("gpu_nodes", "gpu_node_mode") if key in up_kwargs)
        and ("openshift_version" not in up_kwargs or state.get("openshift_version") == up_kwargs["openshift_version"])
    )
    if not (lc.pid_of("kube-apiserver") and same):
        if lc.pid_of("kube-apiserver"):
            lc.down(quiet=True)
        lc.up(profile=profile, **up_kwargs)
        started = True
    try:
        yield Cluster(lc, profile)
    finally:
        if started and not os.environ.get("GPUOPS_KEEP_CLUSTER"):
            lc.down()


@pytest.fixture(scope="session")
def k8s_cluster():
    """A plain Kubernetes cluster (work directory .localcluster-k8s) with two bare GPU nodes.

    gpu-0: g4dn.xlarge (Tesla-T4), Ubuntu 22.04, kernel 5.15.0-119-generic; gpu-1: g5.xlarge
    (NVIDIA-A10G), Ubuntu 24.04, kernel 6.8.0-45-generic; no NFD label and no nvidia.com/gpu until
    NFD and the NVIDIA stack run. Plus 3 control-plane nodes and 3 CPU workers. Shared by the session:
    tests leave it as they found it.
    """
    with extra_cluster("k8s", "kubernetes", gpu_nodes=2, gpu_node_mode="bare") as c:
        yield c


@pytest.fixture(scope="module")
def ocp419_cluster():
    """A simulated OpenShift 4.19 cluster (RHCOS reports ID=rhel, VERSION_ID 9.6) for one test module."""
    with extra_cluster("ocp419", "openshift", openshift_version="4.19") as c:
        yield c


@pytest.fixture
def ansible_task(cluster):
    """Run one module for real: ansible_task("gpuops.cluster.x", {...}, check=, diff=, env=) -> result dict."""

    def run(module, args, check=False, diff=False, env=None):
        task = {"name": "under test", module: args, "ignore_errors": True}
        out = run_playbook(cluster, [task], check=check, diff=diff, env=env)
        results = out["plays"][0]["tasks"]
        if not results:
            raise AssertionError("no task ran: {0}".format(json.dumps(out)[:2000]))
        return results[-1]["hosts"]["localhost"]

    return run


PREFLIGHT_ONLY = {"gpuops_until_state": "preflight"}


def run_site(cluster, env=None, extra_vars=None, expect_rc=0, playbook="site.yml", extra_args=None):
    env = _collection_env(cluster, env)
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        os.path.join(ROOT, "inventories", "local"),
        os.path.join(ROOT, "playbooks", playbook),
    ]
    for key, value in (extra_vars or {}).items():
        cmd += ["-e", "{0}={1}".format(key, value)]
    cmd += extra_args or []
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=1200, check=False)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == expect_rc, out[-3000:] + proc.stderr.decode()[-2000:]
    return json.loads(out[out.find("{") :])


def assert_rerun_writes_nothing(cluster, extra_vars=None, env=None):
    """Run site.yml again: every task unchanged and not one mutating request in the audit log."""
    mark = cluster.audit.mark()
    out = run_site(cluster, env=env, extra_vars=extra_vars)
    changed = [name for name, res in task_results_of(out) if res.get("changed")]
    # What the ledger found says why a state ran at all.
    ledger = [line for line in state_lines(out) if line.startswith("ledger:")]
    assert out["stats"]["localhost"]["changed"] == 0, changed + ledger
    assert cluster.audit.writes_since(mark) == []
    return out


def state_lines(result):
    """Every debug message printed during the run, flattened to lines."""
    lines = []
    for task in result["plays"][0]["tasks"]:
        msg = task["hosts"].get("localhost", {}).get("msg")
        if isinstance(msg, list):
            lines.extend(str(m) for m in msg)
        elif msg:
            lines.append(str(msg))
    return lines


def task_results_of(result):
    return [(t["task"]["name"], t["hosts"].get("localhost", {})) for t in result["plays"][0]["tasks"]]
