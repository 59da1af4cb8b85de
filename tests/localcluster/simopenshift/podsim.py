# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Playing kubelet for pods the simulation owns (kwok's pod stages skip them).

Two things a real kubelet provides are reproduced here:

* the pod status: phase, conditions, containerStatuses with waiting /
  running / terminated states, restartCount, CrashLoopBackOff, and for
  terminated containers a termination ``message`` (the tail of the log, only
  where ``terminationMessagePolicy: FallbackToLogsOnError`` gives one: a
  non-zero exit);
* the container log, readable through the normal ``pods/log`` API: the text
  is written to a CRI-format file under ``<workdir>/podlogs`` and a kwok
  ``Logs`` object (kwok.x-k8s.io/v1alpha1, same name/namespace as the pod,
  owned by the pod) points kwok's kubelet endpoint at it. This needs kwok
  started with ``--enable-crds=Logs``. kwok serves a log only once its informer
  has the Logs object; after an API server restart its watch ends at once and
  it lists again on client-go's backoff (34-56 s later in one CI run's audit log,
  and pods waited 87 s and 92 s in the next),
  while a kubelet has a container's log from its start. So a status that shows a container ended (Succeeded, Failed,
  restarted: what validation, burn-in and failure reports read the log of on
  sight) is posted only once kwok serves that pod's log
  (:meth:`LogStore.ensure_served`).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import logging
import os
import threading
import time

from kubernetes.client.rest import ApiException

from simopenshift import catalog
from simopenshift.kube import KWOK_LOGS, PODS, meta, name_of, namespace_of, now_rfc3339

LOG = logging.getLogger("simopenshift.podsim")

CLUSTER_NETWORK_PREFIX = "10.128"  # OpenShift default clusterNetwork 10.128.0.0/14


def _hashed_ip(pod):
    digest = catalog.fake_hex(4, meta(pod).get("uid") or name_of(pod))
    return "%s.%d.%d" % (CLUSTER_NETWORK_PREFIX, int(digest[:2], 16) % 4, int(digest[2:], 16) % 254 + 1)


class PodNetwork(object):
    """Pod IPs of agent-owned pods.

    Without a CIDR: a hash of the pod uid in 10.128.0.0/14 (no route: nothing
    listens there). With the cluster's own pod CIDR (``--pod-cidr``, which the
    launcher routes locally: ``ip route add local <cidr> dev lo``) every pod gets
    a distinct address of that range, kept while the pod lives (its
    status.podIP), so the simulated dcgm-exporter can listen on its pod's IP and
    the API server's pod/service proxy reaches it.
    """

    def __init__(self, cidr=None):
        self.lock = threading.Lock()
        self.assigned = {}
        self.network = None
        self.configure(cidr)

    def configure(self, cidr):
        import ipaddress

        with self.lock:
            self.network = ipaddress.ip_network("%s" % cidr, strict=False) if cidr else None
            self.assigned = {}

    @property
    def cidr(self):
        return str(self.network) if self.network is not None else None

    def contains(self, ip):
        import ipaddress

        if self.network is None or not ip:
            return False
        try:
            return ipaddress.ip_address("%s" % ip) in self.network
        except ValueError:
            return False

    def address(self, pod):
        if self.network is None:
            return _hashed_ip(pod)
        uid = meta(pod).get("uid") or name_of(pod)
        current = (pod.get("status") or {}).get("podIP")
        with self.lock:
            if self.contains(current) and self.assigned.get(current) in (None, uid):
                self.assigned[current] = uid
                return current
            hosts = self.network.num_addresses - 2
            start = int(catalog.fake_hex(8, uid), 16)
            for step in range(hosts):
                ip = str(self.network.network_address + 1 + (start + step) % hosts)
                if self.assigned.get(ip) in (None, uid):
                    self.assigned[ip] = uid
                    return ip
        raise RuntimeError("pod network %s exhausted" % self.network)

    def release(self, pod):
        uid = meta(pod).get("uid") or name_of(pod)
        with self.lock:
            for ip in [ip for ip, owner in self.assigned.items() if owner == uid]:
                del self.assigned[ip]


