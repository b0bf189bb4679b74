"""axe-core (npm, pinned in package.json; `make axe` runs `npm ci`) run on the reader edition's pages in Chromium.

    python -m tests.browser.axe build/book [build/book/zh] [--json results.json]

prints, per page, the violations by impact and by rule (the number of elements each rule flags).
``tests/test_book.py`` asserts there is no serious or critical one.

The sites after the first are translations of it: their code cells are the first site's,
character for character and class for class (the book renders each notebook's code once), so
axe leaves those out there (:data:`CODE_CELLS`); on pages of 4,000 to 15,000 elements, the code's
highlighted tokens are most of what it would check, twice.
"""

import argparse
import json
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.course.settings import REPO_ROOT
from testbed.lab import CHROMIUM_FLAGS, chromium_executable

AXE_SCRIPT = REPO_ROOT / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
CODE_CELLS = ".jp-InputArea-editor .highlight"  # a code cell's highlighted source


def run_axe(page, url: str, exclude: tuple[str, ...] = ()) -> list[dict]:
    """axe-core's violations on ``url`` (but in ``exclude``'s selectors): one dict per rule broken."""
    page.goto(url)
    page.add_script_tag(path=str(AXE_SCRIPT))
    context = {"include": [["html"]], "exclude": [[selector] for selector in exclude]}
    result = page.evaluate("async (context) => await axe.run(context, {resultTypes: ['violations']})", context)
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": len(v["nodes"]),
            "examples": [node["target"] for node in v["nodes"][:3]],
        }
        for v in result["violations"]
    ]


def summary(violations: list[dict]) -> dict:
    """Flagged elements by impact, and by ``impact/rule``."""
    by_impact, by_rule = Counter(), Counter()
    for v in violations:
        by_impact[v["impact"]] += v["nodes"]
        by_rule[f"{v['impact']}/{v['id']}"] += v["nodes"]
    return {"by_impact": dict(by_impact), "by_rule": dict(sorted(by_rule.items()))}


def blocking(violations: list[dict]) -> list[dict]:
    return [v for v in violations if v["impact"] in BLOCKING]


# Longer than the audit of both editions' books ever took (91 s in a full run), within the suite's per-test limit.
AUDIT_DEADLINE = 500


def audit(sites: list[Path]) -> dict[str, list[dict]]:
    """Page (relative to the first site's parent) -> its violations, for every HTML page of the sites.

    The sites after the first are its translations: their code cells are left out (see the module). The audit runs
    in a thread of its own: a test worker may hold a started Playwright for its session (tests/browser/conftest.py),
    whose event loop counts as running in the worker's thread, where Playwright's sync API then refuses to start.
    """
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(audit_here, sites).result(timeout=AUDIT_DEADLINE)


def audit_here(sites: list[Path]) -> dict[str, list[dict]]:
    """:func:`audit` in the calling thread."""
    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_FLAGS, headless=True)
        page = browser.new_page()
        for number, site in enumerate(sites):
            exclude = (CODE_CELLS,) if number else ()
            for path in sorted(site.glob("*.html")):
                results[str(path.relative_to(sites[0].parent))] = run_axe(page, path.resolve().as_uri(), exclude)
        browser.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, help="write every violation there")
    args = parser.parse_args(argv)
    results = audit(args.sites)
    for page, violations in results.items():
        counts = summary(violations)
        print(f"{page}: {counts['by_impact']}  {counts['by_rule']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 1 if any(blocking(v) for v in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
