# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Machine Config Operator, simulated: render controller, node controller, daemon.

* render: the MachineConfigs a pool selects (``spec.machineConfigSelector``,
  usually ``machineconfiguration.openshift.io/role: <pool>``) are validated and
  merged, in name order, into ``rendered-<pool>-<md5 of the merged spec>``
  (owned by the pool); the pool's ``spec.configuration`` points at it. A config
  that fails validation (unsupported Ignition version, a file whose
  ``contents.source`` is not a decodable data URL, a relative path) leaves the
  pool on its old configuration with ``RenderDegraded``/``Degraded`` True and
  the reason in the message, as the MCO does.
* node controller: moves at most ``spec.maxUnavailable`` nodes (int or percent,
  default 1) of the pool at a time to the new config by setting the node's
  ``machineconfiguration.openshift.io/desiredConfig``; pool status
  machineCount/updatedMachineCount/readyMachineCount/unavailableMachineCount/
  degradedMachineCount, ``status.configuration`` and the conditions
  Updated/Updating/Degraded/NodeDegraded/RenderDegraded. ``spec.paused`` stops it.
* daemon (one per node): state Working, cordon, reboot (the node is NotReady
  for a phase, its bootID changes), then currentConfig=desiredConfig, state
  Done, uncordon. Node pods are not drained (kwok pods have nothing to move).
* KubeletConfig -> ``99-<pool>-generated-kubelet`` MachineConfig.

A node belongs to a custom pool when that pool's nodeSelector matches it, else
to ``worker``/``master``, as the MCO resolves overlapping pools.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy
import hashlib
import json
import time

from kubernetes.client.rest import ApiException

from simopenshift import apis, catalog
from simopenshift.kube import (
    NODES,
    Controller,
    annotations_of,
    condition,
    labels_of,
    match_selector,
    meta,
    name_of,
    node_ready,
    now_rfc3339,
    owner_ref,
)

try:
    from urllib.parse import unquote
except ImportError:  # pragma: no cover - Python 2
    from urllib import unquote

ROLE_LABEL = "machineconfiguration.openshift.io/role"
ANN_CURRENT = "machineconfiguration.openshift.io/currentConfig"
ANN_DESIRED = "machineconfiguration.openshift.io/desiredConfig"
ANN_STATE = "machineconfiguration.openshift.io/state"
ANN_REASON = "machineconfiguration.openshift.io/reason"
ANN_GENERATED_BY = "machineconfiguration.openshift.io/generated-by-controller-version"
CONTROLLER_VERSION = "2d3a5e3b0e3d5f4f0bf1c4e0c0f1d6a3b7e5c9a1"  # stands in for the MCO commit
# Ignition spec versions the 4.16 MCO accepts (spec 2 configs are translated).
SUPPORTED_IGNITION = ("2.2.0", "3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0")
BUILT_IN_POOLS = ("master", "worker")


class InvalidConfig(ValueError):
    pass


def decode_source(source):
    """Decode an Ignition ``contents.source`` data URL; raises InvalidConfig."""
    if not isinstance(source, str) or not source.startswith("data:"):
        if isinstance(source, str) and source.split(":", 1)[0] in ("http", "https", "s3", "tftp", "gs"):
            return b""  # remote sources are fetched on the node; not checked here
        raise InvalidConfig("unsupported source scheme in %r" % (str(source)[:40],))
    header, sep, data = source[5:].partition(",")
    if not sep:
        raise InvalidConfig("invalid data url (no comma) in %r" % (source[:40],))
    if header.endswith(";base64"):
        try:
            return base64.b64decode(data.encode("ascii"), validate=True)
        except (ValueError, TypeError) as exc:
            raise InvalidConfig("invalid base64 data url: %s" % exc)
    return unquote(data).encode("utf-8")


