# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Operator Lifecycle Manager, simulated (catalog operator + OLM operator).

* Subscription -> resolution against the simulated catalogs (``PACKAGES``):
  an unknown CatalogSource, package, channel or startingCSV gives the
  ``ResolutionFailed`` condition with OLM's message. Resolved: an InstallPlan
  ``install-xxxxx`` (owned by the Subscription) naming the CSV, approved at
  once for ``installPlanApproval: Automatic`` (``RequiresApproval`` for
  Manual, until ``spec.approved`` is set). Subscription status: currentCSV,
  installPlanRef/installplan, state UpgradePending, then installedCSV and
  state AtLatestKnown once the plan is Complete.
* InstallPlan Installing -> owned CRDs created (``crds/olm-owned``), the CSV
  created -> phase Complete.
* ClusterServiceVersion: the OperatorGroup rules of OLM (none:
  ``NoOperatorGroup``; several: ``TooManyOperatorGroups``; a target the CSV's
  installModes do not support: ``UnsupportedOperatorGroup``) fail it; else
  Pending -> InstallReady -> Installing (ServiceAccounts and the Deployments of
  ``spec.install.spec.deployments`` created, owned by the CSV) -> Succeeded once
  every Deployment is available. kwok runs the operator pods; no operator logic
  runs in them (the NFD operator is simulated by nfd.py).
* OperatorGroup status.namespaces; CatalogSource status.connectionState READY.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import glob
import json
import os
import re
import time

import yaml
from kubernetes.client.rest import ApiException

from simopenshift import apis, catalog
from simopenshift.kube import (
    CRDS,
    DEPLOYMENTS,
    SERVICEACCOUNTS,
    Controller,
    key_of,
    meta,
    name_of,
    namespace_of,
    now_rfc3339,
    parse_rfc3339,
    split_key,
)

MARKETPLACE_NS = "openshift-marketplace"

CATALOGS = {
    "redhat-operators": {
        "displayName": "Red Hat Operators",
        "publisher": "Red Hat",
        "image": "registry.redhat.io/redhat/redhat-operator-index:v4.16",
    },
    "certified-operators": {
        "displayName": "Certified Operators",
        "publisher": "Red Hat",
        "image": "registry.redhat.io/redhat/certified-operator-index:v4.16",
    },
    "community-operators": {
        "displayName": "Community Operators",
        "publisher": "Red Hat",
        "image": "registry.redhat.io/redhat/community-operator-index:v4.16",
    },
    "redhat-marketplace": {
        "displayName": "Red Hat Marketplace",
        "publisher": "Red Hat",
        "image": "registry.redhat.io/redhat/redhat-marketplace-index:v4.16",
    },
}

# The packages the simulated catalogs offer. CSV names follow the real
# patterns; the build stamps are synthetic.
PACKAGES = {
    "nfd": {
        "catalog": "redhat-operators",
        "displayName": "Node Feature Discovery Operator",
        "provider": "Red Hat",
        "defaultChannel": "stable",
        "channels": {"stable": "nfd.4.16.0-202406241406"},
        "version": "4.16.0-202406241406",
        "installModes": {
            "OwnNamespace": True,
            "SingleNamespace": True,
            "MultiNamespace": False,
            "AllNamespaces": False,
        },
        "deployment": {
            "name": "nfd-controller-manager",
            "serviceAccount": "nfd-manager",
            "image": "registry.redhat.io/openshift4/ose-cluster-nfd-rhel9-operator:v4.16",
        },
        "ownedCRDs": ["nodefeaturediscoveries.nfd.openshift.io"],
    },
    # Filled per OpenShift minor from the real bundles (gpu_operator_bundle()).
    "gpu-operator-certified": {
        "catalog": "certified-operators",
        "displayName": "NVIDIA GPU Operator",
        "provider": "NVIDIA Corporation",
        "installModes": {
            "OwnNamespace": True,
            "SingleNamespace": True,
            "MultiNamespace": False,
            "AllNamespaces": False,
        },
        "deployment": {"name": "gpu-operator", "serviceAccount": "gpu-operator"},
        "ownedCRDs": ["clusterpolicies.nvidia.com"],
    },
}

# The GPU Operator's certified bundles (data/gpu-operator-bundles.json): v26.7.0 is certified for OpenShift
# 4.18-4.22, v26.3.3 for 4.14-4.22 (com.redhat.openshift.versions), so a catalog of 4.14-4.17 offers v26.3.3 and
# one of 4.18+ v26.7.0 (the newest its channels carry).
GPU_OPERATOR_BUNDLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "gpu-operator-bundles.json")


