# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Helpers for the simulation's own integration tests (tests/integration/test_sim_*.py).

Everything goes through the public API, as a user or the collection would.
``clone_machineset`` is the manual procedure of seed 000 (copy a worker
MachineSet, new name everywhere, new instance type, status dropped), written
independently of the collection's machineset_clone so the simulation is not
tested with the code it is meant to test.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from simopenshift import apis, catalog
from simopenshift.control import wait_for
from simopenshift.kube import DAEMONSETS, NAMESPACES, NODES, PODS, Client, labels_of, meta, name_of, node_ready

NFD_NAMESPACE = "openshift-nfd"


def worker_machinesets(client):
    items, _ignored = client.list(apis.MACHINESETS, apis.MACHINE_API_NS)
    return sorted((m for m in items if "-worker-" in name_of(m)), key=name_of)


def clone_machineset(client, source, new_name, instance_type, replicas=0, node_labels=None, taints=None):
    body = copy.deepcopy(source)
    old_name = name_of(source)
    body["metadata"] = {"name": new_name, "namespace": apis.MACHINE_API_NS, "labels": dict(labels_of(source))}
    spec = body["spec"]
    spec["replicas"] = replicas
    spec["selector"]["matchLabels"]["machine.openshift.io/cluster-api-machineset"] = new_name
    tmpl = spec["template"]
    tmpl["metadata"]["labels"]["machine.openshift.io/cluster-api-machineset"] = new_name
    tmpl["spec"]["providerSpec"]["value"]["instanceType"] = instance_type
    if node_labels:
        tmpl["spec"].setdefault("metadata", {}).setdefault("labels", {}).update(node_labels)
    if taints:
        tmpl["spec"]["taints"] = taints
    body.pop("status", None)
    assert (
        old_name not in (spec["selector"]["matchLabels"].values())
        and old_name not in tmpl["metadata"]["labels"].values()
    )
    return client.create(apis.MACHINESETS, body)


def scale(client, name, replicas):
    client.patch(apis.MACHINESETS, name, {"spec": {"replicas": replicas}}, apis.MACHINE_API_NS)


def machines_of(client, machineset_name):
    items, _ignored = client.list(
        apis.MACHINES,
        apis.MACHINE_API_NS,
        label_selector="machine.openshift.io/cluster-api-machineset=%s" % machineset_name,
    )
    return items


def ready_nodes_of(client, machineset_name, count, timeout=60):
    """Wait for ``count`` Running machines whose nodes are Ready; return the nodes."""

    def check():
        nodes = []
        for machine in machines_of(client, machineset_name):
            if meta(machine).get("deletionTimestamp"):
                continue
            status = machine.get("status") or {}
            ref = (status.get("nodeRef") or {}).get("name")
            if status.get("phase") != "Running" or not ref:
                return None
            node = client.get(NODES, ref)
            if not node or not node_ready(node):
                return None
            nodes.append(node)
        return nodes if len(nodes) == count else None

    return wait_for(check, timeout, what="%d Ready node(s) of MachineSet %s" % (count, machineset_name))


def delete_machineset(client, name, timeout=60):
    """Scale to zero (machines and nodes go), then delete the MachineSet."""
    if client.get(apis.MACHINESETS, name, apis.MACHINE_API_NS) is None:
        return
    scale(client, name, 0)
    wait_for(lambda: not machines_of(client, name), timeout, what="machines of %s deleted" % name)
    client.delete(apis.MACHINESETS, name, apis.MACHINE_API_NS)


def ensure_namespace(client, name):
    """Create the namespace when missing (a fresh OpenShift cluster has no openshift-nfd); True when created."""
    if client.get(NAMESPACES, name) is None:
        client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return True
    return False


def make_gpu_node(client, name, labels, gpus=1, product="Tesla-T4", build=None, timeout=30):
    """A hand-made simulated GPU node (hardware by annotation, RHCOS of ``build``), Ready and untainted."""
    build = build or catalog.cluster_build()
    annotations = {catalog.ANN_GPU_COUNT: str(gpus)}
    if product:
        annotations[catalog.ANN_GPU_PRODUCT] = product
    client.create(
        NODES,
        {
            "metadata": {
                "name": name,
                "annotations": annotations,
                "labels": dict(labels, **{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}),
            },
            "status": {
                "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                "nodeInfo": {
                    "kernelVersion": build.kernel,
                    "osImage": build.os_image,
                    "containerRuntimeVersion": catalog.CRIO_VERSION,
                    "architecture": "amd64",
                    "operatingSystem": "linux",
                },
            },
        },
    )

    def ready():
        node = client.get(NODES, name)
        taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t["key"].startswith("node.kubernetes.io/")]
        return node_ready(node) and not taints

    wait_for(ready, timeout, what="node %s Ready" % name)
    return name


