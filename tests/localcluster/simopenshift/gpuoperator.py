# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""NVIDIA GPU Operator, simulated: ClusterPolicy -> operand DaemonSets and status (both profiles).

What the real operator (NVIDIA/gpu-operator v26.7.0) does and this controller reproduces:

* It acts only while its Deployment ``gpu-operator`` (created by OLM from the CSV on OpenShift, by the Helm chart
  ``deployments/gpu-operator`` on Kubernetes) is available; the operand namespace is the Deployment's. Its image
  env (DRIVER_IMAGE, ...) is where images come from unless the
  ClusterPolicy names repository + image + version (``api/nvidia/v1/clusterpolicy_types.go`` imagePath: a
  partial triple is an error, "invalid image specification: repository, image and version must all be set").
* The oldest ClusterPolicy is the singleton; any other gets ``status.state: ignored``
  (``controllers/clusterpolicy_controller.go``).
* GPU nodes are those NFD labelled ``feature.node.kubernetes.io/pci-10de.present`` (or the 0300/0302 class
  forms); each gets ``nvidia.com/gpu.present=true`` and the ``nvidia.com/gpu.deploy.<operand>=true`` labels
  that the operand DaemonSets select on (``controllers/state_manager.go`` gpuStateLabels), unless it opted out
  with ``nvidia.com/gpu.deploy.operands=false``.
* Operands, as the assets and transforms of ``controllers/object_controls.go`` make them: the driver (on
  OpenShift with ``operator.use_ocp_driver_toolkit``, one DaemonSet per RHCOS build,
  ``nvidia-driver-daemonset-<build>``, main container ``nv-ctr-run-with-dtk`` + the Driver Toolkit sidecar
  ``dtk-build-driver``; the image tag gets ``-rhcos<x.y>`` unless it is a digest; elsewhere one DaemonSet, tag
  ``-<os ID><VERSION_ID>`` such as ``-ubuntu22.04``), the container toolkit (RUNTIME from the node's runtime; the
  runtime's config, drop-in and socket env and host mounts of transformRuntimeConfigAndSocketMounts; CDI env when
  ``cdi.enabled``), device plugin (config-manager when
  ``devicePlugin.config.name`` is set), GFD (USE_NODE_FEATURE_API=false on OpenShift), DCGM (host engine) and
  dcgm-exporter, the operator validator and the node status exporter; ``runtimeClassName: nvidia`` on the
  operands unless CRI-O runs without CDI; RuntimeClass ``nvidia``.
* ``status.state`` ``ready`` when every enabled operand's DaemonSet is available on all its nodes, else
  ``notReady`` with the Error condition "states not ready: [...]"; ``ready`` with reason NoGPUNodes when there
  is no GPU node.

