# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What the simulation records that the timeline reads: pod condition times as kubelet keeps them, and the field
manager of NFD's label writes as nfd-master's."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from simopenshift import nfd, podsim
from simopenshift.kube import NODES, Client


def gpu_pod(status=None):
    return {
        "metadata": {"name": "p", "namespace": "n", "uid": "u"},
        "spec": {
            "restartPolicy": "Always",
            "initContainers": [{"name": "wait", "image": "i"}],
            "containers": [{"name": "c", "image": "i"}],
        },
        "status": status or {},
    }


def by_type(status):
    return dict((c["type"], c) for c in status["conditions"])


def test_a_status_rewrite_keeps_when_the_pod_became_ready():
    first = podsim.pod_status(gpu_pod(), {"c": podsim.running(1)}, "127.0.0.1", 1)
    first["conditions"] = [dict(c, lastTransitionTime="2026-11-23T10:00:00Z") for c in first["conditions"]]
    for c in first["initContainerStatuses"]:
        c["state"]["terminated"]["finishedAt"] = "2026-11-23T09:59:59Z"
    again = podsim.pod_status(gpu_pod(first), {"c": podsim.running(1)}, "127.0.0.1", 1)
    assert by_type(again)["Ready"]["lastTransitionTime"] == "2026-11-23T10:00:00Z"
    assert set(c["lastTransitionTime"] for c in again["conditions"]) == {"2026-11-23T10:00:00Z"}
    assert again["initContainerStatuses"][0]["state"]["terminated"]["finishedAt"] == "2026-11-23T09:59:59Z"


def test_a_condition_that_flips_gets_a_new_time():
    ready = podsim.pod_status(gpu_pod(), {"c": podsim.running(1)}, "127.0.0.1", 1)
    ready["conditions"] = [dict(c, lastTransitionTime="2026-11-23T10:00:00Z") for c in ready["conditions"]]
    crashing = podsim.pod_status(
        gpu_pod(ready), {"c": podsim.waiting("CrashLoopBackOff", "back-off", restarts=1)}, "127.0.0.1", 1
    )
    conds = by_type(crashing)
    assert conds["Ready"]["status"] == "False" and conds["Ready"]["lastTransitionTime"] != "2026-11-23T10:00:00Z"
    assert conds["PodScheduled"]["lastTransitionTime"] == "2026-11-23T10:00:00Z"  # unchanged: kept


class RecordingApi(object):
    def __init__(self):
        self.calls = []

    def call_api(self, path, method, query_params=None, **kwargs):
        self.calls.append((method, path, list(query_params or []), kwargs.get("header_params", {}).get("Content-Type")))
        return {}


def test_patch_names_its_field_manager_only_when_asked():
    api = RecordingApi()
    client = Client(api)
    client.patch(NODES, "gpu-a", {"metadata": {"labels": {"a": "b"}}}, field_manager=nfd.FIELD_MANAGER)
    client.patch(NODES, "gpu-a", {"metadata": {"labels": {"a": "c"}}})
    assert api.calls == [
        ("PATCH", "/api/v1/nodes/gpu-a", [("fieldManager", "nfd-master")], "application/merge-patch+json"),
        ("PATCH", "/api/v1/nodes/gpu-a", [], "application/merge-patch+json"),
    ]