def ensure_runtime_class(client, name="nvidia"):
    """The toolkit's RuntimeClass (cluster-scoped, shared by the tests): pods that name it need it to exist.
    True when made here."""
    from simopenshift import manifests
    from simopenshift.kube import RUNTIMECLASSES

    if client.get(RUNTIMECLASSES, name) is not None:
        return False
    try:
        client.create(RUNTIMECLASSES, manifests.runtime_class(name))
    except Exception as exc:  # another test made it meanwhile
        if getattr(exc, "status", None) != 409:
            raise
        return False
    return True


def remove_runtime_class(client, made, name="nvidia"):
    """Delete the RuntimeClass when ``made`` (ensure_runtime_class's answer): a cluster-wide object, left as found."""
    from simopenshift.kube import RUNTIMECLASSES

    if made and client.get(RUNTIMECLASSES, name) is not None:
        client.delete(RUNTIMECLASSES, name)


def allow_scc(client, namespace, sa="default", scc="privileged"):
    """Let ``sa`` in ``namespace`` use an SCC, as ``oc adm policy add-scc-to-user <scc> -z <sa> -n <namespace>``
    does: RoleBinding ``system:openshift:scc:<scc>`` to the ClusterRole of that name, the service account added
    to its subjects. SCC admission (simopenshift.scc) then admits the pods that SCC allows. False, doing nothing,
    on a cluster without SCCs (the plain Kubernetes profile), so tests can call it on either profile."""
    from kubernetes.client.rest import ApiException

    from simopenshift import scc as sccadmission
    from simopenshift.kube import CLUSTERROLES, ROLEBINDINGS

    if client.get(CLUSTERROLES, sccadmission.ROLE_PREFIX + scc) is None:
        return False
    body = sccadmission.role_binding(namespace, scc, [sa])
    try:
        client.create(ROLEBINDINGS, body)
        return True
    except ApiException as exc:
        if exc.status != 409:
            raise
    live = client.get(ROLEBINDINGS, name_of(body), namespace)
    subjects = live.get("subjects") or []
    if body["subjects"][0] not in subjects:
        client.patch(ROLEBINDINGS, name_of(body), {"subjects": subjects + body["subjects"]}, namespace)
    return True


def allow_privileged(client, namespace, sa="default"):
    """``allow_scc`` for the privileged SCC: what the NVIDIA manifests (simopenshift.manifests: privileged
    containers, hostPID, hostPath) need on the openshift profile when they run as ``sa``."""
    return allow_scc(client, namespace, sa, "privileged")


NFD_WORKER_IMAGE = "registry.k8s.io/nfd/node-feature-discovery:v0.19.0"


def start_nfd_worker(client, namespace):
    """Run NFD's worker DaemonSet on every node (the simulated NFD labels the nodes a worker pod runs on),
    without an operator: the stand-in for plain Kubernetes tests that need NFD labels. Makes the namespace."""
    ensure_namespace(client, namespace)
    labels = {"app": "nfd-worker"}
    spec = {"tolerations": [{"operator": "Exists"}], "containers": [{"name": "worker", "image": NFD_WORKER_IMAGE}]}
    worker = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nfd-worker", "namespace": namespace},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": spec}},
    }
    client.create(DAEMONSETS, worker)


def stop_nfd_worker(client, namespace, timeout=60):
    """Delete the namespace start_nfd_worker made and wait until its worker pods are gone."""
    client.delete(NAMESPACES, namespace)
    wait_for(lambda: not client.list(PODS, namespace)[0], timeout, what="nfd-worker pods gone")


