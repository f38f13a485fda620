"""lance-conformance writer-check: exit status, text and JSON, expectations."""

from __future__ import annotations

import json

from conformance.cli import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, main
from conformance.writer_conformance.report import check_report_document

FAULTY = "tests.conformance.writer_conformance.faulty_writers"


def test_the_reference_passes_as_json(capsys):
    assert main(["writer-check", "--driver", "reference", "--format", "json", "--reader", "reference"]) == EXIT_OK
    document = json.loads(capsys.readouterr().out)
    check_report_document(document)
    assert document["passed"] and document["driver"]["name"] == "reference"
    assert document["data_storage_version"] == "2.0"


def test_a_faulty_writer_fails_with_its_step_named(capsys):
    assert main(["writer-check", "--driver", FAULTY, "--reader", "reference"]) == EXIT_FINDINGS
    out = capsys.readouterr().out
    assert "fail             delete" in out and "expected 7 rows, got 10" in out
    assert out.rstrip().splitlines()[-1].startswith("FAILED")


def test_an_expectations_file_accounts_for_the_failure(tmp_path, capsys):
    path = tmp_path / "faulty.json"
    path.write_text(
        json.dumps(
            {
                "format": 1,
                "implementation": "faulty",
                "expectations": [
                    {
                        "suite": "writers",
                        "case": "delete",
                        "requirement": "deletion.readers-filter",
                        "kind": "bug",
                        "reason": "the delete commits a config change instead",
                        "reproducer": "lance-conformance writer-check --driver " + FAULTY,
                    }
                ],
            }
        )
    )
    argv = ["writer-check", "--driver", FAULTY, "--reader", "reference", "--expectations", str(path)]
    assert main(argv) == EXIT_OK
    assert "expected-failure delete" in capsys.readouterr().out


def test_a_driver_that_does_not_write_is_a_usage_error(capsys):
    assert main(["writer-check", "--driver", "conformance.drivers.rust_debug"]) != EXIT_OK
    assert main(["writer-check", "--driver", "reference", "--expectations", "/nonexistent.json"]) == EXIT_USAGE
    assert "nonexistent.json" in capsys.readouterr().err
