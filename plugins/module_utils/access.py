# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What the collection may do on a cluster: the installer's RBAC, one rule per need, and the check of an identity.

``RULES`` is the one list. The ``rbac`` role renders it into ClusterRoles and a namespaced Role (``manifests``);
preflight's ``access_review`` module compares it with what the running identity has (one SelfSubjectRulesReview per
namespace, ``missing``) and names what is missing before any state writes; ``describe_forbidden`` turns an API 403
into the missing permission.

Why some rules are there at all:

* The collection applies its objects with server-side apply. A PATCH that creates the object is authorized as
  ``create`` too (kube-apiserver, endpoints/handlers/patch.go: ``createAuthorizerAttributes``), so every applied
  kind needs ``create`` and ``patch``.
* Kubernetes refuses a Role or ClusterRole that grants more than its author holds, and a binding to one, unless the
  author may ``escalate`` / ``bind`` (rbac/v1 escalation prevention). The collection has neither: it holds what it
  grants its operands (the ``grants`` part of a rule's reason), so it can never give its own identity more than it
  has.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError

# The states of site.yml, in order, and the playbook steps after them.
STATES = (
    "preflight",
    "gpu_machineset",
    "entitlement",
    "nfd",
    "driver",
    "container_toolkit",
    "device_plugin",
    "gpu_feature_discovery",
    "monitoring",
    "scheduling",
    "gpu_validation",
    # gpuops_stack operator. On OpenShift OLM installs the operator with its own identity (the bundle's ClusterRole is
    # OLM's to grant): the installer needs only the OLM objects and the ClusterPolicy. On Kubernetes the Helm chart
    # makes the operator's ClusterRoles and CRDs, which only a cluster admin may grant: no rules here.
    "gpu_operator",
    "ledger",
    "timeline",
    "diagnose",
    "upgrade_preflight",
    "teardown",
)
PLATFORMS = ("openshift", "kubernetes")
APPLY = ("get", "list", "create", "patch", "delete")
NAME = "gpuops-installer"
NFD_CRDS = (
    "nodefeatures.nfd.k8s-sigs.io",
    "nodefeaturerules.nfd.k8s-sigs.io",
    "nodefeaturegroups.nfd.k8s-sigs.io",
)


def _rule(platforms, states, why, groups, resources, verbs, names=None, scope="cluster", when=None):
    rule = {
        "platforms": tuple(platforms),
        "states": tuple(states),
        "why": why,
        "apiGroups": tuple(groups),
        "resources": tuple(resources),
        "verbs": tuple(verbs),
        "scope": scope,
    }
    if names:
        rule["resourceNames"] = tuple(names)
    if when:
        rule["when"] = when
    return rule


BOTH = PLATFORMS
OCP = ("openshift",)
K8S = ("kubernetes",)
ALL_STATES = STATES

# One rule per need. ``when``: a path only some runs take (the rule is needed there, and granted always).
RULES = (
    # ---------------------------------------------------------------- both platforms
    _rule(
        BOTH,
        ALL_STATES,
        "read the GPU nodes and their NFD labels (every state); label them (nfd, gpu_feature_discovery, "
        "gpu_validation), taint them (scheduling), cordon them for a driver rollout (driver); grants: the device "
        "plugin and GFD read and watch nodes",
        [""],
        ["nodes"],
        ["get", "list", "watch", "patch"],
    ),
    _rule(
        BOTH,
        ("driver", "nfd", "entitlement", "monitoring", "scheduling", "gpu_operator", "ledger", "teardown"),
        "create the GPU stack's, NFD's and the GPU Operator's namespaces (and label them for monitoring); read tenant namespaces "
        "(scheduling); teardown deletes the ones it made; grants: NFD's master watches namespaces (Kubernetes)",
        [""],
        ["namespaces"],
        APPLY + ("watch",),
    ),
    _rule(
        BOTH,
        ("gpu_validation", "driver", "entitlement", "scheduling", "diagnose", "timeline"),
        "run the validation pods and the entitlement test pod, dry-run pods against quotas (scheduling), replace "
        "OnDelete driver pods (driver), read operand pods (diagnose, timeline)",
        [""],
        ["pods"],
        ["get", "list", "watch", "create", "delete"],
    ),
    _rule(
        BOTH,
        ("entitlement",),
        "apply the entitlement test pod (k8s_ensure's server-side apply is a patch, also when it creates)",
        [""],
        ["pods"],
        ["patch"],
        when="entitlement build mode",
    ),
    _rule(
        BOTH,
        ("gpu_validation", "diagnose", "driver", "nfd"),
        "read the logs of validation pods (nvidia-smi, vectorAdd) and of failing operand pods",
        [""],
        ["pods/log"],
        ["get"],
    ),
    _rule(
        BOTH,
        ("gpu_validation", "monitoring"),
        "read each GPU node's dcgm-exporter metrics through the API server's pod proxy",
        [""],
        ["pods/proxy"],
        ["get"],
    ),
    _rule(
        BOTH,
        ("driver",),
        "evict the GPU pods of a node whose driver is replaced (their PodDisruptionBudgets decide)",
        [""],
        ["pods/eviction"],
        ["create"],
        when="a driver rollout on a node that runs GPU pods",
    ),
    _rule(
        BOTH,
        ("diagnose", "driver"),
        "read the events of GPU nodes and operand pods (diagnose, driver builds)",
        [""],
        ["events"],
        ["list"],
    ),
    _rule(
        BOTH,
        ("device_plugin", "monitoring", "gpu_validation", "nfd", "gpu_operator", "ledger", "teardown"),
        "the device plugin's sharing configs, the exporter's counters, the dashboards (monitoring), NFD's worker "
        "config (Kubernetes), the GPU Operator's time-slicing and counters ConfigMaps and the ledger's ConfigMap",
        [""],
        ["configmaps"],
        APPLY,
    ),
    _rule(
        BOTH,
        ("preflight", "gpu_operator"),
        "read the GPU Operator's ClusterPolicies: preflight stops where the operator manages the GPUs, the "
        "gpu_operator state reads its own",
        ["nvidia.com"],
        ["clusterpolicies"],
        ["get", "list"],
        when="the GPU Operator's CRD is served",
    ),
    _rule(
        BOTH,
        ("ledger",),
        "check that the objects each state made are still there (the ledger lists them by the collection's label)",
        [""],
        ["secrets"],
        ["list"],
    ),
    _rule(
        BOTH,
        ("driver", "teardown"),
        "the entitlement Secret of the entitled UBI driver builds",
        [""],
        ["secrets"],
        ["get", "create", "patch", "delete"],
        when="entitlement build mode (OpenShift before 4.9, or driver_build_mode: entitlement)",
    ),
    _rule(
        BOTH,
        (
            "driver",
            "container_toolkit",
            "device_plugin",
            "gpu_feature_discovery",
            "monitoring",
            "nfd",
            "entitlement",
            "teardown",
        ),
        "the operands' ServiceAccounts, and the entitlement test pod's own (a new namespace's default one comes "
        "from a controller, late after an API server restart)",
        [""],
        ["serviceaccounts"],
        APPLY,
    ),
    _rule(
        BOTH,
        ("monitoring", "teardown"),
        "the dcgm-exporter Service",
        [""],
        ["services"],
        APPLY,
    ),
    _rule(
        BOTH,
        ("monitoring", "gpu_validation"),
        "which GPU nodes have a ready exporter endpoint",
        ["discovery.k8s.io"],
        ["endpointslices"],
        ["list"],
    ),
    _rule(
        BOTH,
        ("scheduling", "teardown"),
        "a GPU quota and LimitRange per tenant namespace",
        [""],
        ["resourcequotas", "limitranges"],
        APPLY,
    ),
    _rule(
        BOTH,
        ("driver", "container_toolkit", "device_plugin", "gpu_feature_discovery", "monitoring", "nfd", "teardown"),
        "the operand DaemonSets",
        ["apps"],
        ["daemonsets"],
        APPLY,
    ),
    _rule(
        BOTH,
        ("driver",),
        "which driver pods run an outdated template (driver rollout)",
        ["apps"],
        ["controllerrevisions"],
        ["list"],
        when="a driver rollout (a new driver version, image or kernel)",
    ),
    _rule(
        BOTH,
        ("ledger",),
        "check that the Deployments a state made are there and ready",
        ["apps"],
        ["deployments"],
        ["list"],
    ),
    _rule(
        BOTH,
        ("driver", "container_toolkit", "device_plugin", "gpu_feature_discovery", "monitoring", "nfd", "teardown"),
        "the operands' Roles and RoleBindings (SCC use on OpenShift, the device plugin's and Prometheus' reads)",
        ["rbac.authorization.k8s.io"],
        ["roles", "rolebindings"],
        APPLY,
    ),
    _rule(
        BOTH,
        ("device_plugin", "gpu_feature_discovery", "nfd", "teardown"),
        "the device plugin's, GFD's (and on Kubernetes NFD's) ClusterRoles and their bindings",
        ["rbac.authorization.k8s.io"],
        ["clusterroles", "clusterrolebindings"],
        APPLY,
    ),
    _rule(
        BOTH,
        ("container_toolkit", "teardown"),
        "the RuntimeClass nvidia",
        ["node.k8s.io"],
        ["runtimeclasses"],
        APPLY,
    ),
    _rule(
        BOTH,
        ("scheduling", "teardown"),
        "the GPU PriorityClasses",
        ["scheduling.k8s.io"],
        ["priorityclasses"],
        APPLY,
    ),
    _rule(
        BOTH,
        ("ledger", "nfd"),
        "which CustomResourceDefinitions are there (the ledger, NFD)",
        ["apiextensions.k8s.io"],
        ["customresourcedefinitions"],
        ["list"],
    ),
    _rule(
        BOTH,
        ("monitoring", "teardown"),
        "the ServiceMonitor and PrometheusRule of the exporter",
        ["monitoring.coreos.com"],
        ["servicemonitors", "prometheusrules"],
        APPLY,
        when="the Prometheus Operator's CRDs are served (always on OpenShift)",
    ),
    _rule(
        BOTH,
        ("gpu_feature_discovery", "nfd"),
        "grants: GFD writes NodeFeature objects (NodeFeature API); NFD's worker writes and its garbage collector "
        "deletes them (Kubernetes)",
        ["nfd.k8s-sigs.io"],
        ["nodefeatures"],
        ["get", "list", "watch", "create", "update", "delete"],
    ),
    _rule(
        K8S,
        ("ledger", "nfd"),
        "the ledger lists NodeFeatureRules; grants: NFD's master reads them",
        ["nfd.k8s-sigs.io"],
        ["nodefeaturerules"],
        ["get", "list", "watch"],
    ),
    _rule(
        OCP,
        ("ledger",),
        "the ledger lists NodeFeatureRules",
        ["nfd.k8s-sigs.io"],
        ["nodefeaturerules"],
        ["list"],
        when="the NFD operator serves NodeFeatureRule (nfd.k8s-sigs.io)",
    ),
    # ---------------------------------------------------------------- OpenShift
    _rule(
        OCP,
        ("preflight", "gpu_machineset", "upgrade_preflight"),
        "the OpenShift version, cloud and infrastructure name",
        ["config.openshift.io"],
        ["clusterversions", "infrastructures"],
        ["get"],
    ),
    _rule(
        OCP,
        ("upgrade_preflight",),
        "what OpenShift gates a minor upgrade on: the ClusterOperators' Upgradeable condition",
        ["config.openshift.io"],
        ["clusteroperators"],
        ["list"],
        when="upgrade_preflight.yml",
    ),
    _rule(
        OCP,
        ("upgrade_preflight",),
        "the APIs the target release removes that are still requested (APIRequestCount)",
        ["apiserver.openshift.io"],
        ["apirequestcounts"],
        ["list"],
        when="upgrade_preflight.yml",
    ),
    _rule(
        OCP,
        ("gpu_machineset", "ledger", "scheduling"),
        "find the worker MachineSets to clone and the GPU MachineSets made before",
        ["machine.openshift.io"],
        ["machinesets"],
        ["list"],
    ),
    _rule(
        OCP,
        ("gpu_machineset", "scheduling", "teardown"),
        "create the GPU MachineSets, taint their templates (scheduling), delete them (teardown)",
        ["machine.openshift.io"],
        ["machinesets"],
        ["get", "create", "patch", "delete"],
        scope="machine_api",
    ),
    _rule(
        OCP,
        ("gpu_machineset",),
        "wait for the GPU Machines to run",
        ["machine.openshift.io"],
        ["machines"],
        ["list"],
        scope="machine_api",
    ),
    _rule(
        OCP,
        ("gpu_machineset", "ledger"),
        "which autoscalers the cluster and the GPU MachineSets have",
        ["autoscaling.openshift.io"],
        ["clusterautoscalers", "machineautoscalers"],
        ["get", "list"],
    ),
    _rule(
        OCP,
        ("gpu_machineset", "teardown"),
        "autoscale the GPU MachineSets (a MachineAutoscaler each)",
        ["autoscaling.openshift.io"],
        ["machineautoscalers"],
        ["create", "patch", "delete"],
        scope="machine_api",
        when="gpu_machineset_autoscaling",
    ),
    _rule(
        OCP,
        ("gpu_machineset", "teardown"),
        "the ClusterAutoscaler, when the cluster has none",
        ["autoscaling.openshift.io"],
        ["clusterautoscalers"],
        ["create", "patch", "delete"],
        when="gpu_machineset_autoscaling on a cluster without a ClusterAutoscaler",
    ),
    _rule(
        OCP,
        ("entitlement", "driver", "ledger"),
        "read the MachineConfigs and pools (the entitlement, the nodes' RHCOS)",
        ["machineconfiguration.openshift.io"],
        ["machineconfigs", "machineconfigpools"],
        ["get", "list"],
    ),
    _rule(
        OCP,
        ("entitlement", "teardown"),
        "the cluster-wide entitlement MachineConfigs",
        ["machineconfiguration.openshift.io"],
        ["machineconfigs"],
        ["create", "patch", "delete"],
        when="entitlement build mode",
    ),
    _rule(
        OCP,
        ("driver", "upgrade_preflight"),
        "the driver image of each kernel: its BuildConfig and ImageStream, and its builds",
        ["build.openshift.io"],
        ["buildconfigs"],
        APPLY,
    ),
    _rule(
        OCP,
        ("driver", "upgrade_preflight"),
        "start and follow the driver builds",
        ["build.openshift.io"],
        ["builds"],
        ["get", "list", "create"],
    ),
    _rule(
        OCP,
        ("driver", "upgrade_preflight"),
        "the driver images (ImageStream), and the Driver Toolkit's ImageStream in the openshift namespace",
        ["image.openshift.io"],
        ["imagestreams"],
        APPLY,
    ),
    _rule(
        OCP,
        ("nfd", "gpu_operator", "teardown"),
        "install the NFD operator and the GPU Operator through OLM",
        ["operators.coreos.com"],
        ["subscriptions", "operatorgroups"],
        APPLY,
    ),
    _rule(
        OCP,
        ("nfd", "gpu_operator", "teardown"),
        "read the NFD operator's and the GPU Operator's ClusterServiceVersions (their alm-examples, their install "
        "state); teardown deletes them",
        ["operators.coreos.com"],
        ["clusterserviceversions"],
        ["get", "list", "delete"],
    ),
    _rule(
        OCP,
        ("nfd", "gpu_operator"),
        "find the NFD operator's and the GPU Operator's catalog and channel",
        ["operators.coreos.com"],
        ["catalogsources"],
        ["list"],
    ),
    _rule(
        OCP,
        ("nfd", "gpu_operator"),
        "find the NFD operator's and the GPU Operator's package (the channel's current CSV)",
        ["packages.operators.coreos.com"],
        ["packagemanifests"],
        ["list"],
    ),
    _rule(
        OCP,
        ("gpu_operator",),
        "approve the InstallPlan that installs the pinned GPU Operator CSV (Manual approval), and no other",
        ["operators.coreos.com"],
        ["installplans"],
        ["get", "list", "patch"],
        when="gpuops_stack operator",
    ),
    _rule(
        OCP,
        ("gpu_operator", "teardown"),
        "the GPU Operator's ClusterPolicy (from its CSV's alm-examples, with the collection's choices); teardown "
        "deletes it, and the operator's garbage collection its operands",
        ["nvidia.com"],
        ["clusterpolicies"],
        ["create", "patch", "delete"],
        when="gpuops_stack operator",
    ),
    _rule(
        OCP,
        ("nfd", "teardown"),
        "the NodeFeatureDiscovery instance",
        ["nfd.openshift.io"],
        ["nodefeaturediscoveries"],
        APPLY,
    ),
    _rule(
        OCP,
        ("monitoring",),
        "grants: the platform Prometheus discovers the exporter (the Role monitoring gives prometheus-k8s)",
        [""],
        ["services", "endpoints", "pods"],
        ["get", "list", "watch"],
    ),
    _rule(
        OCP,
        ("driver", "container_toolkit", "device_plugin", "gpu_feature_discovery", "monitoring"),
        "grants: the operands run privileged (the SCC's use, bound by each operand's Role)",
        ["security.openshift.io"],
        ["securitycontextconstraints"],
        ["use"],
        names=["privileged"],
    ),
    # ---------------------------------------------------------------- plain Kubernetes (upstream NFD manifests)
    _rule(
        K8S,
        ("nfd", "teardown"),
        "NFD's CustomResourceDefinitions (upstream manifests), by name",
        ["apiextensions.k8s.io"],
        ["customresourcedefinitions"],
        ["get", "create", "patch", "delete"],
        names=NFD_CRDS,
    ),
    _rule(
        K8S,
        ("nfd", "teardown"),
        "NFD's master Deployment (and garbage collector)",
        ["apps"],
        ["deployments"],
        ["get", "create", "patch", "delete"],
    ),
    _rule(
        K8S,
        ("nfd",),
        "grants: NFD's master updates nodes",
        [""],
        ["nodes"],
        ["update"],
    ),
    _rule(
        K8S,
        ("nfd",),
        "grants: NFD's master writes the nodes' status (extended resources)",
        [""],
        ["nodes/status"],
        ["get", "list", "patch", "update"],
    ),
    _rule(
        K8S,
        ("nfd",),
        "grants: NFD's master reads NodeFeatureGroups",
        ["nfd.k8s-sigs.io"],
        ["nodefeaturegroups"],
        ["get", "list", "watch"],
    ),
    _rule(
        K8S,
        ("nfd",),
        "grants: NFD's master writes the NodeFeatureGroups' status",
        ["nfd.k8s-sigs.io"],
        ["nodefeaturegroups/status"],
        ["patch", "update"],
    ),
    _rule(
        K8S,
        ("nfd",),
        "grants: NFD's garbage collector deletes NodeResourceTopologies",
        ["topology.node.k8s.io"],
        ["noderesourcetopologies"],
        ["list", "delete"],
    ),
    _rule(
        K8S,
        ("nfd",),
        "grants: NFD's master creates its leader-election Lease",
        ["coordination.k8s.io"],
        ["leases"],
        ["create"],
    ),
    _rule(
        K8S,
        ("nfd",),
        "grants: NFD's master renews its leader-election Lease",
        ["coordination.k8s.io"],
        ["leases"],
        ["get", "update"],
        names=["nfd-master.nfd.kubernetes.io"],
    ),
)

SCOPES = ("cluster", "machine_api")

# Checked before any write, never granted by playbooks/rbac.yml: what only a cluster admin holds. RBAC's escalation
# prevention lets an identity create a ClusterRole only when it holds everything the role grants (or escalate on
# clusterroles), and the GPU Operator's Helm chart creates the operator's ClusterRoles and CRDs.
ADMIN_ONLY = (
    _rule(
        K8S,
        ("gpu_operator",),
        "the GPU Operator's Helm chart creates the operator's ClusterRoles (every permission they grant, which RBAC "
        "lets only an identity that holds them all create) and its CRDs; run gpuops_stack operator on Kubernetes as a "
        "cluster admin, or use the collection's own stack (gpuops_stack manual) with this identity",
        ["*"],
        ["*"],
        ["*"],
    ),
)


def rules_for(platform, states=None, scope=None):
    """The rules a run on ``platform`` needs for ``states`` (all when None), of one ``scope`` when given."""
    if platform not in PLATFORMS:
        raise GpuopsError("platform must be one of {0}, got {1!r}.".format(", ".join(PLATFORMS), platform))
    wanted = set(states) if states is not None else None
    return [
        rule
        for rule in RULES
        if platform in rule["platforms"]
        and (scope is None or rule["scope"] == scope)
        and (wanted is None or wanted & set(rule["states"]))
    ]


def policy_rule(rule):
    """The rbac/v1 PolicyRule of one of our rules."""
    out = {"apiGroups": list(rule["apiGroups"]), "resources": list(rule["resources"])}
    if rule.get("resourceNames"):
        out["resourceNames"] = list(rule["resourceNames"])
    out["verbs"] = list(rule["verbs"])
    return out


def role_names(platform):
    """(ClusterRole names, Role name) the rbac role makes on ``platform``."""
    return [NAME, "{0}-{1}".format(NAME, platform)], NAME


def _labels():
    from ansible_collections.gpuops.cluster.plugins.module_utils.common import MANAGED_BY, MANAGED_BY_LABEL

    return {MANAGED_BY_LABEL: MANAGED_BY, "gpuops.cluster/owner": "rbac"}


def manifests(platform, namespace, service_account, machine_api_namespace="openshift-machine-api", token=True):
    """The ServiceAccount (its namespace and a token Secret), the ClusterRoles and the machine-api Role, and the
    bindings of the installer on ``platform``, in the order to apply them."""
    labels = _labels()
    subject = {"kind": "ServiceAccount", "name": service_account, "namespace": namespace}
    objs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": dict(labels)}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": service_account, "namespace": namespace, "labels": dict(labels)},
        },
    ]
    if token:
        # A long-lived token, as AWX's bearer-token credential needs; the token controller fills it in.
        objs.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "kubernetes.io/service-account-token",
                "metadata": {
                    "name": service_account + "-token",
                    "namespace": namespace,
                    "labels": dict(labels),
                    "annotations": {"kubernetes.io/service-account.name": service_account},
                },
            }
        )
    common = [r for r in RULES if r["scope"] == "cluster" and r["platforms"] == BOTH]
    own = [r for r in RULES if r["scope"] == "cluster" and r["platforms"] == (platform,)]
    cluster_roles, role = role_names(platform)
    for name, rules in zip(cluster_roles, (common, own)):
        objs.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": name, "labels": dict(labels)},
                "rules": [policy_rule(r) for r in rules],
            }
        )
        objs.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name, "labels": dict(labels)},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [subject],
            }
        )
    scoped = rules_for(platform, scope="machine_api")
    if scoped:
        meta = {"name": role, "namespace": machine_api_namespace, "labels": dict(labels)}
        objs.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": dict(meta),
                "rules": [policy_rule(r) for r in scoped],
            }
        )
        objs.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": dict(meta),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
                "subjects": [subject],
            }
        )
    return objs