The simulated node agent (agent.py) plays kubelet for the driver, toolkit, device plugin, GFD, exporter and
validator pods (by their real ``app`` labels, gpustack.component) and judges them as it judges anyone's: image
contents, runtime, mounts, env. The DCGM host engine and node status exporter run as plain kwok pods.
* With ``driver.useNvidiaDriverCRD`` (the chart's ``driver.nvidiaDriverCRD.enabled``) the ClusterPolicy leaves the
  driver to NVIDIADriver objects (``controllers/nvidiadriver_controller.go``, ``internal/state/driver.go``,
  ``nodepool.go``): each GPU node gets the owner label ``nvidia.com/gpu-operator.driver.owner`` of the NVIDIADriver
  whose nodeSelector matches it (else the ``default: true`` one; ``nvidiadriverutil.AssignOwners``), and each CR gets
  one driver DaemonSet per node pool - OS tag (``ubuntu22.04``), plus the kernel with precompiled drivers or the
  RHCOS build on OpenShift - named ``nvidia-<driverType>-driver-<osTag>-<hash>`` (getDriverAppName: FNV-32a of the
  CR's uid [+ kernel or RHCOS build], apimachinery SafeEncodeString), image ``<repository>/<image>:<version>-<osTag>``
  (precompiled: ``<version>-<kernel>-<osTag>``); ``status.state`` ready/notReady.

Not simulated: MIG manager, vGPU, sandbox workloads, GDS, precompiled drivers through the ClusterPolicy, NVIDIADriver
node-selector conflicts, driver upgrade policy (the DaemonSets use OnDelete, as the operator's do when autoUpgrade
is on).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from kubernetes.client.rest import ApiException

from simopenshift import apis
from simopenshift.kube import (
    DAEMONSETS,
    DEPLOYMENTS,
    NODES,
    ROLEBINDINGS,
    RUNTIMECLASSES,
    SERVICEACCOUNTS,
    SERVICES,
    Controller,
    labels_of,
    meta,
    name_of,
    namespace_of,
    now_rfc3339,
    owner_ref,
)

OPERATOR_DEPLOYMENT = "gpu-operator"
KEY = "cluster"  # one work item: the ClusterPolicies are reconciled together (singleton rule)
GPU_NODE_LABELS = (
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
)
PRESENT = "nvidia.com/gpu.present"
OPT_OUT = "nvidia.com/gpu.deploy.operands"
OSTREE = "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"
OS_ID = "feature.node.kubernetes.io/system-os_release.ID"
OS_VERSION = "feature.node.kubernetes.io/system-os_release.VERSION_ID"
MANAGEMENT_KIND = "management.nvidia.com/gpu"
TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
FIRMWARE = [
    ("nv-firmware", "/run/nvidia/driver/lib/firmware", "/lib/firmware"),
    (
        "firmware-search-path",
        "/sys/module/firmware_class/parameters/path",
        "/sys/module/firmware_class/parameters/path",
    ),
]
DTK_ARGS = (
    "until [ -f /mnt/shared-nvidia-driver-toolkit/dir_prepared ]; do echo Waiting for nvidia-driver-ctr container to "
    "prepare the shared directory ...; sleep 10; done; exec /mnt/shared-nvidia-driver-toolkit/ocp_dtk_entrypoint "
    "dtk-build-driver"
)

# state name -> (spec key, DaemonSet name, app label, deploy label, service account, image env)
STATES = (
    ("state-driver", "driver", "nvidia-driver-daemonset", "driver", "nvidia-driver", "DRIVER_IMAGE"),
    (
        "state-container-toolkit",
        "toolkit",
        "nvidia-container-toolkit-daemonset",
        "container-toolkit",
        "nvidia-container-toolkit",
        "CONTAINER_TOOLKIT_IMAGE",
    ),
    (
        "state-operator-validation",
        "validator",
        "nvidia-operator-validator",
        "operator-validator",
        "nvidia-operator-validator",
        "VALIDATOR_IMAGE",
    ),
    (
        "state-device-plugin",
        "devicePlugin",
        "nvidia-device-plugin-daemonset",
        "device-plugin",
        "nvidia-device-plugin",
        "DEVICE_PLUGIN_IMAGE",
    ),
    ("state-dcgm", "dcgm", "nvidia-dcgm", "dcgm", "nvidia-dcgm", "DCGM_IMAGE"),
    (
        "state-dcgm-exporter",
        "dcgmExporter",
        "nvidia-dcgm-exporter",
        "dcgm-exporter",
        "nvidia-dcgm-exporter",
        "DCGM_EXPORTER_IMAGE",
    ),
    (
        "gpu-feature-discovery",
        "gfd",
        "gpu-feature-discovery",
        "gpu-feature-discovery",
        "nvidia-gpu-feature-discovery",
        "GFD_IMAGE",
    ),
    (
        "state-node-status-exporter",
        "nodeStatusExporter",
        "nvidia-node-status-exporter",
        "node-status-exporter",
        "nvidia-node-status-exporter",
        "VALIDATOR_IMAGE",
    ),
)
# Operands the ClusterPolicy cannot switch off (no ``enabled`` field in the CRD's spec for them).
ALWAYS = ("validator",)


class ImageError(ValueError):
    pass


def image_path(spec, env, env_name):
    """clusterpolicy_types.go imagePath: the ClusterPolicy's repository/image/version, else the operator's env."""
    repository, image, version = spec.get("repository") or "", spec.get("image") or "", spec.get("version") or ""
    if repository or version:
        if not (repository and image and version):
            raise ImageError(
                "invalid image specification: repository, image and version must all be set (repository=%s, "
                "image=%s, version=%s)" % (repository, image, version)
            )
        return "%s/%s%s%s" % (repository, image, "@" if version.startswith("sha256:") else ":", version)
    if image:
        return image
    if env.get(env_name):
        return env[env_name]
    raise ImageError("empty image path provided through both ClusterPolicy CR and ENV %s" % env_name)


def enabled(spec, key):
    if key in ALWAYS:
        return True
    value = (spec.get(key) or {}).get("enabled")
    return True if value is None else bool(value)


def gpu_node(node):
    labels = labels_of(node)
    return any(labels.get(k) == "true" for k in GPU_NODE_LABELS)


def env_list(pairs):
    return [{"name": k, "value": v} for k, v in pairs]


def host_volume(name, path, kind=None):
    volume = {"name": name, "hostPath": {"path": path}}
    if kind:
        volume["hostPath"]["type"] = kind
    return volume


def _singleton(policies):
    return min(policies, key=lambda p: (meta(p).get("creationTimestamp") or "", name_of(p)))


class OperatorController(Controller):
    """The GPU Operator's ClusterPolicy controller."""

    name = "gpu-operator"

    validator_image = None
    support_done = None
    exporter_done = None

    def setup(self):
        # No informer on ClusterPolicies: their CRD arrives with the CSV, and an informer on a kind the API does not
        # serve yet would hold up the start; they are listed while the operator runs (a few objects at most).
        self.nodes = self.informer(NODES)
        self.daemonsets = self.informer(DAEMONSETS)
        self.deployments = self.informer(DEPLOYMENTS)
        # The Driver Toolkit's ImageStream exists on OpenShift only (the kind is not served elsewhere).
        self.streams = self.informer(apis.IMAGESTREAMS) if self.manager.profile == "openshift" else None
        for informer in (self.nodes, self.deployments):
            informer.add_handler(lambda *args: self.enqueue(KEY))
        self.daemonsets.add_handler(self._on_ds)

    def _on_ds(self, etype, ds, old):
        if any(ref.get("kind") in ("ClusterPolicy", "NVIDIADriver") for ref in meta(ds).get("ownerReferences") or []):
            self.enqueue(KEY)

    def resync_keys(self):
        return [KEY]

    def _operator(self):
        """(namespace, image env) of the running operator Deployment, or None."""
        for dep in self.deployments.list(predicate=lambda d: name_of(d) == OPERATOR_DEPLOYMENT):
            if ((dep.get("status") or {}).get("availableReplicas") or 0) < 1:
                continue
            containers = dep["spec"]["template"]["spec"].get("containers") or [{}]
            env = {e["name"]: e.get("value") for e in containers[0].get("env") or [] if "value" in e}
            return namespace_of(dep), env
        return None

    def _active_policy(self, namespace):
        """The singleton ClusterPolicy, read live (the others marked ignored); None when there is none; raises
        ApiException 404 while the CRD is not served."""
        policies, dummy = self.client.list(apis.CLUSTERPOLICIES)
        policies = [p for p in policies if not meta(p).get("deletionTimestamp")]
        if not policies:
            return None
        active = _singleton(policies)
        for other in policies:
            if other is not active:
                self._status(other, "ignored", namespace, None)
        # The cache can lag a deletion: never create operands for a ClusterPolicy that is gone.
        live = self.client.get(apis.CLUSTERPOLICIES, name_of(active))
        return None if live is None or meta(live).get("deletionTimestamp") else live

    def reconcile(self, key):
        running = self._operator()
        if running is None:
            return None
        namespace, env = running
        try:
            live = self._active_policy(namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise
            return self.timing(2.0)
        if live is None:
            return self.timing(1.0)  # the operator polls nothing; this stands in for its ClusterPolicy watch
        spec = live.get("spec") or {}
        nodes = [n for n in self.nodes.list() if gpu_node(n) and labels_of(n).get(OPT_OUT) != "false"]
        self._label(nodes, spec)
        owner = [owner_ref(apis.CLUSTERPOLICIES, live)]
        openshift = self.manager.profile == "openshift"
        runtime = _node_runtime(nodes)
        try:
            wanted = self._operands(spec, env, namespace, owner, nodes, openshift, runtime)
        except ImageError as exc:
            self._status(live, "notReady", namespace, ("ReconcileFailed", "Failed to reconcile: %s" % exc))
            return self.timing(5.0)
        self._ensure_support(namespace, owner, spec)
        if enabled(spec, "dcgmExporter"):
            self._exporter_service(namespace, owner, spec)
        not_ready = []
        for state, body in wanted:
            self._apply(body)
            if not self._ds_ready(name_of(body), namespace):
                if state not in not_ready:
                    not_ready.append(state)
        keep = {name_of(b) for dummy, b in wanted}
        if uses_driver_crd(spec):
            keep |= self._nvidia_drivers(spec, namespace, nodes, openshift)
        self._prune(namespace, keep)
        if not_ready:
            message = "ClusterPolicy is not ready, states not ready: [%s]" % " ".join(not_ready)
            self._status(live, "notReady", namespace, ("OperandNotReady", message))
            return self.timing(5.0)
        if nodes:
            reason = ("Reconciled", "ClusterPolicy is ready as all resources have been successfully reconciled")
        else:
            reason = ("NoGPUNodes", "No GPU node found, watching for new nodes to join the cluster.")
        self._status(live, "ready", namespace, reason, ready=True)
        return self.timing(1.0)  # stands in for the operator's ClusterPolicy watch

    # ------------------------------------------------------------------ nodes and support objects

    def _label(self, nodes, spec):
        wanted = {PRESENT: "true"}
        for dummy, key, dummy2, deploy, dummy3, dummy4 in STATES:
            if enabled(spec, key):
                wanted["nvidia.com/gpu.deploy." + deploy] = "true"
        for node in nodes:
            labels = labels_of(node)
            patch = {k: v for k, v in wanted.items() if labels.get(k) is None}
            if patch:
                self.client.patch(NODES, name_of(node), {"metadata": {"labels": patch}})

    def _ensure_support(self, namespace, owner, spec):
        """ServiceAccounts, their ``use`` of SCC privileged (assets/state-*/0200_role.yaml), RuntimeClass nvidia."""
        accounts = sorted({sa for dummy, key, dummy2, dummy3, sa, dummy4 in STATES if enabled(spec, key)})
        done = (namespace, owner[0]["uid"], tuple(accounts), (spec.get("operator") or {}).get("runtimeClass"))
        if self.support_done == done:
            return  # made in an earlier pass (the reconcile runs every second)
        for sa in accounts:
            self.client.ensure(
                SERVICEACCOUNTS, {"metadata": {"name": sa, "namespace": namespace, "ownerReferences": owner}}
            )
        if self.manager.profile == "openshift":
            binding = {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "nvidia-operands-privileged", "namespace": namespace, "ownerReferences": owner},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "system:openshift:scc:privileged",
                },
                "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace} for sa in accounts],
            }
            existing, created = self.client.ensure(ROLEBINDINGS, binding)
            if not created and existing.get("subjects") != binding["subjects"]:
                self.client.patch(ROLEBINDINGS, name_of(binding), {"subjects": binding["subjects"]}, namespace)
        handler = (spec.get("operator") or {}).get("runtimeClass") or "nvidia"
        self.client.ensure(
            RUNTIMECLASSES,
            {
                "apiVersion": "node.k8s.io/v1",
                "kind": "RuntimeClass",
                "metadata": {"name": handler, "ownerReferences": owner},
                "handler": handler,
            },
        )
        self.support_done = done

    def _exporter_service(self, namespace, owner, spec):
        """Service and (serviceMonitor.enabled) ServiceMonitor nvidia-dcgm-exporter (assets/state-dcgm-exporter/0400,
        0500), made once per ClusterPolicy and namespace."""
        monitor = ((spec.get("dcgmExporter") or {}).get("serviceMonitor") or {}).get("enabled") is True
        done = (namespace, owner[0]["uid"], monitor)
        if self.exporter_done == done:
            return
        labels = {"app": "nvidia-dcgm-exporter"}
        meta_ = {"name": "nvidia-dcgm-exporter", "namespace": namespace, "labels": labels, "ownerReferences": owner}
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": dict(meta_, annotations={"prometheus.io/scrape": "true"}),
            "spec": {
                "selector": labels,
                "ports": [{"name": "gpu-metrics", "port": 9400, "targetPort": 9400, "protocol": "TCP"}],
            },
        }
        self.client.ensure(SERVICES, service)
        if monitor:
            body = {
                "apiVersion": apis.SERVICEMONITORS.api_version,
                "kind": "ServiceMonitor",
                "metadata": meta_,
                "spec": {
                    "endpoints": [{"port": "gpu-metrics", "path": "/metrics"}],
                    "jobLabel": "app",
                    "namespaceSelector": {"matchNames": [namespace]},
                    "selector": {"matchLabels": labels},
                },
            }
            try:
                self.client.ensure(apis.SERVICEMONITORS, body)
            except ApiException as exc:
                if exc.status != 404:  # no prometheus-operator CRD: the operator skips the ServiceMonitor
                    raise
        else:
            try:
                self.client.delete(apis.SERVICEMONITORS, "nvidia-dcgm-exporter", namespace)
            except ApiException as exc:
                if exc.status != 404:
                    raise
        self.exporter_done = done

    # ------------------------------------------------------------------ operands

    def _operands(self, spec, env, namespace, owner, nodes, openshift, runtime):
        out = []
        for state, key, ds_name, deploy, sa, image_env in STATES:
            if not enabled(spec, key):
                continue
            if key == "driver" and uses_driver_crd(spec):
                continue  # the NVIDIADriver objects own the driver and its image (_nvidia_drivers)
            image = image_path(spec.get(key) or {}, env, image_env)
            self.validator_image = image_path(spec.get("validator") or {}, env, "VALIDATOR_IMAGE")
            if key == "driver":
                if uses_driver_crd(spec):
                    continue  # the NVIDIADriver objects own the driver (_nvidia_drivers)
                for body in self._drivers(spec, image, namespace, nodes, openshift):
                    out.append((state, body))
                continue
            pod = self._pod(key, spec, image, sa, runtime, openshift)
            out.append((state, self._daemonset(ds_name, namespace, deploy, pod)))
        for dummy, body in out:
            body["metadata"]["ownerReferences"] = owner
        return out

    def _daemonset(self, name, namespace, deploy, pod_spec, extra_selector=None, labels=None):
        labels = dict({"app": name}, **(labels or {}))
        selector = {"nvidia.com/gpu.deploy." + deploy: "true"}
        selector.update(extra_selector or {})
        pod_spec = dict(
            pod_spec, nodeSelector=selector, tolerations=[TOLERATION], priorityClassName="system-node-critical"
        )
        return {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": namespace, "labels": copy.deepcopy(labels)},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "updateStrategy": {"type": "OnDelete"} if deploy == "driver" else {"type": "RollingUpdate"},
                "template": {"metadata": {"labels": labels}, "spec": pod_spec},
            },
        }

    def _drivers(self, spec, image, namespace, nodes, openshift, pools=None):
        """The driver DaemonSets: one per RHCOS build with the Driver Toolkit, else one (the ClusterPolicy's), or one
        per node pool of an NVIDIADriver (``pools``: (name, node selector, image, rhcos build, labels))."""
        driver = spec.get("driver") or {}
        module_type = driver.get("kernelModuleType") or "auto"
        firmware_mounts = [{"name": n, "mountPath": m} for n, dummy, m in FIRMWARE]
        firmware_volumes = [host_volume(n, h) for n, h, dummy in FIRMWARE]
        labels = {"app.kubernetes.io/component": "nvidia-driver", "app.kubernetes.io/managed-by": "gpu-operator"}
        if pools is None:
            pools = self._policy_driver_pools(image, nodes, openshift, labels)
        out = []
        dtk = (spec.get("operator") or {}).get("use_ocp_driver_toolkit") and openshift
        for pool_name, pool_selector, tagged, build, pool_labels in pools:
            main = {
                "name": "nvidia-driver-ctr",
                "image": tagged,
                "command": ["nvidia-driver"],
                "args": ["init"],
                "env": env_list([("KERNEL_MODULE_TYPE", module_type)]),
                "securityContext": {"privileged": True, "seLinuxOptions": {"level": "s0"}},
                "volumeMounts": [
                    {"name": "run-nvidia", "mountPath": "/run/nvidia", "mountPropagation": "Bidirectional"}
                ]
                + firmware_mounts,
            }
            containers = [main]
            volumes = [host_volume("run-nvidia", "/run/nvidia", "DirectoryOrCreate")] + firmware_volumes
            selector, name, extra = None, "nvidia-driver-daemonset", {}
            if pool_name:  # an NVIDIADriver's pool
                selector, name, extra = pool_selector, pool_name, pool_labels
            elif dtk and build:
                main["args"] = ["nv-ctr-run-with-dtk"]
                containers.append(
                    {
                        "name": "openshift-driver-toolkit-ctr",
                        "image": self._dtk_image(build),
                        "command": ["bash", "-xc"],
                        "args": [DTK_ARGS],
                        "securityContext": {"privileged": True, "seLinuxOptions": {"level": "s0"}},
                        "volumeMounts": [
                            {"name": "shared-nvidia-driver-toolkit", "mountPath": "/mnt/shared-nvidia-driver-toolkit"}
                        ],
                    }
                )
                main["volumeMounts"].append(
                    {"name": "shared-nvidia-driver-toolkit", "mountPath": "/mnt/shared-nvidia-driver-toolkit"}
                )
                volumes.append({"name": "shared-nvidia-driver-toolkit", "emptyDir": {}})
                selector = {OSTREE: build}
                name = "nvidia-driver-daemonset-%s" % build
                extra = {"openshift.driver-toolkit": "true", "openshift.driver-toolkit.rhcos": build}
            pod = {"serviceAccountName": "nvidia-driver", "hostPID": True, "containers": containers, "volumes": volumes}
            out.append(self._daemonset(name, namespace, "driver", pod, selector, dict(labels, **extra)))
        return out

    def _policy_driver_pools(self, image, nodes, openshift, labels):
        """The ClusterPolicy's driver: per RHCOS build on OpenShift; elsewhere one, for the OS of the first GPU node
        (getGPUNodeOSInfo lists the GPU nodes with Limit 1: every GPU node gets that OS's image)."""
        builds = {}
        for node in sorted(nodes, key=name_of):
            node_labels = labels_of(node)
            os_tag = _os_tag(node_labels, "rhcos" if openshift else "ubuntu")
            if openshift:
                builds.setdefault(node_labels.get(OSTREE), os_tag)
            else:
                builds.setdefault(None, os_tag)
        return [
            (None, None, image if "sha256:" in image else "%s-%s" % (image, os_tag), build, {})
            for build, os_tag in sorted(builds.items(), key=lambda item: item[0] or "")
        ]

    # ------------------------------------------------------------------ NVIDIADriver objects

    def _nvidia_drivers(self, spec, namespace, nodes, openshift):
        """Reconcile every NVIDIADriver: owner labels on the GPU nodes, a driver DaemonSet per node pool, status.
        Returns the names of the DaemonSets they keep."""
        try:
            crs, dummy = self.client.list(apis.NVIDIADRIVERS)
        except ApiException as exc:
            if exc.status != 404:
                raise
            return set()
        crs = sorted((c for c in crs if not meta(c).get("deletionTimestamp")), key=name_of)
        owners = {}
        for node in nodes:
            labels = labels_of(node)
            chosen = next(
                (c for c in crs if not (c.get("spec") or {}).get("default") and _matches(c, labels)), None
            ) or next((c for c in crs if (c.get("spec") or {}).get("default")), None)
            if chosen is None:
                continue
            owners.setdefault(name_of(chosen), []).append(node)
            if labels.get(DRIVER_OWNER) != name_of(chosen):
                self.client.patch(NODES, name_of(node), {"metadata": {"labels": {DRIVER_OWNER: name_of(chosen)}}})
        keep = set()
        for cr in crs:
            cr_spec = cr.get("spec") or {}
            owner = [owner_ref(apis.NVIDIADRIVERS, cr)]
            pools = _node_pools(cr, owners.get(name_of(cr)) or [], openshift)
            try:
                bodies = self._drivers(dict(spec, driver=dict(cr_spec)), None, namespace, [], openshift, pools)
            except ImageError as exc:
                self._cr_status(cr, "notReady", ("ReconcileFailed", str(exc)))
                continue
            ready = True
            for body in bodies:
                body["metadata"]["ownerReferences"] = owner
                self._apply(body)
                keep.add(name_of(body))
                ready = ready and self._ds_ready(name_of(body), namespace)
            if not pools:
                self._cr_status(cr, "ready", ("Reconciled", "No nodes matching the given node selector"), True)
            elif ready:
                self._cr_status(cr, "ready", ("Reconciled", "All resources have been successfully reconciled"), True)
            else:
                self._cr_status(cr, "notReady", ("DriverNotReady", "Waiting for driver pod to be ready"))
        return keep

    def _cr_status(self, cr, state, reason, ready=False):
        kind, message = reason
        status = cr.get("status") or {}
        if status.get("state") == state and any(
            c.get("reason") == kind and c.get("message") == (message if ready else "")
            for c in status.get("conditions") or []
        ):
            return
        stamp = now_rfc3339()
        conditions = [
            {"type": "Ready", "status": "True" if ready else "False", "reason": kind, "message": message if ready else "",
             "lastTransitionTime": stamp},
            {"type": "Error", "status": "False" if ready else "True", "reason": "Ready" if ready else kind,
             "message": "" if ready else message, "lastTransitionTime": stamp},
        ]  # fmt: skip
        try:
            self.client.patch(
                apis.NVIDIADRIVERS,
                name_of(cr),
                {"status": {"state": state, "conditions": conditions}},
                subresource="status",
            )
        except ApiException as exc:
            if exc.status != 404:
                raise

    def _dtk_image(self, build):
        stream = (self.streams.get("driver-toolkit", "openshift") if self.streams else None) or {}
        for tag in (stream.get("status") or {}).get("tags") or []:
            if tag.get("tag") == build and tag.get("items"):
                return tag["items"][0].get("dockerImageReference")
        return "image-registry.openshift-image-registry.svc:5000/openshift/driver-toolkit:%s" % build

    def _pod(self, key, spec, image, sa, runtime, openshift):
        cdi = (spec.get("cdi") or {}).get("enabled") is True
        container = {"name": {"toolkit": "nvidia-container-toolkit-ctr"}.get(key, sa), "image": image}
        pod = {"serviceAccountName": sa, "containers": [container]}
        if not (runtime == "crio" and not cdi) and key not in ("toolkit", "nodeStatusExporter"):
            pod["runtimeClassName"] = (spec.get("operator") or {}).get("runtimeClass") or "nvidia"
        env = []
        if key == "toolkit":
            env = _toolkit_env(pod, container, spec, runtime, cdi)
        elif key == "devicePlugin":
            mig = (spec.get("mig") or {}).get("strategy") or "single"
            env = [("PASS_DEVICE_SPECS", "true"), ("FAIL_ON_INIT_ERROR", "true"), ("DEVICE_LIST_STRATEGY", "envvar")]
            env += [("DEVICE_ID_STRATEGY", "uuid"), ("NVIDIA_VISIBLE_DEVICES", "all"), ("MIG_STRATEGY", mig)]
            if cdi:  # transformDevicePluginCtrForCDI
                env = [e for e in env if e[0] != "DEVICE_LIST_STRATEGY"]
                env += [("CDI_ENABLED", "true"), ("DEVICE_LIST_STRATEGY", "cdi-annotations,cdi-cri")]
                env += [("CDI_ANNOTATION_PREFIX", "cdi.k8s.io/")]
                env += [("NVIDIA_CDI_HOOK_PATH", "/usr/local/nvidia/toolkit/nvidia-cdi-hook")]
            container["securityContext"] = {"privileged": True}
            # The asset's host mounts: the kubelet's device plugin socket dir, the driver root, the CDI spec dir.
            container["volumeMounts"] = [
                {"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"},
                {"name": "driver-install-dir", "mountPath": "/driver-root", "mountPropagation": "HostToContainer"},
                {"name": "cdi-root", "mountPath": "/var/run/cdi"},
            ]
            pod["volumes"] = [
                host_volume("device-plugin", "/var/lib/kubelet/device-plugins"),
                host_volume("driver-install-dir", "/run/nvidia/driver", "DirectoryOrCreate"),
                host_volume("cdi-root", "/var/run/cdi", "DirectoryOrCreate"),
            ]
            self._config_manager(pod, spec.get("devicePlugin") or {}, image)
        elif key == "gfd":
            env = [("GFD_SLEEP_INTERVAL", "60s"), ("GFD_FAIL_ON_INIT_ERROR", "true")]
            env += [("MIG_STRATEGY", (spec.get("mig") or {}).get("strategy") or "single")]
            if openshift:
                env.append(("USE_NODE_FEATURE_API", "false"))
            container["securityContext"] = {"privileged": True}
            self._config_manager(pod, spec.get("devicePlugin") or {}, image)
        elif key == "dcgmExporter":
            env = [("DCGM_EXPORTER_LISTEN", ":9400"), ("DCGM_EXPORTER_KUBERNETES", "true")]
            env += [("DCGM_EXPORTER_COLLECTORS", "/etc/dcgm-exporter/dcp-metrics-included.csv")]
            if enabled(spec, "dcgm"):
                env.append(("DCGM_REMOTE_HOSTENGINE_INFO", "nvidia-dcgm:5555"))
            container["ports"] = [{"name": "metrics", "containerPort": 9400}]
            config = ((spec.get("dcgmExporter") or {}).get("config") or {}).get("name")
            if config:  # TransformDCGMExporter: the user's metrics ConfigMap, key dcgm-metrics.csv, by subPath
                env = _set_env(env, [("DCGM_EXPORTER_COLLECTORS", METRICS_CONFIG_PATH)])
                container["volumeMounts"] = [
                    {"name": "metrics-config", "readOnly": True, "mountPath": METRICS_CONFIG_PATH,
                     "subPath": "dcgm-metrics.csv"}
                ]  # fmt: skip
                pod["volumes"] = [
                    {"name": "metrics-config", "configMap": {"name": config,
                     "items": [{"key": "dcgm-metrics.csv", "path": "dcgm-metrics.csv"}]}}
                ]  # fmt: skip
        elif key == "dcgm":
            container["command"] = ["nv-hostengine", "-n", "-b", "ALL"]
            container["ports"] = [{"name": "dcgm", "containerPort": 5555}]
        elif key == "validator":
            container["command"] = ["sh", "-c"]
            container["args"] = ["echo all validations are successful; sleep infinity"]
            container["securityContext"] = {"privileged": True}
        if key != "toolkit":  # the toolkit's are in env already (the runtime transform reads them)
            env += [(e["name"], e.get("value", "")) for e in (spec.get(key) or {}).get("env") or []]
        if env:  # the apiserver drops an empty list, and an empty one here would differ from it on every pass
            container["env"] = env_list(_set_env([], env))
        waits_for = {"toolkit": "driver", "validator": "driver"}.get(key, "toolkit")
        if key not in ("dcgm", "nodeStatusExporter"):
            # The assets' validation init container: wait for the validator's marker file of the stage before.
            pod["initContainers"] = [
                {
                    "name": "%s-validation" % waits_for,
                    "image": self.validator_image,
                    "command": ["sh", "-c"],
                    "args": [
                        "until [ -f /run/nvidia/validations/%s-ready ]; do echo waiting for the %s to be ready; "
                        "sleep 5; done" % (waits_for, waits_for)
                    ],
                    "securityContext": {"privileged": True},
                    "volumeMounts": [
                        {
                            "name": "run-nvidia-validations",
                            "mountPath": "/run/nvidia/validations",
                            "mountPropagation": "HostToContainer",
                        }
                    ],
                }
            ]
            pod["volumes"] = (pod.get("volumes") or []) + [
                host_volume("run-nvidia-validations", "/run/nvidia/validations", "DirectoryOrCreate")
            ]
        return pod

    def _config_manager(self, pod, plugin_spec, image):
        """The config-manager sidecar and the config volume (transformDevicePlugin / transformGPUDiscoveryPlugin)."""
        config = plugin_spec.get("config") or {}
        if not config.get("name"):
            return
        pod["containers"].append(
            {
                "name": "config-manager",
                "image": image,
                "command": ["config-manager"],
                "env": env_list(
                    [
                        ("ONESHOT", "false"),
                        ("KUBECONFIG", ""),
                        ("NODE_LABEL", "nvidia.com/device-plugin.config"),
                        ("CONFIG_FILE_SRCDIR", "/available-configs"),
                        ("CONFIG_FILE_DST", "/config/config.yaml"),
                        ("DEFAULT_CONFIG", config.get("default") or ""),
                        ("FALLBACK_STRATEGIES", "named,single"),
                        ("SEND_SIGNAL", "true"),
                        ("SIGNAL", "1"),
                        ("PROCESS_TO_SIGNAL", "nvidia-device-plugin"),
                    ]
                ),
                "volumeMounts": [{"name": "config", "mountPath": "/available-configs"}],
            }
        )
        pod["containers"][0]["env"] = pod["containers"][0].get("env") or []
        pod["volumes"] = (pod.get("volumes") or []) + [{"name": "config", "configMap": {"name": config["name"]}}]
        pod["containers"][0].setdefault("volumeMounts", []).append(
            {"name": "config", "mountPath": "/available-configs"}
        )

    # ------------------------------------------------------------------ apply, prune, status

    def _apply(self, body):
        existing = self.daemonsets.get(name_of(body), namespace_of(body))
        if existing is None:
            try:
                self.client.create(DAEMONSETS, body)
            except ApiException as exc:
                if exc.status != 409:  # the cache had not seen it yet
                    raise
            return
        theirs = existing.get("spec") or {}
        if (
            _differs(theirs.get("template"), body["spec"]["template"])
            or theirs.get("updateStrategy", {}).get("type") != body["spec"]["updateStrategy"]["type"]
        ):
            self.client.patch(
                DAEMONSETS,
                name_of(body),
                {"spec": body["spec"], "metadata": {"labels": body["metadata"]["labels"]}},
                namespace_of(body),
                patch_type="merge",
            )

    def _prune(self, namespace, keep):
        """Operand DaemonSets no longer wanted (an operand disabled, an RHCOS build gone from the GPU nodes)."""
        for ds in self.daemonsets.list(namespace):
            owned = any(
                r.get("kind") in ("ClusterPolicy", "NVIDIADriver") for r in meta(ds).get("ownerReferences") or []
            )
            if owned and name_of(ds) not in keep:
                self.client.delete(DAEMONSETS, name_of(ds), namespace, propagation="Background")

    def _ds_ready(self, name, namespace):
        ds = self.daemonsets.get(name, namespace)
        if not ds:
            return False
        status = ds.get("status") or {}
        if (status.get("observedGeneration") or 0) < (meta(ds).get("generation") or 0):
            return False
        desired = status.get("desiredNumberScheduled") or 0
        return (status.get("numberUnavailable") or 0) == 0 and (status.get("numberAvailable") or 0) == desired

    def _status(self, policy, state, namespace, reason, ready=False):
        status = policy.get("status") or {}
        conditions = status.get("conditions") or []
        if reason:
            kind, message = reason
            stamp = now_rfc3339()
            conditions = [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": kind if ready else "OperandNotReady" if kind == "OperandNotReady" else kind,
                    "message": message if ready else "",
                    "lastTransitionTime": stamp,
                },
                {
                    "type": "Error",
                    "status": "False" if ready else "True",
                    "reason": "Ready" if ready else kind,
                    "message": "" if ready else message,
                    "lastTransitionTime": stamp,
                },
            ]
            old = {
                (c.get("type"), c.get("status"), c.get("reason"), c.get("message"))
                for c in status.get("conditions") or []
            }
            if old == {(c["type"], c["status"], c["reason"], c["message"]) for c in conditions}:
                conditions = status.get("conditions")
        if (
            status.get("state") == state
            and status.get("namespace") == namespace
            and status.get("conditions") == conditions
        ):
            return
        try:
            self.client.patch(
                apis.CLUSTERPOLICIES,
                name_of(policy),
                {"status": {"state": state, "namespace": namespace, "conditions": conditions}},
                subresource="status",
            )
        except ApiException as exc:
            if exc.status != 404:
                raise


