"""The HTML report: one self-contained page with no script, whose swimlane is an inline SVG drawn
like the panel's (leaf colours, idle gaps and scheduler bubbles, the critical path), small enough to
keep per kernel (it was 4.9 MB with plotly.js inlined)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from pypto.analysis.report import LEAF_COLORS, MAX_BOXES, render_html, swimlane_svg
from pypto.boards.swimlane import Lane, LaneTask, Swimlane
from pypto.cli import main

REPO = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"


def _svg(page: str) -> ET.Element:
    m = re.search(r"<svg class='swimlane'.*?</svg>", page, re.S)
    assert m, "no inline swimlane SVG in the page"
    return ET.fromstring(m.group(0))


def _run() -> Swimlane:
    """Two lanes: a chain 0 -> 1 -> 2 -> 3 across them; lane 1 idles while task 2 is ready (a scheduler
    bubble) and before (a dependency wait)."""
    lanes = (Lane("AIV_0", "AIV"), Lane("AIV_1", "AIV"))
    tasks = (LaneTask(0, 0, 10.0, 12.0, leaf=0),
             LaneTask(1, 1, 12.0, 14.0, leaf=1, preds=(0,)),
             LaneTask(2, 1, 17.0, 18.0, leaf=2, preds=(1,), ready=14.5),
             LaneTask(3, 0, 19.0, 20.0, leaf=0, preds=(2,)))
    return Swimlane("sim", "simulated", lanes, tasks)


def test_swimlane_svg_has_leaf_colours_bubbles_and_the_critical_path() -> None:
    svg = ET.fromstring(swimlane_svg(_run(), "k"))
    boxes = [r for r in svg.iter(f"{SVG}rect") if (r.get("class") or "").startswith("f")]
    assert sorted(b.get("class") for b in boxes) == ["f0", "f0", "f1", "f2"]  # one box per task, by leaf
    titles = [b.findtext(f"{SVG}title") or "" for b in boxes]
    assert any(t.startswith("task 2 · leaf 2") for t in titles)
    groups = {g.get("class") or g.get("fill"): g for g in svg.iter(f"{SVG}g")}
    idle = groups["idle"].findall(f"{SVG}rect")
    # the run spans 10..20 µs, 110 px per µs: lane 0 idles 12..19, lane 1 10..12, 14..17 and 18..20
    assert sorted(float(r.get("x", -1)) for r in idle) == [0.0, 220.0, 440.0, 880.0]
    hatched = groups["url(#hatch)"].findall(f"{SVG}rect")
    # an AIV task ready and not started while an AIV lane idles: task 2 from 14.5 µs, task 3 from 18 µs,
    # on both lanes (each idles then)
    assert sorted(float(r.get("x", -1)) for r in hatched) == [495.0, 495.0, 880.0, 880.0]
    crit = [r.findtext(f"{SVG}title") for r in groups["crit"].findall(f"{SVG}rect")]
    assert crit and all("critical path" in (t or "") for t in crit) and len(crit) == 4  # 0 -> 1 -> 2 -> 3
    labels = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "ln"]
    assert labels == ["AIV_0", "AIV_1"]
    axis = [t.text for t in groups["axis"].iter(f"{SVG}text")]
    assert axis[0] == "0" and axis[-1] == "10"  # µs from the first task, not from 0


def test_a_huge_run_stays_bounded() -> None:
    lanes = tuple(Lane(f"AIV_{i}", "AIV") for i in range(48))
    tasks = tuple(LaneTask(i, i % 48, (i // 48) * 0.1, (i // 48) * 0.1 + 0.08, leaf=i % 5) for i in range(48_000))
    text = swimlane_svg(Swimlane("sim", "simulated", lanes, tasks), critical=())
    svg = ET.fromstring(text)
    boxes = [r for r in svg.iter(f"{SVG}rect") if (r.get("class") or "").startswith("f")]
    assert 0 < len(boxes) <= MAX_BOXES
    assert any(re.match(r"\d+ tasks, mostly leaf \d", r.findtext(f"{SVG}title") or "") for r in boxes)
    assert len(text) < 1_000_000


def test_report_page_is_small_self_contained_and_drawn(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "softmax.html"
    assert main(["report", str(REPO / "examples" / "softmax.py"), "--format", "html", "-o", str(page)]) == 0
    text = page.read_text()
    size = len(text.encode())
    print(f"HTML report of examples/softmax.py: {size:,} bytes")  # was 4,857,044 with plotly.js inlined
    assert size < 1_000_000
    assert "<script" not in text and "plotly" not in text.lower()
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:)?//""", text)  # nothing fetched
    svg = _svg(text)
    assert any((r.get("class") or "") == "f0" for r in svg.iter(f"{SVG}rect"))
    assert f".f0{{fill:{LEAF_COLORS[0]}" in text
    assert "critical path" in text and "scheduler bubble" in text and "Slowest tasks" in text
    assert re.search(r"<td>softmax\.py:\d+", text)  # the slowest tasks' source lines


def test_a_report_without_a_run_renders() -> None:
    from pypto.analysis.report import KernelReport

    page = render_html([KernelReport("k", "k.py", 3, error="boom")])
    assert "Does not compile: boom" in page and "<svg" not in page