def rules_table():
    """The rules as the rbac role's README shows them: one Markdown row each."""
    rows = ["| platform | where | API group | resources | verbs | states | why |", "|---|---|---|---|---|---|---|"]
    for rule in RULES:
        resources = ", ".join(rule["resources"])
        if rule.get("resourceNames"):
            resources += " (named " + ", ".join(rule["resourceNames"]) + ")"
        why = rule["why"] + ("; only when " + rule["when"] if rule.get("when") else "")
        rows.append(
            "| {0} | {1} | {2} | {3} | {4} | {5} | {6} |".format(
                "both" if rule["platforms"] == BOTH else rule["platforms"][0],
                "cluster" if rule["scope"] == "cluster" else "MachineSets' namespace",
                ", ".join(g or "core" for g in rule["apiGroups"]),
                resources,
                ", ".join(rule["verbs"]),
                ", ".join(rule["states"]) if rule["states"] != ALL_STATES else "all",
                why,
            )
        )
    return "\n".join(rows)


# ------------------------------------------------------------------------------------------------ matching


def _has(values, value):
    return "*" in values or value in values


def _resource_match(resources, resource):
    if "*" in resources or resource in resources:
        return True
    sub = resource.partition("/")[2]
    # rbac/v1: '*/scale' matches the scale subresource of every resource.
    return bool(sub) and "*/" + sub in resources


