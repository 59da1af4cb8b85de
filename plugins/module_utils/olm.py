# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""OLM helpers without I/O: a custom resource from a ClusterServiceVersion's ``alm-examples``.

An operator's CSV carries example custom resources in its ``alm-examples``
annotation (a JSON list). The order is not a contract: the Red Hat NFD operator
lists its NodeFeatureDiscovery first up to OpenShift 4.18 and after a
NodeFeatureRule from 4.19 on, so the example is chosen by kind (and, when
asked, by API group), never by index.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json


class AlmExampleError(ValueError):
    """The annotation cannot give the requested example."""


def parse_alm_examples(alm_examples):
    """The examples as a list of dicts, from the annotation's JSON text or an already parsed list."""
    if alm_examples is None or alm_examples == "":
        raise AlmExampleError("the CSV has no alm-examples annotation")
    data = alm_examples
    if isinstance(alm_examples, (str, bytes)):
        try:
            data = json.loads(alm_examples)
        except ValueError as exc:
            raise AlmExampleError("alm-examples is not valid JSON: {0}".format(exc))
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise AlmExampleError("alm-examples must be a JSON list of objects, not {0}".format(type(data).__name__))
    return data


def example_kinds(alm_examples):
    """The kinds the examples list, in their order."""
    return [str(item.get("kind")) for item in parse_alm_examples(alm_examples)]


def _group_of(api_version):
    return api_version.rsplit("/", 1)[0] if "/" in (api_version or "") else ""


def deep_merge(base, overrides, keep_none=False):
    """``overrides`` merged into a copy of ``base``: dictionaries recursively, anything else replaced.

    A ``None`` value in ``overrides`` removes the key (so an example's field can be dropped); with ``keep_none`` it
    is kept, for overrides that are merged onto an example later.
    """
    result = copy.deepcopy(base)
    for key, value in (overrides or {}).items():
        if value is None and not keep_none:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value, keep_none)
        else:
            result[key] = copy.deepcopy(value)
    return result


def alm_example(alm_examples, kind, overrides=None, namespace=None, api_group=None):
    """The example of ``kind`` (and ``api_group`` when given), with ``overrides`` deep-merged.

    ``namespace`` (when given) is set last, so the object lands where the operator
    watches whatever the example or the overrides say. Raises AlmExampleError when
    no example, or more than one, has that kind.
    """
    if overrides is not None and not isinstance(overrides, dict):
        raise AlmExampleError("overrides must be a dictionary, not {0}".format(type(overrides).__name__))
    examples = parse_alm_examples(alm_examples)
    matches = [
        item
        for item in examples
        if item.get("kind") == kind and (api_group is None or _group_of(item.get("apiVersion")) == api_group)
    ]
    wanted = kind if api_group is None else "{0} ({1})".format(kind, api_group)
    if not matches:
        listed = ", ".join("{0} ({1})".format(i.get("kind"), i.get("apiVersion")) for i in examples) or "nothing"
        raise AlmExampleError("alm-examples has no {0}; it lists {1}".format(wanted, listed))
    if len(matches) > 1:
        raise AlmExampleError("alm-examples has {0} examples of {1}; pass api_group".format(len(matches), wanted))
    result = deep_merge(matches[0], overrides)
    result.setdefault("metadata", {})
    if not isinstance(result["metadata"], dict):
        raise AlmExampleError("the {0} example's metadata is not a dictionary".format(wanted))
    if namespace:
        result["metadata"]["namespace"] = namespace
    for field in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
        result["metadata"].pop(field, None)
    result.pop("status", None)
    return result


# ---------------------------------------------------------------- where an OLM installation stands
# Shared by the roles that install an operator through OLM (nfd, gpu_operator). ``settings`` carries the role's
# name (``role``, default nfd: its variables are ``<role>_channel``, ``<role>_catalog_source`` ...), namespace,
# operator_group (default: the namespace's name), subscription, package, catalog_source,
# catalog_source_namespace, approval, kind (the custom resource the role builds from alm-examples) and
# wait_timeout.

FIELD_MANAGER = "gpuops.cluster"


def _named(text, settings):
    """The role's name and variable prefix in a message (written as @ROLE@ below)."""
    return text.replace("@ROLE@", settings.get("role") or "nfd")


def dig(obj, *path, **kw):
    """obj[path[0]][path[1]]... with ``default`` (None) for a missing or null step."""
    for key in path:
        if not isinstance(obj, dict) or obj.get(key) is None:
            return kw.get("default")
        obj = obj[key]
    return obj


def names(objects):
    return [dig(o, "metadata", "name", default="") for o in objects or []]


def true_conditions(status):
    return [c for c in (status or {}).get("conditions") or [] if c.get("status") == "True"]


