"""An edit that leaves the kernel's traced program as it was reuses the last compile (`server.analyze`,
`reuse`; `pypto.record.Traced.fingerprint`): the job traces the kernel, finds the last answer's fingerprint,
and answers without lowering; the server's answer made from the last one (`reuse_answer`) is the answer a
compile of the new text gives — record document, columns, health, editor view, report — but for the passes'
timings. An edit the trace sees (a tile shape it reaches, a line moved) is compiled anew."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import timeless

from pypto.frontend.jit import CompiledKernel
from server import analyze

# two kernels and two tile-shape helpers; `wide` reaches `_tiles` only for more than 512 columns
KERNELS = '''import pypto

N = 256


def _tiles(cols):
    if cols > 512:
        pypto.set_vec_tile_shapes(8, 512)  # never reached at these sizes
    else:
        pypto.set_vec_tile_shapes(8, 128)


@pypto.jit
def wide(x: pypto.Tensor([32, N], pypto.DT_FP32), out: pypto.Tensor([32, N], pypto.DT_FP32)):
    _tiles(N)
    out[:] = pypto.exp(x) + x  # the body
'''

OPTS = {"editor": True, "report": True, "record": True, "snapshots": True, "listings": True, "fingerprint": True}

# a tail the health rule proposes to fix (the board checks it): its record is sent before the advice
TAIL = '''import pypto


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
'''


def _compile(path: Path, text: str, **more: Any) -> dict[str, Any]:
    path.write_text(text)  # the record's file hash is the file's (as the language server's is the saved one)
    return analyze.analyze_kernel(str(path), text, "wide", {**OPTS, **more})


@pytest.mark.parametrize("edit", [
    ("# the body", "# what the body computes"),  # a comment in the kernel
    ("(8, 512)  # never reached", "(8, 64)  # never reached"),  # a tile-shape call the kernel does not reach
], ids=["comment", "unreached-tile-call"])
def test_an_edit_the_trace_does_not_see_reuses_the_last_answer_which_is_a_cold_compiles(tmp_path: Path,
                                                                                         edit: tuple[str, str]) -> None:
    path = tmp_path / "k.py"
    last = _compile(path, KERNELS)
    assert last["error"] is None and last["fingerprint"]
    text = KERNELS.replace(*edit)
    assert text != KERNELS
    fresh = _compile(path, text, reuse={"fingerprints": {last["fingerprint"]: True}})
    assert fresh["reused"] == "whole" and fresh["fingerprint"] == last["fingerprint"]
    assert "record" not in fresh and "health" not in fresh, "nothing past the trace was made"
    reused = analyze.reuse_answer(last, fresh)
    cold = _compile(path, text)
    assert "reused" not in cold and cold["fingerprint"] == last["fingerprint"]
    assert reused["record"]["source"]["text_sha256"] == cold["record"]["source"]["text_sha256"] \
        != last["record"]["source"]["text_sha256"], "the record names the file as it is now"
    assert reused["record_columns"] == cold["record_columns"], "the same columns, byte for byte"
    assert timeless(reused) == timeless(cold)
    assert reused["reused"] == "whole"


@pytest.mark.parametrize("edit", [
    ("(8, 128)", "(8, 64)"),  # the tile shape the kernel runs with
    ("N = 256", "N = 384"),  # a constant its shapes read
    ("import pypto\n", "import pypto\n\n"),  # every line moved: the record's source spans are others
], ids=["tile-shape", "constant", "lines-moved"])
def test_an_edit_the_trace_sees_is_compiled_anew(tmp_path: Path, edit: tuple[str, str]) -> None:
    path = tmp_path / "k.py"
    last = _compile(path, KERNELS)
    fresh = _compile(path, KERNELS.replace(*edit), reuse={"fingerprints": {last["fingerprint"]: True}})
    assert "reused" not in fresh and fresh["fingerprint"] != last["fingerprint"]
    assert fresh["error"] is None and fresh["record"] is not None


def test_the_settings_are_in_the_fingerprint_but_which_panel_parts_are_asked(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    last = _compile(path, KERNELS)
    other = _compile(path, KERNELS, check_advice=False, reuse={"fingerprints": {last["fingerprint"]: True}})
    assert "reused" not in other and other["fingerprint"] != last["fingerprint"]
    assert other["program"] == last["program"], "one traced program"
    # the panels' parts (record, graphs, listings) are chosen by the server (server.live._reusable)
    parts = _compile(path, KERNELS, listings=False, snapshots=False, record=False)
    assert parts["fingerprint"] == last["fingerprint"] and parts["record"] is None


def test_no_fingerprint_unless_asked_or_off_the_sim_board(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    assert "fingerprint" not in _compile(path, KERNELS, fingerprint=False)
    assert "fingerprint" not in _compile(path, KERNELS, board="cpu")  # a measured run is never reused


def test_a_record_whose_advice_was_checked_is_sent_at_once_and_its_advice_checked_again(tmp_path: Path,
                                                                                        monkeypatch) -> None:
    path = tmp_path / "tail.py"
    path.write_text(TAIL)
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(analyze, "progress", sent.append)
    opts = {**OPTS, "interim": True}
    last = analyze.analyze_kernel(str(path), TAIL, "tail_vec", opts)
    assert last["interim_sent"] and last["fingerprint"] and last["advice_traces"], "the candidates it checked"
    sent.clear()
    text = TAIL.replace("pypto.exp(x)", "pypto.exp(x)  # e")
    path.write_text(text)
    lowered: list[int] = []
    real = CompiledKernel.lower
    monkeypatch.setattr(CompiledKernel, "lower", lambda self, syms: lowered.append(1) or real(self, syms))
    again = analyze.analyze_kernel(str(path), text, "tail_vec", {**opts, "reuse": {
        "fingerprints": {last["fingerprint"]: False}, "traces": last["advice_traces"]}})
    assert len(lowered) == 1, "the kernel as written (its health); its candidates were known by their traces"
    assert [list(d) for d in sent] == [["kernel", "reused_interim", "text_sha256", "inputs_from", "knobs"]], \
        "no second interim"
    assert sent[0]["reused_interim"] == last["fingerprint"]
    assert again["reused"] == "record" and again["interim_sent"]
    for key in analyze.INTERIM:  # the server has them from the last interim answer
        assert key not in again, key
    checked = [f for f in again["health"]["findings"] if f["rule"] == "tile.tail-waste"]
    assert checked and checked[0]["edits"] and "faster" in checked[0]["suggestion"], "the advice checked again"


def test_a_reused_records_advice_is_checked_again_from_its_basis_without_lowering_the_kernel(tmp_path: Path,
                                                                                          monkeypatch) -> None:
    """The answer whose advice was checked after its record was sent carries its basis (its findings before the check,
    its summary and report figures, what the advisor read of its lowering and run). A job given it for the same traced
    program lowers nothing — neither the kernel nor its candidates, known by their traces — and answers what the job
    without it answers, which lowers the kernel again."""
    path = tmp_path / "tail.py"
    path.write_text(TAIL)
    monkeypatch.setattr(analyze, "progress", lambda data: None)
    opts = {**OPTS, "interim": True}
    last = analyze.analyze_kernel(str(path), TAIL, "tail_vec", opts)
    basis = last["advice_basis"]
    assert basis["written"]["baseline"][0] == last["summary"]["makespan_us"] > 0
    rules = lambda h: sorted(f["rule"] for f in h["findings"])  # noqa: E731
    assert rules(basis["health"]) == rules(last["health"])
    tail = [f for f in basis["health"]["findings"] if f["rule"] == "tile.tail-waste"]
    assert tail and tail[0]["numbers"]["try"] and "makespan_us" not in tail[0]["numbers"], "before the check"
    text = TAIL.replace("pypto.exp(x)", "pypto.exp(x)  # e")
    path.write_text(text)
    reuse = {"fingerprints": {last["fingerprint"]: False}, "traces": last["advice_traces"]}
    lowered: list[int] = []
    real = CompiledKernel.lower
    monkeypatch.setattr(CompiledKernel, "lower", lambda self, syms: lowered.append(1) or real(self, syms))
    without = analyze.analyze_kernel(str(path), text, "tail_vec", {**opts, "reuse": reuse})
    assert len(lowered) == 1
    lowered.clear()
    again = analyze.analyze_kernel(str(path), text, "tail_vec", {**opts, "reuse": {
        **reuse, "basis": {last["fingerprint"]: basis}}})
    assert not lowered, "nothing lowered"
    assert again["reused"] == "record" and again["interim_sent"] and again["error"] is None
    for key in ("health", "summary", "report", "advice_traces", "inputs_from", "precision", "suggestions"):
        assert again[key] == without[key], key
    assert again["advice_basis"] == basis, "the next check's basis is the same"

    def timeless_basis(b: dict[str, Any]) -> dict[str, Any]:
        return {**b, "written": {**b["written"], "seconds": None}}  # (the compile's own time, measured again)
    assert timeless_basis(without["advice_basis"]) == timeless_basis(basis)
    checked = [f for f in again["health"]["findings"] if f["rule"] == "tile.tail-waste"]
    assert checked and checked[0]["edits"] and "faster" in checked[0]["suggestion"]
    other = analyze.analyze_kernel(str(path), text, "tail_vec", {**opts, "reuse": {
        **reuse, "basis": {"another program": basis}}})
    assert len(lowered) == 1 and other["health"] == without["health"], "a basis serves its own program only"

def test_a_captured_kernel_edited_since_its_capture_reuses_and_says_it_changed(tmp_path: Path, monkeypatch) -> None:
    """The capture's `kernel_changed` is the new text's, like the file's hash: not in the fingerprint, made anew."""
    from pypto.frontend import capture

    text = '''import pypto


@pypto.frontend.jit
def scaled(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = x * 2.0
'''
    path = tmp_path / "captured_kernel.py"
    path.write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    import captured_kernel

    monkeypatch.setenv(capture.ENV_STORE, str(tmp_path / ".pypto" / "captures"))
    monkeypatch.setenv(capture.ENV_COMMAND, "python run.py")
    captured_kernel.scaled(np.ones((48, 64), np.float32), np.zeros((48, 64), np.float32))
    monkeypatch.delenv(capture.ENV_STORE)

    def compile_(src: str, **more: Any) -> dict[str, Any]:
        path.write_text(src)
        return analyze.analyze_kernel(str(path), src, "scaled", {**OPTS, **more})

    last = compile_(text)
    assert last["error"] is None and last["inputs_from"]["kernel_changed"] is False
    edited = text.replace("x * 2.0", "x * 2.0  # doubled")
    fresh = compile_(edited, reuse={"fingerprints": {last["fingerprint"]: True}})
    assert fresh["reused"] == "whole"
    reused, cold = analyze.reuse_answer(last, fresh), compile_(edited)
    assert cold["inputs_from"]["kernel_changed"] is True and reused["inputs_from"] == cold["inputs_from"]
    assert reused["record"]["source"]["inputs_from"]["kernel_changed"] is True
    assert timeless(reused) == timeless(cold)