def _minor(version):
    return tuple(int(x) for x in version.split(".")[:2])


def gpu_operator_bundle(ocp):
    with open(GPU_OPERATOR_BUNDLES) as handle:
        versions = json.load(handle)["versions"]
    offered = [
        v
        for v, b in versions.items()
        if _minor(b["openshiftVersions"][0]) <= _minor(ocp) <= _minor(b["openshiftVersions"][1])
    ]
    return versions[max(offered, key=lambda v: tuple(int(x) for x in v.split(".")))] if offered else None


# The NFD operator ships one CSV per OpenShift minor (nvidia-stack.md section 7): on a
# cluster of another release (``--openshift-version``) the catalog offers that minor's.
# Build stamps stay synthetic.
NFD_BUILD_STAMP = "202406241406"


# The CRDs the NFD operator's CSV owns (spec.customresourcedefinitions.owned of openshift/cluster-nfd-operator
# manifests/stable/manifests/nfd.clusterserviceversion.yaml), by the first OpenShift minor of each layout: release-4.14
# (a62d778a); 4.15 (1e57eb5f) and 4.16 (1536f9ef); 4.17 (dbf6216e) and 4.18 (77ae50bf); 4.19 (1e26db6f), 4.20 and 4.21,
# which add upstream's group nfd.k8s-sigs.io. OLM creates them when it installs the CSV (crds/olm-owned, verbatim).
NFD_OWNED_CRDS = (
    ((4, 14), ("nodefeaturediscoveries.nfd.openshift.io", "nodefeaturerules.nfd.openshift.io")),
    (
        (4, 15),
        (
            "nodefeaturediscoveries.nfd.openshift.io",
            "nodefeaturerules.nfd.openshift.io",
            "nodefeatures.nfd.openshift.io",
        ),
    ),
    (
        (4, 17),
        (
            "nodefeaturediscoveries.nfd.openshift.io",
            "nodefeaturegroups.nfd.openshift.io",
            "nodefeaturerules.nfd.openshift.io",
            "nodefeatures.nfd.openshift.io",
        ),
    ),
    (
        (4, 19),
        (
            "nodefeaturediscoveries.nfd.openshift.io",
            "nodefeaturegroups.nfd.k8s-sigs.io",
            "nodefeaturerules.nfd.k8s-sigs.io",
            "nodefeaturerules.nfd.openshift.io",
            "nodefeatures.nfd.k8s-sigs.io",
            "nodefeatures.nfd.openshift.io",
        ),
    ),
)


def nfd_owned_crds(ocp):
    """The CRDs the NFD operator of OpenShift ``ocp`` owns (the layout of the newest release at or before it)."""
    layouts = [crds for first, crds in NFD_OWNED_CRDS if first <= _minor(ocp)] or [NFD_OWNED_CRDS[0][1]]
    return list(layouts[-1])


def package(package_name, ocp=None):
    """The package the catalogs offer on an OpenShift minor (default: this process's release), or None."""
    pkg = PACKAGES.get(package_name)
    ocp = ocp or catalog.cluster_build().ocp
    if package_name == "gpu-operator-certified":
        bundle = gpu_operator_bundle(ocp)
        if bundle is None:
            return None
        pkg = copy.deepcopy(pkg)
        pkg["version"] = bundle["csv"].split(".v", 1)[1]
        pkg["defaultChannel"] = bundle["defaultChannel"]
        pkg["channels"] = {channel: bundle["csv"] for channel in bundle["channels"]}
        pkg["deployment"]["image"] = bundle["image"]
        pkg["deployment"]["env"] = bundle["operatorEnv"]
        pkg["almExamples"] = bundle["almExamples"]
        return pkg
    if package_name != "nfd" or pkg is None:
        return pkg
    pkg = copy.deepcopy(pkg)
    pkg["ownedCRDs"] = nfd_owned_crds(ocp)
    if ocp == catalog.DEFAULT_OPENSHIFT_VERSION:
        return pkg
    pkg["version"] = "%s.0-%s" % (ocp, NFD_BUILD_STAMP)
    pkg["channels"] = {"stable": "nfd.%s" % pkg["version"]}
    pkg["deployment"]["image"] = re.sub(r":v\d+\.\d+$", ":v" + ocp, pkg["deployment"]["image"])
    return pkg


