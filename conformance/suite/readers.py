"""The readers suite: every golden case, read by the driver.

One check per case of the corpus (:func:`conformance.fixtures.corpus_root`:
the checkout's ``fixtures/`` or the copy inside an installed wheel), run by
:func:`conformance.fixtures.verify.verify_case` in a scratch directory of
its own: the versions listed, each version's description and rows compared
with the expected ones, and the versions a reader must refuse refused.
"""

from __future__ import annotations

import tempfile
from functools import partial
from pathlib import Path

from ..expectations import Expectations
from ..fixtures import corpus_root
from ..fixtures import verify as verify_module
from ..fixtures.case import case_dirs
from .checks import Check, Status, Suite, Verdict
from .run import SuiteRun

#: verify_case's statuses -> the suite's.
_STATUSES = {
    "pass": Status.PASS,
    "fail": Status.FAIL,
    "not-applicable": Status.NOT_APPLICABLE,
    "expected-failure": Status.EXPECTED_FAILURE,
    "fixed": Status.FIXED,
}


def verify(case_dir: Path, run: SuiteRun) -> Verdict:
    with tempfile.TemporaryDirectory(prefix="lance-suite-readers-") as scratch:
        # The run's expectations are applied by the plugin, as for every
        # suite; the case is verified against none.
        result = verify_module.verify_case(
            case_dir,
            run.driver_name,
            run.driver,
            workdir=Path(scratch),
            expectations=Expectations(run.info.implementation, ()),
        )
    status = _STATUSES.get(result.status)
    if status is None:  # a status this plugin does not know is a failure, never a pass
        return Verdict.failed([f"verify_case returned status {result.status!r}", *result.problems])
    observations = tuple(
        f"observed (not failing): {o.get('column')} {o.get('kind')}: expected {o.get('expected')}, "
        f"got {o.get('actual')} ({o.get('requirement')})"
        for o in result.observations
    )
    notes = tuple(result.notes) if status is not Status.PASS else ()
    return Verdict(status, tuple(result.problems) + notes, observations)


def checks(corpus: Path | None = None) -> list[Check]:
    corpus = corpus or corpus_root()
    return [
        Check(
            Suite.READERS,
            case_dir.name,
            partial(verify, case_dir),
            f"golden case {case_dir.name}",
        )
        for case_dir in case_dirs(corpus)
    ]
