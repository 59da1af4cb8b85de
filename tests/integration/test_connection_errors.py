# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Connection problems name the option to fix, with the real client against the real API server."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

pytestmark = pytest.mark.integration

MODULE = "gpuops.cluster.nfd_labels"


def test_untrusted_certificate_names_validate_certs(cluster, ansible_task):
    # The API server's certificate is signed by the test bed's own CA, which is not given here.
    env = {
        "K8S_AUTH_KUBECONFIG": None,
        "K8S_AUTH_HOST": cluster.server,
        "K8S_AUTH_API_KEY": cluster.token_of("admin"),
        "K8S_AUTH_VERIFY_SSL": "true",
    }
    result = ansible_task(MODULE, {}, env=env)
    assert result.get("failed") is True
    assert result["msg"].startswith("validate_certs:") and "ca_cert" in result["msg"], result["msg"]


def test_context_missing_from_kubeconfig_names_context(cluster, ansible_task):
    result = ansible_task(MODULE, {"context": "no-such-context"})
    assert result.get("failed") is True
    assert result["msg"].startswith("context:") and "no-such-context" in result["msg"], result["msg"]


def test_missing_ca_file_names_ca_cert(cluster, ansible_task, tmp_path):
    missing = str(tmp_path / "ca.crt")
    env = {"K8S_AUTH_KUBECONFIG": None, "K8S_AUTH_HOST": cluster.server, "K8S_AUTH_API_KEY": cluster.token_of("admin")}
    result = ansible_task(MODULE, {"ca_cert": missing}, env=env)
    assert result.get("failed") is True
    assert result["msg"].startswith("ca_cert:") and missing in result["msg"], result["msg"]