OWNED_CRD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crds", "olm-owned")
# alm-examples of the NFD CSV, verbatim from openshift/cluster-nfd-operator
# manifests/stable/manifests/nfd.clusterserviceversion.yaml on release-4.16 (also the
# layout of 4.14-4.18: NodeFeatureDiscovery first) and release-4.19 (NodeFeatureRule
# first, now nfd.k8s-sigs.io): a client must pick the CR by kind, never by index.
NFD_ALM_EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "nfd-alm-examples.json")
NFD_OPERAND_IMAGE = "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:v%d.%d"


def alm_examples(package_name):
    """The ``alm-examples`` annotation (a JSON string) of the package's CSV, or None.

    NFD: the layout of the package's OpenShift minor (``version``). The product
    build in redhat-operators points the operand image at registry.redhat.io
    (the upstream repo's example says quay.io/openshift/origin-...).
    """
    if package_name == "gpu-operator-certified":
        return json.dumps(package(package_name)["almExamples"])
    if package_name != "nfd":
        return None
    match = re.match(r"^(\d+)\.(\d+)", package(package_name)["version"])
    major, minor = int(match.group(1)), int(match.group(2))
    with open(NFD_ALM_EXAMPLES) as handle:
        layouts = json.load(handle)
    examples = copy.deepcopy(layouts["4.19" if (major, minor) >= (4, 19) else "4.16"])
    for example in examples:
        operand = (example.get("spec") or {}).get("operand") or {}
        if operand.get("image"):
            operand["image"] = NFD_OPERAND_IMAGE % (major, minor)
    return json.dumps(examples)


def package_for_csv(csv_name):
    for name in PACKAGES:
        pkg = package(name)
        if csv_name in pkg["channels"].values():
            return name, pkg
    return None, None


def csv_body(package_name, namespace):
    pkg = package(package_name)
    csv_name = pkg["channels"][pkg["defaultChannel"]]
    dep = pkg["deployment"]
    labels = {"control-plane": "controller-manager", "app.kubernetes.io/name": package_name}
    return {
        "apiVersion": apis.CSVS.api_version,
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": csv_name,
            "namespace": namespace,
            "labels": {"operators.coreos.com/%s.%s" % (package_name, namespace): ""},
            "annotations": dict(
                {"olm.operatorNamespace": namespace, "operators.operatorframework.io/builder": "sim"},
                **({"alm-examples": alm_examples(package_name)} if alm_examples(package_name) else {}),
            ),
        },
        "spec": {
            "displayName": pkg["displayName"],
            "version": pkg["version"],
            "provider": {"name": pkg["provider"]},
            "installModes": [{"type": t, "supported": s} for t, s in pkg["installModes"].items()],
            "customresourcedefinitions": {
                "owned": [{"name": crd, "version": "v1", "kind": crd.split(".")[0]} for crd in pkg["ownedCRDs"]]
            },
            "install": {
                "strategy": "deployment",
                "spec": {
                    "permissions": [{"serviceAccountName": dep["serviceAccount"], "rules": []}],
                    "deployments": [
                        {
                            "name": dep["name"],
                            "spec": {
                                "replicas": 1,
                                "selector": {"matchLabels": labels},
                                "template": {
                                    "metadata": {"labels": labels},
                                    "spec": {
                                        "serviceAccountName": dep["serviceAccount"],
                                        "containers": [
                                            dict(
                                                {
                                                    "name": "gpu-operator" if "env" in dep else "manager",
                                                    "image": dep["image"],
                                                },
                                                **({"env": dep["env"]} if "env" in dep else {}),
                                            )
                                        ],
                                    },
                                },
                            },
                        }
                    ],
                },
            },
        },
    }