def validate(mc):
    """Raise InvalidConfig with the MCO-like reason when a MachineConfig cannot render."""
    config = ((mc.get("spec") or {}).get("config")) or {}
    if not config:
        return
    version = (config.get("ignition") or {}).get("version")
    if not version:
        raise InvalidConfig("parsing Ignition config failed: invalid version: missing ignition.version")
    if version not in SUPPORTED_IGNITION:
        raise InvalidConfig(
            "parsing Ignition config failed: unknown version. Supported spec versions: %s"
            % ", ".join(SUPPORTED_IGNITION)
        )
    for entry in ((config.get("storage") or {}).get("files")) or []:
        path = entry.get("path") or ""
        if not path.startswith("/"):
            raise InvalidConfig("invalid file %r: path not absolute" % path)
        contents = entry.get("contents") or {}
        if "source" in contents:
            try:
                decode_source(contents["source"])
            except InvalidConfig as exc:
                raise InvalidConfig("invalid file %s: %s" % (path, exc))


def merge(mcs):
    """Merged spec of MachineConfigs, applied in name order (later files win)."""
    files, units, kargs, extensions = {}, {}, [], []
    spec_out = {"osImageURL": "", "fips": False, "kernelType": "default"}
    for mc in sorted(mcs, key=name_of):
        spec = mc.get("spec") or {}
        config = spec.get("config") or {}
        for entry in ((config.get("storage") or {}).get("files")) or []:
            files[entry.get("path")] = entry
        for unit in ((config.get("systemd") or {}).get("units")) or []:
            units[unit.get("name")] = unit
        kargs.extend(spec.get("kernelArguments") or [])
        for ext in spec.get("extensions") or []:
            if ext not in extensions:
                extensions.append(ext)
        if spec.get("osImageURL"):
            spec_out["osImageURL"] = spec["osImageURL"]
        if spec.get("fips"):
            spec_out["fips"] = True
        if spec.get("kernelType"):
            spec_out["kernelType"] = spec["kernelType"]
    spec_out["config"] = {
        "ignition": {"version": "3.4.0"},
        "storage": {"files": [files[p] for p in sorted(files)]},
        "systemd": {"units": [units[n] for n in sorted(units)]},
    }
    spec_out["kernelArguments"] = kargs
    spec_out["extensions"] = extensions
    return spec_out


def rendered_name(pool_name, merged_spec):
    digest = hashlib.md5(json.dumps(merged_spec, sort_keys=True).encode("utf-8")).hexdigest()
    return "rendered-%s-%s" % (pool_name, digest)


def selected_configs(pool, mcs):
    selector = (pool.get("spec") or {}).get("machineConfigSelector")
    return [mc for mc in mcs if not name_of(mc).startswith("rendered-") and match_selector(selector, labels_of(mc))]


def render(pool, mcs):
    """(rendered MachineConfig body, source refs) for a pool; raises InvalidConfig."""
    chosen = sorted(selected_configs(pool, mcs), key=name_of)
    for mc in chosen:
        try:
            validate(mc)
        except InvalidConfig as exc:
            raise InvalidConfig(
                "Failed to render configuration for pool %s: MachineConfig %s: %s" % (name_of(pool), name_of(mc), exc)
            )
    merged = merge(chosen)
    name = rendered_name(name_of(pool), merged)
    # The release whose RHCOS the config boots (the seeded 00-<role> config's osImageURL).
    os_build = catalog.rhcos_build_for_os_image_url(merged.get("osImageURL"))
    release_version = (os_build and os_build.cluster_version) or catalog.cluster_ocp_version()
    body = {
        "apiVersion": apis.MACHINECONFIGS.api_version,
        "kind": "MachineConfig",
        "metadata": {
            "name": name,
            "annotations": {
                ANN_GENERATED_BY: CONTROLLER_VERSION,
                "machineconfiguration.openshift.io/release-image-version": release_version,
            },
            "ownerReferences": [owner_ref(apis.MACHINECONFIGPOOLS, pool)],
        },
        "spec": merged,
    }
    sources = [
        {"apiVersion": apis.MACHINECONFIGS.api_version, "kind": "MachineConfig", "name": name_of(mc)} for mc in chosen
    ]
    return body, sources


def pool_for_node_labels(pools, labels):
    """The pool a node belongs to: a matching custom pool wins over worker/master."""
    matching = [p for p in pools if match_selector((p.get("spec") or {}).get("nodeSelector"), labels)]
    custom = sorted((p for p in matching if name_of(p) not in BUILT_IN_POOLS), key=name_of)
    if custom:
        return custom[0]
    for wanted in ("master", "worker"):
        for pool in matching:
            if name_of(pool) == wanted:
                return pool
    return None


