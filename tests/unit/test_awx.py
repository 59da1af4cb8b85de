# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""AWX / Automation Controller as code (awx/): the execution environment builds a valid context, the job
templates run the collection's playbooks, and every survey question agrees with the roles' argument specs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AWX = os.path.join(ROOT, "awx")


def load(*path):
    with open(os.path.join(*path)) as f:
        return yaml.safe_load(f)


def role_options():
    options = {}
    for path in glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml")):
        options.update(load(path)["argument_specs"]["main"].get("options") or {})
    return options


def test_the_execution_environment_builds_a_context(tmp_path):
    builder = os.path.join(os.path.dirname(sys.executable), "ansible-builder")
    context = str(tmp_path / "context")
    proc = subprocess.run(
        [builder, "create", "-f", os.path.join(AWX, "execution-environment.yml"), "-c", context],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    build = os.path.join(context, "_build")
    with open(os.path.join(build, "requirements.txt")) as f, open(os.path.join(ROOT, "requirements.txt")) as g:
        assert f.read() == g.read()  # the collection's Python requirements (kubernetes, jsonpatch, ...)
    with open(os.path.join(build, "bindep.txt")) as f, open(os.path.join(ROOT, "bindep.txt")) as g:
        assert f.read() == g.read()  # its system packages
    galaxy = load(build, "requirements.yml")["collections"]
    assert {c["name"] for c in galaxy} == {"gpuops.cluster", "kubernetes.core"}
    assert [c["version"] for c in galaxy if c["name"] == "gpuops.cluster"] == [load(ROOT, "galaxy.yml")["version"]]
    files = os.listdir(context)
    containerfile = [n for n in files if n in ("Containerfile", "Dockerfile")]
    assert containerfile, files
    with open(os.path.join(context, containerfile[0])) as f:
        text = f.read()
    assert "ansible-core==2.19.14" in text and "ansible-runner==2.4.3" in text
    assert "ansible-galaxy collection install" in text and "install-from-bindep" in text


CONTROLLER = load(AWX, "controller.yml")
TEMPLATES = CONTROLLER["controller_templates"]


@pytest.mark.parametrize("template", TEMPLATES, ids=[t["name"] for t in TEMPLATES])
def test_each_job_template_runs_a_playbook_of_the_collection(template):
    wrapper = load(AWX, "project", template["playbook"])
    imported = wrapper[0]["ansible.builtin.import_playbook"]
    assert imported.startswith("gpuops.cluster.")
    assert os.path.exists(os.path.join(ROOT, "playbooks", imported.split(".", 2)[2] + ".yml")), imported
    assert template["credentials"] == [c["name"] for c in CONTROLLER["controller_credentials"]]
    assert template["inventory"] == CONTROLLER["controller_inventories"][0]["name"]


def test_every_playbook_has_a_job_template():
    playbooks = {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "playbooks", "*.yml"))}
    # rbac.yml is run once by a cluster admin, not by the collection's identity.
    assert playbooks - {"rbac.yml"} == {t["playbook"] for t in TEMPLATES}


# AWX survey types for argument_spec types; booleans are a true / false choice (AWX has no boolean question).
SURVEY_TYPES = {"str": ("text", "textarea", "password", "multiplechoice"), "int": ("integer",), "float": ("float",)}


def _questions():
    for template in TEMPLATES:
        for question in (template.get("survey_spec") or {}).get("spec") or []:
            yield template["name"], question


@pytest.mark.parametrize("template, question", list(_questions()), ids=[q["variable"] for _t, q in _questions()])
def test_survey_questions_agree_with_the_argument_specs(template, question):
    variable = question["variable"]
    if variable == "gpuops_stack":  # a playbook variable of site.yml, not a role's
        stacks = load(ROOT, "playbooks", "site.yml")[0]["vars"]["_gpuops_stack_states"]
        assert question["choices"] == list(stacks) and question["default"] == "manual"
        return
    spec = role_options().get(variable)
    assert spec is not None, "{0}: {1} is no role variable".format(template, variable)
    if spec["type"] == "bool":
        assert question["type"] == "multiplechoice" and question["choices"] == ["true", "false"], question
        assert question["default"] == str(spec["default"]).lower()
        return
    assert question["type"] in SURVEY_TYPES[spec["type"]], (question["type"], spec["type"])
    if spec.get("choices") or question["type"] == "multiplechoice":
        assert question["type"] == "multiplechoice" and question["choices"] == spec["choices"], question
    assert question["default"] == spec["default"], (question["default"], spec["default"])
    assert question.get("required") is True


def test_the_inventory_comes_from_the_project_with_the_playbooks_group():
    for source in CONTROLLER["controller_inventory_sources"]:
        assert source["source"] == "scm" and source["source_project"] == CONTROLLER["controller_projects"][0]["name"]
        hosts = load(ROOT, source["source_path"])
        assert "gpuops_clusters" in hosts["all"]["children"], source["source_path"]


def test_every_playbook_runs_on_gpuops_clusters_and_both_inventories_fill_it():
    """One host per cluster: the playbooks' default group, filled by the local inventory (one cluster, localhost)
    and by the fleet example (three clusters, each with its own connection)."""
    for name in sorted(os.listdir(os.path.join(ROOT, "playbooks"))):
        if name.endswith(".yml"):
            for play in load(ROOT, "playbooks", name):
                assert play["hosts"] == "{{ gpuops_target | default('gpuops_clusters') }}", (name, play["hosts"])
    for inventory, hosts in (("local", ["localhost"]), ("fleet", ["lab", "prod-east", "prod-west"])):
        proc = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), "ansible-inventory"), "-i",
             os.path.join(ROOT, "inventories", inventory), "--list"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True,
        )  # fmt: skip
        listed = json.loads(proc.stdout.decode())
        found = set(listed.get("gpuops_clusters", {}).get("hosts", []))
        for child in listed.get("gpuops_clusters", {}).get("children", []):
            found.update(listed[child].get("hosts", []))
        assert sorted(found) == hosts, (inventory, listed)
    fleet = load(ROOT, "inventories", "fleet", "hosts.yml")["all"]["children"]["gpuops_clusters"]["hosts"]
    for host, variables in fleet.items():
        assert {"gpuops_kubeconfig", "gpuops_api_host"} & set(variables), host
