# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The gpu_operator role's decisions and messages, without I/O (the filters of plugins/filter/gpu_operator.py).

The role installs NVIDIA's certified GPU Operator through OLM and a ClusterPolicy built from the CSV's
``alm-examples`` with the collection's choices mapped onto it. Here: those choices as ClusterPolicy fields
(``cluster_policy``), which InstallPlan to approve (``install_plan``: only the one that installs the pinned CSV;
an upgrade waits for the user), where the ClusterPolicy stands (``policy_outcome``), and the other stack found on
the cluster (``manual_stack``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils import device_plugin
from ansible_collections.gpuops.cluster.plugins.module_utils.olm import deep_merge, dig

# The manual stack's DaemonSets carry these owner labels (the collection's roles; k8s_ensure's owner).
MANUAL_OWNERS = ("driver", "container_toolkit", "device_plugin", "gpu_feature_discovery", "monitoring")
SHARING_CONFIG = "any"
OWNER_LABEL = "gpuops.cluster/owner"


def cluster_policy(choices):
    """The ClusterPolicy fields the collection's choices set (deep-merged onto the alm-examples ClusterPolicy).

    ``choices``: driver_repository, driver_version (empty: the operator's default driver image),
    kernel_module_type, time_slicing_replicas, time_slicing_config_map, mig_strategy, service_monitor and
    overrides (the user's own fields, merged last).
    """
    policy = {
        "driver": {"kernelModuleType": choices["kernel_module_type"]},
        "mig": {"strategy": choices["mig_strategy"]},
        "dcgmExporter": {"serviceMonitor": {"enabled": bool(choices["service_monitor"])}},
    }
    if choices.get("driver_version"):
        # repository + image + version, all three (the operator refuses a partial triple); the operator appends
        # the node's OS tag (-rhcos4.16) to a tag, not to a digest.
        repository, image = str(choices["driver_repository"]).rstrip("/"), "driver"
        policy["driver"].update({"repository": repository, "image": image, "version": str(choices["driver_version"])})
    if sharing_configs(choices):
        policy["devicePlugin"] = {"config": {"name": choices["time_slicing_config_map"], "default": SHARING_CONFIG}}
    return deep_merge(policy, choices.get("overrides") or {}, keep_none=True)


def sharing_configs(choices):
    """The device plugin configs of the time-slicing ConfigMap (one key), or {} for none (replicas 1)."""
    return device_plugin.render_configs(
        {
            "device_plugin_configs": {},
            "device_plugin_time_slicing_replicas": choices["time_slicing_replicas"],
            "device_plugin_default_config": SHARING_CONFIG,
            "device_plugin_mig_strategy": choices["mig_strategy"],
            "device_plugin_rename_by_default": False,
            "device_plugin_fail_requests_greater_than_one": False,
        }
    )


def install_plan(subscriptions, plans, pinned=""):
    """Which InstallPlan to approve (Manual approval), and what waits for the user.

    The plan the Subscription points at is approved when it installs the pinned CSV (``pinned``; empty: the
    Subscription's ``startingCSV``, the channel's CSV when the role subscribed). A plan for any other CSV (OLM found
    an upgrade in the channel) is left for the user: ``waiting`` names it and how to take it.
    """
    sub = (subscriptions or [{}])[0]
    ref = dig(sub, "status", "installPlanRef", "name", default="")
    wanted = pinned or dig(sub, "spec", "startingCSV", default="")
    plan = next((p for p in plans or [] if dig(p, "metadata", "name") == ref), None)
    if not ref or plan is None:
        return {"approve": "", "waiting": ""}
    names = dig(plan, "spec", "clusterServiceVersionNames", default=[])
    if dig(plan, "spec", "approved", default=False):
        return {"approve": "", "waiting": ""}
    if wanted in names:
        return {"approve": ref, "waiting": ""}
    return {
        "approve": "",
        "waiting": "InstallPlan {0} would install {1} (the channel moved on); it is not approved: set "
        "gpu_operator_csv: {2} to take it.".format(ref, ", ".join(names), names[0] if names else "<csv>"),
    }


def policy_outcome(policies, name, wait_timeout, check_mode=False):
    """Where the ClusterPolicy stands: ``ready``, ``state`` and ``problem`` (the operator's Error condition)."""
    policy = next((p for p in policies or [] if dig(p, "metadata", "name") == name), {})
    status = policy.get("status") or {}
    state = status.get("state") or ""
    if state == "ready":
        reason = next((c.get("message") for c in status.get("conditions") or [] if c.get("type") == "Ready"), "")
        return {"ready": True, "state": state, "problem": "", "note": reason or "ready"}
    if check_mode:
        return {"ready": False, "state": state, "problem": "", "note": "would wait for ClusterPolicy %s" % name}
    error = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "Error" and c.get("status") == "True"), {}
    )
    if state == "ignored":
        problem = (
            "gpu_operator: ClusterPolicy {0} is ignored by the operator: another ClusterPolicy is older (the operator "
            "reconciles only the oldest). Delete the other one.".format(name)
        )
    elif not policy:
        problem = "gpu_operator: ClusterPolicy {0} is gone.".format(name)
    else:
        problem = "gpu_operator: ClusterPolicy {0} not ready after {1}s (state {2}): {3}: {4}".format(
            name,
            wait_timeout,
            state or "none - is the operator running?",
            error.get("reason", "no Error condition"),
            error.get("message", ""),
        )
    return {"ready": False, "state": state, "problem": problem, "note": ""}