def package_manifest(package_name, ocp=None):
    pkg = package(package_name, ocp)
    cat = CATALOGS[pkg["catalog"]]
    return {
        "apiVersion": apis.PACKAGEMANIFESTS.api_version,
        "kind": "PackageManifest",
        "metadata": {
            "name": package_name,
            "namespace": MARKETPLACE_NS,
            "labels": {
                "catalog": pkg["catalog"],
                "catalog-namespace": MARKETPLACE_NS,
                "provider": pkg["provider"].replace(" ", "-"),
                "operatorframework.io/arch.amd64": "supported",
                "operatorframework.io/os.linux": "supported",
            },
        },
        "status": {
            "catalogSource": pkg["catalog"],
            "catalogSourceDisplayName": cat["displayName"],
            "catalogSourceNamespace": MARKETPLACE_NS,
            "catalogSourcePublisher": cat["publisher"],
            "packageName": package_name,
            "defaultChannel": pkg["defaultChannel"],
            "provider": {"name": pkg["provider"]},
            "channels": [
                {
                    "name": ch,
                    "currentCSV": csv,
                    "currentCSVDesc": {
                        "displayName": pkg["displayName"],
                        "version": pkg["version"],
                        "provider": {"name": pkg["provider"]},
                        "installModes": [{"type": t, "supported": s} for t, s in pkg["installModes"].items()],
                    },
                }
                for ch, csv in sorted(pkg["channels"].items())
            ],
        },
    }


def install_mode(og, namespace):
    """(mode, description) of what an OperatorGroup asks a CSV in ``namespace`` to watch."""
    targets = [t for t in ((og.get("spec") or {}).get("targetNamespaces") or []) if t]
    if (og.get("spec") or {}).get("selector") and not targets:
        return "MultiNamespace", "namespaces selected by a label selector"
    if not targets:
        return "AllNamespaces", "all namespaces"
    if targets == [namespace]:
        return "OwnNamespace", "namespace %s" % namespace
    if len(targets) == 1:
        return "SingleNamespace", "namespace %s" % targets[0]
    return "MultiNamespace", "namespaces %s" % ",".join(targets)


