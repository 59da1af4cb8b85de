# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The scheduling role's decisions: its inputs' problems, the node roles and their conflicts with the cluster, the
label moves, the admission probes and what they must answer.

Kubernetes' rules: PriorityClass values above 1,000,000,000 are reserved and the system- prefix is Kubernetes' own
(pkg/apis/scheduling/validation); value and preemptionPolicy are immutable; one globalDefault at most; a quota on an
extended resource exists only as requests.<name> (pkg/apis/core/validation ValidateResourceQuota).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpuops.cluster.plugins.module_utils import validators

PRIORITY_MAX = 1000000000
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
BOOLS = ("true", "false", "yes", "no", "on", "off", "1", "0")
QUALIFIED_RE = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
WHOLE_RE = re.compile(r"^[0-9]+$")
INT_RE = re.compile(r"^-?[0-9]+$")
OWNER_LABEL = "gpuops.cluster/owner"


def _j(value):
    return json.dumps(value, sort_keys=False)


def _is_bool(value):
    return str(value).lower() in BOOLS


def _dns_label(value):
    return isinstance(value, str) and validators.dns_label_problem(value) is None


def _dns_subdomain(value):
    return isinstance(value, str) and validators.dns_subdomain_problem(value) is None


def _is_list(value):
    return isinstance(value, list)


def _dups(names):
    return sorted(set(n for n in names if names.count(n) > 1), key=names.index)


def _scalar_problems(v):
    out = []
    if not _is_bool(v["scheduling_taint"]):
        out.append(
            "scheduling_taint (gpuops_gpu_taint) must be true or false, got '{0}'.".format(v["scheduling_taint"])
        )
    key = v["scheduling_taint_key"]
    if not (isinstance(key, str) and QUALIFIED_RE.match(key) and len(key) <= 316):
        out.append("scheduling_taint_key must be a qualified name such as nvidia.com/gpu, got '{0}'.".format(key))
    value = v["scheduling_taint_value"]
    if not (isinstance(value, str) and LABEL_VALUE_RE.match(value) and len(value) <= 63):
        out.append(
            "scheduling_taint_value must be empty or a label value (at most 63 letters, digits, '-', '_', '.'), got '{0}'.".format(
                value
            )
        )
    label = v["scheduling_node_role_label"]
    if not (isinstance(label, str) and QUALIFIED_RE.match(label)):
        out.append(
            "scheduling_node_role_label must be a label key such as gpuops.cluster/gpu-role, got '{0}'.".format(label)
        )
    if not _is_bool(v["scheduling_node_role_kubernetes_label"]):
        out.append(
            "scheduling_node_role_kubernetes_label must be true or false, got '{0}'.".format(
                v["scheduling_node_role_kubernetes_label"]
            )
        )
    res = v["scheduling_gpu_resource"]
    if not (isinstance(res, str) and QUALIFIED_RE.match(res) and "/" in res):
        out.append(
            "scheduling_gpu_resource must be an extended resource name such as nvidia.com/gpu, got '{0}'.".format(res)
        )
    name = v["scheduling_object_name"]
    if not (_dns_subdomain(name) and len(name) <= 253):
        out.append("scheduling_object_name must be a DNS-1123 name such as gpuops-gpu, got '{0}'.".format(name))
    image = v["scheduling_verify_image"]
    if not (isinstance(image, str) and image.strip()):
        out.append("scheduling_verify_image must be an image reference, got '{0}'.".format(image))
    return out