# The runtime's host files the toolkit installer edits, and where the DaemonSet mounts their directories
# (controllers/object_controls.go: DefaultContainerdConfigFile, DefaultContainerdDropInConfigFile,
# DefaultContainerdSocketFile, DefaultCRIOConfigFile, DefaultCRIODropInConfigFile, DefaultRuntime*TargetDir).
RUNTIME_FILES = {
    "containerd": ("CONTAINERD_CONFIG", "/etc/containerd/config.toml", "/etc/containerd/conf.d/99-nvidia.toml"),
    "crio": ("CRIO_CONFIG", "/etc/crio/config.toml", "/etc/crio/crio.conf.d/99-nvidia.conf"),
    "docker": ("DOCKER_CONFIG", "/etc/docker/daemon.json", None),
}
RUNTIME_SOCKETS = {"containerd": ("CONTAINERD_SOCKET", "/run/containerd/containerd.sock"),
                   "docker": ("DOCKER_SOCKET", "/var/run/docker.sock")}  # fmt: skip
METRICS_CONFIG_PATH = "/etc/dcgm-exporter/dcgm-metrics.csv"  # MetricsConfigMountPath
CONFIG_DIR, DROP_IN_DIR, SOCKET_DIR = "/runtime/config-dir/", "/runtime/config-dir.d/", "/runtime/sock-dir/"


