# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Node leases renewed, and node conditions posted again, as a kubelet does after an API server restart.

kwok (v0.7.0, pkg/kwok/controllers/node_lease_controller.go ``sync``) renews a node's Lease from its informer's
copy; after an API server restart that copy is stale for as long as kwok's watch takes to come back, and every
renewal fails with a conflict (seen: 40-50 s). A kubelet reads its Lease again on a conflict and renews at once
(k8s.io/component-helpers/apimachinery/lease/controller.go, ``retryUpdateLease``), so on a real cluster a 10 s
API server restart leaves every node Ready. This controller does the kubelet's part: a node Lease not renewed for
STALE_SECONDS is renewed (a merge patch of renewTime, so no stale copy can conflict). It never makes a Lease kwok
would not keep: it only renews Leases that exist (a node's Lease is owned by the node and goes with it).

The same stale informer delays kwok's answer to kube-controller-manager marking a node (its own informers can find
every Lease stale after a restart: Ready Unknown, reason NodeStatusUnknown): kwok's node stage re-posts Ready only
once its node watch is back (seen: up to a minute under load). A kubelet reads its Node on every status sync
(nodeStatusUpdateFrequency 10 s; pkg/kubelet/kubelet_node_status.go ``tryUpdateNodeStatus``) and patches it when
the status differs, so a live node is Ready again within about 10 s. This controller posts what kwok would
(``KUBELET_CONDITIONS``) for the conditions the node controller marked, on nodes whose Lease exists and that no
test holds NotReady (catalog.LABEL_NOT_READY: a broken or rebooting node keeps its conditions).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from simopenshift import catalog
from simopenshift.kube import NODES, Controller, Resource, labels_of, name_of, parse_rfc3339

LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
NODE_LEASE_NS = "kube-node-lease"
# kwok renews every 10 s (a kubelet too: a quarter of the 40 s lease); two missed renewals is a stalled one.
STALE_SECONDS = 20
LOOK_SECONDS = 10
# What kwok posts for a node it manages (kwok v0.7.0 pkg/utils/gotpl/funcs.go ``nodeConditions``), by type.
KUBELET_CONDITIONS = {
    "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
    "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
}
# The reason kube-controller-manager's node lifecycle controller gives a condition it marks Unknown.
MARKED = "NodeStatusUnknown"


def micro_time(ts):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + ".%06dZ" % int((ts % 1) * 1e6)


def reposted(node, now):
    """The node's conditions as its kubelet posts them again, when the node lifecycle controller marked its Ready
    condition and no test holds the node NotReady; else None."""
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = [c for c in conditions if c.get("type") == "Ready"]
    if catalog.LABEL_NOT_READY in labels_of(node) or not ready or ready[0].get("reason") != MARKED:
        return None
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    out = []
    for cond in conditions:
        cond = dict(cond)
        if cond.get("reason") == MARKED and cond.get("type") in KUBELET_CONDITIONS:
            status, reason, message = KUBELET_CONDITIONS[cond["type"]]
            cond.update(
                status=status, reason=reason, message=message, lastHeartbeatTime=stamp, lastTransitionTime=stamp
            )
        out.append(cond)
    return out


def stale(lease, now, limit=STALE_SECONDS):
    renewed = parse_rfc3339(((lease.get("spec") or {}).get("renewTime")) or "")
    return renewed is not None and now - renewed > limit


class LeaseKeeper(Controller):
    name = "node-leases"

    def setup(self):
        # the nodes as the other controllers see them (this informer re-lists within 2 s of a restart)
        self.nodes = self.informer(NODES)

    def resync_keys(self):
        return ["all"]

    def reconcile(self, key):
        now = time.time()
        items, dummy = self.client.list(LEASES, namespace=NODE_LEASE_NS)
        for lease in items:
            if stale(lease, now):
                self.log.info("lease %s not renewed for %ss: renewing it", name_of(lease), STALE_SECONDS)
                self.client.patch(
                    LEASES, name_of(lease), {"spec": {"renewTime": micro_time(now)}}, namespace=NODE_LEASE_NS
                )
        leased = set(name_of(lease) for lease in items)
        for node in self.nodes.list():
            conditions = reposted(node, now) if name_of(node) in leased else None
            if conditions is not None:
                self.log.info(
                    "node %s marked %s by the node controller: posting its status again", name_of(node), MARKED
                )
                self.client.patch(NODES, name_of(node), {"status": {"conditions": conditions}}, subresource="status")
        return LOOK_SECONDS