def _role_problems(roles):
    if not _is_list(roles):
        return ["scheduling_node_roles must be a list of {name, nodes} or {name, count}, got " + _j(roles) + "."]
    out = []
    for index, r in enumerate(roles):
        where = "scheduling_node_roles[{0}]".format(index)
        if not isinstance(r, dict) or not (_dns_label(r.get("name")) and len(r["name"]) <= 63):
            out.append(
                where
                + ".name must be a lowercase DNS label such as training (it becomes a label value), got "
                + _j(r)
                + "."
            )
        elif ("nodes" in r) == ("count" in r):
            out.append(
                where
                + " ("
                + r["name"]
                + ") needs exactly one of nodes (a list of node names) and count (a number of GPU nodes)."
            )
        elif "nodes" in r and not (_is_list(r["nodes"]) and all(isinstance(n, str) for n in r["nodes"])):
            out.append(where + ".nodes must be a list of node names, got " + _j(r["nodes"]) + ".")
        elif "count" in r and not WHOLE_RE.match(str(r["count"])):
            out.append(where + ".count must be an integer >= 0, got '{0}'.".format(r["count"]))
    names = [r.get("name", "") for r in roles if isinstance(r, dict)]
    if _dups(names):
        out.append("scheduling_node_roles names each role once; listed twice: " + ", ".join(_dups(names)) + ".")
    listed = [n for r in roles if isinstance(r, dict) and _is_list(r.get("nodes")) for n in r["nodes"]]
    if _dups(listed):
        out.append(
            "scheduling_node_roles gives node(s) "
            + ", ".join(_dups(listed))
            + " more than one role; a node has one role."
        )
    return out


def _class_problem(where, c):
    if not isinstance(c, dict) or not _dns_subdomain(c.get("name")):
        return where + ".name must be a DNS-1123 name such as gpu-training-high, got " + _j(c) + "."
    if c["name"].startswith("system-"):
        return (
            where
            + ".name "
            + c["name"]
            + ": the system- prefix is reserved for Kubernetes' own classes; choose another name."
        )
    if "value" not in c or not INT_RE.match(str(c["value"])) or int(c["value"]) > PRIORITY_MAX:
        return (
            where
            + ".value ("
            + c["name"]
            + ") must be an integer <= "
            + str(PRIORITY_MAX)
            + " (higher values are reserved for system classes), got '"
            + str(c.get("value", ""))
            + "'."
        )
    if c.get("preemptionPolicy", "PreemptLowerPriority") not in PREEMPTION_POLICIES:
        return (
            where
            + ".preemptionPolicy ("
            + c["name"]
            + ") must be one of "
            + ", ".join(PREEMPTION_POLICIES)
            + ", got '"
            + str(c["preemptionPolicy"])
            + "'."
        )
    if not _is_bool(c.get("globalDefault", False)):
        return (
            where + ".globalDefault (" + c["name"] + ") must be true or false, got '" + str(c["globalDefault"]) + "'."
        )
    return None


def _truthy(value):
    return str(value).lower() in ("true", "yes", "on", "1")


def _class_problems(classes):
    if not _is_list(classes):
        return [
            "scheduling_priority_classes must be a list of {name, value, preemptionPolicy, description, globalDefault}."
        ]
    out = [
        p for p in (_class_problem("scheduling_priority_classes[{0}]".format(i), c) for i, c in enumerate(classes)) if p
    ]
    names = [c.get("name", "") for c in classes if isinstance(c, dict)]
    if _dups(names):
        out.append("scheduling_priority_classes lists a name twice: " + ", ".join(names) + ".")
    if len([c for c in classes if isinstance(c, dict) and _truthy(c.get("globalDefault", False))]) > 1:
        out.append(
            "scheduling_priority_classes: at most one class can be globalDefault (the API server refuses a second)."
        )
    return out