def max_unavailable(pool, total):
    value = (pool.get("spec") or {}).get("maxUnavailable")
    if value is None or value == "":
        return 1
    if isinstance(value, str) and value.endswith("%"):
        number = int(total * int(value[:-1]) / 100.0)
    else:
        number = int(value)
    return max(number, 1)


def _with_desired(node, desired):
    annotations = dict(annotations_of(node))
    annotations[ANN_DESIRED] = desired
    return dict(node, metadata=dict(node["metadata"], annotations=annotations))


def file_in_config(rendered, path):
    for entry in ((((rendered or {}).get("spec") or {}).get("config") or {}).get("storage") or {}).get("files") or []:
        if entry.get("path") == path:
            return entry
    return None


ENTITLEMENT_PEM = "/etc/pki/entitlement/entitlement.pem"
ENTITLEMENT_KEY = "/etc/pki/entitlement/entitlement-key.pem"


def node_file(node, get_config, path):
    """Decoded content of ``path`` in the config the node runs now (currentConfig), or None.

    This is what the node has on disk: a MachineConfig that is created but not
    rolled out to this node yet (or whose reboot is still in progress) is not
    there. ``get_config(name)`` returns a MachineConfig (an informer's get).
    """
    current = annotations_of(node).get(ANN_CURRENT)
    entry = file_in_config(get_config(current), path) if current else None
    if entry is None:
        return None
    try:
        return decode_source((entry.get("contents") or {}).get("source") or "data:,")
    except InvalidConfig:
        return None


def node_entitlement(node, get_config):
    """(entitled, why not) of a node as CRI-O would mount /etc/pki/entitlement into its containers.

    Entitled when the node's current config holds /etc/pki/entitlement/entitlement.pem
    (the simulation does not judge the certificate: the role checks it before writing).
    """
    pem = node_file(node, get_config, ENTITLEMENT_PEM)
    if pem is None:
        current = annotations_of(node).get(ANN_CURRENT) or "no rendered config"
        return False, "%s is not in %s (the config node %s runs)" % (ENTITLEMENT_PEM, current, name_of(node))
    return True, ""


