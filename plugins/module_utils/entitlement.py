# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The entitlement role's decisions and checks, as plain functions (the filters of plugins/filter/entitlement.py).

Whether the role applies, what its inputs (and the PEM, as ``pem_info`` describes it) get wrong, whether the
pool runs the entitlement on every node, and the lines that say what the MachineConfigs became. Pure: no
controller or kubernetes import, so the unit tests call them directly.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils import role_inputs

ENABLED = ("auto", "true", "false")
PERCENT_RE = re.compile(r"^([1-9][0-9]?|100)%$")
COUNT_RE = re.compile(r"^[1-9][0-9]*$")
CURRENT_CONFIG = "machineconfiguration.openshift.io/currentConfig"
NODE_STATE = "machineconfiguration.openshift.io/state"
SOURCE_PREFIX = "data:text/plain;charset=utf-8;base64,"


def _text(value):
    """The value as Jinja's ``string`` filter shows it (``True`` for a boolean)."""
    return "" if value is None else str(value)


def _is_true(value):
    return value is True or _text(value).strip().lower() in ("true", "yes", "on", "1")


def _release(version):
    return tuple(int(part) for part in re.findall(r"[0-9]+", _text(version)))


def skip_reason(platform, state, enabled, build_mode, dtk_release):
    """Why the role does nothing here ('' when it runs): plain Kubernetes, switched off, or a build mode without
    entitlement (auto uses the Driver Toolkit from ``dtk_release`` on). ``state=absent`` always cleans up."""
    platform = platform or {}
    if not _is_true(platform.get("openshift")):
        return "plain Kubernetes has no Machine Config Operator (precompiled or host drivers need no entitlement)"
    if state == "absent":
        return ""
    enabled = _text(enabled).lower()
    if enabled == "false":
        return "entitlement_enabled is false"
    if enabled == "true" or build_mode == "entitlement":
        return ""
    ocp = _text(platform.get("openshift_version"))
    if build_mode == "auto":
        if ocp and _release(ocp) < _release(dtk_release):
            return ""
        return "driver build mode auto on OpenShift {0} uses the Driver Toolkit (entitlement is only needed before {1})".format(
            ocp or "?", dtk_release
        )
    return "driver build mode {0} needs no entitlement".format(build_mode)


def _switch_problems(values):
    enabled = values.get("entitlement_enabled")
    if _text(enabled).lower() in ENABLED:
        return []
    return ["entitlement: entitlement_enabled must be auto, true or false (got {0}).".format(_text(enabled))]


def _setting_problems(values, ignition_versions):
    out = []
    given = _text(values.get("entitlement_max_unavailable"))
    if given and not (COUNT_RE.match(given) or PERCENT_RE.match(given)):
        out.append(
            "entitlement: entitlement_max_unavailable {0} is not an integer >= 1 or a percentage 1%-100% "
            "(empty leaves the pool alone).".format(given)
        )
    version = _text(values.get("entitlement_ignition_version"))
    if version not in [_text(v) for v in ignition_versions]:
        out.append(
            "entitlement: entitlement_ignition_version {0} is not one of {1}.".format(
                version, ", ".join(_text(v) for v in ignition_versions)
            )
        )
    baseurl = _text(values.get("entitlement_rhsm_baseurl"))
    if not re.match(r"^https?://", baseurl):
        out.append("entitlement: entitlement_rhsm_baseurl must be an http(s) URL, got {0}.".format(baseurl))
    return out


def _test_pod_problems(values):
    out = []
    namespace = values.get("entitlement_test_namespace")
    if not role_inputs.RULES["dns_label"][0](namespace, {}):
        out.append(
            "entitlement: entitlement_test_namespace {0} must be a DNS-1123 label (lower case letters, digits, '-', "
            "at most 63).".format(_text(namespace))
        )
    out.extend(role_inputs.input_problems("entitlement", {"entitlement_test_image": "image"}, values))
    if not values.get("entitlement_test_command"):
        out.append("entitlement: entitlement_test_command must not be empty (the test pod's command).")
    return out


def pem_source(values):
    """The variable the PEM comes from: the file when one is given, else the PEM text."""
    return "entitlement_pem_file" if _text(values.get("entitlement_pem_file")) else "entitlement_pem"