def olm_inputs(found, channel, settings):
    """The channel to subscribe to (``channel``, else the package's default), and what is wrong with the OLM
    inputs (OpenShift, before any write).

    ``found`` holds what preflight read: ``catalogs`` (the CatalogSources of the catalog namespace), ``packages``
    (the PackageManifests of @ROLE@_catalog_source) and ``groups`` (the OperatorGroups of the namespace). A missing
    catalog hides the package and channel problems it causes.
    """
    source, source_ns, package = settings["catalog_source"], settings["catalog_source_namespace"], settings["package"]
    channel = channel or ""
    problems = []
    catalogs = names(found.get("catalogs"))
    offered = [p for p in found.get("packages") or [] if dig(p, "metadata", "name") == package]
    if source not in catalogs:
        problems.append(
            "@ROLE@: @ROLE@_catalog_source '{0}' is not a CatalogSource in {1} (@ROLE@_catalog_source_namespace); there: "
            "{2}.".format(source, source_ns, ", ".join(sorted(catalogs)) or "none")
        )
    elif not offered:
        problems.append(
            "@ROLE@: @ROLE@_package '{0}' is not offered by CatalogSource {1}/{2} (it offers: {3}).".format(
                package, source_ns, source, ", ".join(sorted(names(found.get("packages")))) or "nothing"
            )
        )
    else:
        status = offered[0].get("status") or {}
        channel = channel or status.get("defaultChannel") or ""
        channels = [c.get("name") for c in status.get("channels") or []]
        if channel not in channels:
            problems.append(
                "@ROLE@: @ROLE@_channel '{0}' is not offered by package {1} in {2} (channels: {3}; default: {4}); set "
                "@ROLE@_channel to one of them or leave it empty for the default.".format(
                    channel, package, source, ", ".join(channels) or "none", status.get("defaultChannel", "none")
                )
            )
    namespace = settings["namespace"]
    others = [n for n in names(found.get("groups")) if n != settings.get("operator_group", namespace)]
    if others:
        problems.append(
            "@ROLE@: @ROLE@_namespace {0} already holds OperatorGroup {1}; OLM fails a CSV in a namespace with more than "
            "one OperatorGroup (TooManyOperatorGroups). Delete it, or choose another @ROLE@_namespace.".format(
                namespace, ", ".join(others)
            )
        )
    return {"channel": channel, "problems": [_named(p, settings) for p in problems]}


# ---------------------------------------------------------------------- apply


def subscription_state(subscriptions, manager=FIELD_MANAGER):
    """Where OLM stands with the Subscription (the list k8s_info read: none or one).

    ``resolution_failed``: the ResolutionFailed conditions set since the role's last write to the Subscription (its
    field manager's time in managedFields); an older one is stale, OLM has not looked at the new spec yet.
    ``settled``: OLM chose a CSV, or said it cannot.
    """
    subscriptions = subscriptions or []
    since = max(
        [
            entry.get("time") or ""
            for sub in subscriptions
            for entry in dig(sub, "metadata", "managedFields", default=[])
            if entry.get("manager") == manager
        ]
        or [""]
    )
    failed = [
        c
        for sub in subscriptions
        for c in dig(sub, "status", "conditions", default=[])
        if c.get("type") == "ResolutionFailed"
        and c.get("status") == "True"
        and (c.get("lastTransitionTime") or "") >= since
    ]
    status = (subscriptions[0].get("status") if subscriptions else None) or {}
    current = [s for s in (dig(sub, "status", "currentCSV") for sub in subscriptions) if s]
    return {
        "status": status,
        "current_csv": status.get("currentCSV") or "",
        "resolution_failed": failed,
        "settled": bool(current or failed),
    }


def _csv_kinds(csv):
    try:
        return example_kinds(dig(csv, "metadata", "annotations", "alm-examples", default="[]"))
    except AlmExampleError as exc:
        return ["(unreadable: {0})".format(exc)]


def _subscription_problem(sub, settings, check_mode):
    where = "@ROLE@: Subscription {0}/{1}".format(settings["namespace"], settings["subscription"])
    if sub["resolution_failed"]:
        first = sub["resolution_failed"][0]
        return "{0}: ResolutionFailed ({1}): {2}".format(where, first.get("reason", ""), first.get("message", ""))
    if check_mode:
        return ""
    conditions = "; ".join(
        "{0}: {1}".format(c.get("type"), c.get("message", "")) for c in true_conditions(sub["status"])
    )
    return (
        "{0}: no CSV chosen after {1}s (state {2}; conditions: {3}). Check the catalog pods in {4}, or raise "
        "@ROLE@_wait_timeout.".format(
            where,
            settings["wait_timeout"],
            sub["status"].get("state", "none"),
            conditions or "none",
            settings["catalog_source_namespace"],
        )
    )


