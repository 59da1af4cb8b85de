# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""machine-api (openshift/machine-api-operator + the AWS actuator), simulated.

MachineSet replicas -> Machines -> Nodes, as the real controllers do it:

* the MachineSet controller creates Machines (generateName ``<machineset>-``,
  controller ownerReference, template labels/annotations/spec copied), deletes
  surplus ones by ``spec.deletePolicy`` (Random default, Newest, Oldest; a
  ``machine.openshift.io/delete-machine`` annotation and unhealthy machines
  first) and keeps ``status.replicas/fullyLabeledReplicas/readyReplicas/
  availableReplicas/observedGeneration/labelSelector`` true. Like the AWS
  machineset controller it annotates the set with ``machine.openshift.io/vCPU``,
  ``memoryMb`` and ``GPU`` for the cluster autoscaler's scale-from-zero;
* the Machine controller walks ``status.phase`` Provisioning -> Provisioned
  (instance id, ``spec.providerID``, addresses, instance-type/region/zone
  labels) -> Running (the Node exists, ``status.nodeRef``). An instance type
  the cloud does not offer fails the Machine (phase Failed, errorReason
  InvalidConfiguration), as the AWS API refuses it. Deleting a Machine
  (finalizer ``machine.machine.openshift.io``) deletes its Node first;
* the Node is what the kubelet and the cloud node controller would register:
  labels (instance type, zone, region, role, template ``spec.metadata``),
  taints from the template, capacity/allocatable from the instance type
  (never ``nvidia.com/gpu``: the device plugin adds it), nodeInfo with the
  RHCOS kernel and os image. It is created with a plain create including
  status, so kwok keeps the capacity.
* the MachineAutoscaler controller (cluster-autoscaler-operator) puts the
  min/max annotations on its target MachineSet.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import random
import time

from kubernetes.client.rest import ApiException

from simopenshift import apis, catalog
from simopenshift.kube import (
    NODES,
    Controller,
    annotations_of,
    key_of,
    labels_of,
    match_selector,
    meta,
    name_of,
    namespace_of,
    node_ready,
    now_rfc3339,
    parse_rfc3339,
    split_key,
)

MACHINE_FINALIZER = "machine.machine.openshift.io"
ANN_MACHINE = "machine.openshift.io/machine"
ANN_DELETE_MACHINE = "machine.openshift.io/delete-machine"
ANN_INSTANCE_STATE = "machine.openshift.io/instance-state"
LABEL_MACHINESET = "machine.openshift.io/cluster-api-machineset"
LABEL_ROLE = "machine.openshift.io/cluster-api-machine-role"
AUTOSCALER_MIN = "machine.openshift.io/cluster-api-autoscaler-node-group-min-size"
AUTOSCALER_MAX = "machine.openshift.io/cluster-api-autoscaler-node-group-max-size"
MACHINEAUTOSCALER_FINALIZER = "machinetarget.autoscaling.openshift.io"

# AWS private subnets of an IPI install: 10.0.128.0/20 (zone a), .144 (b), .160 (c).
SUBNET_BASE = {"a": 128, "b": 144, "c": 160, "d": 176, "e": 192, "f": 208}

# kubelet system-reserved defaults on OpenShift workers (cpu 500m, memory 1Gi)
# plus the 100Mi hard eviction threshold.
RESERVED_CPU_M = 500
RESERVED_MEMORY_KI = 1024 * 1024 + 100 * 1024
EPHEMERAL_CAPACITY_KI = 125293548  # 120 GiB root volume as the kubelet reports it
EPHEMERAL_ALLOCATABLE = "114396791822"


