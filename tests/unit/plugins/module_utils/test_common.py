# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    GpuopsError,
    Progress,
    describe_api_error,
)


class _Exc(Exception):
    def __init__(self, status=None, body="", text=""):
        super(_Exc, self).__init__(text)
        self.status = status
        self.body = body


def test_error_names_parameter():
    assert str(GpuopsError("must be > 0", param="replicas")) == "replicas: must be > 0"


def test_401_names_api_key():
    msg = describe_api_error(_Exc(401), {"host": "https://api.example:6443"})
    assert msg.startswith("api_key:") and "401" in msg and "https://api.example:6443" in msg


def test_403_carries_reason():
    msg = describe_api_error(_Exc(403, body='{"message": "nodes is forbidden"}'))
    assert "403" in msg and "nodes is forbidden" in msg


def test_unreachable_names_host():
    msg = describe_api_error(_Exc(text="HTTPSConnectionPool: Max retries exceeded (Connection refused)"), {})
    assert msg.startswith("host:") and "cannot reach" in msg


def test_progress_dedupes_and_timestamps():
    now = [100.0]
    p = Progress(clock=lambda: now[0])
    p("0/3 ready")
    now[0] = 105.0
    p("0/3 ready")
    p("1/3 ready")
    assert p.events == ["t+0s 0/3 ready", "t+5s 1/3 ready"]
