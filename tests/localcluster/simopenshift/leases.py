# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Node leases renewed as a kubelet renews them after an API server restart.

kwok (v0.7.0, pkg/kwok/controllers/node_lease_controller.go ``sync``) renews a node's Lease from its informer's
copy; after an API server restart that copy is stale for as long as kwok's watch takes to come back, and every
renewal fails with a conflict (seen: 40-50 s). A kubelet reads its Lease again on a conflict and renews at once
(k8s.io/component-helpers/apimachinery/lease/controller.go, ``retryUpdateLease``), so on a real cluster a 10 s
API server restart leaves every node Ready. This controller does the kubelet's part: a node Lease not renewed for
STALE_SECONDS is renewed (a merge patch of renewTime, so no stale copy can conflict). It never makes a Lease kwok
would not keep: it only renews Leases that exist (a node's Lease is owned by the node and goes with it).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from simopenshift.kube import Controller, Resource, name_of, parse_rfc3339

LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
NODE_LEASE_NS = "kube-node-lease"
# kwok renews every 10 s (a kubelet too: a quarter of the 40 s lease); two missed renewals is a stalled one.
STALE_SECONDS = 20
LOOK_SECONDS = 10


def micro_time(ts):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + ".%06dZ" % int((ts % 1) * 1e6)


def stale(lease, now, limit=STALE_SECONDS):
    renewed = parse_rfc3339(((lease.get("spec") or {}).get("renewTime")) or "")
    return renewed is not None and now - renewed > limit


class LeaseKeeper(Controller):
    name = "node-leases"

    def setup(self):
        pass

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
        return LOOK_SECONDS