def provider_value(obj):
    """providerSpec.value of a Machine or MachineSet template."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "MachineSet" or "template" in spec:
        spec = ((spec.get("template") or {}).get("spec")) or {}
    return ((spec.get("providerSpec") or {}).get("value")) or {}


def instance_type_name(obj):
    value = provider_value(obj)
    return value.get("instanceType") or value.get("vmSize") or value.get("machineType")


def placement(obj):
    value = provider_value(obj)
    place = value.get("placement") or {}
    return place.get("region", ""), place.get("availabilityZone", "")


def instance_id(machine_name):
    return "i-0" + catalog.fake_hex(16, "instance", machine_name)


def private_ip(machine_name, zone, attempt=0):
    base = SUBNET_BASE.get(zone[-1:], 128)
    digest = catalog.fake_hex(6, "ip", machine_name, *([attempt] if attempt else []))
    return "10.0.%d.%d" % (base + int(digest[:2], 16) % 16, int(digest[2:4], 16) % 253 + 1)


def node_name_for(machine_name, region, zone, taken=()):
    """(node name, private IP) of a new instance; never one in ``taken`` (node names).

    EC2 assigns a subnet address no other interface holds, so two instances
    never share the ip-a-b-c-d name; the derived address is tried again with
    another salt until it is free.
    """
    domain = "ec2.internal" if region == "us-east-1" else "%s.compute.internal" % region
    for attempt in range(64):
        ip = private_ip(machine_name, zone, attempt)
        name = "ip-%s.%s" % (ip.replace(".", "-"), domain)
        if name not in taken:
            return name, ip
    raise RuntimeError("simulated subnet of %s has no free address" % zone)


def internal_dns(machine):
    """The Machine's InternalDNS address (its node's name), or None before it is provisioned."""
    for address in (machine.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalDNS":
            return address.get("address")
    return None


def machine_node_name(machine):
    """The node name the Machine's instance registers: its InternalDNS address once provisioned."""
    if internal_dns(machine):
        return internal_dns(machine)
    region, zone = placement(machine)
    return node_name_for(name_of(machine), region, zone)[0]


def node_resources(itype):
    """(capacity, allocatable) the kubelet would report, without accelerators."""
    cpu = itype.vcpu
    memory_ki = itype.memory_mib * 1024
    capacity = {
        "cpu": str(cpu),
        "memory": "%dKi" % memory_ki,
        "pods": "250",
        "ephemeral-storage": "%dKi" % EPHEMERAL_CAPACITY_KI,
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
    }
    allocatable = dict(capacity)
    allocatable["cpu"] = "%dm" % (cpu * 1000 - RESERVED_CPU_M)
    allocatable["memory"] = "%dKi" % (memory_ki - RESERVED_MEMORY_KI)
    allocatable["ephemeral-storage"] = EPHEMERAL_ALLOCATABLE
    return capacity, allocatable