def test_the_shells_that_keep_whole_answers_are_offered_only_answers_that_hold_whole(tmp_path: Path) -> None:
    """`offering` (serve's and the MCP server's way): an answer whose findings' tile shapes the board checked
    (TAIL's) is not offered — those checks compiled code the fingerprint does not cover; one without them is, and
    a job offered it reuses it; a cpu board, a precision check or a tile search offer nothing."""
    path = tmp_path / "k.py"
    plain = {"editor": True, "report": True}
    asked, offered = analyze.offering(plain, [])
    assert asked == {**plain, "fingerprint": True} and offered == {}
    last = _compile(path, KERNELS, check_advice=False)  # nothing checked: whole
    path.write_text(TAIL)
    checked = analyze.analyze_kernel(str(path), TAIL, "tail_vec", {**OPTS})
    assert "advice_traces" in checked and analyze.whole_fingerprint(checked) is None
    assert analyze.whole_fingerprint({**last, "error": {"message": "x"}}) is None
    asked, offered = analyze.offering({**OPTS, "check_advice": False}, [last, checked, last])
    assert list(offered) == [last["fingerprint"]] and asked["reuse"] == {"fingerprints": {last["fingerprint"]: True}}
    fresh = _compile(path, KERNELS.replace("# the body", "# a comment"), **{k: v for k, v in asked.items()
                                                                            if k not in OPTS})
    assert fresh["reused"] == "whole"
    for other in ({"board": "cpu"}, {"precision": True}, {"suggest": True}):
        assert analyze.offering({**plain, **other}, [last]) == ({**plain, **other}, {})