class SubscriptionController(Controller):
    name = "olm-subscription"

    def setup(self):
        self.subs = self.informer(apis.SUBSCRIPTIONS)
        self.plans = self.informer(apis.INSTALLPLANS)
        self.sources = self.informer(apis.CATALOGSOURCES)
        self.subs.add_handler(self.enqueue_obj)
        self.plans.add_handler(self._on_plan)
        self.sources.add_handler(self._on_source)

    def _on_plan(self, etype, plan, old):
        for ref in meta(plan).get("ownerReferences") or []:
            if ref.get("kind") == "Subscription":
                self.enqueue("%s/%s" % (namespace_of(plan), ref.get("name")))

    def _on_source(self, etype, source, old):
        for sub in self.subs.list():
            if (sub.get("spec") or {}).get("source") == name_of(source):
                self.enqueue(key_of(sub))

    def _fail(self, sub, message, catalog_missing=False):
        stamp = now_rfc3339()
        conditions = [
            {
                "type": "CatalogSourcesUnhealthy",
                "status": "True" if catalog_missing else "False",
                "reason": "UnhealthyCatalogSourceFound" if catalog_missing else "AllCatalogSourcesHealthy",
                "message": message if catalog_missing else "all available catalogsources are healthy",
                "lastTransitionTime": stamp,
            },
            {
                "type": "ResolutionFailed",
                "status": "True",
                "reason": "ConstraintsNotSatisfiable",
                "message": message,
                "lastTransitionTime": stamp,
            },
        ]
        old = {c.get("type"): c for c in (sub.get("status") or {}).get("conditions") or []}
        if old.get("ResolutionFailed", {}).get("message") == message:
            return
        self.client.patch(
            apis.SUBSCRIPTIONS,
            name_of(sub),
            {"status": {"conditions": conditions, "lastUpdated": stamp}},
            namespace_of(sub),
            subresource="status",
        )
        self.log.info("subscription %s: %s", key_of(sub), message)

    def _existing_plan(self, sub):
        """An InstallPlan this Subscription already owns (the cache may not show our status yet)."""
        plans, _ignored = self.client.list(apis.INSTALLPLANS, namespace_of(sub))
        uid = meta(sub).get("uid")
        for plan in plans:
            if any(ref.get("uid") == uid for ref in meta(plan).get("ownerReferences") or []):
                return plan
        return None

    def reconcile(self, key):
        namespace, name = split_key(key)
        sub = self.subs.get(name, namespace)
        if not sub or meta(sub).get("deletionTimestamp"):
            return None
        spec = sub.get("spec") or {}
        status = sub.get("status") or {}
        source_ns = spec.get("sourceNamespace") or MARKETPLACE_NS
        if not self.sources.get(spec.get("source"), source_ns):
            self._fail(sub, "targeted catalogsource %s/%s missing" % (source_ns, spec.get("source")), True)
            return None
        pkg = package(spec.get("name"))
        suffix = "in the catalog referenced by subscription %s, subscription %s exists" % (name, name)
        if not pkg or pkg["catalog"] != spec.get("source"):
            self._fail(
                sub, "constraints not satisfiable: no operators found in package %s %s" % (spec.get("name"), suffix)
            )
            return None
        channel = spec.get("channel") or pkg["defaultChannel"]
        if channel not in pkg["channels"]:
            self._fail(
                sub,
                "constraints not satisfiable: no operators found in channel %s of package %s %s"
                % (channel, spec.get("name"), suffix),
            )
            return None
        csv = pkg["channels"][channel]
        if spec.get("startingCSV") and spec["startingCSV"] != csv:
            self._fail(
                sub,
                "constraints not satisfiable: no operators found with name %s in channel %s of "
                "package %s %s" % (spec["startingCSV"], channel, spec.get("name"), suffix),
            )
            return None
        plan_ref = status.get("installPlanRef") or {}
        plan = self.plans.get(plan_ref.get("name"), namespace) if plan_ref.get("name") else None
        stamp = now_rfc3339()
        healthy = {
            "type": "CatalogSourcesUnhealthy",
            "status": "False",
            "reason": "AllCatalogSourcesHealthy",
            "message": "all available catalogsources are healthy",
            "lastTransitionTime": stamp,
        }
        catalog_health = [
            {
                "catalogSourceRef": {
                    "apiVersion": apis.CATALOGSOURCES.api_version,
                    "kind": "CatalogSource",
                    "name": name_,
                    "namespace": MARKETPLACE_NS,
                },
                "healthy": True,
                "lastUpdated": stamp,
            }
            for name_ in sorted(CATALOGS)
            if self.sources.get(name_, MARKETPLACE_NS)
        ]
        if plan is None:
            plan = self._existing_plan(sub)
        if plan is None:
            automatic = spec.get("installPlanApproval", "Automatic") == "Automatic"
            body = {
                "apiVersion": apis.INSTALLPLANS.api_version,
                "kind": "InstallPlan",
                "metadata": {
                    "generateName": "install-",
                    "namespace": namespace,
                    "labels": {"operators.coreos.com/%s.%s" % (spec.get("name"), namespace): ""},
                    "ownerReferences": [
                        {
                            "apiVersion": apis.SUBSCRIPTIONS.api_version,
                            "kind": "Subscription",
                            "name": name,
                            "uid": meta(sub).get("uid"),
                            "blockOwnerDeletion": False,
                            "controller": False,
                        }
                    ],
                },
                "spec": {
                    "approval": "Automatic" if automatic else "Manual",
                    "approved": automatic,
                    "clusterServiceVersionNames": [csv],
                    "generation": 1,
                    "source": spec.get("source"),
                    "sourceNamespace": source_ns,
                },
            }
            plan = self.client.create(apis.INSTALLPLANS, body)
            self.log.info("subscription %s: InstallPlan %s for %s", key, name_of(plan), csv)
            pending = {
                "type": "InstallPlanPending",
                "status": "True",
                "reason": "Installing" if automatic else "RequiresApproval",
                "lastTransitionTime": stamp,
            }
            self.client.patch(
                apis.SUBSCRIPTIONS,
                name,
                {
                    "status": {
                        "currentCSV": csv,
                        "state": "UpgradePending",
                        "installPlanGeneration": 1,
                        "installPlanRef": {
                            "apiVersion": apis.INSTALLPLANS.api_version,
                            "kind": "InstallPlan",
                            "name": name_of(plan),
                            "namespace": namespace,
                            "resourceVersion": meta(plan).get("resourceVersion"),
                            "uid": meta(plan).get("uid"),
                        },
                        "installplan": {
                            "apiVersion": apis.INSTALLPLANS.api_version,
                            "kind": "InstallPlan",
                            "name": name_of(plan),
                            "uuid": meta(plan).get("uid"),
                        },
                        "catalogHealth": catalog_health,
                        "conditions": [healthy, pending],
                        "lastUpdated": stamp,
                    }
                },
                namespace,
                subresource="status",
            )
            return None
        phase = (plan.get("status") or {}).get("phase")
        if phase == "Complete" and (status.get("state") != "AtLatestKnown" or status.get("installedCSV") != csv):
            self.client.patch(
                apis.SUBSCRIPTIONS,
                name,
                {
                    "status": {
                        "installedCSV": csv,
                        "currentCSV": csv,
                        "state": "AtLatestKnown",
                        "conditions": [healthy],
                        "lastUpdated": stamp,
                    }
                },
                namespace,
                subresource="status",
            )
            self.log.info("subscription %s: %s installed (AtLatestKnown)", key, csv)
        elif phase == "Failed":
            self.client.patch(
                apis.SUBSCRIPTIONS,
                name,
                {
                    "status": {
                        "conditions": [
                            healthy,
                            {
                                "type": "InstallPlanFailed",
                                "status": "True",
                                "reason": "InstallComponentFailed",
                                "message": (plan.get("status") or {}).get("message", ""),
                                "lastTransitionTime": stamp,
                            },
                        ]
                    }
                },
                namespace,
                subresource="status",
            )
        return None