NETWORK = PodNetwork(os.environ.get("GPUOPS_SIM_POD_CIDR") or None)


def pod_ip(pod):
    return NETWORK.address(pod)


def container_id(pod, container, restart=0):
    return "cri-o://" + catalog.fake_hex(64, meta(pod).get("uid"), container, restart)


def _image_id(image):
    if "@sha256:" in image:
        return image
    return image.split(":")[0] + "@" + catalog.fake_digest("image", image)


# What kwok's log endpoint answers for a pod whose Logs object it has not seen (kwok v0.7.0
# pkg/kwok/server/debugging_logs.go getPodLogs).
KWOK_NOT_SERVED = ("no logs found for container", "log target not found for container")


class LogNotServed(Exception):
    """kwok does not serve a published log yet: the status waits (the node is looked at again shortly)."""

    def __init__(self, message, first=True):
        super(LogNotServed, self).__init__(message)
        self.first = first  # the first time this pod was held (said once, not on every look)


class LogStore(object):
    """CRI-format log files plus the kwok Logs objects that publish them."""

    def __init__(self, client, workdir):
        self.client = client
        self.root = os.path.join(workdir, "podlogs")
        self.published = set()
        self.served = set()  # pod uids whose log kwok was seen serving
        self.held = {}  # pod uid -> when kwok first did not serve its log
        # what each log file holds: a node's reconcile re-applies every pod's log, and rewriting unchanged files
        # was a good part of the simulator's CPU at 100 GPU nodes (a real container log is written once anyway)
        self.written = {}
        self.lock = threading.Lock()

    def path(self, pod, container, previous=False):
        uid = meta(pod).get("uid") or "nouid"
        folder = os.path.join(self.root, "%s_%s_%s" % (namespace_of(pod), name_of(pod), uid))
        return os.path.join(folder, "%s%s.log" % (container, ".previous" if previous else ""))

    def write(self, pod, container, text, previous_text=None):
        """Replace a container's log; returns the file path."""
        path = self.path(pod, container)
        with self.lock:
            if self.written.get(path) == (text, previous_text) and os.path.exists(path):
                return path
        folder = os.path.dirname(path)
        if not os.path.isdir(folder):
            os.makedirs(folder)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000000000Z"
        lines = text.split("\n") if text else []
        if lines and lines[-1] == "":
            lines.pop()
        tmp = path + ".tmp"
        with open(tmp, "w") as handle:
            for line in lines:
                handle.write("%s stdout F %s\n" % (stamp, line))
        os.rename(tmp, path)
        if previous_text is not None:
            with open(self.path(pod, container, previous=True), "w") as handle:
                for line in previous_text.rstrip("\n").split("\n"):
                    handle.write("%s stdout F %s\n" % (stamp, line))
        with self.lock:
            self.written[path] = (text, previous_text)
        return path

    def started(self, pod, containers):
        """An empty log for each container that has none yet, published."""
        with self.lock:
            if meta(pod).get("uid") in self.published:
                return
        for container in containers:
            if not os.path.exists(self.path(pod, container)):
                self.write(pod, container, "")
        self.publish(pod, containers)

    def publish(self, pod, containers):
        """Make sure a Logs object points every container at its file."""
        uid = meta(pod).get("uid")
        with self.lock:
            if uid in self.published:
                return
        logs = []
        for container in containers:
            entry = {"containers": [container], "logsFile": self.path(pod, container), "follow": False}
            previous = self.path(pod, container, previous=True)
            entry["previousLogsFile"] = previous
            logs.append(entry)
        body = {
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "Logs",
            "metadata": {
                "name": name_of(pod),
                "namespace": namespace_of(pod),
                "labels": {"app.kubernetes.io/managed-by": "simopenshift"},
                # Garbage-collected with the pod.
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name_of(pod), "uid": uid}],
            },
            "spec": {"logs": logs},
        }
        try:
            self.client.create(KWOK_LOGS, body)
        except ApiException as exc:
            if exc.status == 409:
                existing = self.client.get(KWOK_LOGS, name_of(pod), namespace_of(pod))
                owner = ((existing or {}).get("metadata") or {}).get("ownerReferences") or [{}]
                if owner[0].get("uid") != uid:  # left over from an older pod of the same name
                    self.client.patch(
                        KWOK_LOGS, name_of(pod), {"metadata": body["metadata"], "spec": body["spec"]}, namespace_of(pod)
                    )
            elif exc.status == 404:
                LOG.warning("kwok Logs CRD missing: pod logs for %s/%s are not served", namespace_of(pod), name_of(pod))
            else:
                raise
        with self.lock:
            self.published.add(uid)

    def is_published(self, pod):
        with self.lock:
            return meta(pod).get("uid") in self.published

    def ensure_served(self, pod, container):
        """Raise LogNotServed while kwok answers the pod's log with "no logs found" (once per pod, then cached).

        A kubelet writes a container's log before it reports the container started or ended, so a reader that
        sees the status finds the log; kwok finds it only through its Logs informer, which can lag the object.
        Any other answer (the log, or an error that is not kwok's "not found") lets the status go on.
        """
        uid = meta(pod).get("uid")
        with self.lock:
            if uid in self.served:
                return
        what = "%s/%s" % (namespace_of(pod), name_of(pod))
        try:
            self.client.read_log(PODS, name_of(pod), namespace_of(pod), container, limit_bytes=1)
        except ApiException as exc:
            body = exc.body.decode("utf-8", "replace") if isinstance(exc.body, bytes) else exc.body or ""
            if any(text in body for text in KWOK_NOT_SERVED):
                with self.lock:
                    first = uid not in self.held
                    self.held.setdefault(uid, time.time())
                raise LogNotServed("kwok does not serve the log of %s yet (its Logs informer lags)" % what, first)
            LOG.debug("log of %s: %s %s", what, exc.status, exc.reason)
        with self.lock:
            self.served.add(uid)
            since = self.held.pop(uid, None)
        if since is not None:
            LOG.info("kwok serves the log of %s after %.1fs: its status goes on", what, time.time() - since)

    def forget(self, pod):
        folder = os.path.dirname(self.path(pod, "x")) + os.sep
        with self.lock:
            self.published.discard(meta(pod).get("uid"))
            self.served.discard(meta(pod).get("uid"))
            self.held.pop(meta(pod).get("uid"), None)
            for path in [p for p in self.written if p.startswith(folder)]:
                del self.written[path]