def ensure_nfd(client, name="nfd-instance", namespace=NFD_NAMESPACE, spec=None):
    ensure_namespace(client, namespace)
    if client.get(apis.NODEFEATUREDISCOVERIES, name, namespace) is None:
        client.create(
            apis.NODEFEATUREDISCOVERIES,
            {
                "apiVersion": apis.NODEFEATUREDISCOVERIES.api_version,
                "kind": "NodeFeatureDiscovery",
                "metadata": {"name": name, "namespace": namespace},
                "spec": spec
                or {"operand": {"image": "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:v4.16"}},
            },
        )


def node_label(client, node_name, key):
    node = client.get(NODES, node_name)
    return labels_of(node).get(key) if node else None


def allocatable(client, node_name, resource=catalog.GPU_RESOURCE):
    node = client.get(NODES, node_name) or {}
    return ((node.get("status") or {}).get("allocatable") or {}).get(resource)


def capacity(client, node_name, resource=catalog.GPU_RESOURCE):
    node = client.get(NODES, node_name) or {}
    return ((node.get("status") or {}).get("capacity") or {}).get(resource)


def pods_with(client, namespace, label_selector):
    items, _ignored = client.list(PODS, namespace, label_selector=label_selector)
    return items


def pod_phase(client, name, namespace):
    pod = client.get(PODS, name, namespace)
    return (pod.get("status") or {}).get("phase") if pod else None


def container_status(pod):
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return statuses[0] if statuses else {}


def pod_log(api, name, namespace, container=None):
    """The pod's log through the pods/log API (what `oc logs` reads)."""
    from kubernetes import client as k8s

    return k8s.CoreV1Api(api).read_namespaced_pod_log(name, namespace, container=container)


__all__ = ["Client", "wait_for"]


_METRIC_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'


def _parse_labels(body, number, label_re):
    labels = {}
    rest = body
    while rest:
        label = label_re.match(rest)
        if not label or label.group(1) in labels:
            raise ValueError("line %d: bad or repeated label in %r" % (number, body))
        labels[label.group(1)] = label.group(2).replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        rest = rest[label.end() :]
        if rest.startswith(","):
            rest = rest[1:]
            if not rest:
                raise ValueError("line %d: trailing comma in %r" % (number, body))
        elif rest:
            raise ValueError("line %d: garbage after label in %r" % (number, body))
    return labels


def parse_exposition(text):
    """Strict parser of the Prometheus text format 0.0.4 as dcgm-exporter writes it.

    -> {metric: {"help": str, "type": str, "samples": [(labels dict, float)]}}, in order.
    Raises ValueError on anything a Prometheus scrape would refuse or that breaks the
    exporter's layout: a sample before its ``# HELP``/``# TYPE``, a TYPE other than
    gauge/counter, a duplicate family or series, duplicate label names, bad escapes,
    an unparsable value, a missing final newline.
    """
    import re

    sample_re = re.compile(r"^(%s)(?:\{(.*)\})? (\S+)$" % _METRIC_NAME)
    label_re = re.compile(_LABEL)
    if not text.endswith("\n"):
        raise ValueError("exposition does not end with a newline")
    families = {}
    seen = set()
    current = None
    for number, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("# HELP "):
            name, _sep, help_text = line[7:].partition(" ")
            if not re.match("^%s$" % _METRIC_NAME, name) or name in families:
                raise ValueError("line %d: bad or repeated HELP: %r" % (number, line))
            families[name] = {"help": help_text, "type": None, "samples": []}
            current = name
        elif line.startswith("# TYPE "):
            parts = line[7:].split(" ")
            if len(parts) != 2 or parts[0] != current or families[current]["type"] is not None:
                raise ValueError("line %d: TYPE not right after its HELP: %r" % (number, line))
            if parts[1] not in ("gauge", "counter"):
                raise ValueError("line %d: unexpected type %r" % (number, parts[1]))
            families[current]["type"] = parts[1]
        elif line.startswith("#") or not line:
            raise ValueError("line %d: unexpected line %r" % (number, line))
        else:
            match = sample_re.match(line)
            if not match:
                raise ValueError("line %d: not a sample: %r" % (number, line))
            name, body, value = match.groups()
            if name != current or families[name]["type"] is None:
                raise ValueError("line %d: sample of %s outside its family" % (number, name))
            labels = _parse_labels(body or "", number, label_re)
            key = (name, tuple(sorted(labels.items())))
            if key in seen:
                raise ValueError("line %d: duplicate series %r" % (number, line))
            seen.add(key)
            families[name]["samples"].append((labels, float(value)))
    return families