class InstallPlanController(Controller):
    name = "olm-installplan"

    def setup(self):
        self.plans = self.informer(apis.INSTALLPLANS)
        self.plans.add_handler(self.enqueue_obj)

    def reconcile(self, key):
        namespace, name = split_key(key)
        plan = self.plans.get(name, namespace)
        if not plan:
            return None
        spec = plan.get("spec") or {}
        status = plan.get("status") or {}
        phase = status.get("phase")
        csvs = spec.get("clusterServiceVersionNames") or []
        if phase in ("Complete", "Failed"):
            return None
        if not spec.get("approved"):
            if phase != "RequiresApproval":
                self._status(plan, "RequiresApproval", csvs, "Unknown")
            return None
        if phase != "Installing":
            self._status(plan, "Installing", csvs, "Unknown")
            return self.timing()
        started = parse_rfc3339(status.get("startTime")) or time.time()
        wait = self.timing() - (time.time() - started)
        if wait > 0:
            return wait
        for csv_name in csvs:
            package, pkg = package_for_csv(csv_name)
            if not pkg:
                self._status(plan, "Failed", csvs, "Unknown", "unknown ClusterServiceVersion %s" % csv_name)
                return None
            for crd in pkg["ownedCRDs"]:
                self._ensure_crd(crd)
            self.client.ensure(apis.CSVS, csv_body(package, namespace))
        self._status(plan, "Complete", csvs, "Created")
        return None

    def _ensure_crd(self, crd_name):
        if self.client.get(CRDS, crd_name):
            return
        for path in glob.glob(os.path.join(OWNED_CRD_DIR, "*.yaml")):
            with open(path) as handle:
                for doc in yaml.safe_load_all(handle):
                    if doc and name_of(doc) == crd_name:
                        self.client.ensure(CRDS, doc)
                        return

    def _status(self, plan, phase, csvs, step_status, message=None):
        body = {
            "phase": phase,
            "catalogSources": [(plan.get("spec") or {}).get("source")],
            "plan": [
                {
                    "resolving": csv,
                    "status": step_status,
                    "resource": {
                        "group": apis.CSVS.group,
                        "version": apis.CSVS.version,
                        "kind": "ClusterServiceVersion",
                        "name": csv,
                        "sourceName": (plan.get("spec") or {}).get("source"),
                        "sourceNamespace": (plan.get("spec") or {}).get("sourceNamespace"),
                    },
                }
                for csv in csvs
            ],
        }
        if phase == "Installing":
            body["startTime"] = now_rfc3339()
        stamp = now_rfc3339()
        ctype = {
            "Complete": "Installed",
            "Failed": "Installed",
            "RequiresApproval": "Installed",
            "Installing": "Installed",
        }[phase]
        body["conditions"] = [
            {
                "type": ctype,
                "status": "True" if phase == "Complete" else "False",
                "reason": {"Failed": "InstallComponentFailed"}.get(phase, ""),
                "message": message or "",
                "lastTransitionTime": stamp,
                "lastUpdateTime": stamp,
            }
        ]
        if message:
            body["message"] = message
        self.client.patch(apis.INSTALLPLANS, name_of(plan), {"status": body}, namespace_of(plan), subresource="status")