def _toolkit_env(pod, container, spec, runtime, cdi):
    """TransformToolkit: the asset's own env (assets/state-container-toolkit/0500_daemonset.yaml), CDI's, the user's,
    then the runtime's (transformForRuntime)."""
    env = [("ROOT", "/usr/local/nvidia"), ("NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND", MANAGEMENT_KIND)]
    env += [("NVIDIA_VISIBLE_DEVICES", "void")]
    if cdi:
        env += [("CDI_ENABLED", "true"), ("NVIDIA_RUNTIME_SET_AS_DEFAULT", "false")]
        env += [("NVIDIA_CONTAINER_RUNTIME_MODE", "cdi"), ("CRIO_CONFIG_MODE", "config")]
    elif runtime == "crio":
        env += [("CRIO_CONFIG_MODE", "hook")]
    env += [(e["name"], e.get("value", "")) for e in (spec.get("toolkit") or {}).get("env") or []]
    env = _runtime_config(pod, container, env, runtime or "containerd", spec)
    container["securityContext"] = {"privileged": True}
    pod["hostPID"] = True
    return env


def _set_env(env, pairs):
    """setContainerEnv: a name set again replaces its value in place."""
    out = list(env)
    for name, value in pairs:
        for i, (have, dummy) in enumerate(out):
            if have == name:
                out[i] = (name, value)
                break
        else:
            out.append((name, value))
    return out