def machine_from_machineset(machineset, name=None):
    """A new Machine for a MachineSet (generateName unless a name is given)."""
    tmpl = (machineset.get("spec") or {}).get("template") or {}
    tmeta = tmpl.get("metadata") or {}
    tspec = copy.deepcopy(tmpl.get("spec") or {})
    ms_meta = meta(machineset)
    metadata = {
        "namespace": namespace_of(machineset),
        "labels": dict(tmeta.get("labels") or {}),
        "annotations": dict(tmeta.get("annotations") or {}),
        "ownerReferences": [
            {
                "apiVersion": apis.MACHINESETS.api_version,
                "kind": "MachineSet",
                "name": ms_meta.get("name"),
                "uid": ms_meta.get("uid"),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "finalizers": [MACHINE_FINALIZER],
    }
    if name:
        metadata["name"] = name
    else:
        metadata["generateName"] = ms_meta.get("name") + "-"
    tspec.pop("providerID", None)
    tspec.setdefault("lifecycleHooks", {})
    tspec.setdefault("metadata", {})
    return {"apiVersion": apis.MACHINES.api_version, "kind": "Machine", "metadata": metadata, "spec": tspec}


def provisioned_fields(machine, taken=()):
    """(metadata patch, spec patch, status patch) of a Machine whose instance is running.

    ``taken``: node names in use (Nodes and other Machines' addresses).
    """
    name = name_of(machine)
    region, zone = placement(machine)
    iid = instance_id(name)
    node_name, ip = node_name_for(name, region, zone, taken)
    itype = instance_type_name(machine)
    metadata = {
        "labels": {
            "machine.openshift.io/instance-type": itype,
            "machine.openshift.io/region": region,
            "machine.openshift.io/zone": zone,
        },
        "annotations": {ANN_INSTANCE_STATE: "running"},
    }
    spec = {"providerID": "aws:///%s/%s" % (zone, iid)}
    status = {
        "addresses": [
            {"type": "InternalIP", "address": ip},
            {"type": "InternalDNS", "address": node_name},
            {"type": "Hostname", "address": node_name},
        ],
        "providerStatus": {
            "apiVersion": "machine.openshift.io/v1beta1",
            "kind": "AWSMachineProviderStatus",
            "instanceId": iid,
            "instanceState": "running",
            "conditions": [
                {
                    "type": "MachineCreation",
                    "status": "True",
                    "reason": "MachineCreationSucceeded",
                    "message": "Machine successfully created",
                    "lastTransitionTime": now_rfc3339(),
                }
            ],
        },
    }
    return metadata, spec, status


def node_from_machine(machine, rhcos_build, mco_config=None):
    """The Node the kubelet + cloud node controller register for a provisioned Machine."""
    name = name_of(machine)
    region, zone = placement(machine)
    node_name = machine_node_name(machine)
    itype_name = instance_type_name(machine)
    itype = catalog.instance_type(itype_name)
    role = labels_of(machine).get(LABEL_ROLE, "worker")
    spec = machine.get("spec") or {}
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": itype_name,
        "beta.kubernetes.io/os": "linux",
        "failure-domain.beta.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        # Short host name, as seed 000's node dump shows.
        "kubernetes.io/hostname": node_name.split(".")[0],
        "kubernetes.io/os": "linux",
        "node-role.kubernetes.io/%s" % role: "",
        "node.kubernetes.io/instance-type": itype_name,
        # The kubelet reads os-release ID: rhcos, rhel from 4.19 (RHCOS split into layers).
        "node.openshift.io/os_id": rhcos_build.os_id,
        "topology.ebs.csi.aws.com/zone": zone,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
    }
    if role == "master":
        labels["node-role.kubernetes.io/control-plane"] = ""
    labels.update(((spec.get("metadata") or {}).get("labels")) or {})
    annotations = {
        ANN_MACHINE: "%s/%s" % (namespace_of(machine), name),
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
    }
    if mco_config:
        annotations.update(
            {
                "machineconfiguration.openshift.io/currentConfig": mco_config,
                "machineconfiguration.openshift.io/desiredConfig": mco_config,
                "machineconfiguration.openshift.io/state": "Done",
                "machineconfiguration.openshift.io/reason": "",
            }
        )
    annotations.update(((spec.get("metadata") or {}).get("annotations")) or {})
    capacity, allocatable = node_resources(itype)
    taints = [dict((k, v) for k, v in t.items() if k in ("key", "value", "effect")) for t in spec.get("taints") or []]
    provider_id = spec.get("providerID") or "aws:///%s/%s" % (zone, instance_id(name))
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name, "labels": labels, "annotations": annotations},
        "spec": {"providerID": provider_id, "taints": taints},
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            # No addresses: kwok fills InternalIP with its --node-ip so the
            # apiserver can reach kwok for pods/log. The AWS address is on the Machine.
            "nodeInfo": {
                "architecture": "amd64",
                "operatingSystem": "linux",
                "kernelVersion": rhcos_build.kernel,
                "osImage": rhcos_build.os_image,
                "kubeletVersion": catalog.KUBELET_VERSION,
                "kubeProxyVersion": catalog.KUBELET_VERSION,
                "containerRuntimeVersion": catalog.CRIO_VERSION,
                "bootID": catalog.fake_hex(32, "boot", node_name, 0),
                "machineID": catalog.fake_hex(32, "machine", name),
                "systemUUID": catalog.fake_hex(32, "uuid", name),
            },
        },
    }