def _quota_problem(where, q, resource):
    if not isinstance(q, dict) or not (_dns_label(q.get("namespace")) and len(q["namespace"]) <= 63):
        return where + ".namespace must be a namespace name, got " + _j(q) + "."
    ns = q["namespace"]
    if "gpus" not in q or not WHOLE_RE.match(str(q["gpus"])):
        return (
            where
            + ".gpus ("
            + ns
            + ") must be an integer >= 0 (the quota on requests."
            + resource
            + "), got '"
            + str(q.get("gpus", ""))
            + "'."
        )
    default = q.get("default_gpus", 0)
    if not WHOLE_RE.match(str(default)):
        return where + ".default_gpus (" + ns + ") must be an integer >= 0, got '" + str(default) + "'."
    if "max_gpus" in q and not re.match(r"^[1-9][0-9]*$", str(q["max_gpus"])):
        return where + ".max_gpus (" + ns + ") must be an integer >= 1, got '" + str(q["max_gpus"]) + "'."
    if "max_gpus" in q and int(default) > int(q["max_gpus"]):
        return (
            where
            + ".default_gpus ("
            + str(default)
            + ") is above max_gpus ("
            + str(q["max_gpus"])
            + ") in "
            + ns
            + "; the LimitRange would refuse its own default."
        )
    if int(default) > int(q["gpus"]):
        return (
            where
            + ".default_gpus ("
            + str(default)
            + ") is above the quota gpus ("
            + str(q["gpus"])
            + ") in "
            + ns
            + "; no defaulted pod could start."
        )
    return None


def _quota_problems(quotas, resource):
    if not _is_list(quotas):
        return ["scheduling_quotas must be a list of {namespace, gpus, default_gpus, max_gpus}."]
    out = [
        p for p in (_quota_problem("scheduling_quotas[{0}]".format(i), q, resource) for i, q in enumerate(quotas)) if p
    ]
    names = [q.get("namespace", "") for q in quotas if isinstance(q, dict)]
    if _dups(names):
        out.append("scheduling_quotas lists a namespace twice: " + ", ".join(names) + ".")
    return out


def input_problems(v):
    """Every problem of the role's variables, in the order the role reports them (the first one is shown)."""
    return (
        _scalar_problems(v)
        + _role_problems(v["scheduling_node_roles"])
        + _class_problems(v["scheduling_priority_classes"])
        + _quota_problems(v["scheduling_quotas"], v["scheduling_gpu_resource"])
    )


def untainted_machinesets(machinesets, key, value, effect):
    """GPU MachineSets whose template lacks the taint (without value, or with ``value``)."""
    out = []
    for ms in machinesets:
        taints = ((ms.get("spec") or {}).get("template") or {}).get("spec", {}).get("taints") or []
        same = [t for t in taints if t.get("key") == key and t.get("effect") == effect]
        if not [t for t in same if "value" not in t or t.get("value") == value]:
            out.append(ms["metadata"]["name"])
    return out


def _desired_roles(roles, gpu_nodes):
    """node -> role: explicit lists first, then counts take the first GPU nodes by name that have no role yet."""
    out = {}
    for r in roles:
        for n in r.get("nodes", []) if "nodes" in r else []:
            out[n] = r["name"]
    for r in roles:
        if "count" in r:
            free = [n for n in gpu_nodes if n not in out]
            for n in free[: int(r["count"])]:
                out[n] = r["name"]
    return out


def _class_conflicts(classes, existing, owner):
    out = []
    for c in classes:
        found = [p for p in existing if p["metadata"]["name"] == c["name"]]
        if found:
            f = found[0]
            labels = f["metadata"].get("labels") or {}
            policy = f.get("preemptionPolicy", "PreemptLowerPriority")
            if labels.get(OWNER_LABEL, "") != owner:
                out.append(
                    "scheduling_priority_classes: PriorityClass "
                    + c["name"]
                    + " exists and was not created by this role; choose another name."
                )
            elif int(f["value"]) != int(c["value"]) or policy != c.get("preemptionPolicy", "PreemptLowerPriority"):
                out.append(
                    "scheduling_priority_classes: PriorityClass "
                    + c["name"]
                    + " has value "
                    + str(f["value"])
                    + " / "
                    + policy
                    + ", and value and preemptionPolicy cannot be changed: run the role with scheduling_state=absent first, or use another name."
                )
        if _truthy(c.get("globalDefault", False)):
            other = [
                p["metadata"]["name"] for p in existing if p.get("globalDefault") and p["metadata"]["name"] != c["name"]
            ]
            if other:
                out.append(
                    "scheduling_priority_classes: "
                    + c["name"]
                    + " asks for globalDefault but PriorityClass "
                    + ", ".join(other)
                    + " already is the default (only one can be)."
                )
    return out


