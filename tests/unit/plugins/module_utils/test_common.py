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


def test_a_connection_cut_mid_request_names_host_and_the_server():
    # What urllib3 raises when kube-apiserver dies while it holds the request (seen in test_faults_apiserver.py).
    text = "('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))"
    msg = describe_api_error(_Exc(text=text), {}, server="https://127.0.0.1:16443")
    assert msg.startswith("host: the Kubernetes API at https://127.0.0.1:16443 cut the connection"), msg
    assert "Run again once it answers" in msg


def test_the_host_option_wins_over_the_client_server():
    msg = describe_api_error(_Exc(text="Connection refused"), {"host": "https://api.x:6443"}, server="https://other")
    assert "https://api.x:6443" in msg and "other" not in msg


def test_progress_dedupes_and_timestamps():
    now = [100.0]
    p = Progress(clock=lambda: now[0])
    p("0/3 ready")
    now[0] = 105.0
    p("0/3 ready")
    p("1/3 ready")
    assert p.events == ["t+0s 0/3 ready", "t+5s 1/3 ready"]


def test_tls_failure_names_validate_certs_not_host():
    # urllib3 wraps a certificate failure in "Max retries exceeded": the cause is the CA, not the host.
    text = (
        "HTTPSConnectionPool(host='127.0.0.1', port=6443): Max retries exceeded with url: /version "
        "(Caused by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate "
        "verify failed: unable to get local issuer certificate')))"
    )
    msg = describe_api_error(_Exc(text=text), {"host": "https://127.0.0.1:6443"})
    assert msg.startswith("validate_certs:") and "ca_cert" in msg


def test_unknown_context_names_context():
    text = "Could not create API client: Invalid kube-config file. Expected object with name nope in /k/config/contexts list"
    msg = describe_api_error(_Exc(text=text), {"kubeconfig": "/k/config", "context": "nope"})
    assert msg.startswith("context:") and "'nope'" in msg


def test_missing_ca_cert_file_names_ca_cert(tmp_path):
    import pytest

    from ansible_collections.gpuops.cluster.plugins.module_utils.common import check_connection_files

    with pytest.raises(GpuopsError) as err:
        check_connection_files({"ca_cert": str(tmp_path / "missing-ca.crt")})
    assert err.value.param == "ca_cert" and "K8S_AUTH_SSL_CA_CERT" in str(err.value)
    check_connection_files({"ca_cert": None, "kubeconfig": {"inline": "dict"}})