def machineset_annotations(machineset):
    """What the AWS machineset controller annotates for scale-from-zero."""
    itype = catalog.instance_type(instance_type_name(machineset) or "")
    if not itype:
        return {}
    return {
        "machine.openshift.io/vCPU": str(itype.vcpu),
        "machine.openshift.io/memoryMb": str(itype.memory_mib),
        "machine.openshift.io/GPU": str(itype.gpu_count),
        "capacity.cluster-autoscaler.kubernetes.io/labels": "kubernetes.io/arch=amd64",
    }


def owned_by(obj, owner):
    uid = meta(owner).get("uid")
    return any(ref.get("uid") == uid and ref.get("controller") for ref in meta(obj).get("ownerReferences") or [])


def controller_owner(obj):
    for ref in meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def selector_string(selector):
    parts = ["%s=%s" % (k, v) for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        op = expr.get("operator")
        if op in ("In", "NotIn"):
            parts.append("%s %s (%s)" % (expr["key"], op.lower(), ",".join(expr.get("values") or [])))
        elif op == "Exists":
            parts.append(expr["key"])
        elif op == "DoesNotExist":
            parts.append("!" + expr["key"])
    return ",".join(parts)


def pick_for_deletion(machines, count, policy, nodes_ready):
    """Machines to delete when scaling down, in the machine-api's priority order."""

    def priority(machine):
        if annotations_of(machine).get(ANN_DELETE_MACHINE) is not None:
            return 0
        status = machine.get("status") or {}
        if status.get("errorReason") or status.get("phase") == "Failed":
            return 1
        if not (status.get("nodeRef") and nodes_ready.get(status["nodeRef"].get("name"))):
            return 2
        return 3

    ranked = list(machines)
    if policy == "Newest":
        ranked.sort(key=lambda m: meta(m).get("creationTimestamp") or "", reverse=True)
    elif policy == "Oldest":
        ranked.sort(key=lambda m: meta(m).get("creationTimestamp") or "")
    else:
        random.shuffle(ranked)
    ranked.sort(key=priority)  # stable: keeps the policy order within a priority
    return ranked[:count]


# How long and how often the MachineSet controller looks for its writes in its cache (machine-api-operator's
# stateConfirmationTimeout and stateConfirmationInterval).
CONFIRM_SECONDS = 10.0
CONFIRM_INTERVAL = 0.1


class MachineSetController(Controller):
    name = "machineset"

    def setup(self):
        self.machinesets = self.informer(apis.MACHINESETS)
        self.machines = self.informer(apis.MACHINES)
        self.nodes = self.informer(NODES)
        self.machinesets.add_handler(self.enqueue_obj)
        self.machines.add_handler(self._on_machine)
        self.nodes.add_handler(self._on_node)

    def _on_machine(self, etype, machine, old):
        owner = controller_owner(machine)
        if owner and owner.get("kind") == "MachineSet":
            self.enqueue("%s/%s" % (namespace_of(machine), owner["name"]))
        else:  # an orphan may be adopted
            for ms in self.machinesets.list(namespace_of(machine)):
                self.enqueue(key_of(ms))

    def _on_node(self, etype, node, old):
        ref = annotations_of(node).get(ANN_MACHINE)
        if not ref or "/" not in ref:
            return
        namespace, name = ref.split("/", 1)
        machine = self.machines.get(name, namespace)
        if machine:
            self._on_machine(etype, machine, None)

    def _confirm(self, key, names, namespace, seen):
        """Wait until this controller's cache shows its writes: created Machines there (``seen``), deleted ones gone
        or deleting. The machine-api MachineSet controller does the same (openshift/machine-api-operator
        pkg/controller/machineset/controller.go, waitForMachineCreation / waitForMachineDeletion, every 100 ms for
        up to 10 s); without it a reconcile that ran before the cache caught up made a surplus Machine and then
        deleted it."""
        deadline = time.time() + CONFIRM_SECONDS
        while True:
            cached = [self.machines.get(n, namespace) for n in names]
            if all((m is not None) if seen else (m is None or meta(m).get("deletionTimestamp")) for m in cached):
                return
            if time.time() >= deadline:
                self.log.warning("%s: the cache did not show %s within %ss", key, ", ".join(names), CONFIRM_SECONDS)
                return
            time.sleep(CONFIRM_INTERVAL)

    def reconcile(self, key):
        namespace, name = split_key(key)
        ms = self.machinesets.get(name, namespace)
        if not ms or meta(ms).get("deletionTimestamp"):
            return None
        spec = ms.get("spec") or {}
        selector = spec.get("selector") or {}
        tmpl_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}

        wanted = machineset_annotations(ms)
        current = annotations_of(ms)
        if any(current.get(k) != v for k, v in wanted.items()):
            self.client.patch(apis.MACHINESETS, name, {"metadata": {"annotations": wanted}}, namespace)

        machines = []
        for machine in self.machines.list(namespace):
            if owned_by(machine, ms):
                machines.append(machine)
            elif (
                controller_owner(machine) is None
                and match_selector(selector, labels_of(machine))
                and not meta(machine).get("deletionTimestamp")
            ):
                self.client.patch(
                    apis.MACHINES,
                    name_of(machine),
                    {
                        "metadata": {
                            "ownerReferences": [
                                {
                                    "apiVersion": apis.MACHINESETS.api_version,
                                    "kind": "MachineSet",
                                    "name": name,
                                    "uid": meta(ms).get("uid"),
                                    "controller": True,
                                    "blockOwnerDeletion": True,
                                }
                            ]
                        }
                    },
                    namespace,
                )
                machines.append(machine)
        active = [m for m in machines if not meta(m).get("deletionTimestamp")]
        replicas = int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1)
        diff = replicas - len(active)
        if diff > 0:
            made = [name_of(self.client.create(apis.MACHINES, machine_from_machineset(ms))) for _ignored in range(diff)]
            self.log.info("%s: created %d machine(s)", key, diff)
            self._confirm(key, made, namespace, seen=True)
        elif diff < 0:
            ready = {name_of(n): node_ready(n) for n in self.nodes.list()}
            doomed = pick_for_deletion(active, -diff, spec.get("deletePolicy") or "Random", ready)
            for machine in doomed:
                self.client.delete(apis.MACHINES, name_of(machine), namespace)
                self.log.info("%s: deleting machine %s (scale down)", key, name_of(machine))
            self._confirm(key, [name_of(m) for m in doomed], namespace, seen=False)
            active = [m for m in active if m not in doomed]

        ready_count = 0
        for machine in active:
            node_ref = (machine.get("status") or {}).get("nodeRef") or {}
            node = self.nodes.get(node_ref.get("name")) if node_ref.get("name") else None
            if node is not None and node_ready(node) and not meta(node).get("deletionTimestamp"):
                ready_count += 1
        status = {
            "replicas": len(active),
            "fullyLabeledReplicas": len(
                [m for m in active if all(labels_of(m).get(k) == v for k, v in tmpl_labels.items())]
            ),
            "readyReplicas": ready_count,
            # minReadySeconds is 0 on OpenShift's sets: ready is available.
            "availableReplicas": ready_count,
            "observedGeneration": meta(ms).get("generation"),
            "labelSelector": selector_string(selector),
        }
        old = ms.get("status") or {}
        if any(old.get(k) != v for k, v in status.items()):
            self.client.patch(apis.MACHINESETS, name, {"status": status}, namespace, subresource="status")
        return None