class RenderController(Controller):
    """Pool rendering plus the node-rollout side of the MCO's node controller."""

    name = "mco-pools"

    def setup(self):
        self.pools = self.informer(apis.MACHINECONFIGPOOLS)
        self.configs = self.informer(apis.MACHINECONFIGS)
        self.nodes = self.informer(NODES)
        self.pools.add_handler(self.enqueue_obj)
        self.configs.add_handler(self._all)
        self.nodes.add_handler(self._all)
        self.sent = {}  # node -> desiredConfig patched but not yet seen in the cache

    def _all(self, etype, obj, old):
        for pool in self.pools.list():
            self.enqueue(name_of(pool))

    def pool_nodes(self, pool):
        pools = self.pools.list()
        return [
            n
            for n in self.nodes.list()
            if not meta(n).get("deletionTimestamp")
            and name_of(pool_for_node_labels(pools, labels_of(n)) or {}) == name_of(pool)
        ]

    def reconcile(self, key):
        pool = self.pools.get(key)
        if not pool:
            return None
        spec = pool.get("spec") or {}
        current_target = (spec.get("configuration") or {}).get("name")
        render_error = None
        try:
            body, sources = render(pool, self.configs.list())
        except InvalidConfig as exc:
            render_error = str(exc)
        else:
            target = name_of(body)
            if not self.configs.get(target):
                try:
                    self.client.create(apis.MACHINECONFIGS, body)
                    self.log.info("pool %s: rendered %s", key, target)
                except ApiException as exc:
                    if exc.status != 409:
                        raise
            if target != current_target or (spec.get("configuration") or {}).get("source") != sources:
                self.client.patch(
                    apis.MACHINECONFIGPOOLS, key, {"spec": {"configuration": {"name": target, "source": sources}}}
                )
                current_target = target
        nodes = self.pool_nodes(pool)
        self._rollout(pool, nodes, current_target)
        self._status(pool, nodes, current_target, render_error)
        return None

    def _rollout(self, pool, nodes, target):
        if not target or (pool.get("spec") or {}).get("paused"):
            return
        limit = max_unavailable(pool, len(nodes))
        # Nodes we pointed at a config whose patch the cache has not shown yet
        # count as busy too, or a stale cache would let us exceed maxUnavailable.
        sent = self.sent
        for node in nodes:
            if sent.get(name_of(node)) == annotations_of(node).get(ANN_DESIRED):
                sent.pop(name_of(node), None)
        nodes = [_with_desired(n, sent[name_of(n)]) if name_of(n) in sent else n for n in nodes]
        busy = [n for n in nodes if self._unavailable(n, target)]
        candidates = sorted(
            (
                n
                for n in nodes
                if annotations_of(n).get(ANN_DESIRED) != target
                and annotations_of(n).get(ANN_STATE, "Done") != "Degraded"
            ),
            key=name_of,
        )
        for node in candidates:
            if ANN_CURRENT not in annotations_of(node):
                # Never managed (registered outside machine-api): it booted with
                # what the machine config server serves, the pool's current config.
                self.client.patch(
                    NODES,
                    name_of(node),
                    {
                        "metadata": {
                            "annotations": {ANN_CURRENT: target, ANN_DESIRED: target, ANN_STATE: "Done", ANN_REASON: ""}
                        }
                    },
                )
                continue
            in_progress = annotations_of(node).get(ANN_DESIRED) != annotations_of(node).get(ANN_CURRENT)
            if not in_progress and len(busy) >= limit:
                break
            self.client.patch(NODES, name_of(node), {"metadata": {"annotations": {ANN_DESIRED: target}}})
            sent[name_of(node)] = target
            if not in_progress:
                busy.append(node)

    @staticmethod
    def _unavailable(node, target):
        ann = annotations_of(node)
        return (
            ann.get(ANN_DESIRED) != ann.get(ANN_CURRENT)
            or ann.get(ANN_STATE) not in (None, "Done")
            or not node_ready(node)
            or bool((node.get("spec") or {}).get("unschedulable"))
        )

    def _status(self, pool, nodes, target, render_error):
        def updated(n):
            ann = annotations_of(n)
            return ann.get(ANN_CURRENT) == target and ann.get(ANN_DESIRED) == target and ann.get(ANN_STATE) == "Done"

        updated_nodes = [n for n in nodes if updated(n)]
        ready = [n for n in updated_nodes if node_ready(n) and not (n.get("spec") or {}).get("unschedulable")]
        degraded = [n for n in nodes if annotations_of(n).get(ANN_STATE) == "Degraded"]
        unavailable = [n for n in nodes if self._unavailable(n, target)]
        # As the MCO computes it: updated, ready and none unavailable.
        all_updated = len(updated_nodes) == len(ready) == len(nodes) and not unavailable
        old = pool.get("status") or {}
        status = {
            "observedGeneration": meta(pool).get("generation"),
            "machineCount": len(nodes),
            "updatedMachineCount": len(updated_nodes),
            "readyMachineCount": len(ready),
            "unavailableMachineCount": len(unavailable),
            "degradedMachineCount": len(degraded),
        }
        if all_updated and target:
            status["configuration"] = (pool.get("spec") or {}).get("configuration")
        node_degraded_msg = "; ".join(
            "Node %s is reporting: %r" % (name_of(n), annotations_of(n).get(ANN_REASON, "")) for n in degraded
        )
        wanted = {
            "RenderDegraded": ("True", "RenderDegraded", render_error) if render_error else ("False", "", ""),
            "NodeDegraded": (
                ("True", "%d nodes are reporting degraded status on sync" % len(degraded), node_degraded_msg)
                if degraded
                else ("False", "", "")
            ),
        }
        is_degraded = bool(render_error or degraded)
        wanted["Degraded"] = (
            ("True", "RenderDegraded" if render_error else "NodeDegraded", render_error or node_degraded_msg)
            if is_degraded
            else ("False", "", "")
        )
        if all_updated and target:
            wanted["Updated"] = ("True", "", "All nodes are updated with MachineConfig %s" % target)
            wanted["Updating"] = ("False", "", "")
        else:
            wanted["Updated"] = ("False", "", "")
            wanted["Updating"] = ("True", "", "All nodes are updating to MachineConfig %s" % target)
        conditions = []
        changed = False
        for ctype in ("RenderDegraded", "NodeDegraded", "Degraded", "Updated", "Updating"):
            state, reason, message = wanted[ctype]
            prev = condition(pool, ctype)
            stamp = now_rfc3339()
            if prev and prev.get("status") == state:
                stamp = prev.get("lastTransitionTime") or stamp
            entry = {
                "type": ctype,
                "status": state,
                "reason": reason,
                "message": message or "",
                "lastTransitionTime": stamp,
            }
            if not prev or any(prev.get(k) != entry[k] for k in ("status", "reason", "message")):
                changed = True
            conditions.append(entry)
        status["conditions"] = conditions
        if changed or any(old.get(k) != v for k, v in status.items() if k != "conditions"):
            self.client.patch(apis.MACHINECONFIGPOOLS, name_of(pool), {"status": status}, subresource="status")


