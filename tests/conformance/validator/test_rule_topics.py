"""``validate --rules`` loads only the modules of the selected topics, and
the topic index that makes it possible says exactly which modules register
rules under each rule id topic."""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict

from conformance.validator.rules import MODULES, TOPIC_MODULES
from conformance.validator.ruleset import all_rules, iter_rules


def test_the_topic_index_names_every_module_registering_each_topic():
    registering: dict[str, set[str]] = defaultdict(set)
    for rule in all_rules():
        registering[rule.id.split("/", 1)[0]].add(rule.check.__module__.rsplit(".", 1)[-1])
    assert {topic: set(modules) for topic, modules in TOPIC_MODULES.items()} == dict(registering)
    assert {module for modules in TOPIC_MODULES.values() for module in modules} == set(MODULES)


def test_a_selection_gives_the_rules_it_gave_with_every_module_loaded():
    selections = [["naming"], ["data-file/"], ["schema", "history/lost-update"], ["no-such-topic"]]
    for selected in selections:
        expected = [
            r.id for r in all_rules() if any(r.id == s or r.id.startswith(s.rstrip("/") + "/") for s in selected)
        ]
        assert [r.id for r in iter_rules(selected)] == expected, selected


_PROBE = """
import sys
from conformance.validator.ruleset import iter_rules
selected = [rule.id for rule in iter_rules(["naming"])]
assert selected and all(rule_id.startswith("naming/") for rule_id in selected), selected
loaded = sorted(name.rsplit(".", 1)[-1] for name in sys.modules if name.startswith("conformance.validator.rules."))
print(",".join(loaded))
"""


def test_unselected_rule_modules_are_not_imported():
    """In a fresh process, selecting the naming rules imports that module and no other rule module."""
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().split(",") == ["naming"]