def _group(node_roles):
    """role -> sorted nodes."""
    out = {}
    for node, role in sorted(node_roles.items()):
        out.setdefault(role, []).append(node)
    return out


def plan(v, gpu_nodes, namespaces, priority_classes, labelled_nodes, owner):
    """The node roles (desired, current), the label moves, and the inputs' conflicts with the cluster."""
    gpus = sorted(n["name"] for n in gpu_nodes if n.get("gpu"))
    label = v["scheduling_node_role_label"]
    labelled = dict((n["metadata"]["name"], n["metadata"]["labels"][label]) for n in labelled_nodes)
    roles = _desired_roles(v["scheduling_node_roles"], gpus)
    problems = []
    missing = [q["namespace"] for q in v["scheduling_quotas"] if q["namespace"] not in namespaces]
    if missing:
        problems.append(
            "scheduling_quotas: namespace(s) "
            + ", ".join(missing)
            + " do not exist. The role partitions existing tenant"
            " namespaces and never creates or deletes one: create them first (or drop them from scheduling_quotas)."
        )
    problems += _class_conflicts(v["scheduling_priority_classes"], priority_classes, owner)
    listed = [n for r in v["scheduling_node_roles"] for n in r.get("nodes", [])]
    strangers = [n for n in listed if n not in gpus]
    if strangers:
        problems.append(
            "scheduling_node_roles: "
            + ", ".join(strangers)
            + " is not a GPU node (no NFD NVIDIA PCI label); GPU nodes: "
            + (", ".join(gpus) or "none")
            + "."
        )
    wanted = sum(int(r["count"]) for r in v["scheduling_node_roles"] if "count" in r)
    counted = len([n for n in roles if n in gpus and n not in listed])
    if counted < wanted:
        problems.append(
            "scheduling_node_roles: the counts ask for {0} GPU node(s) besides the listed ones, but only {1} are left ({2} GPU nodes); "
            "lower the counts or add GPU nodes.".format(wanted, counted, len(gpus))
        )
    relabel_all = _truthy(v["scheduling_node_role_kubernetes_label"])
    return {
        "gpu_nodes": gpus,
        "roles": roles,
        "by_role": _group(roles),
        "labelled": labelled,
        # old role -> nodes whose role label says it but whose desired role is another (or none)
        "stale": _group(dict((n, r) for n, r in labelled.items() if roles.get(n, "") != r)),
        # role -> nodes that do not carry it yet (with the node-role label, nfd_labels patches only what differs)
        "moves": _group(dict((n, r) for n, r in roles.items() if labelled.get(n, "") != r or relabel_all)),
        "problems": ["scheduling: " + p for p in problems],
        "taint": {
            "key": v["scheduling_taint_key"],
            "value": v["scheduling_taint_value"],
            "effect": v["scheduling_taint_effect"],
        },
        "taint_text": "{0}={1}:{2}".format(
            v["scheduling_taint_key"], v["scheduling_taint_value"], v["scheduling_taint_effect"]
        ),
    }


def _probe_pod(namespace, image, containers=None, priority=None):
    spec = {"containers": containers or [{"name": "probe", "image": image}]}
    if priority:
        spec = {"priorityClassName": priority, "containers": spec["containers"]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "gpuops-scheduling-probe-", "namespace": namespace},
        "spec": spec,
    }