class MachineController(Controller):
    name = "machine"

    def setup(self):
        self.machines = self.informer(apis.MACHINES)
        self.nodes = self.informer(NODES)
        self.pools = self.informer(apis.MACHINECONFIGPOOLS)
        self.configs = self.informer(apis.MACHINECONFIGS)
        self.machines.add_handler(self.enqueue_obj)
        self.nodes.add_handler(self._on_node)

    def _on_node(self, etype, node, old):
        ref = annotations_of(node).get(ANN_MACHINE)
        if ref:
            self.enqueue(ref)

    def _pool_config_for(self, node_labels):
        """The rendered config a new node boots with (served by the MCS for its pool)."""
        from simopenshift.mco import pool_for_node_labels

        pool = pool_for_node_labels(self.pools.list(), node_labels)
        if not pool:
            return None
        return ((pool.get("spec") or {}).get("configuration") or {}).get("name")

    def _names_in_use(self, machine):
        """Node names held by Nodes or by other Machines' instances (EC2 never reuses a live address)."""
        taken = set(name_of(n) for n in self.nodes.list())
        for other in self.machines.list():
            if name_of(other) != name_of(machine) and internal_dns(other):
                taken.add(internal_dns(other))
        return taken

    def _phase_age(self, machine):
        return time.time() - (parse_rfc3339((machine.get("status") or {}).get("lastUpdated")) or 0)

    def reconcile(self, key):
        namespace, name = split_key(key)
        machine = self.machines.get(name, namespace)
        if not machine:
            return None
        status = machine.get("status") or {}
        phase = status.get("phase")
        if meta(machine).get("deletionTimestamp"):
            return self._delete(machine)
        if phase == "Failed":
            return None
        if not phase:
            itype = instance_type_name(machine)
            if not catalog.instance_type(itype or ""):
                msg = (
                    "error launching instance: Invalid value '%s' for InstanceType. "
                    "The requested instance type is not offered in this simulated AWS catalog" % itype
                )
                self._status(machine, {"phase": "Failed", "errorReason": "InvalidConfiguration", "errorMessage": msg})
                self.client.event(machine, "FailedCreate", msg, "Warning", "awscontroller")
                return None
            self._status(machine, {"phase": "Provisioning"})
            self.client.patch(
                apis.MACHINES, name, {"metadata": {"annotations": {ANN_INSTANCE_STATE: "pending"}}}, namespace
            )
            return self.timing()
        wait = self.timing() - self._phase_age(machine)
        if phase == "Provisioning":
            if wait > 0:
                return wait
            mpatch, spatch, status_patch = provisioned_fields(machine, self._names_in_use(machine))
            self.client.patch(apis.MACHINES, name, {"metadata": mpatch, "spec": spatch}, namespace)
            status_patch["phase"] = "Provisioned"
            self._status(machine, status_patch)
            return self.timing()
        if phase == "Provisioned":
            if wait > 0:
                return wait
            fresh = self.client.get(apis.MACHINES, name, namespace)
            node_name = internal_dns(fresh)
            node = self.nodes.get(node_name) or self.client.get(NODES, node_name)
            if node is None:
                labels = node_from_machine(fresh, catalog.cluster_build())["metadata"]["labels"]
                config = self._pool_config_for(labels)
                body = node_from_machine(fresh, self._os_build(config), config)
                try:
                    node = self.client.create(NODES, body)
                except ApiException as exc:
                    if exc.status != 409:
                        raise
                    node = self.client.get(NODES, node_name)
                self.log.info("machine %s: node %s registered", key, node_name)
            self._status(
                machine,
                {"phase": "Running", "nodeRef": {"kind": "Node", "name": node_name, "uid": meta(node).get("uid")}},
            )
            return None
        return None

    def _os_build(self, rendered_name):
        """The RHCOS build a new node ends up on: its pool's rendered osImageURL."""
        rendered = self.configs.get(rendered_name) if rendered_name else None
        url = ((rendered or {}).get("spec") or {}).get("osImageURL")
        return catalog.rhcos_build_for_os_image_url(url) or catalog.cluster_build()

    def _status(self, machine, fields):
        fields = dict(fields)
        fields["lastUpdated"] = now_rfc3339()
        self.client.patch(
            apis.MACHINES, name_of(machine), {"status": fields}, namespace_of(machine), subresource="status"
        )

    def _delete(self, machine):
        status = machine.get("status") or {}
        if status.get("phase") != "Deleting":
            self._status(machine, {"phase": "Deleting"})
        node_name = (status.get("nodeRef") or {}).get("name")
        if node_name and (self.nodes.get(node_name) or self.client.get(NODES, node_name)):
            # The real controller drains first; the node's pods go with the node.
            self.client.delete(NODES, node_name)
            self.log.info("machine %s: node %s deleted", key_of(machine), node_name)
            return self.timing(0.5)
        finalizers = [f for f in meta(machine).get("finalizers") or [] if f != MACHINE_FINALIZER]
        if len(finalizers) != len(meta(machine).get("finalizers") or []):
            self.client.patch(
                apis.MACHINES, name_of(machine), {"metadata": {"finalizers": finalizers}}, namespace_of(machine)
            )
        return None


