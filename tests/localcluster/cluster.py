# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""A real local Kubernetes control plane for tests and the demo.

etcd, kube-apiserver, kube-controller-manager and kube-scheduler run as local
processes on loopback ports; kwok simulates the nodes and the pod lifecycle.
Everything lives in one work directory (default ``.localcluster/``):
kubeconfig, PKI, tokens, the apiserver audit log, process logs and PID files.

    cluster.py up [--profile kubernetes|openshift] [--gpu-nodes N] [--gpu-node-mode bare|ready]
                  [--openshift-version 4.16|4.19]
    cluster.py down
    cluster.py status
    cluster.py restart-apiserver
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_WORKDIR = os.path.join(ROOT, ".localcluster")

# Loopback ports away from the usual ones, so a developer's own cluster or
# etcd on the default ports does not collide with the test bed.
PORTS = {
    "etcd": 23790,
    "etcd_peer": 23800,
    "apiserver": 16443,
    "kcm": 20257,
    "scheduler": 20259,
    "kwok": 20247,
}

# One token per component: the audit log tells who wrote what, so tests can
# count only the requests made by the code under test (user "admin").
TOKENS = {
    "admin": ("gpuops-admin-token", "admin", "system:masters"),
    "kcm": ("gpuops-kcm-token", "system:kube-controller-manager", "system:masters"),
    "scheduler": ("gpuops-scheduler-token", "system:kube-scheduler", "system:masters"),
    "kwok": ("gpuops-kwok-token", "kwok", "system:masters"),
    "sim": ("gpuops-sim-token", "sim-openshift", "system:masters"),
    # Authenticated but without any role: for 403 tests.
    "nobody": ("gpuops-nobody-token", "nobody", ""),
}

# Plain Kubernetes GPU nodes (``--gpu-node-mode``): ``bare`` = GPU hardware, kernel and OS
# only, NFD and the NVIDIA stack still to run (what a real cluster starts with); ``ready``
# = advertising nvidia.com/gpu and the NFD GPU label from the start (module benchmarks).
GPU_NODE_MODES = ("bare", "ready")
DEFAULT_GPU_NODE_MODE = "bare"
# Bare GPU nodes cycle through these AWS instance types (data/instance-types.csv:
# g4dn.xlarge = 1 x Tesla-T4, g5.xlarge = 1 x NVIDIA-A10G) and, independently, these
# Ubuntu releases with their GA kernels (osImage = os-release PRETTY_NAME, as kubelet reports it).
BARE_GPU_INSTANCE_TYPES = ("g4dn.xlarge", "g5.xlarge")
BARE_GPU_OS = (
    ("Ubuntu 22.04.4 LTS", "5.15.0-119-generic"),
    ("Ubuntu 24.04.1 LTS", "6.8.0-45-generic"),
)
BARE_GPU_REGION = "us-east-2"
BARE_GPU_ZONES = ("us-east-2a", "us-east-2b", "us-east-2c")
KUBELET_VERSION = "v1.34.10"  # versions.env KUBERNETES_VERSION
CONTAINERD_VERSION = "containerd://1.7.27"

# Simulated pod network (agent-owned pods, so the dcgm-exporter is reachable through the
# API server's pod and service proxy): each cluster claims one /22 of OpenShift's
# clusterNetwork 10.128.0.0/14 in PODNET_DIR and routes it to the host
# (``ip route add local <cidr> dev lo``); ``down`` removes only its own route and claim.
PODNET_DIR = os.environ.get("GPUOPS_PODNET_DIR", "/tmp/gpuops-localcluster-podnet")
# Held while a cluster chooses its ports and binds them: clusters started at the same moment
# (pytest-xdist workers, worktrees, molecule next to the tests) would otherwise pick the same range.
PORTS_LOCK = os.environ.get("GPUOPS_PORTS_LOCK", "/tmp/gpuops-localcluster-ports.lock")
PODNET_SLOTS = 256
PODNET_FILE = "podnet.json"
# A tenant's namespace, there from the start as on a platform team's cluster: inventories/local gives it a GPU
# quota (the scheduling role never creates namespaces, it refuses a missing one).
TENANT_NAMESPACE = "ml-team"

ORDER = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "sim-controllers"]

AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
# Events that service accounts read are logged: the least-privilege tests run the collection as one (the test
# bed's own components use static tokens).
- level: Metadata
  userGroups: ["system:serviceaccounts"]
  resources:
  - group: ""
    resources: [events]
  - group: events.k8s.io
    resources: [events]