def _csv_problem(name, csv, sub_status, settings, check_mode):
    where = "@ROLE@: ClusterServiceVersion {0}/{1}".format(settings["namespace"], name)
    status = csv.get("status") or {}
    phase = status.get("phase") or ""
    if phase == "Succeeded":
        kinds = _csv_kinds(csv)
        if settings["kind"] in kinds:
            return ""
        return "{0}: its alm-examples list {1}, no {2}; this operator version is not one the role knows.".format(
            where, ", ".join(kinds) or "nothing", settings["kind"]
        )
    if check_mode and phase != "Failed":
        return ""
    if not csv:
        return "{0}: not created after {1}s (InstallPlan {2})".format(
            where, settings["wait_timeout"], dig(sub_status, "installPlanRef", "name", default="none")
        )
    late = "" if phase == "Failed" else " - still not Succeeded after {0}s".format(settings["wait_timeout"])
    return "{0}: {1} ({2}): {3}{4}".format(
        where, status.get("phase", "no phase"), status.get("reason", ""), (status.get("message") or "").strip(), late
    )


def _note(name, csv, created, settings, check_mode):
    if not name:
        return (
            "@ROLE@: would subscribe to {package}/{channel} from {catalog_source} in {namespace} (OperatorGroup "
            "{operator_group}, approval {approval}); the {kind} CR is built once the CSV exists.".format(**settings)
        )
    status = csv.get("status") or {}
    if status.get("phase") != "Succeeded":
        return (
            "@ROLE@: would wait for ClusterServiceVersion {0}/{1} ({2}); the {3} CR is built once it has "
            "Succeeded.".format(settings["namespace"], name, status.get("phase", "not created yet"), settings["kind"])
        )
    phases = " -> ".join(c.get("phase", "?") for c in status.get("conditions") or [])
    made = created[0] if created else {}
    # A cluster-scoped custom resource (ClusterPolicy) has no namespace in what k8s_ensure returns.
    where = made.get("namespace", settings["namespace"]) if made else settings["namespace"]
    return "@ROLE@: {0}/{1} -> {2} Succeeded ({3}; {4}); {9} {5}{6} {7}{8}".format(
        settings["package"],
        settings["channel"],
        name,
        phases,
        status.get("reason", ""),
        where + "/" if where else "",
        made.get("name", "?"),
        made.get("action", "not applied"),
        " (check mode)" if check_mode else "",
        settings["kind"],
    )


def olm_outcome(read, settings, channel, check_mode=False):
    """Where the operator's installation through OLM stands, from what the role read.

    ``read``: ``subscription`` (the Subscription as read, a list), ``csv`` (its current CSV as read: a list, of
    which the one named by the Subscription counts) and
    ``created`` (the objects of the NodeFeatureDiscovery's k8s_ensure). ``settings``: namespace, subscription,
    package, catalog_source, catalog_source_namespace, approval, kind and wait_timeout; ``channel`` the one
    subscribed to.

    Returns ``settled`` (the Subscription wait is over), ``csv_name``, ``csv`` (that CSV, {} when not read),
    ``csv_settled`` (the CSV wait is over),
    ``ready`` (the CSV Succeeded and offers the kind: build the custom resource), ``installed`` (ready, and OLM has
    nothing pending: the Subscription ``AtLatestKnown`` with that CSV installed; no InstallPlan waits),
    ``problem`` (why the run stops; empty when it goes on) and ``note`` (what OLM did, or in check mode would do).
    """
    settings = dict(settings, channel=channel)
    settings.setdefault("operator_group", settings["namespace"])
    sub = subscription_state(read.get("subscription"))
    name = sub["current_csv"]
    csv = next((c for c in read.get("csv") or [] if dig(c, "metadata", "name") == name), {}) if name else {}
    phase = dig(csv, "status", "phase", default="")
    if name:
        problem = _csv_problem(name, csv, sub["status"], settings, check_mode)
    else:
        problem = _subscription_problem(sub, settings, check_mode)
    ready = bool(name) and phase == "Succeeded" and not problem
    # OLM's catalog operator says AtLatestKnown only when the channel offers no replacement for the installed CSV
    # (UpgradeAvailable then, UpgradePending while an InstallPlan waits): operator-lifecycle-manager,
    # pkg/controller/operators/catalog/operator.go, ensureSubscriptionCSVState and updateSubscriptionStatus.
    return {
        "settled": sub["settled"],
        "csv_name": name,
        "csv": csv,
        "csv_settled": phase in ("Succeeded", "Failed"),
        "ready": ready,
        "installed": ready
        and sub["status"].get("state") == "AtLatestKnown"
        and sub["status"].get("installedCSV") == name,
        "problem": _named(problem, settings),
        "note": _named(_note(name, csv, read.get("created") or [], settings, check_mode), settings),
    }


def olm_steady(objects, installed, kind):
    """Whether a role's OLM waits and its custom resource's own apply have nothing to do.

    ``installed``: what preflight read (olm_outcome's ``installed``), so the custom resource (``kind``), built from
    that CSV, went with the OLM objects in the role's first k8s_ensure; ``objects``: that apply's result (None before
    it ran). Steady when it wrote none of the OLM objects: a changed Subscription may bring another CSV, and then the
    waits and the custom resource's apply from that CSV follow.
    """
    if not installed or objects is None:
        return False
    return all(o.get("action") == "unchanged" for o in objects if o.get("kind") != kind)