def allows(rule, verb, group, resource, name=None):
    """Whether one PolicyRule (``verbs``/``apiGroups``/``resources``/``resourceNames``) allows the request, as the
    RBAC authorizer decides (rbac/v1 helpers: RuleAllows)."""
    if not _has(rule.get("verbs") or (), verb):
        return False
    if not _has(rule.get("apiGroups") or (), group):
        return False
    if not _resource_match(rule.get("resources") or (), resource):
        return False
    names = rule.get("resourceNames") or ()
    return not names or (name is not None and name in names)


def requests_of(rule):
    """Every (verb, group, resource, name) one of our rules grants."""
    names = rule.get("resourceNames") or (None,)
    return [
        (verb, group, resource, name)
        for verb in rule["verbs"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for name in names
    ]


def missing(needed, granted):
    """The (rule, [requests]) of ``needed`` that no PolicyRule of ``granted`` allows."""
    out = []
    for rule in needed:
        lacking = [req for req in requests_of(rule) if not any(allows(g, *req) for g in granted)]
        if lacking:
            out.append((rule, lacking))
    return out


def permission_text(verb, group, resource, name=None, namespace=None):
    """'create daemonsets.apps in namespace nvidia-gpu' / 'patch nodes (cluster-wide)'."""
    if (verb, group, resource) == ("*", "*", "*"):
        return "every verb on every resource (cluster-admin)"
    what = resource + ("." + group if group else "")
    if name:
        what += " named " + name
    return "{0} {1} {2}".format(verb, what, "in namespace " + namespace if namespace else "(cluster-wide)")


def lacking_text(lacking, namespace=None):
    """'get, list, create daemonsets.apps (cluster-wide)': the verbs of each (resource, name) together."""
    order, verbs = [], {}
    for verb, group, resource, name in lacking:
        key = (group, resource, name)
        if key not in verbs:
            order.append(key)
            verbs[key] = []
        verbs[key].append(verb)
    return "; ".join(permission_text(", ".join(verbs[key]), *key, namespace=namespace) for key in order)


def describe_missing(found, platform, namespaces, identity=None):
    """One message for everything the identity lacks: each permission, the states that need it and why, and how
    to grant it all."""
    lines = []
    for rule, lacking in found:
        namespace = namespaces.get(rule["scope"]) if rule["scope"] != "cluster" else None
        perms = lacking_text(lacking, namespace)
        lines.append(
            "{0} (needed by {1}: {2}{3})".format(
                perms,
                ", ".join(rule["states"]),
                rule["why"],
                "; only when " + rule["when"] if rule.get("when") else "",
            )
        )
    cluster_roles, role = role_names(platform)
    grant = (
        "Grant them: run playbooks/rbac.yml as a cluster admin (role gpuops.cluster.rbac: ClusterRoles {3}, Role {4} "
        "in {5}), or add the rules to the role you bound."
        if not any(rule in ADMIN_ONLY for rule, _lacking in found)
        else "playbooks/rbac.yml does not grant cluster-admin: run this as a cluster admin."
    )
    return (
        "access: {0} lacks {1} permission(s) this run needs, checked before any write: {2}. " + grant + " "
        "preflight_check_access: false skips this check (for permissions granted by Roles in other namespaces)."
    ).format(
        "the identity " + repr(identity) if identity else "the identity",
        sum(len(lacking) for _rule_, lacking in found),
        " | ".join(lines),
        " and ".join(cluster_roles),
        role,
        namespaces.get("machine_api", "openshift-machine-api"),
    )


FORBIDDEN = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) resource "(?P<resource>[^"]+)"'
    r'(?: in API group "(?P<group>[^"]*)")?(?: in the namespace "(?P<namespace>[^"]*)"| at the cluster scope)?'
)


