# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Fixtures for tests that talk to the real local control plane.

Each pytest-xdist worker has its own clusters, one per kind, started the first time a test file asks for it and
shared by every test file the worker runs after that: ``cluster`` (profile openshift by default,
GPUOPS_TEST_PROFILE to change; one a test session started and kept, GPUOPS_KEEP_CLUSTER, is reused after a reset to
its start, any other cluster running there, `make cluster-up`'s or `make demo`'s, is started afresh), ``k8s_cluster``
(plain Kubernetes, two bare GPU nodes) and ``ocp419_cluster`` (OpenShift 4.19). They are module-scoped views:
when a test file asks for a cluster that another file used before it, the cluster is first put back to its seed
state (cluster_reset.py: what the tests made is deleted, the seed objects' labels, taints and specs restored, the
inventory compared) instead of being started again; a reset that cannot get there starts the cluster afresh and
says so as a warning. Within a file, tests share the state their file made, in order. Clusters this session
started are stopped at the end (GPUOPS_KEEP_CLUSTER keeps them); a reused one is left running. A file that needs
a cluster of a special shape keeps one of its own (``extra_cluster``).

``ansible_task`` runs one task through ansible-playbook, for real, and returns
its result as a dict.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json
import os
import pickle
import subprocess
import sys
import time
import uuid
import warnings

import pytest
from ansible_env import collection_env, no_json_message, run_tasks
from cluster_reset import WAITED, Seed, identity
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


def cluster_dir(name=""):
    """Work directory of this worker's cluster ``name`` ('' for the main one): GPUOPS_LOCALCLUSTER_DIR (default
    .localcluster) plus '-<name>' plus the worker suffix, so a run given its own directory keeps all its clusters
    apart from other runs'."""
    base = os.environ.get("GPUOPS_LOCALCLUSTER_DIR", DEFAULT_WORKDIR)
    return base + ("-" + name if name else "") + worker_suffix()


class SharedCluster(object):
    """One local cluster of this worker, shared by the test files that ask for it, reset between them."""

    def __init__(self, workdir, profile, up_kwargs=None):
        self.lc = LocalCluster(workdir)
        self.profile = profile
        self.up_kwargs = up_kwargs or {}
        self.started = False
        self.cluster = None
        self.seed = None
        self.user = None  # the test file that used it last

    def _matches(self, state):
        kw = self.up_kwargs
        return (
            state.get("profile") == self.profile
            and all(state.get(key) == kw[key] for key in ("gpu_nodes", "gpu_node_mode") if key in kw)
            and ("openshift_version" not in kw or state.get("openshift_version") == kw["openshift_version"])
        )

    def start(self, fresh=False):
        """Start the cluster, or reuse the one running in its directory when this harness started it with the same
        shape and saved its seed then (SEED_FILE): that one is reset to the seed first, so a kept cluster
        (GPUOPS_KEEP_CLUSTER) is as fresh as a new one. Any other running cluster there (`make cluster-up`,
        `make demo`, whose state the harness cannot know) is started afresh: a seed taken from a cluster that
        site.yml already converged made the next file's tests fail where nothing was wrong. -> what it did."""
        saved = None if fresh else self._saved_seed()
        if saved is not None:
            self.cluster = Cluster(self.lc, self.profile)
            try:
                done = saved.reset(self.cluster.api)
            except Exception as exc:  # pylint: disable=broad-except  # as in use(): start it afresh
                warnings.warn("{0}: reset of the kept cluster failed, started afresh: {1}".format(self.lc.workdir, exc))
            else:
                self.seed = saved
                sys.stderr.write(
                    "[integration] reusing local cluster {0} ({1})\n".format(self.lc.workdir, self.profile)
                )
                return "reused, reset to its start: " + _reset_detail(saved, done)
        if self.lc.pid_of("kube-apiserver"):
            self.lc.down(quiet=True)
        self.lc.up(profile=self.profile, **self.up_kwargs)
        self.started = True
        self.cluster = Cluster(self.lc, self.profile)
        self.seed = Seed.take(self.cluster.api)
        with open(self._seed_path(), "wb") as handle:
            pickle.dump({"identity": identity(self.cluster.api), "seed": self.seed}, handle)
        return ""

    def _seed_path(self):
        return os.path.join(self.lc.workdir, SEED_FILE)

    def _saved_seed(self):
        """The seed saved when this harness started the running cluster; None for another or no cluster."""
        if not (self.lc.pid_of("kube-apiserver") and self._matches(self.lc.read_state())):
            return None
        try:
            with open(self._seed_path(), "rb") as handle:
                saved = pickle.load(handle)
            return saved["seed"] if saved["identity"] == identity(self.lc.api_client()) else None
        except Exception:  # pylint: disable=broad-except  # none saved, an older format, an API not answering
            return None

    def use(self, module):
        """The cluster for test file ``module``: started on first use, reset when another file used it last."""
        t0 = time.time()
        if self.cluster is None:
            detail = self.start()
            EVENTS.append(("start", self.name, module, time.time() - t0, detail))
        elif self.user not in (None, module):
            try:
                done = self.seed.reset(self.cluster.api)
                EVENTS.append(("reset", self.name, module, time.time() - t0, _reset_detail(self.seed, done)))
            except Exception as exc:  # ResetFailed, or a cluster a test left broken: start it afresh
                warnings.warn(
                    "{0}: reset after {1} failed, cluster started afresh for {2} ({3:.0f}s): {4}".format(
                        self.lc.workdir, self.user, module, time.time() - t0, exc
                    ),
                    ResetWarning,
                )
                self.start(fresh=True)
                EVENTS.append(("restart", self.name, module, time.time() - t0, "reset failed"))
        self.user = module
        return self.cluster

    @property
    def name(self):
        return os.path.basename(self.lc.workdir)

    def stop(self):
        if self.started and not os.environ.get("GPUOPS_KEEP_CLUSTER"):
            self.lc.down()


