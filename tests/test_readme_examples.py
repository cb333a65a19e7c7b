"""The README and the docs mark as runnable exactly the examples that call the service, and each
``expect`` marker sits on one: the examples themselves run in tests/test_make_run_smoke.py on the
service it started (``tests.doc_examples``)."""

from __future__ import annotations

from tests.doc_examples import (
    DOCS,
    EXAMPLE_FILES,
    EXPECT,
    ROOT,
    example_blocks,
    runnable_blocks,
)


def test_examples_mark_only_runnable_blocks() -> None:
    readme_blocks = runnable_blocks((ROOT / "README.md").read_text(), "README.md")
    assert len(readme_blocks) >= 3, "the README's tour was not found"
    assert len(example_blocks()) >= 10, "the runnable examples of the docs were not found"
    docs = sorted(f"docs/{path.name}" for path in DOCS.glob("*.md"))
    for path in dict.fromkeys([*EXAMPLE_FILES, *docs]):
        text = (ROOT / path).read_text()
        blocks = runnable_blocks(text, path)
        if path not in EXAMPLE_FILES:
            assert not blocks, (
                f"{path}:{blocks[0].first_line}: runnable examples in a file that EXAMPLE_FILES "
                "does not list: add the file there, in the order its examples must run"
            )
        first_lines = {block.first_line for block in blocks}
        for number, line in enumerate(text.splitlines(), start=1):
            if EXPECT.match(line.strip()):
                # the marker, then the fence, then the block's first line
                assert number + 2 in first_lines, (
                    f"{path}:{number}: an expect marker must sit right above a runnable block"
                )
