# -*- coding: utf-8 -*-
"""gpu_diagnose's archive: every member redacted, the file private from its first byte."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat
import tarfile

from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.collect import archive_members, write_archive

PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----"


def test_the_archive_holds_every_member_redacted_and_is_private(tmp_path):
    pod = {
        "metadata": {"name": "driver-1", "namespace": "gpu"},
        "spec": {"containers": [{"name": "c", "env": [{"name": "REGISTRY_PASSWORD", "value": "hunter2"}]}]},
    }
    collected = {
        "nodes": [{"metadata": {"name": "gpu-1"}}],
        "daemonsets": [],
        "pods": [("driver", pod)],
        "logs": {("gpu", "driver-1", "c", False): "loaded " + PEM + "\nAuthorization: Bearer abc.def.ghi\n"},
        "events": [],
        "builds": [],
        "buildconfigs": [{"spec": {"triggers": [{"generic": {"secret": "hunter2"}}]}}],
        "ledger": None,
        "record": None,
        "reports": {"timeline.json": "{}"},
    }
    members = archive_members(collected, [], ["GPU nodes: 0"])
    path = write_archive(str(tmp_path / "sub" / "case.tar.gz"), members, now=0)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and not os.path.exists(path + ".tmp")
    with tarfile.open(path) as tar:
        names = tar.getnames()
        text = "".join(tar.extractfile(m).read().decode() for m in tar.getmembers())
    assert "case/logs/gpu/driver-1/c.log" in names and "case/pods/gpu/driver-1.json" in names
    assert "case/reports/timeline.json" in names and "case/nodes/gpu-1.json" in names
    for secret in ("hunter2", "MIIBszCCAVmgAwIBAgIUQ", "abc.def.ghi"):
        assert secret not in text, secret
    assert "REGISTRY_PASSWORD" in text  # the name stays: it says what was there