def _runtime_config(pod, container, env, runtime, spec):
    """transformForRuntime + transformRuntimeConfigAndSocketMounts (object_controls.go): RUNTIME, containerd's
    runtime class, and the runtime's top-level config, drop-in and socket as container paths (env) over host
    directories (volumes); a path the user set in the toolkit's env is honoured."""
    given = dict(env)
    env = _set_env(env, [("RUNTIME", runtime)])
    if runtime == "containerd":
        env = _set_env(
            env, [("CONTAINERD_RUNTIME_CLASS", (spec.get("operator") or {}).get("runtimeClass") or "nvidia")]
        )
    config_var, config, drop_in = RUNTIME_FILES.get(runtime, RUNTIME_FILES["containerd"])
    config = given.get(config_var) or given.get("RUNTIME_CONFIG") or config
    drop_in = (given.get("RUNTIME_DROP_IN_CONFIG") or drop_in) if drop_in else None
    mounts, volumes = [], []

    def mount(name, host_dir, target, kind="DirectoryOrCreate"):
        mounts.append({"name": name, "mountPath": target})
        volumes.append(host_volume(name, host_dir, kind))

    base, dirname = config.rsplit("/", 1)[1], config.rsplit("/", 1)[0] or "/"
    env = _set_env(env, [("RUNTIME_CONFIG", CONFIG_DIR + base), (config_var, CONFIG_DIR + base)])
    mount("%s-config" % runtime, dirname, CONFIG_DIR)
    if drop_in:
        base, dirname = drop_in.rsplit("/", 1)[1], drop_in.rsplit("/", 1)[0] or "/"
        env = _set_env(
            env, [("RUNTIME_DROP_IN_CONFIG", DROP_IN_DIR + base), ("RUNTIME_DROP_IN_CONFIG_HOST_PATH", drop_in)]
        )
        mount("%s-drop-in-config" % runtime, dirname, DROP_IN_DIR)
    if runtime in RUNTIME_SOCKETS:
        socket_var, socket = RUNTIME_SOCKETS[runtime]
        socket = given.get(socket_var) or socket
        base, dirname = socket.rsplit("/", 1)[1], socket.rsplit("/", 1)[0] or "/"
        env = _set_env(env, [("RUNTIME_SOCKET", SOCKET_DIR + base), (socket_var, SOCKET_DIR + base)])
        mount("%s-socket" % runtime, dirname, SOCKET_DIR, None)
    container["volumeMounts"] = (container.get("volumeMounts") or []) + mounts
    pod["volumes"] = (pod.get("volumes") or []) + volumes
    return env