class CSVController(Controller):
    name = "olm-csv"

    PHASES = (
        ("Pending", "RequirementsUnknown", "requirements not yet checked"),
        ("InstallReady", "AllRequirementsMet", "all requirements found, attempting install"),
        ("Installing", "InstallSucceeded", "waiting for install components to report healthy"),
        ("Succeeded", "InstallSucceeded", "install strategy completed with no errors"),
    )

    def setup(self):
        self.csvs = self.informer(apis.CSVS)
        self.groups = self.informer(apis.OPERATORGROUPS)
        self.deployments = self.informer(DEPLOYMENTS)
        self.csvs.add_handler(self.enqueue_obj)
        self.groups.add_handler(self._on_group)
        self.deployments.add_handler(self._on_deployment)

    def _on_group(self, etype, og, old):
        for csv in self.csvs.list(namespace_of(og)):
            self.enqueue(key_of(csv))

    def _on_deployment(self, etype, dep, old):
        for ref in meta(dep).get("ownerReferences") or []:
            if ref.get("kind") == "ClusterServiceVersion":
                self.enqueue("%s/%s" % (namespace_of(dep), ref.get("name")))

    def _set_phase(self, csv, phase, reason, message):
        status = csv.get("status") or {}
        if status.get("phase") == phase and status.get("reason") == reason and status.get("message") == message:
            return
        stamp = now_rfc3339()
        history = list(status.get("conditions") or [])
        history.append(
            {"phase": phase, "reason": reason, "message": message, "lastTransitionTime": stamp, "lastUpdateTime": stamp}
        )
        self.client.patch(
            apis.CSVS,
            name_of(csv),
            {
                "status": {
                    "phase": phase,
                    "reason": reason,
                    "message": message,
                    "lastTransitionTime": stamp,
                    "lastUpdateTime": stamp,
                    "conditions": history[-10:],
                }
            },
            namespace_of(csv),
            subresource="status",
        )
        self.log.info("csv %s: %s (%s)", key_of(csv), phase, reason)

    def reconcile(self, key):
        namespace, name = split_key(key)
        csv = self.csvs.get(name, namespace)
        if not csv or meta(csv).get("deletionTimestamp"):
            return None
        status = csv.get("status") or {}
        groups = self.groups.list(namespace)
        if not groups:
            self._set_phase(csv, "Failed", "NoOperatorGroup", "csv in namespace with no operatorgroups")
            return None
        if len(groups) > 1:
            self._set_phase(
                csv,
                "Failed",
                "TooManyOperatorGroups",
                "csv created in namespace with multiple operatorgroups, can't pick one automatically",
            )
            return None
        mode, description = install_mode(groups[0], namespace)
        supported = {m.get("type"): m.get("supported") for m in (csv.get("spec") or {}).get("installModes") or []}
        if supported and not supported.get(mode):
            self._set_phase(
                csv,
                "Failed",
                "UnsupportedOperatorGroup",
                "%s InstallModeType not supported, cannot configure to watch %s" % (mode, description),
            )
            return None
        phase = status.get("phase")
        if phase in (None, "", "Failed"):
            self._set_phase(csv, *self.PHASES[0])
            return self.timing(0.5)
        order = [p[0] for p in self.PHASES]
        if phase not in order or phase == "Succeeded":
            return self._check_deployments(csv) if phase == "Succeeded" else None
        since = parse_rfc3339(status.get("lastTransitionTime")) or 0
        wait = self.timing(0.5) - (time.time() - since)
        if wait > 0:
            return wait
        if phase == "Pending":
            self._set_phase(csv, *self.PHASES[1])
            return self.timing(0.5)
        if phase == "InstallReady":
            self._install(csv)
            self._set_phase(csv, *self.PHASES[2])
            return self.timing(0.5)
        if phase == "Installing":
            waiting = self._deployments_waiting(csv)
            if waiting is None:
                self._set_phase(csv, *self.PHASES[3])
                return None
            # OLM's updateInstallStatus: still Installing, reason InstallWaiting, "installing: <why>".
            self._set_phase(csv, "Installing", "InstallWaiting", "installing: " + waiting)
            return self.timing(0.5)
        return None

    def _deployment_specs(self, csv):
        return ((((csv.get("spec") or {}).get("install") or {}).get("spec")) or {}).get("deployments") or []

    def _install(self, csv):
        namespace = namespace_of(csv)
        owner = [
            {
                "apiVersion": apis.CSVS.api_version,
                "kind": "ClusterServiceVersion",
                "name": name_of(csv),
                "uid": meta(csv).get("uid"),
                "controller": False,
                "blockOwnerDeletion": False,
            }
        ]
        install = (((csv.get("spec") or {}).get("install") or {}).get("spec")) or {}
        accounts = {
            p.get("serviceAccountName")
            for p in (install.get("permissions") or []) + (install.get("clusterPermissions") or [])
            if p.get("serviceAccountName")
        }
        for dep in self._deployment_specs(csv):
            sa = (((dep.get("spec") or {}).get("template") or {}).get("spec") or {}).get("serviceAccountName")
            if sa:
                accounts.add(sa)
        for sa in sorted(accounts):
            self.client.ensure(
                SERVICEACCOUNTS, {"metadata": {"name": sa, "namespace": namespace, "ownerReferences": owner}}
            )
        for dep in self._deployment_specs(csv):
            body = {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": dep["name"],
                    "namespace": namespace,
                    "ownerReferences": owner,
                    "labels": {
                        "olm.owner": name_of(csv),
                        "olm.owner.kind": "ClusterServiceVersion",
                        "olm.owner.namespace": namespace,
                    },
                },
                "spec": copy.deepcopy(dep.get("spec") or {}),
            }
            self.client.ensure(DEPLOYMENTS, body)

    def _deployments_waiting(self, csv):
        """Why the CSV's install is not done yet, as OLM words it (the first deployment that is not rolled out), or
        None. operator-lifecycle-manager pkg/controller/install/deployment.go ``checkForDeployments`` and
        status_viewer.go ``DeploymentStatus``."""
        for dep in self._deployment_specs(csv):
            live = self.deployments.get(dep["name"], namespace_of(csv))
            if not live:
                return "missing deployment with name=%s" % dep["name"]
            spec, status = live.get("spec") or {}, live.get("status") or {}
            wanted = spec.get("replicas", 1)
            updated, available = status.get("updatedReplicas", 0), status.get("availableReplicas", 0)
            if meta(live).get("generation", 0) > status.get("observedGeneration", 0):
                why = "Waiting for deployment spec update to be observed...\n"
            elif updated < wanted:
                why = "Waiting for rollout to finish: %d out of %d new replicas have been updated...\n" % (
                    updated,
                    wanted,
                )
            elif available < updated:
                why = "Waiting for rollout to finish: %d of %d updated replicas are available...\n" % (
                    available,
                    updated,
                )
            else:
                continue
            return "waiting for deployment %s to become ready: %s" % (dep["name"], why)
        return None

    def _check_deployments(self, csv):
        """A Succeeded CSV whose deployment disappeared goes back to Installing (OLM re-creates it)."""
        for dep in self._deployment_specs(csv):
            if not self.deployments.get(dep["name"], namespace_of(csv)):
                self._install(csv)
                self._set_phase(
                    csv, "Installing", "ComponentUnhealthy", "installing: deployment %s not found" % dep["name"]
                )
                return self.timing(0.5)
        return None


