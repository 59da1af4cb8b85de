# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The monitoring role's metrics: the dashboard and the alerts read only series that exist.

- Every metric a panel or a template variable of the Grafana dashboard queries is one the configured dcgm-exporter
  counters CSV produces (and a panel with an unexported metric is caught: proven on a copy with one added).
- Every metric an alert reads is a counters-CSV metric, a kube-state-metrics series, or a recording rule of the same
  file; every alert has exactly one promtool test that sees it fire and clear.

promtool itself checks and tests the rules among the oracle tests (tests/oracles/test_oracle_promtool.py), after
the Go programs' build: the unit tests build nothing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(ROOT, "roles", "monitoring")
COUNTERS = os.path.join(ROLE, "files", "dcgm-counters.csv")
DASHBOARD = os.path.join(ROLE, "files", "dcgm-exporter-dashboard.json")
PROMTOOL_TESTS = os.path.join(ROOT, "tests", "monitoring", "alerts.test.yml")

# PromQL words that are not metric names (operators, modifiers, literals).
KEYWORDS = {
    "and",
    "or",
    "unless",
    "bool",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "offset",
    "atan2",
    "inf",
    "nan",
}
# The series kube-state-metrics exports that the alerts read (kube-state-metrics docs, metrics/*.md).
KUBE_STATE_METRICS = {
    "kube_node_status_capacity",
    "kube_node_status_allocatable",
    "kube_node_labels",
    "kube_daemonset_status_desired_number_scheduled",
    "kube_daemonset_status_number_ready",
}


def counters(path=COUNTERS):
    """Metric names the exporter produces from a counters CSV: uncommented lines, except `label` fields."""
    names = set()
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = [x.strip() for x in line.split(",")]
            if len(fields) >= 2 and fields[1] != "label":
                names.add(fields[0])
    return names


