# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Simulated OLM: Subscription -> InstallPlan -> CSV Succeeded, and OLM's refusals."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import time
import uuid

import pytest
from simopenshift.control import wait_match  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, olm  # noqa: E402
from simopenshift.kube import CRDS, DEPLOYMENTS, NAMESPACES, condition  # noqa: E402
from simopenshift.testing import wait_for  # noqa: E402

pytestmark = pytest.mark.integration
NFD_CSV = olm.PACKAGES["nfd"]["channels"]["stable"]


@pytest.fixture
def ns(kube):
    name = "sim-olm-" + uuid.uuid4().hex[:5]
    kube.create(NAMESPACES, {"metadata": {"name": name}})
    yield name
    kube.delete(NAMESPACES, name)


def operator_group(kube, ns, targets=None, name="og"):
    spec = {} if targets is None else {"targetNamespaces": targets}
    kube.create(
        apis.OPERATORGROUPS,
        {
            "apiVersion": apis.OPERATORGROUPS.api_version,
            "kind": "OperatorGroup",
            "metadata": {"name": name, "namespace": ns},
            "spec": spec,
        },
    )


def subscription(kube, ns, package="nfd", channel="stable", source="redhat-operators", approval="Automatic"):
    spec = {
        "name": package,
        "source": source,
        "sourceNamespace": "openshift-marketplace",
        "installPlanApproval": approval,
    }
    if channel:
        spec["channel"] = channel
    kube.create(
        apis.SUBSCRIPTIONS,
        {
            "apiVersion": apis.SUBSCRIPTIONS.api_version,
            "kind": "Subscription",
            "metadata": {"name": package, "namespace": ns},
            "spec": spec,
        },
    )


def sub_status(kube, ns, name="nfd"):
    return (kube.get(apis.SUBSCRIPTIONS, name, ns) or {}).get("status") or {}


def csv_phase(kube, ns, name=NFD_CSV):
    return ((kube.get(apis.CSVS, name, ns) or {}).get("status") or {}).get("phase")


def test_automatic_subscription_installs_the_operator(kube, ns):
    operator_group(kube, ns, [ns])
    subscription(kube, ns)
    status = wait_match(
        lambda: sub_status(kube, ns),
        lambda s: s.get("state") == "AtLatestKnown",
        40,
        what="Subscription AtLatestKnown",
    )
    assert status["installedCSV"] == status["currentCSV"] == NFD_CSV
    plan = kube.get(apis.INSTALLPLANS, status["installPlanRef"]["name"], ns)
    assert plan["spec"]["approval"] == "Automatic" and plan["spec"]["approved"] is True
    assert plan["spec"]["clusterServiceVersionNames"] == [NFD_CSV]
    assert plan["status"]["phase"] == "Complete"
    assert plan["metadata"]["ownerReferences"][0]["kind"] == "Subscription"
    wait_for(lambda: csv_phase(kube, ns) == "Succeeded", 30, what="CSV Succeeded")
    csv = kube.get(apis.CSVS, NFD_CSV, ns)
    assert csv["status"]["reason"] == "InstallSucceeded"
    # One entry per phase and reason, as OLM keeps them: Installing may come twice (InstallSucceeded, then
    # InstallWaiting while the operator's Deployment rolls out).
    phases = [c["phase"] for c in csv["status"]["conditions"]]
    assert [p for i, p in enumerate(phases) if not i or phases[i - 1] != p][:4] == [
        "Pending",
        "InstallReady",
        "Installing",
        "Succeeded",
    ]
    dep = kube.get(DEPLOYMENTS, "nfd-controller-manager", ns)
    assert dep["status"].get("availableReplicas") == 1
    assert dep["metadata"]["ownerReferences"][0]["kind"] == "ClusterServiceVersion"
    assert kube.get(apis.OPERATORGROUPS, "og", ns)["status"]["namespaces"] == [ns]


def test_manual_approval_waits_for_the_plan_to_be_approved(kube, ns):
    operator_group(kube, ns, [ns])
    subscription(kube, ns, approval="Manual")
    ref = wait_for(lambda: sub_status(kube, ns).get("installPlanRef"), 20, what="InstallPlan")
    wait_for(
        lambda: (kube.get(apis.INSTALLPLANS, ref["name"], ns).get("status") or {}).get("phase") == "RequiresApproval",
        20,
        what="RequiresApproval",
    )
    status = sub_status(kube, ns)
    assert status["state"] == "UpgradePending"
    assert (condition({"status": status}, "InstallPlanPending") or {}).get("reason") == "RequiresApproval"
    time.sleep(1.5)
    assert kube.get(apis.CSVS, NFD_CSV, ns) is None
    kube.patch(apis.INSTALLPLANS, ref["name"], {"spec": {"approved": True}}, ns)
    wait_for(lambda: sub_status(kube, ns).get("state") == "AtLatestKnown", 30, what="installed after approval")
    wait_for(lambda: csv_phase(kube, ns) == "Succeeded", 30, what="CSV Succeeded")


def test_csv_without_operatorgroup_fails(kube, ns):
    subscription(kube, ns)
    wait_for(lambda: csv_phase(kube, ns) == "Failed", 30, what="CSV Failed")
    csv = kube.get(apis.CSVS, NFD_CSV, ns)
    assert csv["status"]["reason"] == "NoOperatorGroup"
    # Adding the OperatorGroup afterwards lets the install proceed, as in OLM.
    operator_group(kube, ns, [ns])
    wait_for(lambda: csv_phase(kube, ns) == "Succeeded", 30, what="CSV Succeeded after OperatorGroup")


def test_all_namespaces_group_is_not_supported_by_nfd(kube, ns):
    operator_group(kube, ns)  # no targetNamespaces: AllNamespaces
    subscription(kube, ns)
    wait_for(lambda: csv_phase(kube, ns) == "Failed", 30, what="CSV Failed")
    csv = kube.get(apis.CSVS, NFD_CSV, ns)
    assert csv["status"]["reason"] == "UnsupportedOperatorGroup"
    assert "AllNamespaces InstallModeType not supported" in csv["status"]["message"]


@pytest.mark.parametrize(
    "package,channel,source,needle",
    [
        ("no-such-operator", "stable", "redhat-operators", "no operators found in package no-such-operator"),
        ("nfd", "alpha", "redhat-operators", "no operators found in channel alpha of package nfd"),
        ("nfd", "stable", "missing-catalog", "targeted catalogsource openshift-marketplace/missing-catalog missing"),
    ],
)
def test_unresolvable_subscription_reports_resolution_failed(kube, ns, package, channel, source, needle):
    operator_group(kube, ns, [ns])
    subscription(kube, ns, package=package, channel=channel, source=source)
    cond = wait_for(
        lambda: condition({"status": sub_status(kube, ns, package)}, "ResolutionFailed"), 20, what="ResolutionFailed"
    )
    assert cond["status"] == "True" and needle in cond["message"]
    assert not sub_status(kube, ns, package).get("installPlanRef")


def test_gpu_operator_brings_its_crd(cluster, kube, ns):
    operator_group(kube, ns, [ns])
    subscription(kube, ns, package="gpu-operator-certified", channel="v26.3", source="certified-operators")
    wait_for(lambda: csv_phase(kube, ns, "gpu-operator-certified.v26.3.3") == "Succeeded", 40, what="CSV Succeeded")
    assert kube.get(CRDS, "clusterpolicies.nvidia.com") is not None
