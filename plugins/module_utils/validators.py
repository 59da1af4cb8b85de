# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Checks on names, labels, selectors and image references (Kubernetes' own rules).

Each ``*_problem`` returns why a value is invalid (or None); each ``check_*``
raises GpuopsError naming the parameter and the fix. The rules are those of
k8s.io/apimachinery/pkg/util/validation and the distribution reference grammar.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_RE = re.compile(r"^{0}$".format(_DNS1123_LABEL))
DNS1123_SUBDOMAIN_RE = re.compile(r"^{0}(\.{0})*$".format(_DNS1123_LABEL))
DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
LABEL_VALUE_MAX = 63
_REPO = r"[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
REPOSITORY_RE = re.compile(r"^{0}$".format(_REPO))
TAG_RE = re.compile(r"^{0}$".format(_TAG))
IMAGE_REF_RE = re.compile(r"^{0}(:{1})?(@sha256:[a-f0-9]{{64}})?$".format(_REPO, _TAG))
SELECTOR_TERM_RE = re.compile(r"^\s*!?[A-Za-z0-9./_-]+(\s*(=|==|!=)\s*[A-Za-z0-9._-]*|\s+(in|notin)\s*\([^()]*\))?\s*$")


def _dns_problem(value, regex, limit, chars):
    value = to_text(value)
    if not value:
        return "it is empty"
    if len(value) > limit:
        return "it is {0} characters long; the limit is {1}".format(len(value), limit)
    if not regex.match(value):
        return "use lowercase letters, digits{0}, starting and ending with a letter or digit".format(chars)
    return None


def dns_label_problem(value):
    """Why ``value`` is not an RFC 1123 label (namespace, Service, ... name), or None."""
    return _dns_problem(value, DNS1123_LABEL_RE, DNS1123_LABEL_MAX, " and '-'")


def dns_subdomain_problem(value):
    """Why ``value`` is not an RFC 1123 subdomain (most object names), or None."""
    return _dns_problem(value, DNS1123_SUBDOMAIN_RE, DNS1123_SUBDOMAIN_MAX, ", '-' and '.'")


def _check(problem, value, param, what):
    if problem:
        raise GpuopsError("{0!r} is not a valid {1}: {2}.".format(value, what, problem), param=param)
    return value


def check_dns_label(value, param, what="name"):
    return _check(dns_label_problem(value), value, param, what)


def check_dns_subdomain(value, param, what="name"):
    return _check(dns_subdomain_problem(value), value, param, what)


def label_key_problem(key):
    """Why ``key`` is not a valid label key, or None when it is."""
    if not isinstance(key, str) or not key:
        return "a label key must be a non-empty string"
    prefix, sep, name = key.rpartition("/")
    if sep and not prefix:
        return "the prefix before '/' is empty"
    if prefix:
        if len(prefix) > DNS1123_SUBDOMAIN_MAX:
            return "the prefix is {0} characters long; the limit is {1}".format(len(prefix), DNS1123_SUBDOMAIN_MAX)
        if not DNS1123_SUBDOMAIN_RE.match(prefix):
            return (
                "the prefix '{0}' must be a DNS subdomain: lowercase letters, digits, '-' and '.', "
                "starting and ending with a letter or digit".format(prefix)
            )
    if not name:
        return "the name part (after the prefix) is empty"
    if len(name) > QUALIFIED_NAME_MAX:
        return "the name part is {0} characters long; the limit is {1}".format(len(name), QUALIFIED_NAME_MAX)
    if not QUALIFIED_NAME_RE.match(name):
        return (
            "the name part '{0}' may only hold letters, digits, '-', '_' and '.', and must start and end "
            "with a letter or digit".format(name)
        )
    return None


def label_value_problem(value):
    """Why ``value`` (a string) is not a valid label value, or None when it is."""
    if len(value) > LABEL_VALUE_MAX:
        return "the value is {0} characters long; the limit is {1}".format(len(value), LABEL_VALUE_MAX)
    if not LABEL_VALUE_RE.match(value):
        return (
            "the value '{0}' may only hold letters, digits, '-', '_' and '.', and must start and end "
            "with a letter or digit (or be empty)".format(value)
        )
    return None


def normalize_label_value(value):
    """YAML gives booleans and numbers; Kubernetes wants strings.

    ``true`` becomes ``"true"`` (not Python's ``"True"``), numbers their decimal
    text, None stays None (it means "remove the label").
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return to_text(value)
    raise TypeError("must be a string, got {0}".format(type(value).__name__))


def check_labels(labels, param, allow_remove=True):
    """Check every key and value; return a new dict with normalized values.

    Raises GpuopsError naming ``param`` and the bad key.
    """
    if labels is None:
        return {}
    if not isinstance(labels, dict):
        raise GpuopsError("must be a dictionary of label key: value", param=param)
    result = {}
    for key in sorted(labels, key=to_text):
        problem = label_key_problem(key)
        if problem:
            raise GpuopsError(
                "invalid label key '{0}': {1}. Fix the key (format [prefix/]name, e.g. "
                "node-role.kubernetes.io/gpu).".format(key, problem),
                param=param,
            )
        try:
            value = normalize_label_value(labels[key])
        except TypeError as exc:
            raise GpuopsError("label '{0}': the value {1}.".format(key, exc), param=param)
        if value is None:
            if not allow_remove:
                raise GpuopsError(
                    "label '{0}' has no value; give a string (an empty string \"\" is allowed).".format(key),
                    param=param,
                )
        else:
            problem = label_value_problem(value)
            if problem:
                raise GpuopsError("invalid value for label '{0}': {1}.".format(key, problem), param=param)
        result[key] = value
    return result


def split_selector(value):
    """Split a label selector on the commas that are not inside ``in (...)``."""
    terms, depth, current = [], 0, ""
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return terms


def check_selector(value, param):
    """A kubectl-syntax label selector string; raise naming ``param`` when malformed."""
    if value is None:
        return None
    value = to_text(value).strip()
    for term in split_selector(value):
        if not value or not SELECTOR_TERM_RE.match(term):
            raise GpuopsError(
                "{0!r} is not a label selector (the term {1!r} is malformed). Use the kubectl syntax, "
                "e.g. 'app=nvidia-dcgm-exporter' or 'app in (a, b)'.".format(value, term.strip()),
                param=param,
            )
    return value


def check_image(value, param):
    """An image reference (registry/repository[:tag][@sha256:digest])."""
    if value is None:
        return None
    if not IMAGE_REF_RE.match(to_text(value)):
        raise GpuopsError(
            "{0!r} is not an image reference. Give registry/repository[:tag][@sha256:digest], "
            "e.g. nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubi8.".format(value),
            param=param,
        )
    return value


def check_repository(value, param):
    """An image repository without tag (registry/path)."""
    if not REPOSITORY_RE.match(to_text(value)):
        raise GpuopsError(
            "{0!r} is not an image repository: give registry/path without a tag, e.g. nvcr.io/nvidia.".format(value),
            param=param,
        )
    return value