def ended(states):
    """Has a container ended (terminated now, or restarted after it did)? Its log is read on sight of the status."""
    return any(state.kind == ContainerState.TERMINATED or state.restarts for state in states.values())


def tail(text, lines=20, limit=4096):
    kept = "\n".join((text or "").rstrip("\n").split("\n")[-lines:])
    return kept[-limit:]


def termination_message(pod, exit_code, log):
    """The terminated state's ``message`` as the kubelet sets it when the program wrote no termination-log file
    (the simulated programs never do): with ``terminationMessagePolicy: FallbackToLogsOnError`` and a non-zero exit,
    the log's last 80 lines, at most 2,048 bytes; otherwise none (core/v1 Container.terminationMessagePolicy;
    kubelet kuberuntime_container.go, kubecontainer.MaxContainerTerminationMessageLogLines/-Length)."""
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    if not exit_code or containers[0].get("terminationMessagePolicy") != "FallbackToLogsOnError":
        return None
    kept = tail(log, lines=80, limit=2048)
    return kept or None


class ContainerState(object):
    """What one container is doing; rendered into a containerStatus."""

    WAITING = "waiting"
    RUNNING = "running"
    TERMINATED = "terminated"

    def __init__(
        self,
        kind,
        reason=None,
        message=None,
        exit_code=None,
        ready=False,
        restarts=0,
        started_at=None,
        finished_at=None,
        last_exit_code=None,
        last_reason=None,
        last_finished=None,
        last_message=None,
    ):
        self.kind = kind
        self.last_message = last_message
        self.reason = reason
        self.message = message
        self.exit_code = exit_code
        self.ready = ready
        self.restarts = restarts
        self.started_at = started_at
        self.finished_at = finished_at
        self.last_exit_code = last_exit_code
        self.last_reason = last_reason
        self.last_finished = last_finished