def probes(v):
    """Pods for server-side dry runs: one over each quota, one without a GPU request where a default applies, one per
    PriorityClass. Split into containers of at most max_gpus each, so the LimitRange's maximum is not what refuses."""
    image, resource = v["scheduling_verify_image"], v["scheduling_gpu_resource"]
    out = []
    for q in v["scheduling_quotas"]:
        want = int(q["gpus"]) + 1
        per = int(q.get("max_gpus", want))
        containers = []
        for i in range((want + per - 1) // per):
            n = str(min(per, want - i * per))
            containers.append(
                {
                    "name": "probe-{0}".format(i),
                    "image": image,
                    "resources": {"limits": {resource: n}, "requests": {resource: n}},
                }
            )
        out.append(
            {
                "check": "quota",
                "namespace": q["namespace"],
                "gpus": int(q["gpus"]),
                "pod": _probe_pod(q["namespace"], image, containers),
            }
        )
        if int(q.get("default_gpus", 0)) > 0:
            out.append(
                {
                    "check": "default",
                    "namespace": q["namespace"],
                    "gpus": int(q["default_gpus"]),
                    "pod": _probe_pod(q["namespace"], image),
                }
            )
    for c in v["scheduling_priority_classes"]:
        out.append(
            {
                "check": "priority",
                "namespace": "default",
                "class": c["name"],
                "value": int(c["value"]),
                "pod": _probe_pod("default", image, priority=c["name"]),
            }
        )
    return out


def _probe_failure(v, probe, r):
    name, resource = v["scheduling_object_name"], v["scheduling_gpu_resource"]
    if probe["check"] == "quota":
        if r.get("allowed") or r.get("status") != 403 or "exceeded quota" not in (r.get("message") or ""):
            how = (
                "admitted"
                if r.get("allowed")
                else "refused for another cause: {0} {1}".format(r.get("status"), r.get("message"))
            )
            return "ResourceQuota {0}/{1}: a pod requesting {2} {3} (quota {4}) was {5}".format(
                probe["namespace"], name, probe["gpus"] + 1, resource, probe["gpus"], how
            )
        return None
    if r.get("allowed"):
        spec = (r.get("object") or {}).get("spec") or {}
        if probe["check"] == "default":
            got = ((spec.get("containers") or [{}])[0].get("resources") or {}).get("limits", {}).get(resource, "none")
        else:
            got = spec.get("priority", "none")
    else:
        got = "refused: " + str(r.get("message"))
    want = probe["gpus"] if probe["check"] == "default" else probe["value"]
    if str(got) == str(want):
        return None
    if probe["check"] == "default":
        return "LimitRange {0}/{1}: a pod without a GPU request got {2}, not the default {3} {4}".format(
            probe["namespace"], name, got, want, resource
        )
    return "PriorityClass {0}: a pod naming it got priority {1}, not {2}".format(probe["class"], got, want)


def probe_failures(v, probe_list, results):
    """What admission answered differently from what the partitions say, one line per probe."""
    return [f for f in (_probe_failure(v, p, r) for p, r in zip(probe_list, results)) if f]


def summary(v, plan, added, taken, objects, check_mode):
    """What the apply did (or would), one line each: the taint, the node roles, every object."""
    would = "would be " if check_mode else ""
    lines = []
    if _truthy(v["scheduling_taint"]):
        line = "scheduling: taint {0} on {1} GPU node(s)".format(plan["taint_text"], len(plan["gpu_nodes"]))
        line += (", " + would + "added on " + ", ".join(added)) if added else ", none to add"
        if plan["machinesets"]:
            line += " (GPU MachineSets " + ", ".join(plan["machinesets"]) + " carry it in their template)"
        lines.append(line)
    elif taken:
        lines.append("scheduling: taint {0} {1}taken back from {2}".format(plan["taint_text"], would, ", ".join(taken)))
    for role, nodes in plan["by_role"].items():
        lines.append("scheduling: role {0}: {1}".format(role, ", ".join(nodes)))
    for obj in objects:
        where = (obj["namespace"] + "/") if obj.get("namespace") else ""
        lines.append("scheduling: {0} {1}{2} {3}{4}".format(obj["kind"], where, obj["name"], would, obj["action"]))
    return lines or ["scheduling: nothing configured"]