class OperatorGroupController(Controller):
    name = "olm-operatorgroup"

    def setup(self):
        self.groups = self.informer(apis.OPERATORGROUPS)
        self.groups.add_handler(self.enqueue_obj)

    def reconcile(self, key):
        namespace, name = split_key(key)
        og = self.groups.get(name, namespace)
        if not og:
            return None
        targets = [t for t in ((og.get("spec") or {}).get("targetNamespaces") or []) if t] or [""]
        if (og.get("status") or {}).get("namespaces") != targets:
            self.client.patch(
                apis.OPERATORGROUPS,
                name,
                {"status": {"namespaces": targets, "lastUpdated": now_rfc3339()}},
                namespace,
                subresource="status",
            )
        return None


def catalog_source_status(source):
    return {
        "connectionState": {
            "address": "%s.%s.svc:50051" % (name_of(source), namespace_of(source)),
            "lastConnect": now_rfc3339(),
            "lastObservedState": "READY",
        },
        "registryService": {
            "createdAt": now_rfc3339(),
            "port": "50051",
            "protocol": "grpc",
            "serviceName": name_of(source),
            "serviceNamespace": namespace_of(source),
        },
    }


class CatalogSourceController(Controller):
    name = "olm-catalogsource"

    def setup(self):
        self.sources = self.informer(apis.CATALOGSOURCES)
        self.sources.add_handler(self.enqueue_obj)

    def reconcile(self, key):
        namespace, name = split_key(key)
        source = self.sources.get(name, namespace)
        if not source:
            return None
        state = ((source.get("status") or {}).get("connectionState") or {}).get("lastObservedState")
        if state != "READY":
            try:
                self.client.patch(
                    apis.CATALOGSOURCES,
                    name,
                    {"status": catalog_source_status(source)},
                    namespace,
                    subresource="status",
                )
            except ApiException as exc:
                if exc.status != 404:
                    raise
        return None