def describe_forbidden(message):
    """The permission a 403's message says is missing, in the words of ``permission_text`` and with the rule of
    ours that grants it; None when the message is not RBAC's."""
    m = FORBIDDEN.search(message or "")
    if not m:
        return None
    verb, group, resource, namespace = (
        m.group("verb"),
        m.group("group") or "",
        m.group("resource"),
        m.group("namespace"),
    )
    ours = [
        r
        for r in RULES
        if any(allows(policy_rule(r), verb, group, resource, n) for n in (None,) + tuple(r.get("resourceNames") or ()))
    ]
    hint = (
        " The collection's rule for it: {0} (needed by {1}); playbooks/rbac.yml grants it.".format(
            ours[0]["why"], ", ".join(ours[0]["states"])
        )
        if ours
        else ""
    )
    return "{0} lacks the permission to {1}.{2}".format(
        m.group("user"), permission_text(verb, group, resource, namespace=namespace), hint
    )


# ------------------------------------------------------------------------------------------------ the module


def _review(client, svc, kind, body):
    """Create one self review (nothing is stored) and return its status."""
    resource = svc.find_resource(kind, body["apiVersion"], fail=True)
    response = client.client.create(resource, body=body, serialize=False)
    return json.loads(to_text(response.data)).get("status") or {}


