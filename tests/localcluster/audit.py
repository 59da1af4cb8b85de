# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Count mutating API requests from the kube-apiserver audit log.

Used to prove that check mode and no-op re-runs write nothing: take a
``mark()`` before the code under test, then ``writes_since(mark)``.

Window edges are made exact with sentinel requests: a GET for a uniquely
named, non-existent namespace is issued and the log is read until that
request appears, so every request made before it has been written too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time
import uuid

WRITE_VERBS = frozenset(["create", "update", "patch", "delete", "deletecollection"])
# Reviews are POSTs that store nothing: the API server answers them and forgets them (preflight's access check).
REVIEWS = frozenset(
    [
        "selfsubjectrulesreviews",
        "selfsubjectaccessreviews",
        "selfsubjectreviews",
        "subjectaccessreviews",
        "tokenreviews",
    ]
)


class AuditLog(object):
    def __init__(self, path, api_client=None, user="admin"):
        self.path = path
        self.api_client = api_client
        self.user = user

    def _sentinel(self):
        """Issue a request the log will record, and return its unique marker."""
        marker = "audit-sentinel-" + uuid.uuid4().hex[:12]
        if self.api_client is None:
            return None
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        try:
            client.CoreV1Api(self.api_client).read_namespace(marker)
        except ApiException:
            pass  # 404 is expected; the request is logged either way
        return marker

    def _size(self):
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def _wait_for(self, marker, start, timeout=10):
        if marker is None:
            time.sleep(1)
            return self._size()
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(self.path, "rb") as f:
                f.seek(start)
                data = f.read()
            idx = data.find(marker.encode())
            if idx >= 0:
                end = data.find(b"\n", idx)
                return start + (end + 1 if end >= 0 else len(data))
            time.sleep(0.05)
        raise AssertionError("audit sentinel {0} never reached {1}".format(marker, self.path))

    def mark(self):
        """A position in the log after which every request is new."""
        start = self._size()
        return self._wait_for(self._sentinel(), start)

    def events_since(self, mark):
        end = self._wait_for(self._sentinel(), mark)
        with open(self.path, "rb") as f:
            f.seek(mark)
            data = f.read(end - mark)
        events = []
        for line in data.splitlines():
            if not line.strip():
                continue
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return events

    def writes_since(self, mark, user=None, include_dry_run=False):
        """Mutating requests (create/update/patch/delete) made by ``user`` since ``mark``.

        Server-side dry runs (``dryRun=All``, what check mode sends) persist
        nothing and are left out unless ``include_dry_run``.
        """
        user = self.user if user is None else user
        out = []
        for ev in self.events_since(mark):
            if ev.get("verb") not in WRITE_VERBS or (ev.get("objectRef") or {}).get("resource") in REVIEWS:
                continue
            if user and ev.get("user", {}).get("username") != user:
                continue
            if not include_dry_run and "dryRun=All" in ev.get("requestURI", ""):
                continue
            out.append(summarize(ev))
        return out


def summarize(ev):
    ref = ev.get("objectRef", {}) or {}
    return {
        "verb": ev.get("verb"),
        "uri": ev.get("requestURI"),
        "user": ev.get("user", {}).get("username"),
        "resource": ref.get("resource"),
        "subresource": ref.get("subresource"),
        "namespace": ref.get("namespace"),
        "name": ref.get("name"),
        "code": (ev.get("responseStatus") or {}).get("code"),
    }


def main(argv=None):
    """CLI for playbooks (molecule verify): ``audit.py mark`` prints a position; ``audit.py writes-since N``
    prints the admin's mutating requests since it as JSON and exits 1 when there are any."""
    import argparse
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from cluster import DEFAULT_WORKDIR, LocalCluster

    p = argparse.ArgumentParser(description="count mutating requests in the local cluster's audit log")
    p.add_argument("command", choices=["mark", "writes-since"])
    p.add_argument("mark", nargs="?", type=int, default=0)
    p.add_argument("--workdir", default=os.environ.get("GPUOPS_LOCALCLUSTER_DIR", DEFAULT_WORKDIR))
    a = p.parse_args(argv)
    lc = LocalCluster(a.workdir)
    log = AuditLog(lc.audit_log, lc.api_client(), user="admin")
    if a.command == "mark":
        print(log.mark())
        return 0
    writes = log.writes_since(a.mark)
    print(json.dumps(writes, indent=2))
    return 1 if writes else 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
