# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The role inputs that argument_specs cannot check (names, images, paths, bounds), one rule each.

A role lists its variables and their rule in ``vars/main.yml`` (``_<role>_input_rules``); the filter
``gpuops.cluster.input_problems`` returns one message per bad value, naming the variable and the fix.
The Jinja tests of ``plugins/test/inputs.py`` are the same rules, for a role's own checks.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils import validators

_HOST = r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?"
_PATH = r"(/[a-z0-9]+([._-][a-z0-9]+)*)"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
# registry/path (the roles compose registry/name:tag, so the path part is required).
REGISTRY_RE = re.compile(r"^{0}{1}+$".format(_HOST, _PATH))
# A registry host alone is also accepted where a role allows it (monitoring's exporter registry).
REGISTRY_HOST_RE = re.compile(r"^{0}{1}*$".format(_HOST, _PATH))
IMAGE_NAME_RE = re.compile(r"^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*$")
IMAGE_RE = re.compile(r"^{0}{1}+(:{2})?(@sha256:[a-f0-9]{{64}})?$".format(_HOST, _PATH, _TAG))
TAG_RE = re.compile(r"^{0}$".format(_TAG))
HOST_PATH_RE = re.compile(r"^(/[A-Za-z0-9_.+@-]+)+$")
CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]{1,253}$")
DURATION_RE = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$")
WHOLE_RE = re.compile(r"^[0-9]+$")
# A chart repository (Helm's http(s) index, or an OCI registry path): scheme, host[:port], path, nothing after.
URL_RE = re.compile(r"^(https?|oci)://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%/-]*)?$")


def _text(value):
    return value if isinstance(value, str) else None


def _match(regex):
    def check(value):
        text = _text(value)
        return text is not None and bool(regex.match(text))

    return check


def _dns(problem):
    def check(value):
        return _text(value) is not None and problem(value) is None

    return check


def is_host_path(value, allow_root=False):
    """An absolute host path without '..' (``/`` itself only when allowed)."""
    text = _text(value)
    if text is None:
        return False
    if text == "/":
        return allow_root
    return bool(HOST_PATH_RE.match(text)) and "/../" not in text + "/"


def is_whole(value, minimum=0, maximum=None):
    """A whole number (int or its decimal text; not a bool) within the bounds."""
    if isinstance(value, bool):
        return False
    text = str(value).strip() if isinstance(value, (int, str)) else ""
    if not WHOLE_RE.match(text):
        return False
    number = int(text)
    return number >= minimum and (maximum is None or number <= maximum)


def is_label_map(value):
    """A dictionary of valid label keys and string values."""
    if not isinstance(value, dict):
        return False
    try:
        validators.check_labels(value, "labels", allow_remove=False)
    except validators.GpuopsError:
        return False
    return True


def is_tolerations(value):
    """A list of toleration dictionaries."""
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


# rule -> (check(value, rule dict) -> bool, what the value must be; {min}/{max} from the rule).
RULES = {
    "dns_label": (
        lambda v, r: _dns(validators.dns_label_problem)(v),
        "a DNS-1123 label (lowercase letters, digits and '-', at most 63)",
    ),
    "dns_subdomain": (
        lambda v, r: _dns(validators.dns_subdomain_problem)(v),
        "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', at most 253)",
    ),
    "registry": (
        lambda v, r: _match(REGISTRY_RE)(v),
        "a registry host with a lowercase repository path and no tag, such as nvcr.io/nvidia",
    ),
    "registry_host": (
        lambda v, r: _match(REGISTRY_HOST_RE)(v),
        "a registry host (and optional lowercase path) without a scheme or tag, such as nvcr.io/nvidia",
    ),
    "image_name": (lambda v, r: _match(IMAGE_NAME_RE)(v), "a lowercase image name without tag"),
    "tag": (lambda v, r: _match(TAG_RE)(v), "an image tag such as v0.20.0"),
    "image": (lambda v, r: _match(IMAGE_RE)(v), "an image reference registry/path[:tag][@sha256:digest]"),
    "host_path": (lambda v, r: is_host_path(v, r.get("root", False)), "an absolute host path without '..'"),
    "config_key": (lambda v, r: _match(CONFIG_KEY_RE)(v), "a ConfigMap key (letters, digits, -, _ and .)"),
    "duration": (lambda v, r: _match(DURATION_RE)(v), "a Go duration such as 60s or 1h"),
    "whole": (lambda v, r: is_whole(v, r.get("min", 0), r.get("max")), "a whole number >= {min}"),
    "seconds": (lambda v, r: is_whole(v, r.get("min", 1), r.get("max")), "a number of seconds >= {min}"),
    "bool": (lambda v, r: isinstance(v, bool), "true or false"),
    "labels": (lambda v, r: is_label_map(v), "a dictionary of node labels (valid keys, string values)"),
    "tolerations": (lambda v, r: is_tolerations(v), "a list of toleration dictionaries"),
    "mapping": (lambda v, r: isinstance(v, dict), "a dictionary"),
    "url": (lambda v, r: _match(URL_RE)(v), "a URL such as https://helm.ngc.nvidia.com/nvidia (http, https or oci)"),
}


def _shown(value):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def input_problems(role, rules, values):
    """One message per variable of ``rules`` whose value in ``values`` breaks its rule.

    ``rules`` maps a variable to a rule name or a dict ``{rule, min, max, root, empty, alias, what}``: ``empty``
    also accepts "", ``alias`` names the collection-wide variable it falls back to, ``what`` replaces the rule's
    wording.
    """
    out = []
    for name in rules:
        rule = rules[name]
        rule = {"rule": rule} if isinstance(rule, str) else dict(rule)
        if rule["rule"] not in RULES:
            raise ValueError("{0}: unknown input rule {1!r} for {2}".format(role, rule["rule"], name))
        check, what = RULES[rule["rule"]]
        value = values.get(name)
        if check(value, rule) or (rule.get("empty") and value == ""):
            continue
        what = rule.get("what") or what.format(
            min=rule.get("min", 1 if rule["rule"] == "seconds" else 0), max=rule.get("max")
        )
        alias = " ({0})".format(rule["alias"]) if rule.get("alias") else ""
        out.append("{0}: {1}{2} must be {3}, got {4}.".format(role, name, alias, what, _shown(value)))
    return out