def identity(client, svc):
    """The user name the API server sees (SelfSubjectReview, Kubernetes 1.28+), or None where it is not served."""
    try:
        status = _review(
            client, svc, "SelfSubjectReview", {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        )
    except Exception:  # an older API server: the message goes without the name
        return None
    return (status.get("userInfo") or {}).get("username")


def granted_rules(client, svc, namespace):
    """(resourceRules, incomplete, evaluationError) of the identity in ``namespace`` (cluster-wide grants
    included)."""
    status = _review(
        client,
        svc,
        "SelfSubjectRulesReview",
        {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": namespace}},
    )
    return status.get("resourceRules") or [], bool(status.get("incomplete")), status.get("evaluationError") or ""


def review(client, svc, platform, states, namespaces):
    """What the identity lacks of what ``states`` need on ``platform``: (missing, incomplete notes)."""
    found, notes = [], []
    for scope in SCOPES:
        needed = rules_for(platform, states, scope=scope)
        if scope == "cluster":
            needed += [r for r in ADMIN_ONLY if platform in r["platforms"] and set(states) & set(r["states"])]
        if not needed:
            continue
        namespace = namespaces[scope]
        granted, incomplete, error = granted_rules(client, svc, namespace)
        if incomplete:
            notes.append("namespace {0}: {1}".format(namespace, error or "the authorizer cannot list every rule"))
        found.extend(missing(needed, granted))
    return found, notes


def check(module, client, svc, platform, states, namespace, machine_api_namespace):
    """The access review of ``states`` on ``platform`` (access_review's result); raises naming what is missing."""
    namespaces = {"cluster": namespace, "machine_api": machine_api_namespace}
    found, notes = review(client, svc, platform, states, namespaces)
    who = identity(client, svc)
    result = dict(
        changed=False,
        identity=who,
        missing=[
            dict(
                permissions=lacking_text(lacking, namespaces[rule["scope"]] if rule["scope"] != "cluster" else None),
                states=list(rule["states"]),
                why=rule["why"],
                when=rule.get("when"),
            )
            for rule, lacking in found
        ],
        rules=len(rules_for(platform, states)),
    )
    if notes:
        # An authorizer besides RBAC (a webhook) may allow what the rules review cannot list: warn, do not fail.
        module.warn(
            "access: the API server could not list every rule of this identity ({0}); the check may report "
            "permissions another authorizer grants.".format("; ".join(notes))
        )
    elif found:
        raise GpuopsError(describe_missing(found, platform, namespaces, who), **{"missing": result["missing"]})
    return result


def run(module, client, svc):
    params = module.params
    return check(
        module, client, svc, params["platform"], params["states"], params["namespace"], params["machine_api_namespace"]
    )