def running(started_at, ready=True, restarts=0):
    return ContainerState(ContainerState.RUNNING, ready=ready, restarts=restarts, started_at=started_at)


def waiting(
    reason, message=None, restarts=0, last_exit_code=None, last_finished=None, last_reason=None, last_message=None
):
    return ContainerState(
        ContainerState.WAITING,
        reason=reason,
        message=message,
        restarts=restarts,
        last_exit_code=last_exit_code,
        last_reason=last_reason or ("Error" if last_exit_code else None),
        last_finished=last_finished,
        last_message=last_message,
    )


def terminated(exit_code, started_at, finished_at, message=None, restarts=0):
    reason = "Completed" if exit_code == 0 else "Error"
    return ContainerState(
        ContainerState.TERMINATED,
        reason=reason,
        message=message,
        exit_code=exit_code,
        restarts=restarts,
        started_at=started_at,
        finished_at=finished_at,
    )


def _container_status(pod, container, state):
    status = {
        "name": container["name"],
        "image": container.get("image", ""),
        "imageID": (
            _image_id(container.get("image", "")) if state.kind != ContainerState.WAITING or state.restarts else ""
        ),
        "ready": bool(state.ready),
        "restartCount": state.restarts,
        "started": state.kind == ContainerState.RUNNING,
    }
    if state.kind != ContainerState.WAITING or state.restarts:
        status["containerID"] = container_id(pod, container["name"], state.restarts)
    if state.kind == ContainerState.RUNNING:
        status["state"] = {"running": {"startedAt": now_rfc3339(state.started_at)}}
    elif state.kind == ContainerState.TERMINATED:
        term = {
            "exitCode": state.exit_code,
            "reason": state.reason,
            "startedAt": now_rfc3339(state.started_at),
            "finishedAt": now_rfc3339(state.finished_at),
            "containerID": container_id(pod, container["name"], state.restarts),
        }
        if state.message:
            term["message"] = state.message
        status["state"] = {"terminated": term}
    else:
        wait = {"reason": state.reason}
        if state.message:
            wait["message"] = state.message
        status["state"] = {"waiting": wait}
    if state.last_exit_code is not None:
        status["lastState"] = {
            "terminated": {
                "exitCode": state.last_exit_code,
                "reason": state.last_reason or "Error",
                "finishedAt": now_rfc3339(state.last_finished),
                "startedAt": now_rfc3339(state.last_finished),
                "containerID": container_id(pod, container["name"], max(state.restarts - 1, 0)),
            }
        }
        if state.last_message:
            status["lastState"]["terminated"]["message"] = state.last_message
    else:
        status["lastState"] = {}
    return status


def _init_status(pod, container, index, initialized, start_time):
    status = {
        "name": container["name"],
        "image": container.get("image", ""),
        "imageID": _image_id(container.get("image", "")),
        "restartCount": 0,
        "started": not initialized and index == 0,
        "ready": initialized,
        "lastState": {},
    }
    if initialized:
        # A container that completed keeps the time it finished (kubelet reports the runtime's record).
        previous = [
            (c.get("state") or {}).get("terminated") or {}
            for c in (pod.get("status") or {}).get("initContainerStatuses") or []
            if isinstance(c, dict) and c.get("name") == container["name"]
        ]
        finished = (previous[0].get("finishedAt") if previous else None) or now_rfc3339()
        status["state"] = {
            "terminated": {
                "exitCode": 0,
                "reason": "Completed",
                "startedAt": now_rfc3339(start_time),
                "finishedAt": finished,
                "containerID": container_id(pod, container["name"], 0),
            }
        }
        status["containerID"] = container_id(pod, container["name"], 0)
    elif index == 0:
        status["state"] = {"running": {"startedAt": now_rfc3339(start_time)}}
        status["containerID"] = container_id(pod, container["name"], 0)
    else:
        status["state"] = {"waiting": {"reason": "PodInitializing"}}
    return status


def container_statuses(pod):
    return (pod.get("status") or {}).get("containerStatuses") or []