class DaemonController(Controller):
    """machine-config-daemon on every node: apply desiredConfig with a reboot."""

    name = "mco-daemon"

    def setup(self):
        self.nodes = self.informer(NODES)
        self.nodes.add_handler(self.enqueue_obj)
        self.steps = {}  # node -> (step, started)

    def reconcile(self, key):
        node = self.nodes.get(key)
        if not node or meta(node).get("deletionTimestamp"):
            self.steps.pop(key, None)
            return None
        ann = annotations_of(node)
        desired, current = ann.get(ANN_DESIRED), ann.get(ANN_CURRENT)
        if not desired or desired == current:
            self.steps.pop(key, None)
            if ann.get(ANN_STATE) == "Working":
                # The target moved back to what the node runs while we were at
                # it (or we restarted mid-update): finish cleanly.
                if labels_of(node).get(catalog.LABEL_NOT_READY) == "reboot":
                    self.client.patch(NODES, key, {"metadata": {"labels": {catalog.LABEL_NOT_READY: None}}})
                    return self.timing(0.2)
                if not node_ready(node):
                    return self.timing(0.2)
                self.client.patch(
                    NODES,
                    key,
                    {"metadata": {"annotations": {ANN_STATE: "Done", ANN_REASON: ""}}, "spec": {"unschedulable": None}},
                )
            return None
        step, started = self.steps.get(key, (None, 0.0))
        elapsed = time.time() - started
        if step is None:
            self.client.patch(
                NODES,
                key,
                {"metadata": {"annotations": {ANN_STATE: "Working", ANN_REASON: ""}}, "spec": {"unschedulable": True}},
            )
            self.steps[key] = ("drain", time.time())
            self.log.info("node %s: updating %s -> %s", key, current, desired)
            return self.timing()
        if step != "boot" and elapsed < self.timing():
            return self.timing() - elapsed
        if step == "drain":
            self.client.patch(NODES, key, {"metadata": {"labels": {catalog.LABEL_NOT_READY: "reboot"}}})
            self.client.patch(
                NODES,
                key,
                {
                    "status": {
                        "conditions": not_ready_conditions(
                            node, "KubeletNotReady", "node is rebooting for a MachineConfig update"
                        ),
                        "nodeInfo": {"bootID": catalog.fake_hex(32, "boot", key, time.time())},
                    }
                },
                subresource="status",
            )
            self.steps[key] = ("reboot", time.time())
            return self.timing()
        if step == "reboot":
            # Dropping the label lets kwok's node-initialize stage mark it Ready again.
            self.client.patch(NODES, key, {"metadata": {"labels": {catalog.LABEL_NOT_READY: None}}})
            self.steps[key] = ("boot", time.time())
            return self.timing(0.2)
        if step == "boot":
            # The daemon reports Done once the kubelet is back, then uncordons.
            if not node_ready(node) or catalog.LABEL_NOT_READY in labels_of(node):
                return self.timing(0.2)
            self.client.patch(
                NODES,
                key,
                {
                    "metadata": {"annotations": {ANN_CURRENT: desired, ANN_STATE: "Done", ANN_REASON: ""}},
                    "spec": {"unschedulable": None},
                },
            )
            self.steps.pop(key, None)
            self.log.info("node %s: now on %s", key, desired)
        return None


