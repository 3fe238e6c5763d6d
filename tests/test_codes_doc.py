"""docs/codes.md is generated from the codes table and must be up to date."""

from __future__ import annotations

from flowc import codes_doc
from flowc.compiler.codes import CODES


def test_committed_page_is_up_to_date():
    current = codes_doc.DOC_PATH.read_text(encoding="utf-8")
    assert current == codes_doc.render(), "docs/codes.md is stale: run python -m flowc.codes_doc --write"


def test_page_has_a_section_for_every_code():
    text = codes_doc.render()
    for code in CODES:
        assert f"\n### {code}\n" in text
        assert f"](#{code.lower()})" in text


def test_check_mode_reports_a_stale_page(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "codes.md"
    stale.write_text("# old\n", encoding="utf-8")
    monkeypatch.setattr(codes_doc, "DOC_PATH", stale)
    assert codes_doc.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    assert codes_doc.main(["--write"]) == 0
    assert codes_doc.main(["--check"]) == 0
