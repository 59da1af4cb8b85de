# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Faults injected into a real site.yml run at a known point of a state, and what they left on the cluster.

A run is held at the start of one task (fault_plugins/gpuops_fault.py); the fault is then injected either before
that task runs (``start``) or as soon as the audit log shows the task's first write (``write``), so that the state
is cut between its writes. What a fault may leave is read with :func:`census` (the objects a duplicate or a half
write would show in) and :func:`shape` (the inventory of tests/integration/inventory.py, generated names folded).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import signal
import subprocess
import sys
import time

from ansible_env import collection_env
from conftest import ENGINE, ROOT, short_name
from inventory import differences, inventory, served_items
from kubernetes.dynamic import DynamicClient
from localcluster.audit import REVIEWS, WRITE_VERBS
from localcluster.cluster import find_binaries
from secrets_checks import make_pem

PLUGINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_plugins")
STACK_NS = "nvidia-gpu-driver"

# Where each state of site.yml is cut: (state, task of its role, when). ``write``: once the task's first write
# reached the API server, so the state has written part of its objects (``write:<resource>,...``: its first write
# of one of those resources); ``start``: before the task runs (a state that only reads). The task names are the
# roles'; a renamed task fails the test with "never reached".
CUTS = (
    ("preflight", "Read the cluster (version and APIs, this identity's access, the platform, the nodes)", "start"),
    ("gpu_machineset", "Clone one GPU MachineSet per selected zone from the worker MachineSets", "write"),
    ("entitlement", "Write the entitlement MachineConfigs and wait for the pool to roll them out", "write"),
    (
        "nfd",
        "Apply the NFD manifests (OpenShift - namespace, OperatorGroup, Subscription; Kubernetes - upstream NFD, "
        "until ready)",
        "write",
    ),
    # In the build, after the namespace and RBAC of the same module run (its driver_container_build follower).
    (
        "driver",
        "Ensure the driver namespace, service account and RBAC, then build (or name) one driver image per kernel",
        "write:imagestreams,buildconfigs,builds",
    ),
    ("container_toolkit", "Ensure the toolkit service account, RuntimeClass and DaemonSet", "write"),
    (
        "device_plugin",
        "Run a vectorAdd pod requesting one GPU on every GPU node (after a change)",
        "write",
    ),
    ("gpu_feature_discovery", "Ensure the GFD service account, RBAC and DaemonSet", "write"),
    ("monitoring", "Ensure the DCGM exporter, its Service, scrape configuration, alerts and dashboards", "write"),
    # The objects' k8s_ensure, which then taints the GPU nodes (its node_taints follower) in the same module run.
    ("scheduling", "PriorityClasses, GPU ResourceQuotas and LimitRanges", "write"),
    ("gpu_validation", "Validate every GPU node (workload checks only where something changed)", "write"),
)


