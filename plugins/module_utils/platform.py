# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""platform_info: what preflight learns of a cluster in one module run.

The server's version and discovery (as kubernetes.core.k8s_cluster_info reads them), the identity's access
(access_review's check), the OpenShift Infrastructure and ClusterVersion, what the GPU Operator leaves on a
cluster, and the nodes (nfd_labels' facts). Four module tasks before, each a Python start and a kubernetes
client import: about 0.6 s each with ansible-core's default engine, on every run of every state's role. With
``state_ledger`` (a follower, module_utils/follow.py) the ledger's check too, a fifth.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils import access, follow
from ansible_collections.gpuops.cluster.plugins.module_utils.common import server_of
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s_read import read_one
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import list_items
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd.facts import node_facts


def api_kinds(apis):
    """Every served resource as ``group/version/Kind`` (``v1/Node`` for the core group), sorted.

    ``apis`` maps ``group/version`` to its kinds (a dict keyed by kind, or a list of kinds), as ``discovered_apis``
    returns it; later states look a CRD up in the list instead of reading it again.
    """
    out = set()
    for group_version, kinds in (apis or {}).items():
        for kind in kinds or []:
            out.add("{0}/{1}".format(group_version, kind))
    return sorted(out)


OPENSHIFT_GROUP = "config.openshift.io/"
# What the NVIDIA GPU Operator leaves on a cluster it manages: its ClusterPolicy, or an OLM Subscription of its
# certified bundle (gpu-operator: bundle/manifests, the package name OperatorHub lists).
GPU_OPERATOR_PACKAGE = "gpu-operator-certified"


def discovered_apis(client, invalidate=True):
    """``group/version`` -> sorted kinds, read from discovery as kubernetes.core.k8s_cluster_info reads it.

    The cache is invalidated first (k8s_cluster_info's default), so a CRD made since the last run is seen.
    """
    try:
        from ansible_collections.kubernetes.core.plugins.module_utils.client.resource import ResourceList
    except ImportError:  # pragma: no cover - kubernetes.core is a requirement
        ResourceList = ()
    if invalidate:
        client.resources.invalidate_cache()
    apis = {}
    for resource in list(client.resources):
        resource = resource[0]
        if ResourceList and isinstance(resource, ResourceList):
            continue
        key = (
            resource.group_version
            if resource.group == ""
            else "/".join([resource.group, resource.group_version.split("/")[-1]])
        )
        apis.setdefault(key, set()).add(resource.kind)
    return dict((key, sorted(kinds)) for key, kinds in apis.items())


def is_openshift(kinds):
    """True when the server serves an OpenShift config API (``config.openshift.io``), as ``api_kinds`` lists them."""
    return any(kind.startswith(OPENSHIFT_GROUP) for kind in kinds)


def kubernetes_minor(version):
    """The minor version as a number ("29+" on some managed clusters is 29; unknown is 0)."""
    digits = "".join(c for c in str((version or {}).get("minor") or "") if c.isdigit())
    return int(digits) if digits else 0


def meets_requirements(version, openshift, min_minor, require_openshift):
    """Whether the server is new enough and, where required, OpenShift."""
    return kubernetes_minor(version) >= (min_minor or 0) and (openshift or not require_openshift)


def _first(items):
    return (items or [{}])[0] or {}


def platform_facts(version, openshift, kinds, infrastructure, cluster_version, node_facts_):
    """What later states read from ``preflight_platform``."""
    status = (infrastructure or {}).get("status") or {}
    facts = dict(
        openshift=openshift,
        kubernetes_version=(version or {}).get("gitVersion"),
        cloud=status.get("platform") or "none",
        region=((status.get("platformStatus") or {}).get("aws") or {}).get("region") or "",
        infrastructure_name=status.get("infrastructureName") or "",
        api_kinds=kinds,
        nodes=len(node_facts_),
        gpu_nodes=len([f for f in node_facts_ if f.get("allocatable_gpus") is not None]),
    )
    if openshift:
        facts["openshift_version"] = (((cluster_version or {}).get("status") or {}).get("desired") or {}).get("version")
    return facts


def gpu_namespace(svc, name):
    """{name, exists} of the GPU stack's namespace; ``exists`` None when it could not be read (a state that needs it
    reads it itself and says why)."""
    try:
        exists = bool(read_one(svc, {"kind": "Namespace", "api_version": "v1", "name": name})["resources"])
    except Exception:  # forbidden, or the API failing: unknown, not a preflight failure
        exists = None
    return {"name": name, "exists": exists}


def gpu_operator_found(cluster_policies, subscriptions):
    """What says the GPU Operator manages this cluster: its ClusterPolicies, and Subscriptions of its bundle."""
    found = ["ClusterPolicy {0}".format(p["metadata"]["name"]) for p in cluster_policies or []]
    found += [
        "Subscription {0}/{1}".format(s["metadata"].get("namespace"), GPU_OPERATOR_PACKAGE)
        for s in subscriptions or []
        if (s.get("spec") or {}).get("name") == GPU_OPERATOR_PACKAGE
    ]
    return found


def _ledger():
    from ansible_collections.gpuops.cluster.plugins.module_utils import ledger

    return "gpuops.cluster.state_ledger", ledger.argument_spec, ledger.check_asked, ledger.run


# platform_info's follower: the ledger asked in the same module run (site.yml asks it right after preflight's reads,
# on every run: one module start fewer).
FOLLOWERS = (("state_ledger", _ledger),)


def _reads(openshift, gpu_operator_check):
    reads = []
    if openshift:
        reads += [
            {
                "key": "Infrastructure",
                "api_version": "config.openshift.io/v1",
                "kind": "Infrastructure",
                "name": "cluster",
            },
            {
                "key": "ClusterVersion",
                "api_version": "config.openshift.io/v1",
                "kind": "ClusterVersion",
                "name": "version",
            },
        ]
    if gpu_operator_check:
        reads += [
            {"key": "ClusterPolicy", "api_version": "nvidia.com/v1", "kind": "ClusterPolicy"},
            {"key": "Subscription", "api_version": "operators.coreos.com/v1alpha1", "kind": "Subscription"},
        ]
    return reads


def run(module, client, svc):
    """platform_info: the server's version and APIs, the identity's access, the platform objects and the nodes."""
    params = module.params
    # Checked before any read, as k8s_ensure checks its followers.
    asked = follow.check(params, FOLLOWERS)
    version = (client.client.version or {}).get("kubernetes") or {}
    kinds = api_kinds(discovered_apis(client))
    openshift = is_openshift(kinds)
    result = dict(
        changed=False,
        host=server_of(client),
        version=version,
        openshift=openshift,
        requirements_met=meets_requirements(
            version, openshift, params["min_kubernetes_minor"], params["require_openshift"]
        ),
        access=None,
        platform=None,
        gpu_nodes=[],
        gpu_operator_found=[],
        state_ledger=None,
    )
    if not result["requirements_met"]:
        # The caller says why, naming its own variables; nothing else is read from a cluster that does not qualify.
        return result
    if params["check_access"]:
        result["access"] = access.check(
            module,
            client,
            svc,
            "openshift" if openshift else "kubernetes",
            params["access_states"],
            params["access_namespace"],
            params["machine_api_namespace"],
        )
    found = dict(
        (read["key"], read_one(svc, read)["resources"]) for read in _reads(openshift, params["gpu_operator_check"])
    )
    nodes = [node_facts(n) for n in list_items(client, svc.find_resource("Node", "v1", fail=True))]
    result["platform"] = platform_facts(
        version, openshift, kinds, _first(found.get("Infrastructure")), _first(found.get("ClusterVersion")), nodes
    )
    # Read here (one GET) so that a state that only checks it exists (gpu_validation, on every run) need not.
    result["platform"]["gpu_namespace"] = gpu_namespace(svc, params["access_namespace"])
    result["gpu_nodes"] = [f for f in nodes if f["gpu"]]
    result["gpu_operator_found"] = gpu_operator_found(found.get("ClusterPolicy"), found.get("Subscription"))
    follow.run(module, client, svc, asked, result, FOLLOWERS)
    return result