def _pem_reason(info):
    if info.get("invalid_blocks", 0) > 0:
        return "malformed PEM ({0})".format("; ".join(info.get("errors") or []))
    certs, keys = info.get("certificates", 0), info.get("private_keys", 0)
    if certs == 0 and keys == 0:
        return "no PEM certificate or private key in it (not a PEM file?)"
    if certs == 0:
        return "no certificate in it (only {0} private key(s))".format(keys)
    if keys == 0:
        return "no private key in it (only {0} certificate(s))".format(certs)
    if not info.get("key_matches_certificate"):
        return "the private key does not belong to the certificate {0}".format(info.get("subject_cn"))
    if info.get("expired"):
        return "the certificate {0} expired on {1} ({2} days ago)".format(
            info.get("subject_cn"), info.get("not_after"), abs(int(info.get("days_left") or 0))
        )
    return ""


def pem_problems(values, info, read):
    """The first thing wrong with the PEM: both or neither source given, an unreadable file, then its content
    as ``pem_info`` describes it (``read``: whether the text was non-empty)."""
    given_file = bool(_text(values.get("entitlement_pem_file")))
    if given_file == bool(_text(values.get("entitlement_pem"))):
        return [
            "entitlement: entitlement_pem_file and entitlement_pem: give exactly one of them (the path of the "
            "entitlement PEM on the controller, or the PEM text from a vaulted variable); {0}.".format(
                "both are set" if given_file else "neither is set"
            )
        ]
    if given_file and not read:
        return [
            "entitlement: entitlement_pem_file {0} cannot be read on the controller (missing, unreadable or "
            "empty). Give the path of the entitlement PEM (certificate and key).".format(values["entitlement_pem_file"])
        ]
    reason = _pem_reason(info or {})
    if not reason:
        return []
    return [
        "entitlement: {0}: {1}. Download a current entitlement certificate (with its key) from the Red Hat "
        "customer portal.".format(pem_source(values), reason)
    ]


def problems(values, skip=False, pem=None, pem_read=False, pool=None, pools=None, ignition_versions=()):
    """What is wrong with the role's variables (``values``: name -> value), in the order the role checks them.

    The mode switch always; the rest only when the role runs (``skip`` false): the settings, with
    ``entitlement_state=present`` the test pod settings (when the test is enabled) and the PEM, and the pool
    (``pool`` must be one of ``pools``, the names of the cluster's MachineConfigPools).
    """
    out = _switch_problems(values)
    if skip:
        return out
    out.extend(_setting_problems(values, ignition_versions))
    if values.get("entitlement_state") == "present":
        if _is_true(values.get("entitlement_test_enabled")):
            out.extend(_test_pod_problems(values))
        out.extend(pem_problems(values, pem, pem_read))
    if pools is not None and pool not in pools:
        out.append(
            "entitlement: entitlement_pool {0} is not a MachineConfigPool of this cluster (pools: {1}). Give one "
            "of them, or auto.".format(pool, ", ".join(pools))
        )
    return out


def _conditions(obj):
    return dict((c.get("type"), c.get("status")) for c in (obj.get("status") or {}).get("conditions") or [])


def _config_name(obj, part):
    return ((obj.get(part) or {}).get("configuration") or {}).get("name")


