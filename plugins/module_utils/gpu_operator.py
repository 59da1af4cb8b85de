# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The gpu_operator role's decisions and messages, without I/O (the filters of plugins/filter/gpu_operator.py).

On OpenShift the role installs NVIDIA's certified GPU Operator through OLM and a ClusterPolicy built from the
CSV's ``alm-examples`` with the collection's choices mapped onto it; on Kubernetes, NVIDIA's Helm chart with the
same choices as chart values. Here: those choices as ClusterPolicy fields (``cluster_policy``) and as chart values
(``plan``, with what stops a Kubernetes install: GPU nodes of several OS releases without NVIDIADriver objects),
which InstallPlan to approve (``install_plan``: only the one that installs the pinned CSV; an upgrade waits for the
user), where the ClusterPolicy stands (``policy_outcome``), and the other stack found on the cluster
(``manual_stack``).
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
    kernel_module_type, time_slicing_replicas, time_slicing_config_map, mig_strategy, service_monitor,
    metrics_config_map (the exporter's counters ConfigMap, or empty for the operator's own list) and overrides (the
    user's own fields, merged last).
    """
    return deep_merge(_choice_fields(choices), choices.get("overrides") or {}, keep_none=True)


def _choice_fields(choices):
    """The fields the choices set; the chart's values have the same names and shape (deployments/gpu-operator
    templates/clusterpolicy.yaml copies driver.*, mig.strategy, devicePlugin.config, dcgmExporter.serviceMonitor)."""
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
    if choices.get("metrics_config_map"):
        # The exporter collects the counters of that ConfigMap's dcgm-metrics.csv (the operator mounts it at
        # /etc/dcgm-exporter/dcgm-metrics.csv and points DCGM_EXPORTER_COLLECTORS at it: TransformDCGMExporter).
        policy["dcgmExporter"]["config"] = {"name": choices["metrics_config_map"]}
    return policy


def os_tag(os_release):
    """The driver image's OS suffix for a node, from its NFD os_release labels (``ID``, ``VERSION_ID``: the
    operator's getOSTag, the major version only for ol, rocky and rhel); empty when NFD has not labelled the node."""
    os_id, version = os_release.get("ID", ""), os_release.get("VERSION_ID", "")
    if not os_id or not version:
        return ""
    if os_id in ("ol", "rocky", "rhel"):
        version = version.split(".")[0]
    return os_id + version


def os_pools(nodes):
    """{OS tag: [GPU node names]} ('' for nodes NFD has not labelled); ``nodes`` as preflight reads them
    (nfd_labels: name, os_release)."""
    pools = {}
    for node in nodes or []:
        pools.setdefault(os_tag(node.get("os_release") or {}), []).append(node.get("name"))
    return {k: sorted(v) for k, v in sorted(pools.items())}