# Heartbeats and events would drown the log and are never what a test counts.
- level: None
  resources:
  - group: coordination.k8s.io
    resources: [leases]
  - group: ""
    resources: [events]
  - group: events.k8s.io
    resources: [events]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version", "/openapi*", "/api", "/apis", "/api/*", "/apis/*"]
  verbs: [get]
- level: Metadata
"""


def log(msg):
    print("[localcluster] {0}".format(msg), file=sys.stderr, flush=True)


class LocalCluster(object):
    def __init__(self, workdir=DEFAULT_WORKDIR, port_offset=None):
        self.workdir = os.path.abspath(workdir)
        # Several clusters may run side by side (one per work directory): the
        # port offset is remembered in the work directory.
        ports_file = os.path.join(self.workdir, "ports.json")
        if port_offset is None and os.path.exists(ports_file):
            with open(ports_file) as f:
                self.ports = json.load(f)
        else:
            if port_offset is None and os.environ.get("GPUOPS_PORT_OFFSET"):
                port_offset = int(os.environ["GPUOPS_PORT_OFFSET"])
            if port_offset is None:
                port_offset = free_offset()
            self.ports = dict((k, v + port_offset) for k, v in PORTS.items())
        self.pki = os.path.join(self.workdir, "pki")
        self.logs = os.path.join(self.workdir, "logs")
        self.pids = os.path.join(self.workdir, "pids")
        self.kubeconfig = os.path.join(self.workdir, "kubeconfig")
        self.audit_log = os.path.join(self.workdir, "audit.log")
        self.state_file = os.path.join(self.workdir, "state.json")
        self.server = "https://127.0.0.1:{0}".format(self.ports["apiserver"])

    # ------------------------------------------------------------------ files
    def _write(self, path, text, mode=0o600):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)

    def kubeconfig_for(self, who):
        token = TOKENS[who][0]
        return (
            "apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n"
            "    server: {server}\n    certificate-authority: {ca}\n"
            "contexts:\n- name: local\n  context: {{cluster: local, user: {who}}}\n"
            "current-context: local\nusers:\n- name: {who}\n  user:\n    token: {token}\n"
        ).format(server=self.server, ca=os.path.join(self.pki, "apiserver.crt"), who=who, token=token)

    def prepare(self):
        for d in (self.workdir, self.pki, self.logs, self.pids):
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(self.workdir, "ports.json"), "w") as f:
            json.dump(self.ports, f)
        sa_key = os.path.join(self.pki, "sa.key")
        if not os.path.exists(sa_key):
            subprocess.run(["openssl", "genrsa", "-out", sa_key, "2048"], check=True, capture_output=True)
        lines = []
        for i, (token, user, group) in enumerate(TOKENS.values()):
            lines.append(
                '{0},{1},uid-{2},"{3}"'.format(token, user, i, group)
                if group
                else "{0},{1},uid-{2}".format(token, user, i)
            )
        self._write(os.path.join(self.workdir, "tokens.csv"), "\n".join(lines) + "\n")
        self._write(os.path.join(self.workdir, "audit-policy.yaml"), AUDIT_POLICY, 0o644)
        self._write(self.kubeconfig, self.kubeconfig_for("admin"))
        for who in ("kcm", "scheduler", "kwok", "sim", "nobody"):
            self._write(os.path.join(self.workdir, "{0}.kubeconfig".format(who)), self.kubeconfig_for(who))

    # -------------------------------------------------------------- processes
    def pid_of(self, name):
        try:
            with open(os.path.join(self.pids, name + ".pid")) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        # A child this process started and stopped stays a zombie until reaped;
        # reap it, and treat zombies of other parents as gone too.
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return None
        except ChildProcessError:
            pass
        except OSError:
            return None
        try:
            with open("/proc/{0}/stat".format(pid)) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return None
        except (OSError, IndexError):
            return None
        return pid

    def spawn(self, name, argv, env=None):
        out = open(os.path.join(self.logs, name + ".log"), "ab")
        proc = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=self.workdir,
            env=env or os.environ.copy(),
            start_new_session=True,  # survives `make cluster-up` returning
        )
        with open(os.path.join(self.pids, name + ".pid"), "w") as f:
            f.write(str(proc.pid))
        return proc.pid

    def stop(self, name, timeout=15):
        pid = self.pid_of(name)
        if pid:
            try:
                os.killpg(pid, signal.SIGTERM)
            except OSError:
                pass
            deadline = time.time() + timeout
            while time.time() < deadline and self.pid_of(name):
                time.sleep(0.1)
            if self.pid_of(name):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                time.sleep(0.2)
        try:
            os.remove(os.path.join(self.pids, name + ".pid"))
        except OSError:
            pass

    def leftovers(self):
        """PIDs of any process still holding this work directory in its command line."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open("/proc/{0}/cmdline".format(entry), "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if (self.workdir + os.sep) in cmd and "cluster.py" not in cmd:
                found.append((int(entry), cmd[:120]))
        return found

    # ----------------------------------------------------------------- health
    def _get(self, url, timeout=2, token=None):
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        req = urllib.request.Request(url)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
            return r.status, r.read().decode("utf-8", "replace")

    def wait_http(self, name, url, timeout=60):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                if self._get(url)[0] == 200:
                    return
            except Exception as e:  # not up yet
                last = e
            if name and not self.pid_of(name):
                raise RuntimeError("{0} exited; see {1}".format(name, os.path.join(self.logs, name + ".log")))
            time.sleep(0.2)
        raise RuntimeError("{0} not healthy at {1} after {2}s: {3}".format(name, url, timeout, last))

    def api_ready(self):
        try:
            return self._get(self.server + "/readyz", timeout=2)[0] == 200
        except Exception:
            return False

    # ------------------------------------------------------------- components
    def start_etcd(self, bins):
        self.spawn(
            "etcd",
            [
                os.path.join(bins, "etcd"),
                "--name=gpuops",
                "--data-dir=" + os.path.join(self.workdir, "etcd"),
                "--listen-client-urls=http://127.0.0.1:{0}".format(self.ports["etcd"]),
                "--advertise-client-urls=http://127.0.0.1:{0}".format(self.ports["etcd"]),
                "--listen-peer-urls=http://127.0.0.1:{0}".format(self.ports["etcd_peer"]),
                "--initial-advertise-peer-urls=http://127.0.0.1:{0}".format(self.ports["etcd_peer"]),
                "--initial-cluster=gpuops=http://127.0.0.1:{0}".format(self.ports["etcd_peer"]),
                "--unsafe-no-fsync",
                "--log-level=warn",
                "--quota-backend-bytes=4294967296",
            ],
        )
        self.wait_http("etcd", "http://127.0.0.1:{0}/health".format(self.ports["etcd"]), 30)

    def start_apiserver(self, bins):
        self.spawn(
            "kube-apiserver",
            [
                os.path.join(bins, "kube-apiserver"),
                "--etcd-servers=http://127.0.0.1:{0}".format(self.ports["etcd"]),
                "--bind-address=127.0.0.1",
                "--secure-port={0}".format(self.ports["apiserver"]),
                "--advertise-address=127.0.0.1",
                "--endpoint-reconciler-type=none",
                "--cert-dir=" + self.pki,
                "--token-auth-file=" + os.path.join(self.workdir, "tokens.csv"),
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file=" + os.path.join(self.pki, "sa.key"),
                "--service-account-signing-key-file=" + os.path.join(self.pki, "sa.key"),
                "--service-cluster-ip-range=10.96.0.0/16",
                "--allow-privileged=true",
                "--kubelet-preferred-address-types=InternalIP",
                "--audit-policy-file=" + os.path.join(self.workdir, "audit-policy.yaml"),
                "--audit-log-path=" + self.audit_log,
                "--audit-log-format=json",
                "--audit-log-mode=blocking",
                "--audit-log-maxsize=0",
                # Watches of many kwok nodes: keep the default cache, quiet logs.
                "--v=1",
            ]
            + os.environ.get("GPUOPS_APISERVER_EXTRA_ARGS", "").split(),
        )
        deadline = time.time() + 90
        while time.time() < deadline:
            if self.api_ready():
                return
            if not self.pid_of("kube-apiserver"):
                raise RuntimeError("kube-apiserver exited; see " + os.path.join(self.logs, "kube-apiserver.log"))
            time.sleep(0.2)
        raise RuntimeError("kube-apiserver not ready after 90s")

    def start_controllers(self, bins):
        self.spawn(
            "kube-controller-manager",
            [
                os.path.join(bins, "kube-controller-manager"),
                "--kubeconfig=" + os.path.join(self.workdir, "kcm.kubeconfig"),
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                "--secure-port={0}".format(self.ports["kcm"]),
                "--service-account-private-key-file=" + os.path.join(self.pki, "sa.key"),
                "--root-ca-file=" + os.path.join(self.pki, "apiserver.crt"),
                "--use-service-account-credentials=false",
                # Kubernetes' own default since 1.32 (kubernetes/kubernetes#127352): a shorter grace marked every
                # node Unknown after a 10 s API server restart (kwok's leases conflict for a while after one; a
                # kubelet re-reads its Lease at once), which no real cluster does.
                "--node-monitor-grace-period=50s",
                "--concurrent-daemonset-syncs=5",
                "--kube-api-qps=200",
                "--kube-api-burst=400",
                "--v=1",
            ],
        )
        self.spawn(
            "kube-scheduler",
            [
                os.path.join(bins, "kube-scheduler"),
                "--kubeconfig=" + os.path.join(self.workdir, "scheduler.kubeconfig"),
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                "--secure-port={0}".format(self.ports["scheduler"]),
                "--kube-api-qps=200",
                "--kube-api-burst=400",
                "--v=1",
            ],
        )
        self.wait_http("kube-controller-manager", "https://127.0.0.1:{0}/healthz".format(self.ports["kcm"]), 60)
        self.wait_http("kube-scheduler", "https://127.0.0.1:{0}/healthz".format(self.ports["scheduler"]), 60)

    def start_kwok(self, bins):
        self.spawn(
            "kwok",
            [
                os.path.join(bins, "kwok"),
                "--kubeconfig=" + os.path.join(self.workdir, "kwok.kubeconfig"),
                "--config=" + self.kwok_config(),
                "--manage-all-nodes=true",
                "--node-ip=127.0.0.1",
                "--node-port={0}".format(self.ports["kwok"]),
                "--server-address=127.0.0.1:{0}".format(self.ports["kwok"]),
                "--cidr=10.244.0.1/16",
                "--node-lease-duration-seconds=40",
                "--enable-crds=Logs",
            ],
        )
        self.wait_http("kwok", "http://127.0.0.1:{0}/healthz".format(self.ports["kwok"]), 60)

    def kwok_config(self):
        """kwok wants one multi-document YAML; we keep the stages as one YAML list
        (a single document, as yamllint in ansible-test sanity requires)."""
        import yaml

        with open(os.path.join(HERE, "kwok", "stages.yaml")) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        stages = []
        for d in docs:
            stages.extend(d if isinstance(d, list) else [d])
        path = os.path.join(self.workdir, "kwok.yaml")
        with open(path, "w") as f:
            yaml.safe_dump_all(stages, f, sort_keys=False)
        return path

    def start_sim(self, profile, openshift_version=None, pod_cidr=None):
        env = os.environ.copy()
        env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
        cmd = [
            sys.executable,
            "-m",
            "simopenshift.controllers",
            "--kubeconfig",
            os.path.join(self.workdir, "sim.kubeconfig"),
            "--profile",
            profile,
            "--workdir",
            self.workdir,
        ]
        if openshift_version:
            cmd += ["--openshift-version", openshift_version]
        pod_cidr = pod_cidr or self.podnet()  # a restarted controllers process keeps the cluster's network
        if pod_cidr:
            cmd += ["--pod-cidr", pod_cidr]
        self.spawn("sim-controllers", cmd, env=env)

    # ------------------------------------------------------------ pod network
    def podnet_up(self):
        """Claim and route this cluster's pod network; -> its CIDR, or None (warned once) without CAP_NET_ADMIN."""
        try:
            slot = claim_podnet_slot(self.workdir)
        except (OSError, RuntimeError) as exc:
            log("warning: no simulated pod network ({0}); dcgm-exporter metrics are unreachable".format(exc))
            return None
        cidr = podnet_cidr(slot)
        ok, error = _ip_route("add", cidr)
        if not ok and "File exists" in error:
            ok = True  # left by a stopped cluster that held this slot; ours now
        if not ok:
            release_podnet_slot(self.workdir, slot)
            log(
                "warning: cannot route the simulated pod network {0} to this host ({1}; needs root or "
                "CAP_NET_ADMIN): pods keep unroutable IPs and the simulated dcgm-exporter is unreachable "
                "(gpu_validate's metrics check reports 'unreachable')".format(cidr, error or "ip route failed")
            )
            return None
        with open(os.path.join(self.workdir, PODNET_FILE), "w") as f:
            json.dump({"slot": slot, "cidr": cidr, "route": "local {0} dev lo".format(cidr)}, f)
        log("pod network {0} routed locally (ip route add local {0} dev lo)".format(cidr))
        return cidr

    def podnet_down(self):
        path = os.path.join(self.workdir, PODNET_FILE)
        try:
            with open(path) as f:
                record = json.load(f)
        except (OSError, ValueError):
            return
        ok, error = _ip_route("del", record["cidr"])
        if not ok and "No such process" not in error:
            log("warning: could not remove route local {0} dev lo: {1}".format(record["cidr"], error))
        release_podnet_slot(self.workdir, record["slot"])
        os.remove(path)

    def podnet(self):
        try:
            with open(os.path.join(self.workdir, PODNET_FILE)) as f:
                return json.load(f).get("cidr")
        except (OSError, ValueError):
            return None

    # ------------------------------------------------------------------ nodes
    def api_client(self, who="admin"):
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(
            config_file=self.kubeconfig if who == "admin" else os.path.join(self.workdir, who + ".kubeconfig"),
            client_configuration=cfg,
        )
        cfg.connection_pool_maxsize = 32
        return client.ApiClient(cfg)

    def create_nodes(self, profile, workers, gpu_nodes, gpu_capacity, gpu_node_mode=DEFAULT_GPU_NODE_MODE):
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        api = client.CoreV1Api(self.api_client())
        if profile == "openshift":
            # The simulated machine-api seeds masters and workers with their Machines.
            return []
        nodes = kubernetes_nodes(workers, gpu_nodes, gpu_capacity, gpu_node_mode)
        for body in nodes:
            try:
                api.create_node(body)
            except ApiException as e:
                if e.status != 409:
                    raise
        return [n["metadata"]["name"] for n in nodes]

    def wait_nodes_ready(self, names, timeout=60):
        from kubernetes import client

        api = client.CoreV1Api(self.api_client())
        deadline = time.time() + timeout
        pending = set(names)
        while time.time() < deadline:
            for n in api.list_node().items:
                ready = any(c.type == "Ready" and c.status == "True" for c in (n.status.conditions or []))
                not_ready_taint = any(t.key == "node.kubernetes.io/not-ready" for t in (n.spec.taints or []))
                if ready and not not_ready_taint:
                    pending.discard(n.metadata.name)
            if not pending:
                return
            time.sleep(0.3)
        raise RuntimeError("nodes not Ready after {0}s: {1}".format(timeout, sorted(pending)[:10]))

    def create_tenant_namespace(self):
        """The tenant's namespace (TENANT_NAMESPACE), as the platform team created it before any GPU work."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        body = {"metadata": {"name": TENANT_NAMESPACE, "labels": {"kubernetes.io/metadata.name": TENANT_NAMESPACE}}}
        try:
            client.CoreV1Api(self.api_client()).create_namespace(body)
        except ApiException as exc:
            if exc.status != 409:
                raise

    def wait_default_sa(self, timeout=30):
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        api = client.CoreV1Api(self.api_client())
        deadline = time.time() + timeout
        for namespace in ("default", TENANT_NAMESPACE):
            while True:
                try:
                    api.read_namespaced_service_account("default", namespace)
                    break
                except ApiException:
                    if time.time() > deadline:
                        raise RuntimeError(
                            "no default ServiceAccount in {0} (kube-controller-manager not working?)".format(namespace)
                        )
                    time.sleep(0.3)

    # ------------------------------------------------------------- lifecycle
    def _start_control_plane(self, bins=None):
        """Choose free ports (under ports_lock) and start etcd, the API server, the controllers and kwok."""
        if not all(port_free(port) for port in self.ports.values()):
            # Another work directory's cluster took these ports since they were chosen.
            offset = free_offset()
            self.ports = dict((k, v + offset) for k, v in PORTS.items())
            self.server = "https://127.0.0.1:{0}".format(self.ports["apiserver"])
            log("ports in use by another cluster; using offset {0}".format(offset))
        bins = bins or find_binaries()
        self.prepare()
        # .localcluster/bin: the binaries of the right version for humans (kubectl: `make cluster-up` builds it).
        link = os.path.join(self.workdir, "bin")
        if os.path.islink(link) or os.path.exists(link):
            os.remove(link)
        os.symlink(bins, link)
        t_bins = time.time()
        self.start_etcd(bins)
        self.start_apiserver(bins)
        log("kube-apiserver ready in {0:.1f}s".format(time.time() - t_bins))
        self.start_controllers(bins)
        self.start_kwok(bins)
        return bins

    def up(
        self,
        profile="kubernetes",
        workers=3,
        gpu_nodes=0,
        gpu_capacity=1,
        bins=None,
        gpu_node_mode=DEFAULT_GPU_NODE_MODE,
        openshift_version="4.16",
    ):
        """Start the cluster. ``gpu_node_mode`` (kubernetes profile): ``bare`` GPU nodes
        (hardware, kernel and OS only; NFD and the NVIDIA stack still to run) or
        ``ready`` ones (advertising ``nvidia.com/gpu`` and the NFD GPU label from the start).
        ``openshift_version`` (openshift profile) is the simulated release: 4.16 (RHCOS os-release
        ID=rhcos) or 4.19 (ID=rhel, VERSION_ID 9.6), any release of data/rhcos-builds.csv with a
        cluster_version."""
        if gpu_node_mode not in GPU_NODE_MODES:
            raise ValueError("gpu_node_mode must be one of {0}, not {1!r}".format(GPU_NODE_MODES, gpu_node_mode))
        t0 = time.time()
        if self.pid_of("kube-apiserver") and self.api_ready():
            log("already running (kubeconfig {0})".format(self.kubeconfig))
            return self.read_state()
        self.down(quiet=True)
        with ports_lock():
            bins = self._start_control_plane(bins)
        names = self.create_nodes(profile, workers, gpu_nodes, gpu_capacity, gpu_node_mode)
        pod_cidr = self.podnet_up()
        if profile == "openshift":
            sys.path.insert(0, HERE)
            from simopenshift import install

            install.install(self.api_client(), openshift_version=openshift_version)
            self.start_sim(profile, openshift_version, pod_cidr)
        else:
            # kwok leaves NVIDIA component pods and pods asking for nvidia.com/gpu
            # to the GPU node agent (kubelet + NVIDIA stack stand-in), so it runs
            # on plain Kubernetes too.
            self.start_sim("kubernetes", pod_cidr=pod_cidr)
        self.wait_nodes_ready(names)
        self.create_tenant_namespace()
        self.wait_default_sa()
        if profile == "openshift":
            wait_for_seeded(self)
        state = {
            "profile": profile,
            "openshift_version": openshift_version if profile == "openshift" else None,
            "gpu_nodes": gpu_nodes if profile == "kubernetes" else 0,
            "gpu_node_mode": gpu_node_mode,
            "kubeconfig": self.kubeconfig,
            "server": self.server,
            "bins": bins,
            "started": time.time(),
            "startup_seconds": round(time.time() - t0, 1),
            "pod_cidr": pod_cidr,
        }
        with open(self.state_file, "w") as f:
            json.dump(state, f, indent=2)
        log("Ready in {0:.1f}s (profile {1}); export KUBECONFIG={2}".format(time.time() - t0, profile, self.kubeconfig))
        return state

    def read_state(self):
        try:
            with open(self.state_file) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def restart_apiserver(self):
        """Stop and start kube-apiserver only (for watch re-establishment tests)."""
        bins = self.read_state().get("bins") or find_binaries()
        self.stop("kube-apiserver")
        self.start_apiserver(bins)

    def down(self, quiet=False):
        for name in reversed(ORDER):
            if self.pid_of(name):
                if not quiet:
                    log("stopping {0}".format(name))
            self.stop(name)
        # Anything else still holding our workdir (a helper a component forked).
        for pid, cmd in self.leftovers():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        left = self.leftovers()
        if left:
            raise RuntimeError("processes left behind: {0}".format(left))
        self.podnet_down()
        for sub in ("etcd",):
            shutil.rmtree(os.path.join(self.workdir, sub), ignore_errors=True)
        if os.path.exists(self.state_file):
            os.remove(self.state_file)
        if not quiet:
            log("stopped; no process left")


def podnet_cidr(slot):
    """The /22 of 10.128.0.0/14 with index ``slot`` (0-255)."""
    if not 0 <= slot < PODNET_SLOTS:
        raise ValueError("pod network slot out of range: {0}".format(slot))
    return "10.{0}.{1}.0/22".format(128 + slot // 64, (slot % 64) * 4)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cluster_alive(workdir):
    """True while the cluster of ``workdir`` has a live kube-apiserver."""
    try:
        with open(os.path.join(workdir, "pids", "kube-apiserver.pid")) as f:
            return _pid_alive(int(f.read().strip()))
    except (OSError, ValueError):
        return False


def claim_podnet_slot(workdir, directory=None, alive=cluster_alive):
    """Claim a free pod network slot for ``workdir`` (O_EXCL files in ``directory``); -> slot.

    A slot held by a work directory whose cluster is gone is taken over.
    """
    directory = directory or PODNET_DIR
    if not os.path.isdir(directory):
        os.makedirs(directory, exist_ok=True)
        try:
            os.chmod(directory, 0o1777)  # shared by every user's clusters, like /tmp
        except OSError:
            pass
    first = int(_fake_hex("podnet", workdir)[:4], 16) % PODNET_SLOTS
    for n in range(PODNET_SLOTS):
        slot = (first + n) % PODNET_SLOTS
        path = os.path.join(directory, "slot-{0:03d}".format(slot))
        for _attempt in range(2):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                try:
                    with open(path) as f:
                        owner = f.read().strip()
                except OSError:
                    owner = ""
                if owner == workdir:
                    return slot
                if owner and not alive(owner):
                    try:
                        os.remove(path)  # stale claim of a stopped cluster
                    except OSError:
                        break
                    continue
                break
            with os.fdopen(fd, "w") as f:
                f.write(workdir)
            return slot
    raise RuntimeError("no free pod network slot in {0}".format(directory))


def release_podnet_slot(workdir, slot, directory=None):
    path = os.path.join(directory or PODNET_DIR, "slot-{0:03d}".format(slot))
    try:
        with open(path) as f:
            if f.read().strip() != workdir:
                return
        os.remove(path)
    except OSError:
        pass


def _ip_route(action, cidr):
    """(ok, error) of ``ip route <action> local <cidr> dev lo``."""
    try:
        proc = subprocess.run(
            ["ip", "route", action, "local", cidr, "dev", "lo"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            check=False,
        )
    except OSError as exc:
        return False, str(exc)
    return proc.returncode == 0, proc.stderr.decode("utf-8", "replace").strip()


def wait_for_seeded(cluster, timeout=40):
    sys.path.insert(0, HERE)
    from simopenshift import install

    if hasattr(install, "wait_ready"):
        install.wait_ready(cluster.api_client(), timeout=timeout)


def fake_node(name, labels, taints, cpu, memory, extra=None):
    base_labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "type": "kwok",
    }
    base_labels.update(labels)
    resources = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"}
    resources.update(extra or {})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": base_labels, "annotations": {"kwok.x-k8s.io/node": "fake"}},
        "spec": {"taints": taints},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def gpu_node(name, gpus):
    """A node that already advertises nvidia.com/gpu (``--gpu-node-mode ready``).

    Its GPU is not declared (no instance type), so the GPU node agent takes it to
    have a host-installed driver: the module benchmarks' ready-made GPU nodes.
    """
    return fake_node(
        name,
        {
            "node-role.kubernetes.io/worker": "",
            "nvidia.com/gpu.present": "true",
            "feature.node.kubernetes.io/pci-10de.present": "true",
        },
        [],
        cpu="8",
        memory="61Gi",
        extra={"nvidia.com/gpu": str(gpus)},
    )


def node_info(name, os_image, kernel):
    """status.nodeInfo as a kubelet on that OS reports it (kwok keeps what is set)."""
    return {
        "architecture": "amd64",
        "operatingSystem": "linux",
        "kernelVersion": kernel,
        "osImage": os_image,
        "kubeletVersion": KUBELET_VERSION,
        "kubeProxyVersion": KUBELET_VERSION,
        "containerRuntimeVersion": CONTAINERD_VERSION,
        "bootID": _fake_hex("boot", name, 0),
        "machineID": _fake_hex("machine", name),
        "systemUUID": _fake_hex("uuid", name),
    }


def bare_gpu_node(name, index, gpus=None):
    """A GPU node as a plain-Kubernetes cluster registers it before NFD and the NVIDIA stack
    (``--gpu-node-mode bare``): the cloud's instance-type/zone labels, CPU and memory
    from the instance type, the OS and kernel in nodeInfo, and nothing NVIDIA: no
    ``feature.node.kubernetes.io/*`` label, no ``nvidia.com/gpu`` resource.

    Node ``index`` picks the GPU model (BARE_GPU_INSTANCE_TYPES) and, independently,
    the OS and kernel (BARE_GPU_OS), so two nodes already give two models and two
    kernels. ``gpus`` other than the instance type's count is declared with the
    simulation's ``sim.gpuops.io/gpu-count`` annotation.
    """
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    from simopenshift import catalog

    itype = catalog.instance_type(BARE_GPU_INSTANCE_TYPES[index % len(BARE_GPU_INSTANCE_TYPES)])
    os_image, kernel = BARE_GPU_OS[index % len(BARE_GPU_OS)]
    zone = BARE_GPU_ZONES[index % len(BARE_GPU_ZONES)]
    body = fake_node(
        name,
        {
            "node-role.kubernetes.io/worker": "",
            "node.kubernetes.io/instance-type": itype.name,
            "topology.kubernetes.io/region": BARE_GPU_REGION,
            "topology.kubernetes.io/zone": zone,
        },
        [],
        cpu=str(itype.vcpu),
        memory="{0}Mi".format(itype.memory_mib),
    )
    if gpus is not None and gpus != itype.gpu_count:
        body["metadata"]["annotations"][catalog.ANN_GPU_COUNT] = str(gpus)
    body["spec"]["providerID"] = "aws:///{0}/i-{1}".format(zone, _fake_hex("instance", name)[:17])
    body["status"]["nodeInfo"] = node_info(name, os_image, kernel)
    return body


def kubernetes_nodes(workers, gpu_nodes, gpu_capacity=1, gpu_node_mode=DEFAULT_GPU_NODE_MODE):
    """The Node bodies of the plain Kubernetes profile: 3 tainted control-plane nodes,
    ``workers`` CPU workers and ``gpu_nodes`` GPU nodes (``bare`` or ``ready``)."""
    if gpu_node_mode not in GPU_NODE_MODES:
        raise ValueError("gpu_node_mode must be one of {0}, not {1!r}".format(GPU_NODE_MODES, gpu_node_mode))
    os_image, kernel = BARE_GPU_OS[0]
    nodes = []
    for i in range(3):
        name = "control-plane-{0}".format(i)
        labels = {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/master": ""}
        taints = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
        nodes.append(fake_node(name, labels, taints, cpu="8", memory="32Gi"))
    for i in range(workers):
        nodes.append(
            fake_node("worker-{0}".format(i), {"node-role.kubernetes.io/worker": ""}, [], cpu="16", memory="64Gi")
        )
    if gpu_node_mode == "bare":
        # The CPU nodes report their OS too (as every kubelet does); ready mode keeps today's nodes.
        for body in nodes:
            body["status"]["nodeInfo"] = node_info(body["metadata"]["name"], os_image, kernel)
    for i in range(gpu_nodes):
        name = "gpu-{0}".format(i)
        if gpu_node_mode == "bare":
            nodes.append(bare_gpu_node(name, i, gpu_capacity if gpu_capacity != 1 else None))
        else:
            nodes.append(gpu_node(name, gpu_capacity))
    return nodes


def _fake_hex(*parts):
    import hashlib

    return hashlib.sha256("/".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:32]


def find_binaries():
    """Directory with the control-plane binaries (kubectl too once `make cluster-up` built it): cached, or built now."""
    proc = subprocess.run(["bash", os.path.join(HERE, "build.sh")], stdout=subprocess.PIPE, check=True)
    return proc.stdout.decode().strip().splitlines()[-1]


@contextlib.contextmanager
def ports_lock(path=None):
    """One cluster at a time chooses and binds its ports (an exclusive flock, released on exit or crash)."""
    with open(path or PORTS_LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def free_offset(step=100, tries=50):
    """The first port offset at which every port of the test bed is free.

    Clusters of other work directories (git worktrees, CI next to a developer)
    then run side by side instead of answering each other's requests.
    """
    for n in range(tries):
        if all(port_free(port + n * step) for port in PORTS.values()):
            return n * step
    raise RuntimeError("no free port range for the local cluster (set GPUOPS_PORT_OFFSET)")


def port_free(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["up", "down", "status", "restart-apiserver", "build"])
    p.add_argument("--workdir", default=os.environ.get("GPUOPS_LOCALCLUSTER_DIR", DEFAULT_WORKDIR))
    p.add_argument(
        "--port-offset",
        type=int,
        default=None,
        help="add to every port so clusters in other work directories can run side by side (env GPUOPS_PORT_OFFSET)",
    )
    p.add_argument(
        "--profile",
        choices=["kubernetes", "openshift"],
        default=os.environ.get("PROFILE", "kubernetes") or "kubernetes",
    )
    p.add_argument("--workers", type=int, default=3, help="CPU worker nodes (kubernetes profile)")
    p.add_argument(
        "--gpu-nodes",
        type=int,
        default=int(os.environ.get("GPU_NODES", "0") or 0),
        help="simulated GPU nodes (kubernetes profile; see --gpu-node-mode)",
    )
    p.add_argument("--gpus-per-node", type=int, default=1)
    p.add_argument(
        "--gpu-node-mode",
        choices=list(GPU_NODE_MODES),
        default=os.environ.get("GPU_NODE_MODE", DEFAULT_GPU_NODE_MODE) or DEFAULT_GPU_NODE_MODE,
        help="kubernetes profile: 'bare' GPU nodes (hardware, kernel, OS; no NFD label, no nvidia.com/gpu until "
        "NFD and the NVIDIA stack run) or 'ready' ones advertising nvidia.com/gpu (env GPU_NODE_MODE)",
    )
    p.add_argument(
        "--openshift-version",
        default=os.environ.get("OPENSHIFT_VERSION", "4.16") or "4.16",
        help="simulated OpenShift release (openshift profile): 4.16 (RHCOS, ID=rhcos) or 4.19 (ID=rhel, VERSION_ID 9.6)",
    )
    a = p.parse_args(argv)
    c = LocalCluster(a.workdir, a.port_offset if a.command == "up" else None)
    try:
        if a.command == "build":
            print(find_binaries())
        elif a.command == "up":
            state = c.up(
                a.profile,
                a.workers,
                a.gpu_nodes,
                a.gpus_per_node,
                gpu_node_mode=a.gpu_node_mode,
                openshift_version=a.openshift_version,
            )
            print(json.dumps(state, indent=2))
        elif a.command == "down":
            c.down()
        elif a.command == "restart-apiserver":
            c.restart_apiserver()
        else:
            running = {n: c.pid_of(n) for n in ORDER}
            print(json.dumps({"api_ready": c.api_ready(), "pids": running, "state": c.read_state()}, indent=2))
    except RuntimeError as e:
        log("error: {0}".format(e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
