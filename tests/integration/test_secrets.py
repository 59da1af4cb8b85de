# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""No secret is ever shown: the entitlement PEM, the cluster's pull secret and the bearer token, searched for in
everything a run leaves - stdout at -vvvv and every job event of an AWX job (ansible-runner), its artifacts, the
reports, and the diagnose archive.

The OpenShift cluster is converged in entitlement mode (the PEM handed to the job as extra vars, as an AWX
credential injects it), with only the least-privilege ServiceAccount's token, so the entitlement path's RBAC rules
are exercised too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import tarfile

import pytest
from awx_job import dump, run_job
from conftest import run_site
from kubernetes import client
from rbac_checks import ENTITLEMENT, Installer, forbidden
from secrets_checks import make_pem, pull_secret, secret_forms

pytestmark = pytest.mark.integration


def texts_under(path):
    """{relative path: text} of every file under ``path``, tar archives opened."""
    out = {}
    for base, _dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(base, name)
            if tarfile.is_tarfile(full):
                with tarfile.open(full) as tar:
                    for member in tar.getmembers():
                        if member.isfile():
                            out[name + "!" + member.name] = tar.extractfile(member).read().decode("utf-8", "replace")
            else:
                with open(full, "rb") as f:
                    out[os.path.relpath(full, path)] = f.read().decode("utf-8", "replace")
    return out


def test_no_secret_in_output_events_artifacts_reports_or_archives(cluster, tmp_path):
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile")
    core = client.CoreV1Api(cluster.api)
    original = core.read_namespaced_secret("pull-secret", "openshift-config")
    pull_data, pull_forms = pull_secret()
    core.patch_namespaced_secret("pull-secret", "openshift-config", {"data": pull_data})
    pem = make_pem()
    installer = Installer(cluster, run_site)
    reports = str(tmp_path / "reports")
    answers = {
        "gpuops_reports_dir": reports,
        "gpuops_driver_build_mode": "entitlement",
        "entitlement_enabled": True,
        "entitlement_pem": pem,
    }
    try:
        site = run_job(tmp_path, cluster, installer.token, "site.yml", answers, verbosity=4, ident="site")
        assert site.ok, site.tail() + dump(site)
        assert "State 3 - entitlement" in site.task_names() and "-vvvv" in site.runner.config.command
        archive = os.path.join(reports, "case.tar.gz")
        diag = run_job(
            tmp_path,
            cluster,
            installer.token,
            "diagnose.yml",
            {"gpuops_reports_dir": reports, "gpuops_diagnose_archive": archive},
            verbosity=4,
            ident="diagnose",
        )
        assert diag.ok, diag.tail() + dump(diag)
        assert os.path.isfile(archive)
        # The entitlement path needed nothing the installer lacks.
        assert forbidden(installer.events()) == []
    finally:
        core.patch_namespaced_secret("pull-secret", "openshift-config", {"data": original.data})
        installer.remove()
    # Each rule only the entitlement path needs allowed some request no other rule does.
    installer.assert_least_privilege("openshift", paths=ENTITLEMENT, only_paths=True)

    shown = {"site job": site.everything_shown(), "diagnose job": diag.everything_shown()}
    shown.update(texts_under(reports))
    assert any(name.startswith("case.tar.gz!") for name in shown), sorted(shown)
    assert len(shown["site job"]) > 100000, "the -vvvv output is missing"
    secrets = {
        "entitlement PEM": secret_forms(pem),
        "pull secret": pull_forms,
        "bearer token": [installer.token, base64.b64encode(installer.token.encode()).decode()[10:70]],
    }
    # Where each leak is, with what surrounds it (the test's own throwaway secrets).
    leaks = [
        (what, where, text[max(0, text.index(form) - 300) : text.index(form) + 80])
        for what, forms in secrets.items()
        for where, text in shown.items()
        for form in forms
        if form in text
    ]
    assert leaks == []