def pod_status(pod, states, host_ip, start_time):
    """A full pod status from per-container states (dict name -> ContainerState)."""
    containers = (pod.get("spec") or {}).get("containers") or []
    statuses = [_container_status(pod, c, states[c["name"]]) for c in containers]
    kinds = [states[c["name"]].kind for c in containers]
    all_ready = all(states[c["name"]].ready for c in containers)
    restart_policy = (pod.get("spec") or {}).get("restartPolicy", "Always")
    if kinds and all(k == ContainerState.TERMINATED for k in kinds) and restart_policy != "Always":
        failed = any(states[c["name"]].exit_code for c in containers)
        if not failed:
            phase = "Succeeded"
        else:
            # OnFailure restarts the container: the pod stays Running.
            phase = "Failed" if restart_policy == "Never" else "Running"
    elif any(k == ContainerState.RUNNING for k in kinds) or any(states[c["name"]].restarts for c in containers):
        phase = "Running"
    else:
        phase = "Pending"
    stamp = now_rfc3339()
    initialized = phase != "Pending" or any(
        states[c["name"]].reason not in ("PodInitializing", "Init:0/1") for c in containers
    )
    completed = phase in ("Succeeded", "Failed")

    # As kubelet's status manager (pkg/kubelet/status/status_manager.go, updateLastTransitionTime): a condition
    # whose status did not change keeps its lastTransitionTime, so a later status write (a new message, an init
    # container's state) does not move when the pod became Ready.
    before = dict((c.get("type"), c) for c in (pod.get("status") or {}).get("conditions") or [] if isinstance(c, dict))

    def cond(ctype, ok, reason=None):
        status = "True" if ok else "False"
        old = before.get(ctype) or {}
        since = old.get("lastTransitionTime") if old.get("status") == status else None
        entry = {"type": ctype, "status": status, "lastProbeTime": None, "lastTransitionTime": since or stamp}
        if reason:
            entry["reason"] = reason
        return entry

    not_ready_reason = "PodCompleted" if completed else "ContainersNotReady"
    conditions = [
        cond("PodReadyToStartContainers", phase != "Pending" or initialized),
        cond("Initialized", initialized, None if initialized else "ContainersNotInitialized"),
        cond("Ready", all_ready and not completed, None if all_ready and not completed else not_ready_reason),
        cond("ContainersReady", all_ready and not completed, None if all_ready and not completed else not_ready_reason),
        cond("PodScheduled", True),
    ]
    status = {
        "phase": phase,
        "conditions": conditions,
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "startTime": now_rfc3339(start_time),
        "containerStatuses": statuses,
        "qosClass": (pod.get("status") or {}).get("qosClass") or "BestEffort",
    }
    inits = (pod.get("spec") or {}).get("initContainers") or []
    if inits:
        # Init containers run in order and must all complete before the containers start (a waiting loop is
        # still running while the pod initialises).
        status["initContainerStatuses"] = [
            _init_status(pod, c, i, initialized, start_time) for i, c in enumerate(inits)
        ]
    if phase != "Pending" or initialized:
        ip = pod_ip(pod) if not (pod.get("spec") or {}).get("hostNetwork") else host_ip
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    return status


def same_status(current, desired):
    """True when patching would change nothing a reader looks at (ignores timestamps)."""

    def strip(status):
        status = dict(status or {})
        status["conditions"] = sorted(
            ((c.get("type"), c.get("status"), c.get("reason")) for c in status.get("conditions") or [])
        )
        cs = []
        for c in status.get("containerStatuses") or []:
            state = c.get("state") or {}
            kind = next(iter(state), None)
            detail = state.get(kind) or {}
            cs.append(
                (
                    c.get("name"),
                    c.get("ready"),
                    c.get("restartCount"),
                    kind,
                    detail.get("reason"),
                    detail.get("exitCode"),
                    detail.get("message"),
                )
            )
        status["containerStatuses"] = cs
        for drop in ("startTime", "hostIPs", "podIPs", "qosClass"):
            status.pop(drop, None)
        return status

    return strip(current) == strip(desired)


def patch_pod_status(client, pod, status):
    return client.patch(PODS, name_of(pod), {"status": status}, namespace_of(pod), subresource="status")
