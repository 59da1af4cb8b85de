# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Node Feature Discovery, simulated: the operator and the nfd-worker on each node.

The **operator** (OpenShift profile) turns a ``NodeFeatureDiscovery`` CR
(nfd.openshift.io/v1) into its operands in the CR's namespace, owned by the
CR: ConfigMap ``nfd-worker`` (``nfd-worker.conf`` = ``spec.workerConfig
.configData``), ServiceAccounts, DaemonSet ``nfd-worker`` (tolerates every
taint, so tainted GPU nodes are covered) and Deployment ``nfd-master``. kwok
runs those pods like any others. Deleting the CR garbage-collects them; with
``spec.prunerOnDelete: true`` the operator first strips every NFD label (the
real prune job), otherwise the labels stay on the nodes (nobody is left to
remove them), which is what the real operator does too.

The **worker** part runs in both profiles: a node carries
``feature.node.kubernetes.io/*`` labels while a Running nfd-worker pod is on
it (pods labelled ``app=nfd-worker``, as the OpenShift operator and upstream
kustomize deploy it, or ``app.kubernetes.io/name=node-feature-discovery`` +
``role=worker``, as the upstream Helm chart does). The labels are computed from
what the node really is (instance type, ``nodeInfo.kernelVersion``, the os
image) and the worker's config, exactly in the shape of seeds 002/004:
``pci-<vendor>.present`` (or ``pci-<class>_<vendor>.present`` when
``deviceLabelFields`` asks for class), ``kernel-version.full|major|minor|
revision``, ``system-os_release.*``, ``cpu-cpuid.*``. The labels it owns are
listed in the ``nfd.node.kubernetes.io/feature-labels`` annotation, and a label
that stops being reported (kernel upgrade, config change) is removed, as
nfd-master does. When the worker pod goes away nothing is removed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import yaml
from kubernetes.client.rest import ApiException

from simopenshift import apis, catalog
from simopenshift.kube import (
    CONFIGMAPS,
    DAEMONSETS,
    DEPLOYMENTS,
    NODES,
    PODS,
    ROLEBINDINGS,
    ROLES,
    SERVICEACCOUNTS,
    Controller,
    annotations_of,
    labels_of,
    meta,
    name_of,
    namespace_of,
    now_rfc3339,
    owner_ref,
    split_key,
)

PREFIX = "feature.node.kubernetes.io/"
ANN_FEATURE_LABELS = "nfd.node.kubernetes.io/feature-labels"
ANN_WORKER_VERSION = "nfd.node.kubernetes.io/worker.version"
FINALIZER = "foreground-deletion"
# The managedFields manager of nfd-master's writes on a real cluster: nfd-master patches the Node with empty
# PatchOptions (kubernetes-sigs/node-feature-discovery pkg/nfd-master/nfd-master.go, patchNode), so the API
# server names the entry after the User-Agent up to its first "/" (apiserver endpoints/handlers
# prefixFromUserAgent), and client-go's default User-Agent starts with the binary's name
# (client-go rest.DefaultKubernetesUserAgent): nfd-master. Its prune job is nfd-master too.
FIELD_MANAGER = "nfd-master"
DEFAULT_OPERAND_IMAGE = "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:v4.16"

# The nfd-worker.conf the OpenShift documentation's NodeFeatureDiscovery
# example carries; the operator uses it when the CR has no workerConfig, which
# gives the vendor-only PCI labels (pci-10de.present) of seeds 002 and 004.
OPENSHIFT_DEFAULT_WORKER_CONF = """core:
  sleepInterval: 60s
sources:
  pci:
    deviceClassWhitelist:
      - "0200"
      - "03"
      - "12"
    deviceLabelFields:
      - "vendor"
"""
# Upstream nfd-worker defaults (node-feature-discovery worker config reference).
UPSTREAM_DEFAULTS = {"deviceClassWhitelist": ["03", "0b40", "12"], "deviceLabelFields": ["class", "vendor"]}


def parse_worker_config(text):
    """PCI settings from an nfd-worker.conf (YAML); upstream defaults where unset."""
    pci = {}
    if text:
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError:
            data = {}
        pci = ((data.get("sources") or {}).get("pci")) or {} if isinstance(data, dict) else {}
    return {
        "deviceClassWhitelist": [
            str(x) for x in pci.get("deviceClassWhitelist") or UPSTREAM_DEFAULTS["deviceClassWhitelist"]
        ],
        "deviceLabelFields": [str(x) for x in pci.get("deviceLabelFields") or UPSTREAM_DEFAULTS["deviceLabelFields"]],
    }


def kernel_parts(kernel):
    match = re.match(r"^(\d+)\.(\d+)\.(\d+)", kernel or "")
    return match.groups() if match else None


def feature_labels(node, config, openshift_fields=True):
    """The feature.node.kubernetes.io labels nfd-worker reports for a node."""
    hw = catalog.NodeHardware.for_node(node)
    info = (node.get("status") or {}).get("nodeInfo") or {}
    labels = {}
    for flag in catalog.cpuid_flags(hw):
        labels["cpu-cpuid." + flag] = "true"
    labels["cpu-hardware_multithreading"] = "true"
    kernel = info.get("kernelVersion")
    parts = kernel_parts(kernel)
    if parts:
        labels["kernel-version.full"] = kernel
        labels["kernel-version.major"], labels["kernel-version.minor"], labels["kernel-version.revision"] = parts
    osr = catalog.parse_os_image(info.get("osImage"))
    if osr.get("ID") in ("rhcos", "rhel"):
        labels["kernel-selinux.enabled"] = "true"
    for cls, vendor, device in catalog.pci_devices(hw):
        if not any(cls.startswith(prefix) for prefix in config["deviceClassWhitelist"]):
            continue
        values = {"class": cls, "vendor": vendor, "device": device}
        fields = [f for f in ("class", "vendor", "device") if f in config["deviceLabelFields"]] or ["vendor"]
        labels["pci-%s.present" % "_".join(values[f] for f in fields)] = "true"
    labels["storage-nonrotationaldisk"] = "true"
    if osr.get("ID"):
        labels["system-os_release.ID"] = osr["ID"]
    version_id = osr.get("VERSION_ID")
    if version_id:
        labels["system-os_release.VERSION_ID"] = version_id
        pieces = version_id.split(".")
        labels["system-os_release.VERSION_ID.major"] = pieces[0]
        if len(pieces) > 1:
            labels["system-os_release.VERSION_ID.minor"] = pieces[1]
    if openshift_fields:
        for key in ("RHEL_VERSION", "OPENSHIFT_VERSION", "OSTREE_VERSION"):
            if osr.get(key):
                labels["system-os_release." + key] = osr[key]
    return {PREFIX + k: v for k, v in labels.items()}


def is_worker_pod(pod):
    labels = labels_of(pod)
    if labels.get("app") == "nfd-worker":
        return True
    return labels.get("app.kubernetes.io/name") in ("node-feature-discovery", "nfd") and (
        labels.get("role") == "worker" or labels.get("app.kubernetes.io/component") == "worker"
    )


def worker_version(image):
    """The version nfd-worker reports: the image tag for upstream (``...:v0.19.0``), else OpenShift's."""
    match = re.search(r":(v\d+\.\d+\.\d+)$", (image or "").split(" ")[0])
    if match and "openshift" not in image and "ose-node-feature-discovery" not in image:
        return match.group(1)
    return "v4.16.0"


def pod_running(pod):
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and not meta(pod).get("deletionTimestamp")


class WorkerController(Controller):
    """Labels each node that runs a Running nfd-worker pod (both profiles)."""

    name = "nfd-worker"

    def setup(self):
        self.nodes = self.informer(NODES)
        self.pods = self.informer(PODS)
        self.configmaps = self.informer(CONFIGMAPS)
        self.nodes.add_handler(self.enqueue_obj)
        self.pods.add_handler(self._on_pod)
        self.configmaps.add_handler(self._on_configmap)

    def _on_pod(self, etype, pod, old):
        if is_worker_pod(pod) and (pod.get("spec") or {}).get("nodeName"):
            self.enqueue(pod["spec"]["nodeName"])

    def _on_configmap(self, etype, cm, old):
        for pod in self.pods.list(namespace_of(cm), predicate=is_worker_pod):
            if (pod.get("spec") or {}).get("nodeName"):
                self.enqueue(pod["spec"]["nodeName"])

    def _config_for(self, pod):
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            ref = volume.get("configMap") or {}
            cm = self.configmaps.get(ref.get("name"), namespace_of(pod)) if ref.get("name") else None
            if not cm:
                continue
            data = cm.get("data") or {}
            text = data.get("nfd-worker.conf")
            if text is None:
                text = next((v for k, v in sorted(data.items()) if k.endswith(".conf")), None)
            if text is not None:
                return parse_worker_config(text)
        return parse_worker_config(None)

    def reconcile(self, key):
        node = self.nodes.get(key)
        if not node or meta(node).get("deletionTimestamp"):
            return None
        workers = self.pods.on_node(key, lambda p: is_worker_pod(p) and pod_running(p))
        if not workers:
            return None
        pod = sorted(workers, key=lambda p: meta(p).get("creationTimestamp") or "")[-1]
        image = " ".join(c.get("image", "") for c in (pod.get("spec") or {}).get("containers") or [])
        openshift_fields = "openshift" in image or "ose-node-feature-discovery" in image
        wanted = feature_labels(node, self._config_for(pod), openshift_fields)
        current = labels_of(node)
        owned = [k for k in (annotations_of(node).get(ANN_FEATURE_LABELS) or "").split(",") if k]
        patch_labels = {k: v for k, v in wanted.items() if current.get(k) != v}
        for short in owned:
            if PREFIX + short not in wanted and PREFIX + short in current:
                patch_labels[PREFIX + short] = None
        names = ",".join(sorted(k[len(PREFIX) :] for k in wanted))
        if patch_labels or annotations_of(node).get(ANN_FEATURE_LABELS) != names:
            self.client.patch(
                NODES,
                key,
                {
                    "metadata": {
                        "labels": patch_labels,
                        "annotations": {ANN_FEATURE_LABELS: names, ANN_WORKER_VERSION: worker_version(image)},
                    }
                },
                field_manager=FIELD_MANAGER,
            )
            self.log.info(
                "node %s: %d NFD labels set, %d removed (nfd-worker %s/%s)",
                key,
                len([v for v in patch_labels.values() if v is not None]),
                len([v for v in patch_labels.values() if v is None]),
                namespace_of(pod),
                name_of(pod),
            )
        return None


def prune_labels(client, nodes):
    for node in nodes:
        stale = {k: None for k in labels_of(node) if k.startswith(PREFIX)}
        if stale or ANN_FEATURE_LABELS in annotations_of(node):
            client.patch(
                NODES,
                name_of(node),
                {"metadata": {"labels": stale, "annotations": {ANN_FEATURE_LABELS: None, ANN_WORKER_VERSION: None}}},
                field_manager=FIELD_MANAGER,
            )


class OperatorController(Controller):
    """cluster-nfd-operator: NodeFeatureDiscovery CR -> nfd-worker/nfd-master operands."""

    name = "nfd-operator"

    def setup(self):
        self.crs = self.informer(apis.NODEFEATUREDISCOVERIES)
        self.nodes = self.informer(NODES)
        self.daemonsets = self.informer(DAEMONSETS)
        self.pods = self.informer(PODS)
        self.crs.add_handler(self.enqueue_obj)
        self.daemonsets.add_handler(self._on_ds)

    def _on_ds(self, etype, ds, old):
        for ref in meta(ds).get("ownerReferences") or []:
            if ref.get("kind") == "NodeFeatureDiscovery":
                self.enqueue("%s/%s" % (namespace_of(ds), ref.get("name")))

    def reconcile(self, key):
        namespace, name = split_key(key)
        cr = self.crs.get(name, namespace)
        if not cr:
            return None
        finalizers = meta(cr).get("finalizers") or []
        if meta(cr).get("deletionTimestamp"):
            # Operands first, so no worker relabels what the pruner removes.
            for res, operand in ((DAEMONSETS, "nfd-worker"), (DEPLOYMENTS, "nfd-master")):
                self.client.delete(res, operand, namespace, propagation="Background")
            live = [
                p
                for p in self.pods.list(namespace, predicate=is_worker_pod)
                if self.nodes.get((p.get("spec") or {}).get("nodeName") or "")
            ]
            if live:  # pods bound to deleted nodes do not run; pod GC removes them later
                return self.timing(0.2)
            if (cr.get("spec") or {}).get("prunerOnDelete"):
                prune_labels(self.client, self.nodes.list())
                self.log.info("%s deleted with prunerOnDelete: NFD labels pruned", key)
            # The operator deletes its SCC itself (cluster-scoped: no owner reference to the CR).
            self.client.delete(apis.SCCS, WORKER_SCC)
            if FINALIZER in finalizers:
                self.client.patch(
                    apis.NODEFEATUREDISCOVERIES,
                    name,
                    {"metadata": {"finalizers": [f for f in finalizers if f != FINALIZER]}},
                    namespace,
                )
            return None
        # The cache can lag behind a deletion (the event that woke us may be the
        # garbage collector removing our DaemonSet): never re-create operands
        # for a CR that is gone or going.
        cr = self.client.get(apis.NODEFEATUREDISCOVERIES, name, namespace)
        if cr is None or meta(cr).get("deletionTimestamp"):
            return None
        finalizers = meta(cr).get("finalizers") or []
        if FINALIZER not in finalizers:
            self.client.patch(
                apis.NODEFEATUREDISCOVERIES, name, {"metadata": {"finalizers": finalizers + [FINALIZER]}}, namespace
            )
        owner = [owner_ref(apis.NODEFEATUREDISCOVERIES, cr)]
        spec = cr.get("spec") or {}
        conf = ((spec.get("workerConfig") or {}).get("configData")) or OPENSHIFT_DEFAULT_WORKER_CONF
        image = ((spec.get("operand") or {}).get("image")) or DEFAULT_OPERAND_IMAGE
        for sa in ("nfd-worker", "nfd-master"):
            self.client.ensure(
                SERVICEACCOUNTS, {"metadata": {"name": sa, "namespace": namespace, "ownerReferences": owner}}
            )
        # What lets the worker's service account through SCC admission, as with the real operator: its SCC
        # and the Role + RoleBinding granting ``use`` on it (worker_scc, worker_rbac).
        self.client.ensure(apis.SCCS, worker_scc(namespace))
        for res, body in zip((ROLES, ROLEBINDINGS), worker_rbac(namespace)):
            self.client.ensure(res, body)
        self._apply(
            CONFIGMAPS,
            {
                "metadata": {"name": "nfd-worker", "namespace": namespace, "ownerReferences": owner},
                "data": {"nfd-worker.conf": conf},
            },
            ("data",),
        )
        self._apply(DAEMONSETS, self._worker_ds(namespace, owner, image), ("spec",))
        self._apply(DEPLOYMENTS, self._master_deployment(namespace, owner, image), ("spec",))
        ds = self.daemonsets.get("nfd-worker", namespace) or {}
        ds_status = ds.get("status") or {}
        desired = ds_status.get("desiredNumberScheduled")
        available = desired is not None and ds_status.get("numberAvailable", 0) == desired
        message = "%s/%s nfd-worker pods available" % (ds_status.get("numberAvailable", 0), desired or 0)
        self._conditions(cr, available, message)
        return None

    def _apply(self, res, body, fields):
        existing = self.client.get(res, name_of(body), namespace_of(body))
        if existing is None:
            self.client.create(res, body)
            return
        patch = {}
        for field in fields:
            if field == "spec":
                # Compare only what we set; the apiserver defaults the rest.
                if not _contains(existing.get("spec") or {}, body["spec"]):
                    patch["spec"] = body["spec"]
            elif existing.get(field) != body.get(field):
                patch[field] = body.get(field)
        if patch:
            self.client.patch(res, name_of(body), patch, namespace_of(body), patch_type="merge")

    def _worker_ds(self, namespace, owner, image):
        labels = {"app": "nfd-worker"}
        return {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "nfd-worker", "namespace": namespace, "labels": labels, "ownerReferences": owner},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": "nfd-worker",
                        "tolerations": [{"operator": "Exists"}],
                        "containers": [
                            {
                                "name": "nfd-worker",
                                "image": image,
                                "command": ["nfd-worker"],
                                "args": ["-server=nfd-master:12000"],
                                "volumeMounts": [
                                    {"name": "nfd-worker-config", "mountPath": "/etc/kubernetes/node-feature-discovery"}
                                ],
                            }
                        ],
                        "volumes": [
                            {
                                "name": "nfd-worker-config",
                                "configMap": {
                                    "name": "nfd-worker",
                                    "items": [{"key": "nfd-worker.conf", "path": "nfd-worker.conf"}],
                                },
                            }
                        ],
                    },
                },
            },
        }

    def _master_deployment(self, namespace, owner, image):
        labels = {"app": "nfd-master"}
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "nfd-master", "namespace": namespace, "labels": labels, "ownerReferences": owner},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": "nfd-master",
                        "nodeSelector": {"node-role.kubernetes.io/master": ""},
                        "tolerations": [
                            {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"}
                        ],
                        "containers": [{"name": "nfd-master", "image": image, "command": ["nfd-master"]}],
                    },
                },
            },
        }

    def _conditions(self, cr, available, message):
        wanted = {
            "Available": "True" if available else "False",
            "Upgradeable": "True",
            "Progressing": "False" if available else "True",
            "Degraded": "False",
        }
        prev = {c.get("type"): c for c in (cr.get("status") or {}).get("conditions") or []}
        if (
            all(prev.get(t, {}).get("status") == s for t, s in wanted.items())
            and prev.get("Available", {}).get("message") == message
        ):
            return
        stamp = now_rfc3339()
        conditions = [
            {
                "type": t,
                "status": s,
                "reason": "Available" if t == "Available" and s == "True" else t,
                "message": message if t in ("Available", "Progressing") else "",
                "lastTransitionTime": stamp,
            }
            for t, s in wanted.items()
        ]
        try:
            self.client.patch(
                apis.NODEFEATUREDISCOVERIES,
                name_of(cr),
                {"status": {"conditions": conditions}},
                namespace_of(cr),
                subresource="status",
            )
        except ApiException as exc:
            if exc.status != 404:
                raise


WORKER_SCC = "nfd-worker"


def worker_scc(namespace):
    """SCC ``nfd-worker`` as cluster-nfd-operator makes it (internal/scc/scc.go SetWorkerSCCAsDesired): host
    network, host ports and hostPath, namespace-allocated UID and SELinux context, for the worker's service account.
    SCC admission here (simopenshift.scc) knows only the SCCs seeded at install, so it is an object only; the
    simulated worker needs no more than restricted-v2 (no hostPath volumes), as admission finds."""
    return {
        "apiVersion": apis.SCCS.api_version,
        "kind": "SecurityContextConstraints",
        "metadata": {
            "name": WORKER_SCC,
            "annotations": {
                "kubernetes.io/description": "nfd-master allows using host networking, host ports and hostPath but "
                "still requires pods to be run with a UID and SELinux context that are allocated to the namespace."
            },
        },
        "allowHostDirVolumePlugin": True,
        "allowHostIPC": False,
        "allowHostNetwork": True,
        "allowHostPID": False,
        "allowHostPorts": True,
        "allowPrivilegeEscalation": True,
        "allowPrivilegedContainer": False,
        "fsGroup": {"type": "MustRunAs"},
        "readOnlyRootFilesystem": False,
        "requiredDropCapabilities": ["KILL", "MKNOD", "SETUID", "SETGID"],
        "runAsUser": {"type": "MustRunAsRange"},
        "seLinuxContext": {"type": "MustRunAs"},
        "supplementalGroups": {"type": "RunAsAny"},
        "seccompProfiles": ["*"],
        "users": ["system:serviceaccount:%s:nfd-worker" % namespace],
        "volumes": ["configMap", "downwardAPI", "emptyDir", "persistentVolumeClaim", "projected", "secret", "hostPath"],
    }


def worker_rbac(namespace):
    """Role + RoleBinding ``nfd-worker`` of the operator's bundle (manifests/stable/manifests/
    nfd-worker_rbac.authorization.k8s.io_v1_role.yaml and _rolebinding.yaml; OLM creates them at install, the
    simulated operator with its operands, so a CR made without OLM gets them too): ``use`` on SCC nfd-worker and
    ``get`` on pods. The NodeFeature rules of the real Role are left out (no such API here). Not owned by the CR:
    they outlive it, as OLM's do."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "nfd-worker", "namespace": namespace},
        "rules": [
            {
                "apiGroups": [apis.SCCS.group],
                "resources": [apis.SCCS.plural],
                "resourceNames": [WORKER_SCC],
                "verbs": ["use"],
            },
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "nfd-worker", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "nfd-worker"},
        "subjects": [{"kind": "ServiceAccount", "name": "nfd-worker", "namespace": namespace}],
    }
    return role, binding


def _contains(have, want):
    """True when every key/value in ``want`` is present in ``have`` (recursively)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_contains(have.get(k), v) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and len(have) == len(want) and all(_contains(h, w) for h, w in zip(have, want))
    return have == want