def metric_names(expr):
    """The metric names a PromQL expression (or a Grafana label_values()/query_result() query) selects.

    String literals, label matchers, range/subquery brackets, grouping label lists and Grafana variables are removed
    first; what is left are identifiers: a function or aggregation is an identifier followed by '(', a keyword is an
    operator or modifier, anything else is a metric name (a vector selector).
    """
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    # Grafana templating: label_values(metric, label) / label_values(label) read a metric or none.
    s = re.sub(r"\blabel_values\s*\(\s*([^,()]*?)\s*,\s*[A-Za-z_][A-Za-z0-9_]*\s*\)", r"\1", s)
    s = re.sub(r"\blabel_values\s*\(\s*[A-Za-z_][A-Za-z0-9_]*\s*\)", " ", s)
    s = re.sub(r"\{[^{}]*\}", " ", s)
    s = re.sub(r"\[[^\[\]]*\]", " ", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", " ", s)
    s = re.sub(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*", " 0 ", s)
    names = set()
    for m in re.finditer(r"(?<![A-Za-z0-9_:.])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?", s):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in KEYWORDS:
            continue
        # Durations after offset (5m) and numbers start with a digit and never match; e / E exponents do not
        # stand alone.
        names.add(word)
    return names


def dashboard_queries(dashboard):
    """(where, expression) for every query of the dashboard: panel targets (rows included) and template variables."""
    out = []

    def panels(items):
        for panel in items or []:
            for target in panel.get("targets") or []:
                if target.get("expr"):
                    out.append(("panel %r" % panel.get("title"), target["expr"]))
            panels(panel.get("panels"))

    panels(dashboard.get("panels"))
    for row in dashboard.get("rows") or []:
        panels(row.get("panels"))
    for var in (dashboard.get("templating") or {}).get("list") or []:
        if var.get("type") == "query":
            query = var.get("query")
            if isinstance(query, dict):
                query = query.get("query")
            if query:
                out.append(("variable %r" % var.get("name"), query))
    return out


def unexported(dashboard, exported):
    """(where, metric) for every metric the dashboard queries that the counters do not produce."""
    return sorted(
        (where, name) for where, expr in dashboard_queries(dashboard) for name in metric_names(expr) - exported
    )


def load_dashboard():
    with open(DASHBOARD) as f:
        return json.load(f)


# --- the parser itself -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, names",
    [
        ('DCGM_FI_DEV_GPU_TEMP{instance=~"$instance", gpu=~"$gpu"}', {"DCGM_FI_DEV_GPU_TEMP"}),
        ('avg(DCGM_FI_DEV_GPU_TEMP{instance=~"$instance"})', {"DCGM_FI_DEV_GPU_TEMP"}),
        ('DCGM_FI_DEV_SM_CLOCK{gpu=~"$gpu"} * 1000000', {"DCGM_FI_DEV_SM_CLOCK"}),
        ("sum by (node, gpu) (rate(DCGM_FI_DEV_XID_ERRORS[$__rate_interval]))", {"DCGM_FI_DEV_XID_ERRORS"}),
        (
            'a:b:rec unless on (node) max without (gpu) (x_total{a="or (y)"} offset 5m) > bool 1e3',
            {"a:b:rec", "x_total"},
        ),
        ('{__name__="ignored"} + histogram_quantile(0.9, foo_bucket)', {"foo_bucket"}),
        ("label_values(DCGM_FI_DEV_GPU_TEMP, instance)", {"DCGM_FI_DEV_GPU_TEMP"}),
        ("label_values(instance)", set()),
        ("A / ignoring(x) group_left(y) B", {"A", "B"}),
    ],
)
def test_metric_names_reads_promql(expr, names):
    assert metric_names(expr) == names


def test_counters_csv_parsing():
    exported = counters()
    assert "DCGM_FI_DEV_GPU_TEMP" in exported
    assert "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" in exported  # switched on by the role
    assert "DCGM_FI_PROF_SM_ACTIVE" not in exported  # commented out upstream
    assert "DCGM_FI_DRIVER_VERSION" not in exported  # a label, not a metric


# --- the dashboard -----------------------------------------------------------------------------------------------


def test_every_dashboard_metric_is_exported():
    dashboard = load_dashboard()
    queries = dashboard_queries(dashboard)
    assert len(queries) >= 8, queries  # the panels and variables were found at all
    queried = set().union(*(metric_names(expr) for _where, expr in queries))
    assert {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"} <= queried
    assert unexported(dashboard, counters()) == []


def test_a_panel_with_an_unexported_metric_is_caught():
    """The check fails when someone adds a panel reading a metric the configured counters do not produce."""
    dashboard = copy.deepcopy(load_dashboard())
    panel = copy.deepcopy(dashboard["panels"][0])
    panel["title"] = "SM Active"
    panel["targets"] = [{"expr": 'avg by (gpu) (DCGM_FI_PROF_SM_ACTIVE{instance=~"$instance"})', "refId": "A"}]
    dashboard["panels"].append(panel)
    assert unexported(dashboard, counters()) == [("panel 'SM Active'", "DCGM_FI_PROF_SM_ACTIVE")]
    # ... and in a row's nested panels, and in a template variable.
    dashboard = copy.deepcopy(load_dashboard())
    dashboard["panels"].append({"type": "row", "panels": [{"title": "nested", "targets": [{"expr": "DCGM_FI_X"}]}]})
    dashboard["templating"]["list"].append({"type": "query", "name": "uuid", "query": "label_values(DCGM_FI_Y, UUID)"})
    assert unexported(dashboard, counters()) == [("panel 'nested'", "DCGM_FI_X"), ("variable 'uuid'", "DCGM_FI_Y")]


# --- the alerts --------------------------------------------------------------------------------------------------


def render_rules(tmp_path):
    """The rules file promtool reads, rendered by Ansible from the role's template with its defaults."""
    dest = str(tmp_path / "gpu-alerts.rules.yml")
    build = os.path.join(ROOT, ".build")
    if not os.path.isdir(os.path.join(build, "ansible_collections", "gpuops", "cluster")):
        pytest.fail("the collection is not exposed under .build/ (make collection)")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=build, ANSIBLE_NOCOLOR="1")
    playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    proc = subprocess.run(
        [
            playbook,
            os.path.join(ROOT, "tests", "monitoring", "render_rules.yml"),
            "-e",
            "monitoring_rules_file=" + dest,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout.decode()[-3000:]
    with open(dest) as f:
        return yaml.safe_load(f)


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    return render_rules(tmp_path_factory.mktemp("rules"))


def test_every_alert_metric_is_produced(rules):
    exported = counters()
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    for group in rules["groups"]:
        for rule in group["rules"]:
            names = metric_names(rule["expr"])
            assert names, rule
            unknown = names - exported - KUBE_STATE_METRICS - recorded
            assert not unknown, (rule.get("alert") or rule.get("record"), unknown)


def test_every_alert_has_one_promtool_test_that_fires_and_clears(rules):
    alerts = [r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r]
    with open(os.path.join(ROLE, "vars", "main.yml")) as f:
        assert alerts == yaml.safe_load(f)["_monitoring_alerts"]
    with open(PROMTOOL_TESTS) as f:
        tests = yaml.safe_load(f)["tests"]
    tested = {}
    for test in tests:
        names = {case["alertname"] for case in test["alert_rule_test"]}
        assert len(names) == 1, names  # one alert per test
        (name,) = names
        assert name not in tested, "two tests for %s" % name
        cases = sorted(test["alert_rule_test"], key=lambda c: int(c["eval_time"].rstrip("m")))
        fired = [i for i, c in enumerate(cases) if c["exp_alerts"]]
        assert fired, "%s never fires" % name
        assert not cases[0]["exp_alerts"], "%s: no quiet start" % name
        assert any(not c["exp_alerts"] for c in cases[fired[0] + 1 :]), "%s never clears" % name
        tested[name] = True
    assert sorted(tested) == sorted(alerts)
