"""The docs say what the code does today. An outside tester found docs/spec.md's last paragraph
calling the evaluation of declared checks and SQL check files "the next milestone", though they are
evaluated, published, kept and set back (docs/checks.md)."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_spec_md_does_not_call_check_evaluation_a_future_milestone():
    quoted = re.sub(r"^>\s?", "", (DOCS / "spec.md").read_text(encoding="utf-8"), flags=re.M)  # blockquotes too
    text = " ".join(quoted.split())
    assert "next milestone" not in text
    assert "validated and resolved today" not in text
    assert "evaluated at build time" in text and "assay_check_results" in text


def test_the_pages_spec_md_links_to_exist():
    text = (DOCS / "spec.md").read_text(encoding="utf-8")
    for page in re.findall(r"\]\(([a-z0-9_-]+\.md)\)", text):
        assert (DOCS / page).is_file(), page


README = DOCS.parent / "README.md"


def _files_of(page: Path) -> dict[str, str]:
    """The yaml blocks of `page` that open with a `# <path>` comment: {path: text}."""
    blocks = re.findall(r"^```yaml\n(.*?)^```$", page.read_text(encoding="utf-8"), re.S | re.M)
    return {body.splitlines()[0][1:].strip(): body for body in blocks if body.startswith("# ")}


def test_the_readmes_spec_in_one_screen_is_a_whole_spec(tmp_path):
    """An outside reader copied the README's "A spec in one screen" into files and validated it: its
    relationship named a `customer` entity the spec did not declare. Its files, as they are, are a
    spec that validates for both targets."""
    from assay.ir.resolve import compile_spec

    files = _files_of(README)
    assert set(files) == {"spec/entities.yml", "spec/orders.yml", "spec/customers.yml"}
    for name, body in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body, encoding="utf-8")
    for target in ("dbt", "sqlmesh"):
        project, diags, _ = compile_spec(tmp_path / "spec", target)
        assert [f"{d.file}:{d.line}: {d.code}: {d.message}" for d in diags] == [] and project is not None, target


PAGES = [README] + [DOCS / p for p in ("quickstart.md", "sqlmesh-quickstart.md", "operating.md", "spec.md", "checks.md",
                                        "incremental.md", "privacy.md")]
# `page.md`, "Section" / page.md ("Section") / [page.md](page.md), "Section": a section of another page
SECTION_REF = re.compile(r'([\w./-]+\.md)`?\]?(?:\([^)]*\))?,?\s*\(?"([^"]+)"')


def _sections(page: Path) -> list[str]:
    """The headings of `page` and the bold leads of its paragraphs (`**What ... protects.**`)."""
    text = page.read_text(encoding="utf-8")
    heads = [h.lstrip("#").strip() for h in text.splitlines() if h.startswith("#")]
    return heads + [b.rstrip(".") for b in re.findall(r"\*\*([^*]+)\*\*", text)]


def test_every_section_a_page_names_exists():
    """Session 34: docs/incremental.md sent the reader to benchmarks/README.md, "Incremental, session 33",
    a heading that page does not have. Every section these pages name in another page is one of its
    headings (or a bold paragraph lead), as spelled there, or the start of one before its parenthesis."""
    root = DOCS.parent
    missing = []
    for page in PAGES:
        for target, section in SECTION_REF.findall(page.read_text(encoding="utf-8")):
            path = next((p for p in (page.parent / target, root / target, DOCS / target) if p.is_file()), None)
            wanted = " ".join(section.split())
            # a heading may be named without its trailing parenthesis: "Operator commands" for
            # "Operator commands (explain, report, ...)"
            if path is None or not any(wanted == s or s.startswith(wanted + " (") for s in map(" ".join, map(str.split, _sections(path)))):
                missing.append(f"{page.name}: {target}, {wanted!r}")
    assert missing == []