DRIVER_OWNER = "nvidia.com/gpu-operator.driver.owner"
OS_MAJOR = "feature.node.kubernetes.io/system-os_release.VERSION_ID.major"
KERNEL_FULL = "feature.node.kubernetes.io/kernel-version.full"
SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand SafeEncodeString


def uses_driver_crd(spec):
    return (spec.get("driver") or {}).get("useNvidiaDriverCRD") is True


def _os_tag(labels, default_id):
    """getOSTag: ID + VERSION_ID (major only for ol, rocky, rhel)."""
    os_id, version = labels.get(OS_ID, default_id), labels.get(OS_VERSION, "")
    if os_id in ("ol", "rocky", "rhel"):
        version = version.split(".")[0]
    return "%s%s" % (os_id, version)


def _matches(cr, labels):
    selector = (cr.get("spec") or {}).get("nodeSelector") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def string_hash(text):
    """utils.GetStringHash: FNV-32a, its decimal digits through SafeEncodeString."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(SAFE_ALPHANUMS[ord(c) % len(SAFE_ALPHANUMS)] for c in str(value))


def _node_pools(cr, nodes, openshift):
    """getNodePools + getDriverAppName + getDriverImagePath: (DaemonSet name, node selector, image, RHCOS build,
    labels) per pool of the NVIDIADriver's nodes."""
    spec = cr.get("spec") or {}
    precompiled = spec.get("usePrecompiled") is True
    driver_type = spec.get("driverType") or "gpu"
    base = image_path(spec, {}, "DRIVER_IMAGE")
    pools = {}
    for node in sorted(nodes, key=name_of):
        labels = labels_of(node)
        if OS_ID not in labels or OS_VERSION not in labels:
            continue  # "Could not find NFD label for node. Is NFD installed?"
        tag = _os_tag(labels, "")
        selector = dict(
            spec.get("nodeSelector") or {}, **{PRESENT: "true", DRIVER_OWNER: name_of(cr), OS_ID: labels[OS_ID]}
        )
        if tag.endswith(labels[OS_VERSION]):
            selector[OS_VERSION] = labels[OS_VERSION]
        else:
            selector[OS_MAJOR] = labels.get(OS_MAJOR, "")
        suffix, build, image = "", None, base if "sha256:" in base else "%s-%s" % (base, tag)
        key = tag
        if precompiled:
            kernel = labels.get(KERNEL_FULL, "")
            selector[KERNEL_FULL] = kernel
            suffix, key = "-" + kernel, "%s-%s" % (tag, kernel)
            image = "%s-%s-%s" % (base, kernel, tag)
        elif openshift:
            build = labels.get(OSTREE, "")
            selector[OSTREE] = build
            suffix, key = "-" + build, build
        name = "nvidia-%s-driver-%s" % (driver_type, tag)
        digest = string_hash(meta(cr).get("uid", "") + suffix)
        if len(name) + len(digest) + 1 > 63:
            name = name[: 63 - len(digest) - 1]
        pools.setdefault(key, ("%s-%s" % (name, digest), selector, image, build, {}))
    return [pools[k] for k in sorted(pools)]


def _node_runtime(nodes):
    """The container runtime of the GPU nodes (the operator reads it from the first: getRuntime)."""
    for node in nodes:
        version = ((node.get("status") or {}).get("nodeInfo") or {}).get("containerRuntimeVersion") or ""
        if "://" in version:
            return {"cri-o": "crio"}.get(version.split("://", 1)[0], version.split("://", 1)[0])
    return None


def _differs(have, want):
    """True when a key/value of ``want`` is missing or different in ``have`` (the apiserver defaults the rest)."""
    if isinstance(want, dict):
        return not isinstance(have, dict) or any(_differs(have.get(k), v) for k, v in want.items())
    if isinstance(want, list):
        return not isinstance(have, list) or len(have) != len(want) or any(_differs(h, w) for h, w in zip(have, want))
    return have != want