# In a cluster's work directory: the seed this harness took when it started the cluster, and the cluster's identity
# (the uid of its kube-system Namespace: a new one at every `cluster.py up`, which starts from an empty etcd).
SEED_FILE = "test-seed.pickle"


def _reset_detail(seed, done):
    waits = ", ".join("{0} after {1:.0f}s".format(k, v) for k, v in sorted(seed.timings.items()))
    what = "; ".join(done[:4]) + ("; ..." if len(done) > 4 else "")
    return "{0} writes ({1}): {2}".format(len([d for d in done if not d.startswith(WAITED)]), waits, what)


class ResetWarning(UserWarning):
    """A shared cluster could not be reset to its seed state and was started again."""


# (what, cluster work directory, test file, seconds, detail) of every cluster start and reset of this process;
# an xdist worker hands its list to the controller (workeroutput), which prints them all at the end.
EVENTS = []


def pytest_sessionfinish(session):
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["gpuops_cluster_events"] = EVENTS


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    EVENTS.extend(tuple(e) for e in (getattr(node, "workeroutput", None) or {}).get("gpuops_cluster_events", []))


# Seconds (setup + call + teardown) per test file and per xdist worker, from the reports the controller gets: the
# figures FILE_SECONDS below is set from, printed at the end of every run (CI's log included).
FILE_TIMES, WORKER_TIMES = {}, {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    if "integration/" not in path:
        return
    FILE_TIMES[path] = FILE_TIMES.get(path, 0.0) + report.duration
    gateway = getattr(getattr(report, "node", None), "gateway", None)
    worker = getattr(gateway, "id", "main")
    WORKER_TIMES[worker] = WORKER_TIMES.get(worker, 0.0) + report.duration


def _file_times(terminalreporter):
    if hasattr(terminalreporter.config, "workeroutput") or not FILE_TIMES:
        return
    terminalreporter.section("seconds per test file (setup, call and teardown) and per worker")
    for path, seconds in sorted(FILE_TIMES.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line("{0:8.1f}  {1}".format(seconds, path))
    terminalreporter.write_line(
        "workers: " + ", ".join("{0} {1:.0f}s".format(w, s) for w, s in sorted(WORKER_TIMES.items()))
    )


def pytest_terminal_summary(terminalreporter):
    _file_times(terminalreporter)
    if hasattr(terminalreporter.config, "workeroutput") or not EVENTS:
        return
    terminalreporter.section("local clusters: starts and resets between test files")
    for what in ("start", "reset", "restart"):
        times = [e[3] for e in EVENTS if e[0] == what]
        if times:
            terminalreporter.write_line(
                "{0}: {1}, {2:.0f}s in all, longest {3:.1f}s".format(what, len(times), sum(times), max(times))
            )
    for what, name, module, seconds, detail in EVENTS:
        terminalreporter.write_line(
            "  {0:7} {1:28} {2:6.1f}s before {3} {4}".format(what, name, seconds, module, detail)
        )


# Seconds a test file takes (setup, call and teardown, as `make integration` prints them at the end; the clean-clone
# run of 0161c3b, two workers, this 2-core machine, see README, Test suite; test_faults_named.py ran beside the
# workers there). The files run heaviest first, so that
# no long file starts last while the other worker has nothing left (`make integration` passes
# --no-loadscope-reorder: xdist's default order, most tests first, put the one-test site.yml files last). A file not
# listed (all under 90 s) counts DEFAULT_FILE_SECONDS. test_faults_apiserver.py runs beside the workers
# (INTEGRATION_BESIDE) unless that is emptied.
FILE_SECONDS = {
    "test_faults_apiserver.py": 1226,
    "test_site.py": 615,
    "test_faults_kill.py": 528,
    "test_site_kubernetes.py": 410,
    "test_faults_named.py": 406,
    "test_site_openshift_419.py": 368,
    "test_fleet.py": 367,
    "test_gpu_operator_helm.py": 334,
    "test_gpu_operator_mode.py": 322,
    "test_role_driver.py": 221,
    "test_role_nfd.py": 204,
    "test_module_driver_container_build.py": 200,
    "test_role_monitoring.py": 177,
    "test_role_container_toolkit_gfd.py": 140,
    "test_secrets.py": 139,
    "test_module_gpu_validate.py": 124,
    "test_driver_rollout.py": 123,
    "test_role_entitlement.py": 111,
    "test_role_device_plugin.py": 101,
    "test_role_gpu_machineset.py": 97,
}
DEFAULT_FILE_SECONDS = 60


def pytest_collection_modifyitems(items):
    """Integration test files heaviest first (FILE_SECONDS); the order within a file is kept."""
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    slots = [i for i, item in enumerate(items) if str(item.fspath).startswith(here)]
    ours = [items[i] for i in slots]
    first = {}
    for n, item in enumerate(ours):
        first.setdefault(str(item.fspath), n)

    def key(item):
        path = str(item.fspath)
        return (-FILE_SECONDS.get(os.path.basename(path), DEFAULT_FILE_SECONDS), first[path])

    for i, item in zip(slots, sorted(ours, key=key)):
        items[i] = item


def _shared(request, workdir, profile, **up_kwargs):
    shared = SharedCluster(workdir, profile, up_kwargs)
    request.addfinalizer(shared.stop)
    return shared


@pytest.fixture(scope="session")
def _shared_main(request):
    profile = os.environ.get("GPUOPS_TEST_PROFILE", "openshift")
    return _shared(request, cluster_dir(), profile)


@pytest.fixture(scope="module")
def cluster(_shared_main, request):
    """This worker's main cluster (openshift profile unless GPUOPS_TEST_PROFILE), reset if another file used it."""
    return _shared_main.use(request.module.__name__)


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


def _collection_env(cluster, env=None, engine=None):
    """The collection's environment for ``cluster`` with ``engine``, the test file's by default (``env`` overrides)."""
    return collection_env(cluster.kubeconfig, env, engine=engine or ENGINE["name"])


# The engine run_playbook (so run_role and ansible_task), run_site and faults.SiteRun use in the current test file:
# Mitogen's mitogen_linear for the role test files (many module tasks per run) and for the files that set
# ANSIBLE_ENGINE (OpenShift 4.19, the GPU Operator modes, the named faults, the SIGKILL chain), ansible-core's
# default for every other file (site.yml end to end on both profiles, which runs every module the roles call; the
# module files, one or two tasks per run, where Mitogen's start costs as much as it saves; the API server chain,
# secrets, fleet, AWX, least privilege, hostile inputs).
# README, Test suite, says why.
ENGINE = {"name": "default"}


def engine_of(module):
    role_file = os.path.basename(module.__file__).startswith("test_role_")
    return getattr(module, "ANSIBLE_ENGINE", "mitogen" if role_file else "default")


@pytest.fixture(autouse=True, scope="module")
def _engine(request):
    ENGINE["name"] = engine_of(request.module)
    yield ENGINE["name"]
    ENGINE["name"] = "default"


def run_playbook(cluster, tasks, check=False, diff=False, env=None, extra_args=None):
    """Run a list of tasks on localhost with the test file's engine; return the parsed ansible.posix.json output."""
    out, proc, _wall = run_tasks(
        cluster.kubeconfig, tasks, check=check, diff=diff, env=env, extra_args=extra_args, engine=ENGINE["name"]
    )
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


def short_name(name):
    """A task name without the "<role> : " prefix ansible puts before the tasks of a role."""
    return name.split(" : ", 1)[-1]


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
    """A local cluster of one test module (own work directory and ports), for a shape no shared cluster has.

    Reused, reset to its start, when a test session started it and kept it (GPUOPS_KEEP_CLUSTER); see
    SharedCluster.start.
    """
    own = SharedCluster(cluster_dir(name), profile, up_kwargs)
    t0 = time.time()
    detail = own.start()
    EVENTS.append(("start", own.name, "(a file's own cluster)", time.time() - t0, detail))
    try:
        yield own.cluster
    finally:
        own.stop()


@pytest.fixture(scope="session")
def _shared_k8s(request):
    return _shared(
        request,
        cluster_dir("k8s"),
        "kubernetes",
        gpu_nodes=2,
        gpu_node_mode="bare",
    )


@pytest.fixture(scope="module")
def k8s_cluster(_shared_k8s, request):
    """A plain Kubernetes cluster (work directory .localcluster-k8s) with two bare GPU nodes.

    gpu-0: g4dn.xlarge (Tesla-T4), Ubuntu 22.04, kernel 5.15.0-119-generic; gpu-1: g5.xlarge
    (NVIDIA-A10G), Ubuntu 24.04, kernel 6.8.0-45-generic; no NFD label and no nvidia.com/gpu until
    NFD and the NVIDIA stack run. Plus 3 control-plane nodes and 3 CPU workers. Shared by the test files of
    this worker, reset to that seed state between them.
    """
    return _shared_k8s.use(request.module.__name__)


@pytest.fixture(scope="session")
def _shared_ocp419(request):
    return _shared(request, cluster_dir("ocp419"), "openshift", openshift_version="4.19")


@pytest.fixture(scope="module")
def ocp419_cluster(_shared_ocp419, request):
    """A simulated OpenShift 4.19 cluster (RHCOS reports ID=rhel, VERSION_ID 9.6), shared and reset as k8s_cluster."""
    return _shared_ocp419.use(request.module.__name__)


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


def assert_rerun_writes_nothing(cluster, extra_vars=None, env=None, user=None):
    """Run site.yml again: every task unchanged and not one mutating request in the audit log (by ``user``, the
    admin by default)."""
    mark = cluster.audit.mark()
    out = run_site(cluster, env=env, extra_vars=extra_vars)
    changed = [name for name, res in task_results(out) if res.get("changed")]
    # What the ledger found says why a state ran at all.
    ledger = [line for line in state_lines(out) if line.startswith("ledger:")]
    assert out["stats"]["localhost"]["changed"] == 0, changed + ledger
    assert cluster.audit.writes_since(mark, user=user) == []
    return out


def check_burn_in(cluster, extra, reports, gpu_nodes, env=None):
    """validate.yml alone, forced, with the burn-in (DCGM's diagnostics on every GPU, a day-two check): every GPU node
    in the report, each burn-in passed."""
    burn_in = dict(extra, gpu_validation_force=True, gpu_validation_checks=["allocatable", "driver", "burnin"])
    run_site(cluster, playbook="validate.yml", extra_args=["-e", json.dumps(burn_in)], env=env)
    with open(os.path.join(reports, "gpu-validation.json")) as handle:
        burned = json.load(handle)["nodes"]
    assert sorted(n["node"] for n in burned) == sorted(gpu_nodes), burned
    assert all(n["checks"]["burnin"]["status"] == "pass" for n in burned), [n["checks"] for n in burned]


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