# each example kernel's traced-program fingerprint, printed as JSON (run in a process of its own)
FINGERPRINTS = '''
import json, sys
from pathlib import Path
from server import analyze
from pypto.record import trace_for
out = {}
for path in sorted(Path(sys.argv[1]).glob("*.py")):
    text = path.read_text()
    mod = analyze._load(str(path), text)
    for name, kernel in analyze._kernels(mod, str(path)).items():
        out[f"{path.name}::{name}"] = trace_for(kernel).program_fingerprint
print(json.dumps(out))
'''


def test_a_traced_programs_fingerprint_is_the_same_in_every_process_and_its_own(tmp_path: Path) -> None:
    """Jobs of one server are forked from templates that may be replaced (another interpreter, another string hash
    seed): a program's fingerprint (hashed as marshal's bytes, `pypto.record.canonical_bytes`) may not depend on the
    process — the order a set of names iterates in, a string being interned — and two programs have two."""
    import json
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    script = tmp_path / "fingerprints.py"
    script.write_text(FINGERPRINTS)
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        done = subprocess.run([sys.executable, str(script), str(root / "examples")], env=env, capture_output=True,
                              text=True, timeout=300, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert len(runs[0]) >= 15, "the examples' kernels"
    assert runs[0] == runs[1]
    assert len(set(runs[0].values())) == len(runs[0]), "every kernel's program its own"