def plan(choices, found, settings):
    """What the role installs and what stops it, by platform.

    ``settings``: openshift (bool), driver_owner (auto, clusterpolicy or nvidiadriver: the driver through
    NVIDIADriver objects, one driver DaemonSet per OS release, instead of the ClusterPolicy's one image), helm_values (chart values merged
    last), overrides (ClusterPolicy fields, OLM only), counters_csv and counters_csv_found (the exporter's counters
    file, and whether it is there). ``found``: policies (ClusterPolicies) and gpu_nodes (as
    preflight reads them: name, os_release).

    Returns ``problems`` (empty when the install may go on), ``driver_crd`` (bool: NVIDIADriver objects run the driver) and, on Kubernetes, the
    chart values (``chart_values``). ``auto`` keeps what an installed ClusterPolicy uses (switching replaces every driver pod at
    once, NVIDIA's NVIDIADriver documentation warns) and, on a first install, uses NVIDIADriver objects only when
    the GPU nodes run more than one OS release: the ClusterPolicy's driver takes the OS of the first GPU node
    (getGPUNodeOSInfo) for every node, and a node of another release cannot build or load that image's driver.
    """
    setting = settings.get("driver_owner", "auto")
    helm_values = settings.get("helm_values") or {}
    common = []
    if settings.get("counters_csv") and not settings.get("counters_csv_found"):
        common.append(
            "gpu_operator: gpu_operator_exporter_counters_csv {0} is not a file on the controller; name a DCGM "
            'exporter counters CSV, or set it to "" for the operator\'s own counters.'.format(settings["counters_csv"])
        )
    if settings.get("openshift"):
        problems = list(common)
        if setting != "auto":
            problems.append(
                "gpu_operator: gpu_operator_driver_owner {0} is for Kubernetes (the Helm chart's ClusterPolicy or "
                "NVIDIADriver); on OpenShift the operator builds a driver per RHCOS build with the Driver Toolkit: set "
                "it to auto.".format(setting)
            )
        if helm_values:
            problems.append(
                "gpu_operator: gpu_operator_helm_values are Helm chart values, and OpenShift installs the operator "
                "through OLM: put ClusterPolicy fields in gpu_operator_cluster_policy_overrides instead."
            )
        return {"problems": problems, "driver_crd": False, "chart_values": {}, "os_pools": {}}
    problems = list(common)
    if settings.get("overrides"):
        problems.append(
            "gpu_operator: gpu_operator_cluster_policy_overrides are ClusterPolicy fields for the OLM install "
            "(OpenShift); on Kubernetes the chart renders the ClusterPolicy: put chart values (same names: driver, "
            "toolkit, devicePlugin, ...) in gpu_operator_helm_values instead."
        )
    if "nfd" in helm_values:
        problems.append(
            "gpu_operator: gpu_operator_helm_values sets nfd: the collection's nfd state runs Node Feature Discovery, "
            "and the chart's own NFD would run a second one: remove the nfd key."
        )
    pools = os_pools(found.get("gpu_nodes"))
    installed = [dig(p, "spec", "driver", "useNvidiaDriverCRD") for p in found.get("policies") or []]
    if setting == "auto":
        driver_crd = installed[0] is True if installed else len([t for t in pools if t]) > 1
    else:
        driver_crd = setting == "nvidiadriver"
    if not driver_crd and len([t for t in pools if t]) > 1:
        problems.append(
            "gpu_operator: the GPU nodes run {0} OS releases ({1}); the ClusterPolicy's driver serves one, that of the "
            "first GPU node, and the others could not load it. Set gpu_operator_driver_owner: nvidiadriver (the "
            "driver through NVIDIADriver objects, one DaemonSet per OS release; switching an installed operator replaces every "
            "driver pod at once), or use gpuops_stack: manual, which builds a driver per kernel.".format(
                len(pools), "; ".join("{0}: {1}".format(k, ", ".join(v)) for k, v in pools.items() if k)
            )
        )
    values = deep_merge(
        _choice_fields(choices),
        {"nfd": {"enabled": False}, "driver": {"nvidiaDriverCRD": {"enabled": driver_crd, "deployDefaultCR": True}}},
    )
    values = deep_merge(values, helm_values, keep_none=True)
    return {"problems": problems, "driver_crd": driver_crd, "chart_values": values, "os_pools": pools}


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

    ``names``: namespace, subscription, operator_group, config_map (a name or a list), and olm (false: the Helm release is gone
    already, no OLM object to remove).
    """
    ns = names["namespace"]

    def obj(api_version, kind, name, namespace=ns):
        meta = {"name": name}
        if namespace:
            meta["namespace"] = namespace
        return {"apiVersion": api_version, "kind": kind, "metadata": meta}

    csvs = [dig(c, "metadata", "name") for c in found.get("csvs") or []]
    csvs += [dig(s, "status", "installedCSV") for s in found.get("subscription") or []]
    doomed = []
    if names.get("olm", True):
        doomed += [obj("operators.coreos.com/v1alpha1", "Subscription", names["subscription"])]
        doomed += [
            obj("operators.coreos.com/v1alpha1", "ClusterServiceVersion", n) for n in sorted(set(c for c in csvs if c))
        ]
        doomed += [obj("operators.coreos.com/v1", "OperatorGroup", names["operator_group"])]
    config_maps = names["config_map"] if isinstance(names["config_map"], list) else [names["config_map"]]
    doomed += [obj("v1", "ConfigMap", n) for n in config_maps if n]
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