def manual_stack(daemonsets):
    """The collection's own (manual) GPU stack found on the cluster: one 'namespace/name' per DaemonSet."""
    found = []
    for ds in daemonsets or []:
        labels = dig(ds, "metadata", "labels", default={})
        if (
            labels.get("app.kubernetes.io/managed-by") == "gpuops.cluster"
            and labels.get("gpuops.cluster/owner") in MANUAL_OWNERS
        ):
            found.append("{0}/{1}".format(dig(ds, "metadata", "namespace"), dig(ds, "metadata", "name")))
    return sorted(found)


def manual_stack_problems(daemonsets):
    """Why the GPU Operator must not be installed here: the collection's own stack runs (empty when it does not)."""
    found = manual_stack(daemonsets)
    if not found:
        return []
    return [
        "gpu_operator: this collection's own GPU stack runs on this cluster (DaemonSet {0}); the GPU Operator's driver "
        "and operands would run beside it on every GPU node, and a driver cannot load while the other holds the GPUs. "
        "Switch stacks: run playbooks/teardown.yml with gpuops_stack: manual first (it removes the manual stack), then "
        "site.yml with gpuops_stack: operator.".format(", ".join(found))
    ]


def absent_objects(found, names):
    """What absent removes after the ClusterPolicy, in order: the Subscription, its CSVs (listed, and the installed
    one), the OperatorGroup, the time-slicing ConfigMap, and the namespace when the role made it (its owner label).

    ``names``: namespace, subscription, operator_group, config_map.
    """
    ns = names["namespace"]

    def obj(api_version, kind, name, namespace=ns):
        meta = {"name": name}
        if namespace:
            meta["namespace"] = namespace
        return {"apiVersion": api_version, "kind": kind, "metadata": meta}

    csvs = [dig(c, "metadata", "name") for c in found.get("csvs") or []]
    csvs += [dig(s, "status", "installedCSV") for s in found.get("subscription") or []]
    doomed = [obj("operators.coreos.com/v1alpha1", "Subscription", names["subscription"])]
    doomed += [
        obj("operators.coreos.com/v1alpha1", "ClusterServiceVersion", n) for n in sorted(set(c for c in csvs if c))
    ]
    doomed += [obj("operators.coreos.com/v1", "OperatorGroup", names["operator_group"])]
    doomed += [obj("v1", "ConfigMap", names["config_map"])]
    namespace = (found.get("namespace") or [{}])[0]
    if dig(namespace, "metadata", "labels", default={}).get(OWNER_LABEL) == "gpu_operator":
        doomed.append(obj("v1", "Namespace", ns, namespace=None))
    return doomed


def overrides_problems(overrides):
    """gpu_operator_cluster_policy_overrides wrapped in a ``spec`` key: the CRD's structural schema would prune
    ``spec.spec`` silently, and the user's fields would vanish."""
    if isinstance(overrides, dict) and "spec" in overrides:
        return [
            "gpu_operator: gpu_operator_cluster_policy_overrides holds ClusterPolicy spec fields themselves (driver, "
            "toolkit, ...), not a 'spec' key; move what is under spec one level up."
        ]
    return []