class MachineAutoscalerController(Controller):
    """cluster-autoscaler-operator: min/max annotations on the target MachineSet."""

    name = "machineautoscaler"

    def setup(self):
        self.autoscalers = self.informer(apis.MACHINEAUTOSCALERS)
        self.autoscalers.add_handler(self.enqueue_obj)

    def reconcile(self, key):
        namespace, name = split_key(key)
        ma = self.autoscalers.get(name, namespace)
        if not ma:
            return None
        spec = ma.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        last = ((ma.get("status") or {}).get("lastTargetRef")) or {}
        finalizers = meta(ma).get("finalizers") or []
        if meta(ma).get("deletionTimestamp"):
            for target in filter(None, (ref.get("name"), last.get("name"))):
                self._annotate(namespace, target, None, None)
            if MACHINEAUTOSCALER_FINALIZER in finalizers:
                self.client.patch(
                    apis.MACHINEAUTOSCALERS,
                    name,
                    {"metadata": {"finalizers": [f for f in finalizers if f != MACHINEAUTOSCALER_FINALIZER]}},
                    namespace,
                )
            return None
        if MACHINEAUTOSCALER_FINALIZER not in finalizers:
            self.client.patch(
                apis.MACHINEAUTOSCALERS,
                name,
                {"metadata": {"finalizers": finalizers + [MACHINEAUTOSCALER_FINALIZER]}},
                namespace,
            )
        if last.get("name") and last.get("name") != ref.get("name"):
            self._annotate(namespace, last["name"], None, None)
        if ref.get("kind", "MachineSet") == "MachineSet" and ref.get("name"):
            self._annotate(namespace, ref["name"], spec.get("minReplicas"), spec.get("maxReplicas"))
            target = {
                "apiVersion": ref.get("apiVersion", apis.MACHINESETS.api_version),
                "kind": "MachineSet",
                "name": ref["name"],
            }
            if last != target:
                self.client.patch(
                    apis.MACHINEAUTOSCALERS,
                    name,
                    {"status": {"lastTargetRef": target}},
                    namespace,
                    subresource="status",
                )
        return None

    def _annotate(self, namespace, machineset, minimum, maximum):
        # None removes the annotation (merge patch).
        annotations = {
            AUTOSCALER_MIN: None if minimum is None else str(minimum),
            AUTOSCALER_MAX: None if maximum is None else str(maximum),
        }
        try:
            self.client.patch(apis.MACHINESETS, machineset, {"metadata": {"annotations": annotations}}, namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise
