# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulator's informer cache: its index of pods by node follows adds, moves, deletes and re-lists;
LogStore writes a log file again only when its text changed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from simopenshift import podsim
from simopenshift.kube import PODS, Informer


def pod(name, node=None, rv="1", ns="default"):
    spec = {"nodeName": node} if node else {}
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": rv, "uid": "uid-" + name}, "spec": spec}


class Lister(object):
    def __init__(self, items):
        self.items = items

    def list(self, res, namespace=None):
        return list(self.items), "9"


def names(objs):
    return sorted(o["metadata"]["name"] for o in objs)


def test_node_index_follows_adds_binding_moves_and_deletes():
    inf = Informer(None, PODS)
    inf._apply("ADDED", pod("a"))  # not bound yet
    inf._apply("ADDED", pod("b", "n1"))
    assert inf.on_node("n1") == [pod("b", "n1")] and inf.on_node("n2") == []
    inf._apply("MODIFIED", pod("a", "n1", rv="2"))  # bound by the scheduler
    assert names(inf.on_node("n1")) == ["a", "b"]
    assert names(inf.on_node("n1", lambda p: p["metadata"]["name"] == "a")) == ["a"]
    inf._apply("DELETED", pod("b", "n1"))
    assert names(inf.on_node("n1")) == ["a"]
    inf._apply("DELETED", pod("a", "n1", rv="2"))
    assert inf.on_node("n1") == [] and inf.node_index == {}


def test_relist_rebuilds_the_index_and_emits_the_differences():
    inf = Informer(Lister([pod("a", "n1"), pod("b", "n2")]), PODS)
    events = []
    inf.add_handler(lambda etype, obj, old: events.append((etype, obj["metadata"]["name"])))
    inf._relist()
    assert names(inf.on_node("n1")) == ["a"] and names(inf.on_node("n2")) == ["b"]
    inf.client = Lister([pod("b", "n2"), pod("c", "n1")])
    inf._relist()
    assert names(inf.on_node("n1")) == ["c"] and names(inf.on_node("n2")) == ["b"]
    assert ("DELETED", "a") in events and ("ADDED", "c") in events


def test_logstore_rewrites_a_file_only_when_its_text_changed(tmp_path):
    store = podsim.LogStore(None, str(tmp_path))
    p = pod("x", "n1")
    path = store.write(p, "main", "one\n")
    os.utime(path, (1, 1))
    store.write(p, "main", "one\n")
    assert os.stat(path).st_mtime == 1  # same text: not written again
    store.write(p, "main", "one\ntwo\n")
    with open(path) as handle:
        assert [line.split(" ", 3)[3] for line in handle.read().splitlines()] == ["one", "two"]
    store.write(p, "main", "one\ntwo\n", previous_text="one\ntwo\n")  # a restart writes the previous log
    assert os.path.exists(store.path(p, "main", previous=True))
    store.forget(p)
    assert store.written == {}
    os.remove(path)
    store.write(p, "main", "one\ntwo\n")  # a file gone is written again
    assert os.path.exists(path)