def not_ready_conditions(node, reason, message):
    """The node's conditions with Ready False (what a stopped kubelet leaves behind)."""
    stamp = now_rfc3339()
    out = []
    for cond in (node.get("status") or {}).get("conditions") or []:
        cond = copy.deepcopy(cond)
        if cond.get("type") == "Ready":
            cond.update(
                {
                    "status": "False",
                    "reason": reason,
                    "message": message,
                    "lastTransitionTime": stamp,
                    "lastHeartbeatTime": stamp,
                }
            )
        out.append(cond)
    if not any(c.get("type") == "Ready" for c in out):
        out.append(
            {
                "type": "Ready",
                "status": "False",
                "reason": reason,
                "message": message,
                "lastTransitionTime": stamp,
                "lastHeartbeatTime": stamp,
            }
        )
    return out


class KubeletConfigController(Controller):
    """KubeletConfig -> 99-<pool>-generated-kubelet MachineConfig per selected pool."""

    name = "mco-kubeletconfig"

    def setup(self):
        self.kubeletconfigs = self.informer(apis.KUBELETCONFIGS)
        self.pools = self.informer(apis.MACHINECONFIGPOOLS)
        self.kubeletconfigs.add_handler(self.enqueue_obj)

    def reconcile(self, key):
        kc = self.kubeletconfigs.get(key)
        if not kc:
            return None
        spec = kc.get("spec") or {}
        selector = spec.get("machineConfigPoolSelector")
        pools = [p for p in self.pools.list() if match_selector(selector, labels_of(p))]
        if not pools:
            self._condition(kc, "Failure", "Error: could not find any MachineConfigPool set for KubeletConfig %s" % key)
            return None
        payload = json.dumps(spec.get("kubeletConfig") or {}, sort_keys=True).encode("utf-8")
        for pool in pools:
            body = {
                "apiVersion": apis.MACHINECONFIGS.api_version,
                "kind": "MachineConfig",
                "metadata": {
                    "name": "99-%s-generated-kubelet" % name_of(pool),
                    "labels": {ROLE_LABEL: name_of(pool)},
                    "annotations": {ANN_GENERATED_BY: CONTROLLER_VERSION},
                    "ownerReferences": [
                        {
                            "apiVersion": apis.KUBELETCONFIGS.api_version,
                            "kind": "KubeletConfig",
                            "name": key,
                            "uid": meta(kc).get("uid"),
                            "controller": True,
                        }
                    ],
                },
                "spec": {
                    "config": {
                        "ignition": {"version": "3.4.0"},
                        "storage": {
                            "files": [
                                {
                                    "path": "/etc/kubernetes/kubelet.conf",
                                    "overwrite": True,
                                    "mode": 420,
                                    "contents": {
                                        "source": "data:text/plain;charset=utf-8;base64,"
                                        + base64.b64encode(payload).decode("ascii")
                                    },
                                }
                            ]
                        },
                    }
                },
            }
            existing = self.client.get(apis.MACHINECONFIGS, body["metadata"]["name"])
            if existing is None:
                self.client.create(apis.MACHINECONFIGS, body)
            elif existing.get("spec") != body["spec"]:
                self.client.patch(apis.MACHINECONFIGS, body["metadata"]["name"], {"spec": body["spec"]})
        self._condition(kc, "Success", "Success")
        return None

    def _condition(self, kc, ctype, message):
        prev = condition(kc, ctype)
        if prev and prev.get("message") == message and prev.get("status") == "True":
            return
        self.client.patch(
            apis.KUBELETCONFIGS,
            name_of(kc),
            {
                "status": {
                    "observedGeneration": meta(kc).get("generation"),
                    "conditions": [
                        {"type": ctype, "status": "True", "message": message, "lastTransitionTime": now_rfc3339()}
                    ],
                }
            },
            subresource="status",
        )