def rollout_problems(name, pool, rendered, nodes, want):
    """Why pool ``name`` does not run the entitlement yet ([] when it does), the first check that fails only.

    ``pool`` and ``rendered`` (its rendered MachineConfig) as read, ``nodes`` the pool's Nodes, ``want`` the
    files the entitlement writes (path -> base64 content).
    """
    pool = pool or {}
    status = pool.get("status") or {}
    cond = _conditions(pool)
    current, wanted = _config_name(pool, "status"), _config_name(pool, "spec")
    if current != (wanted or "-") or cond.get("Updated") != "True" or cond.get("Degraded") == "True":
        return [
            "entitlement: MachineConfigPool {0}: not Updated ({1}/{2} updated, configuration {3}, wanted {4}; "
            "Degraded {5}).".format(
                name,
                status.get("updatedMachineCount", 0),
                status.get("machineCount", "?"),
                current or "none",
                wanted or "none",
                cond.get("Degraded", "?"),
            )
        ]
    files = ((((rendered or {}).get("spec") or {}).get("config") or {}).get("storage") or {}).get("files") or []
    have = dict((f.get("path"), (f.get("contents") or {}).get("source")) for f in files)
    missing = [path for path in want if have.get(path) != SOURCE_PREFIX + want[path]]
    if missing:
        return [
            "entitlement: MachineConfigPool {0}: rendered config {1} lacks (or has other content in) {2}.".format(
                name, current, ", ".join(missing)
            )
        ]
    lagging = []
    for node in nodes or []:
        meta = node.get("metadata") or {}
        ann = meta.get("annotations") or {}
        if ann.get(CURRENT_CONFIG) != current or ann.get(NODE_STATE) != "Done":
            lagging.append(
                "node {0}: runs {1} (state {2})".format(
                    meta.get("name"), ann.get(CURRENT_CONFIG) or "no config", ann.get(NODE_STATE) or "?"
                )
            )
    if lagging:
        return ["entitlement: {0} (wanted {1} with the entitlement files).".format("; ".join(lagging), current)]
    return []


def object_lines(objects, check_mode=False):
    """'entitlement: MachineConfig 50-rhsm-conf: created' per object of a k8s_ensure result (in check mode
    'would be created', 'would be updated', 'would be deleted')."""
    out = []
    for obj in objects or []:
        action = obj.get("action")
        if check_mode and action in ("created", "updated", "deleted"):
            action = "would be " + action
        out.append("entitlement: {0} {1}: {2}".format(obj.get("kind"), obj.get("name"), action))
    return out


def choose_pool(pools, wanted="auto"):
    """The MachineConfigPool to entitle from the cluster's ``pools``: ``wanted``, or with ``auto`` worker when it
    has machines, else master (compact and single-node clusters). ``name``, ``object`` ({} when the cluster has
    no such pool), ``node_selector`` (its matchLabels) and ``names`` (every pool's name)."""
    pools = pools or []
    by_name = dict(((p.get("metadata") or {}).get("name"), p) for p in pools)
    name = wanted
    if wanted == "auto":
        workers = int(((by_name.get("worker") or {}).get("status") or {}).get("machineCount") or 0)
        name = "worker" if workers > 0 else "master"
    obj = by_name.get(name) or {}
    selector = ((obj.get("spec") or {}).get("nodeSelector") or {}).get("matchLabels") or {}
    return {"name": name, "object": obj, "node_selector": selector, "names": list(by_name)}


def max_unavailable(value):
    """spec.maxUnavailable as the pool takes it: an integer for digits, else the text (a percentage)."""
    text = _text(value)
    return int(text) if text.isdigit() else text


def plan_line(pool, state, given_max_unavailable="", pem=None, pem_file="", warn_days=30, check_mode=False):
    """What the role is about to do to ``pool`` (from :func:`choose_pool`): with ``state=present`` the new
    maxUnavailable, the certificate's validity (``pem`` from pem_info) and a warning inside ``warn_days``."""
    present = state == "present"
    obj = pool.get("object") or {}
    given = _text(given_max_unavailable)
    line = "entitlement: {0}{1} pool {2} ({3} machines, maxUnavailable {4}{5})".format(
        "would " if check_mode else "",
        "entitle" if present else "remove the entitlement from",
        pool.get("name"),
        (obj.get("status") or {}).get("machineCount", "?"),
        (obj.get("spec") or {}).get("maxUnavailable", "1 (unset)"),
        " -> {0}".format(max_unavailable(given)) if present and given else "",
    )
    if present:
        pem = pem or {}
        days = pem.get("days_left")
        line += "; certificate {0} valid until {1} ({2} days)".format(pem.get("subject_cn"), pem.get("not_after"), days)
        if days is not None and role_inputs.is_whole(warn_days) and int(days) < int(warn_days):
            line += (
                "; WARNING {0}: the certificate expires within entitlement_expiry_warn_days={1} days, and driver "
                "builds fail once it has expired".format(pem_source({"entitlement_pem_file": pem_file}), warn_days)
            )
    if check_mode:
        line += "; the pool rolls out, then the test pod runs (not in check mode)"
    return line