class SiteRun(object):
    """site.yml started in the background (its own process group, output to files, the test file's engine), holdable
    at one task."""

    def __init__(self, cluster, workdir, name, at=None, extra_args=(), env=None, playbook="site.yml"):
        self.dir = os.path.join(str(workdir), name)
        os.makedirs(self.dir)
        self.cluster = cluster
        self.stdout = os.path.join(self.dir, "stdout")
        extra = {
            "GPUOPS_FAULT_DIR": self.dir,
            "GPUOPS_FAULT_AT": json.dumps(list(at or [])),
            "ANSIBLE_CALLBACK_PLUGINS": PLUGINS,
            "ANSIBLE_CALLBACKS_ENABLED": "gpuops_fault",
            "PWD": str(workdir),
        }
        extra.update(env or {})
        cmd = [
            os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
            "-i",
            os.path.join(ROOT, "inventories", "local"),
            os.path.join(ROOT, "playbooks", playbook),
        ] + list(extra_args)
        with open(self.stdout, "wb") as out:
            self.proc = subprocess.Popen(
                cmd,
                env=collection_env(cluster.kubeconfig, extra, engine=ENGINE["name"]),
                cwd=str(workdir),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.t0 = time.time()

    def wait_held(self, index, timeout=600):
        """True once the run holds at cut ``index``; False when it ended before (a failure, or a cut never met)."""
        held = os.path.join(self.dir, "held-{0}".format(index))
        deadline = time.time() + timeout
        while time.time() < deadline:
            if os.path.exists(held):
                return True
            if self.proc.poll() is not None:
                return os.path.exists(held)
            time.sleep(0.05)
        raise AssertionError(
            "the run did not reach cut {0} within {1}s; last tasks: {2}".format(index, timeout, self.last_tasks())
        )

    def release(self, index):
        open(os.path.join(self.dir, "release-{0}".format(index)), "w").close()

    def last_tasks(self, n=3):
        return [t["task"] for t in self.tasks()[-n:]]

    def tasks(self):
        try:
            with open(os.path.join(self.dir, "tasks")) as handle:
                return [json.loads(line) for line in handle if line.strip()]
        except OSError:
            return []

    def wait(self, timeout=900):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            kill_tree(self.proc.pid)
            raise AssertionError("site.yml did not end within {0}s: {1}".format(timeout, self.text()[-1500:]))

    def kill(self):
        """SIGKILL the whole run (ansible-playbook, its forked workers and the modules they run), as a lost
        controller node would."""
        left = kill_tree(self.proc.pid)
        self.proc.wait(60)
        assert not left, "processes of the killed run still alive: {0}".format(left)

    def text(self):
        with open(self.stdout, "rb") as handle:
            return handle.read().decode("utf-8", "replace")

    def result(self):
        """The ansible.posix.json output, or None (a killed run prints none)."""
        text = self.text()
        try:
            return json.loads(text[text.find("{") :])
        except ValueError:
            return None

    @property
    def seconds(self):
        return time.time() - self.t0


def _children():
    """{parent pid: [pids]} of every process, from /proc."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/{0}/stat".format(entry)) as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            out.setdefault(ppid, []).append(int(entry))
    return out


def alive(pid):
    try:
        with open("/proc/{0}/stat".format(pid)) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill_tree(pid, timeout=10):
    """SIGKILL ``pid`` and every process under it; the pids still alive after ``timeout`` seconds (none expected).

    A signal to the run's process group is not enough: ansible-core's workers call setsid()
    (WorkerProcess._detach), so a worker busy with a task, and the module it runs, would live on and could write
    after the "kill"; an AWX job's container that is killed takes them all. Each process is stopped first, so that
    none forks another while the tree is read."""
    seen, todo = set(), [pid]
    while todo:
        for p in todo:
            try:
                os.kill(p, signal.SIGSTOP)
            except ProcessLookupError:
                pass
            seen.add(p)
        children = _children()  # read after the stops: a stopped process forks no child the read could miss
        todo = sorted(set(c for p in seen for c in children.get(p, []) if c not in seen))
    for p in seen:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.time() + timeout
    while time.time() < deadline:
        left = sorted(p for p in seen if p != pid and alive(p))
        if not left:
            return []
        time.sleep(0.1)
    return left


def failure_of(result):
    """(the message of site.yml's final failure, the messages of the failed tasks before it)."""
    final, failed = None, []
    for task in result["plays"][0]["tasks"]:
        res = task["hosts"].get("localhost", {})
        if res.get("failed"):
            msg = res.get("msg") or json.dumps(res)[:500]
            if task["task"]["name"] == "Stop with the failure":
                final = msg
            else:
                failed.append(msg)
    return final, failed


def wait_first_write(cluster, offset, run, timeout=60, resources=()):
    """Wait until the audit log shows a write by the run's identity after ``offset`` (of one of ``resources``, when
    given), or the run moved on to another task, or ended. Returns the write's summary, or None."""
    tasks = len(run.tasks())
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(cluster.lc.audit_log, "rb") as handle:
            handle.seek(offset)
            data = handle.read()
        for line in data.splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            ref = ev.get("objectRef") or {}
            if (
                ev.get("verb") in WRITE_VERBS
                and ref.get("resource") not in REVIEWS
                and ev.get("user", {}).get("username") == cluster.audit.user
                and "dryRun=All" not in ev.get("requestURI", "")
                and (not resources or ref.get("resource") in resources)
            ):
                return "{0} {1} {2}/{3}".format(
                    ev["verb"], ref.get("resource"), ref.get("namespace", ""), ref.get("name")
                )
        if run.proc.poll() is not None or len(run.tasks()) > tasks:
            return None
        time.sleep(0.02)
    return None


def cut(run, index, cluster, when, fault):
    """Inject ``fault()`` at cut ``index`` (held): before the task runs, or at its first write. Returns that write."""
    offset = os.path.getsize(cluster.lc.audit_log)
    first = None
    if when == "start":
        fault()
        run.release(index)
    else:
        run.release(index)
        first = wait_first_write(
            cluster, offset, run, resources=tuple(r for r in when.partition(":")[2].split(",") if r)
        )
        fault()
    return first


def stop_apiserver(cluster):
    """kube-apiserver gone at once (SIGKILL), as a crashed or lost control-plane host."""
    pid = cluster.lc.pid_of("kube-apiserver")
    os.killpg(pid, signal.SIGKILL)
    deadline = time.time() + 15
    while cluster.lc.pid_of("kube-apiserver") and time.time() < deadline:
        time.sleep(0.05)
    os.remove(os.path.join(cluster.lc.pids, "kube-apiserver.pid"))


def start_apiserver(cluster, timeout=60):
    cluster.lc.start_apiserver(cluster.lc.read_state().get("bins") or find_binaries())
    deadline = time.time() + timeout
    while not cluster.lc.api_ready():
        if time.time() > deadline:
            raise AssertionError("kube-apiserver did not come back within {0}s".format(timeout))
        time.sleep(0.2)


def wait_nodes_recovered(cluster, since, timeout=120):
    """Every node Lease renewed after ``since`` (the API server's last start), and no node left Ready Unknown.

    A kubelet renews its Lease at once after an API server restart, so a real cluster's nodes stay Ready; kwok's
    stale informer takes up to a minute, and the node controller may mark nodes Unknown meanwhile
    (simopenshift/leases.py makes up for both, within its look period). A run started in that window met two GPU
    nodes going NotReady 33 s in (CI: entitlement's pool "not Updated", 2 machines unavailable), which a real
    cluster would not show. So a run after an outage starts once the nodes are as a real cluster's would be.
    """
    from kubernetes import client as k8s

    coordination, core = k8s.CoordinationV1Api(cluster.api), k8s.CoreV1Api(cluster.api)
    deadline = time.time() + timeout
    while True:
        stale = [
            lease.metadata.name
            for lease in coordination.list_namespaced_lease("kube-node-lease").items
            if lease.spec.renew_time is None or lease.spec.renew_time.timestamp() < since
        ]
        # Ready Unknown is the node controller's mark for a stale Lease (NodeStatusUnknown); a node rebooting for
        # the MCO or held NotReady by the simulator says False, and is left to the run.
        unknown = [
            node.metadata.name
            for node in core.list_node().items
            if any(c.type == "Ready" and c.status == "Unknown" for c in node.status.conditions or [])
        ]
        if not stale and not unknown:
            return
        if time.time() > deadline:
            raise AssertionError(
                "nodes not recovered {0}s after the API server came back: leases not renewed {1}, "
                "Ready Unknown {2}".format(timeout, stale, unknown)
            )
        time.sleep(1)


def restart_etcd(cluster):
    """etcd stopped (SIGTERM, as a member restart) and started again on its data directory."""
    cluster.lc.stop("etcd")
    cluster.lc.start_etcd(cluster.lc.read_state().get("bins") or find_binaries())


# ------------------------------------------------------------------------------------------- what stays behind
def _items(api, api_version, kind, namespace=None):
    return served_items(DynamicClient(api), api_version, kind, namespace) or []


def _ours(obj):
    return (obj["metadata"].get("labels") or {}).get("app.kubernetes.io/managed-by") == "gpuops.cluster"


def census(api):
    """Counts where a fault would show as a duplicate or a leftover: {what: sorted names}."""
    gpu_sets = [m for m in _items(api, "machine.openshift.io/v1beta1", "MachineSet") if _ours(m)]
    set_names = set(m["metadata"]["name"] for m in gpu_sets)
    machines = [
        m
        for m in _items(api, "machine.openshift.io/v1beta1", "Machine")
        if (m["metadata"].get("labels") or {}).get("machine.openshift.io/cluster-api-machineset") in set_names
    ]
    pods = _items(api, "v1", "Pod", STACK_NS)
    # Pods with no controller: the validation's and the entitlement test's, which a run deletes when done.
    loose = [p for p in pods if not any(o.get("controller") for o in p["metadata"].get("ownerReferences") or [])]
    nodes = _items(api, "v1", "Node")
    tainted = [
        n
        for n in nodes
        if any(
            (t.get("key"), t.get("effect")) == ("nvidia.com/gpu", "NoSchedule")
            for t in (n.get("spec") or {}).get("taints") or []
        )
    ]
    double = [
        n
        for n in nodes
        if len([t for t in (n.get("spec") or {}).get("taints") or [] if t.get("key") == "nvidia.com/gpu"]) > 1
    ]

    def names(objs):
        return sorted(o["metadata"]["name"] for o in objs)

    return {
        "GPU MachineSets": names(gpu_sets),
        "their Machines": names(machines),
        "Builds": names(_items(api, "build.openshift.io/v1", "Build", STACK_NS)),
        "our DaemonSets": names(d for d in _items(api, "apps/v1", "DaemonSet", STACK_NS) if _ours(d)),
        "our MachineConfigs": names(
            m for m in _items(api, "machineconfiguration.openshift.io/v1", "MachineConfig") if _ours(m)
        ),
        "one-shot pods": names(loose),
        "GPU-tainted nodes": names(tainted),
        "nodes with the taint twice": names(double),
    }


def census_line(counts):
    return ", ".join("{0} {1}".format(len(v), k) for k, v in counts.items() if v)


# Values a controller makes up on every converge: OLM's InstallPlan names, GFD's timestamp label.
GENERATED = (re.compile(r"(InstallPlan .*/install-)[a-z0-9]{5}$"),)
TIME_LABELS = ("nvidia.com/gfd.timestamp",)


def shape(api):
    """inventory.py's inventory with the names and values a controller makes up folded (Machines and the GPU Nodes
    named after them, their host names, OLM's InstallPlans, GFD's timestamp), so that two converges of the same
    inputs compare equal."""
    inv = inventory(api)
    names = {}
    for machine in _items(api, "machine.openshift.io/v1beta1", "Machine"):
        labels = machine["metadata"].get("labels") or {}
        pool = labels.get("machine.openshift.io/cluster-api-machineset") or labels.get(
            "machine.openshift.io/cluster-api-machine-role", "machine"
        )
        names[machine["metadata"]["name"]] = "<Machine of {0}>".format(pool)
        node = ((machine.get("status") or {}).get("nodeRef") or {}).get("name")
        if node:
            names[node] = "<Node of {0}>".format(pool)
            names.setdefault(node.split(".")[0], "<host of {0}>".format(pool))

    def fold(text):
        for real in sorted(names, key=len, reverse=True):
            text = text.replace(real, names[real])
        return text

    out = {}
    for kind, entries in inv.items():
        folded = []
        for key, summary in entries.items():
            for label in TIME_LABELS:
                if label in summary.get("labels", {}):
                    summary["labels"][label] = "<time>"
            key = fold(key)
            for pattern in GENERATED:
                key = pattern.sub(r"\1<id>", kind + " " + key).split(" ", 1)[1]
            folded.append((key, json.loads(fold(json.dumps(summary, sort_keys=True)))))
        # Entries folded to one key (two nodes of a pool) are numbered in the order of their summaries.
        numbered = {}
        for key, summary in sorted(folded, key=lambda pair: (pair[0], json.dumps(pair[1], sort_keys=True))):
            n = 0
            while "{0}#{1}".format(key, n) in numbered:
                n += 1
            numbered["{0}#{1}".format(key, n) if n or sum(k == key for k, dummy in folded) > 1 else key] = summary
        out[kind] = numbered
    return out


# ------------------------------------------------------------------------------------------------ the chain
def fault_vars(tmp_path, pem):
    """Extra vars that make every state write: entitlement mode (MachineConfigs, the pool's rollout) and the GPU
    taint (node_taints), on top of the local inventory."""
    path = os.path.join(str(tmp_path), "fault-vars.json")
    with open(path, "w") as handle:
        json.dump(
            {
                "gpuops_driver_build_mode": "entitlement",
                "entitlement_enabled": True,
                "entitlement_pem": pem,
                "gpuops_gpu_taint": True,
            },
            handle,
        )
    return ["-e", "@" + path]


# How long the API server stays away: a restart, a failover. Waits look again through it (kube.UNREACHABLE_SECONDS);
# a call that is not a wait fails at once, naming the API server.
OUTAGE_SECONDS = 10


def _failure(run, state=None):
    """What a failed run said: its state and cause, from its output (the run must name ``state``, when given)."""
    result = run.result()
    assert result is not None, run.text()[-2000:]
    final, failed = failure_of(result)
    assert final and (state is None or final.startswith(state + " failed")), (state, final, failed)
    return "{0}: {1}".format(final.split(" (", 1)[0], " / ".join(failed))


def _why(run):
    """Why a run that had to converge failed: its failed tasks' messages (the output's tail showed only the JSON's
    closing lines), or the tail when the output is not a result."""
    result = run.result()
    if result is None:
        return run.text()[-3000:]
    final, failed = failure_of(result)
    return "{0}\n{1}".format(final, "\n".join(m[:2000] for m in failed))


def chain(cluster, tmp_path, kind, extra_args):
    """Cut site.yml in every state (faults.CUTS), in order. A cut that ends the run (always, for ``kill``) is
    followed by a new run from the cut state (``gpuops_from_state``, site.yml's "run a part": the states before it
    converged in an earlier run, and re-converging them in every run made the chain quadratic), which must pass the
    cut state by itself to reach the next cut; a run that survives a cut goes on to the next. Then a whole run
    (every state, as after any failure) converges. Returns one row per cut and the number of runs."""
    rows, pending, runs, start = [], list(CUTS), 0, None
    restarted = None  # when the API server last came back
    while pending:
        runs += 1
        if restarted is not None:
            wait_nodes_recovered(cluster, restarted)
        run = SiteRun(
            cluster,
            tmp_path,
            "run-{0:02d}".format(runs),
            ["{0}::{1}".format(c[0], c[1]) for c in pending],
            list(extra_args) + (["-e", "gpuops_from_state=" + start] if start else []),
        )
        part = " from {0}".format(start) if start else ""
        for index, (state, task, when) in enumerate(list(pending)):
            if not run.wait_held(index):
                assert run.proc.returncode not in (0, None), "run {0} never reached {1}::{2}: {3}".format(
                    runs, state, task, run.last_tasks()
                )
                # A re-run must pass the state cut before it; a run that went on after a cut and failed later must
                # fail in that state (else it is a finding).
                assert index > 0, "run {0} failed before it passed {1}: {2}".format(
                    runs, rows[-1]["state"] if rows else "its start", _failure(run)
                )
                rows[-1]["said"] += "; then failed: " + _failure(run, rows[-1]["state"])
                break
            if rows and not rows[-1]["rerun"]:
                rows[-1]["rerun"] = "passed it (run {0}{1})".format(runs, part)
            row = {"state": state, "task": task, "rerun": "", "t0": time.time()}
            if kind == "apiserver":
                row["first"] = cut(run, index, cluster, when, lambda: stop_apiserver(cluster))
                stopped = time.time()
                while time.time() - stopped < OUTAGE_SECONDS and run.proc.poll() is None:
                    time.sleep(0.1)
                start_apiserver(cluster)
                restarted = time.time()
                if run.proc.poll() is None:
                    row["said"] = "waited through the outage ({0}s) and went on".format(OUTAGE_SECONDS)
                else:
                    row["said"] = _failure(run, state)
                    # No run converged whole yet, so the ledger has no records to drop: no advice to turn it off.
                    assert "could not drop" not in run.text(), run.text()[-3000:]
            else:
                row["first"] = cut(run, index, cluster, when, run.kill)
                last = run.tasks()[-1]
                # The run died inside the state: its last task was the state's own (or the shared GPU-node read).
                assert last["role"].endswith(state) or last["role"].endswith("preflight"), last
                row["said"] = "killed (SIGKILL) at `{0}`".format(short_name(last["task"]))
            row["after"] = census(cluster.api)
            rows.append(row)
            pending.pop(0)
            if run.proc.poll() is not None:
                start = state
                break
        else:
            rc = run.wait(900)
            assert rc == 0, _why(run)
            if not rows[-1]["rerun"]:
                rows[-1]["rerun"] = "converged (run {0}{1})".format(runs, part)
            if not start:
                return rows, runs
    if restarted is not None:
        wait_nodes_recovered(cluster, restarted)
    run = SiteRun(cluster, tmp_path, "final", None, extra_args)
    rc = run.wait(900)
    assert rc == 0, _why(run)
    rows[-1]["rerun"] = rows[-1]["rerun"] or "converged (run {0})".format(runs + 1)
    return rows, runs + 1


def rerun_writes_nothing(cluster, tmp_path, extra_args):
    """Every state checks its objects again (-e gpuops_ledger=false): nothing changed, no write in the audit log."""
    mark = cluster.audit.mark()
    run = SiteRun(cluster, tmp_path, "recheck", None, list(extra_args) + ["-e", "gpuops_ledger=false"])
    rc = run.wait(900)
    result = run.result()
    assert rc == 0 and result is not None, run.text()[-3000:]
    changed = [t["task"]["name"] for t in result["plays"][0]["tasks"] if t["hosts"].get("localhost", {}).get("changed")]
    assert result["stats"]["localhost"]["changed"] == 0, changed
    assert cluster.audit.writes_since(mark) == []
    return run


def table(kind, rows, final_census):
    """The README's fault table rows, as markdown."""
    lines = []
    for row in rows:
        where = "at its first write ({0})".format(row["first"]) if row.get("first") else "before it ran"
        lines.append(
            "| {0} | {1}: `{2}`, {3} | {4} | {5} | {6} |".format(
                kind,
                row["state"],
                row["task"],
                where,
                row["said"].replace("|", "/"),
                row["rerun"],
                census_line(row["after"]),
            )
        )
    lines.append("| {0} | after the last run | | | | {1} |".format(kind, census_line(final_census)))
    return "\n".join(lines)


def write_table(kind, text):
    path = os.path.join(ROOT, "reports", "faults")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, kind + ".md"), "w") as handle:
        handle.write(text + "\n")


def fault_chain(kind, cluster, shared, tmp_path):
    """The chain of cuts, then the checks that nothing was duplicated or left half-written."""
    extra = fault_vars(tmp_path, make_pem())
    rows, _runs = chain(cluster, tmp_path, kind, extra)
    after = census(cluster.api)
    write_table(kind, table(kind, rows, after))
    assert not after["one-shot pods"] and not after["nodes with the taint twice"], after
    assert all(row["rerun"] for row in rows), rows
    rerun_writes_nothing(cluster, tmp_path, extra)
    faulted = shape(cluster.api)
    # The same inputs converged from the seed state without a fault.
    shared.seed.reset(cluster.api)
    clean = SiteRun(cluster, tmp_path, "clean", None, extra)
    assert clean.wait(900) == 0, clean.text()[-3000:]

    def counts(found):
        return dict((k, len(v)) for k, v in found.items())

    clean_census = census(cluster.api)
    assert counts(clean_census) == counts(after), (clean_census, after)
    diff = differences(shape(cluster.api), faulted)
    assert diff == [], "after the faults, against a converge without faults: " + "; ".join(diff)
