"""The container every program shares (docs/bytecode.md section 1): one
magic and version for all three scheduling models, the header naming the
model, named sections; one loader entry that, whatever the bytes, returns a
program or raises VerifyError; one disassembler for all."""

from __future__ import annotations

import zlib
from pathlib import Path

import msgpack
import pytest
from flowc.backends import vm
from flowc.backends.vm import VerifyError, device, plan_vm
from flowc.backends.vm import container as C
from flowc.backends.vm import format as F
from flowc.pipeline import driver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.program_bytes import open_program, pack_program

DATA = Path(__file__).resolve().parent / "data"
SOURCES = {
    "sequential": DATA / "workflowskill" / "fixtures" / "filter-exit.md",
    "kernel": next((DATA / "aevatar" / "seed_examples").glob("B_*.yaml")),
    "dataflow": DATA / "instruction" / "03-agentd-e2e-control-flow.yaml",
}


def _compiled(model: str, strip: bool = False) -> bytes:
    result = driver.compile_file(str(SOURCES[model]))
    assert result.ok
    return vm.compile_workflow(result.workflow, strip=strip)


PROGRAMS = {model: _compiled(model) for model in SOURCES}


def _rejected(data, match: str | None = None) -> str:
    with pytest.raises(VerifyError, match=match) as info:
        vm.load(data)
    return str(info.value)


def test_one_magic_and_version_and_the_model_in_the_header():
    for model, data in PROGRAMS.items():
        assert data[:4] == b"FLWC" and data[4] == F.FORMAT_VERSION
        got_model, name, sections = open_program(data)
        assert got_model == model and isinstance(name, str)
        required, optional = F.MODEL_SECTIONS[model]
        assert [s for s in sections if s in required] == list(required)
        assert set(sections) <= set(required) | set(optional)
    assert C.MAGIC == F.MAGIC and C.MODELS == F.MODELS and C.MODEL_SECTIONS == F.MODEL_SECTIONS
    assert C.MAX_HEADER_BYTES == F.LIMITS["header_bytes"]


def test_same_ir_same_bytes_for_every_model():
    for model in SOURCES:
        assert _compiled(model) == _compiled(model)


def test_strip_leaves_the_source_map_section_out():
    full, stripped = _compiled("sequential"), _compiled("sequential", strip=True)
    assert "srcmap" in open_program(full)[2] and "srcmap" not in open_program(stripped)[2]
    assert vm.load(full).plan["edges"] == vm.load(stripped).plan["edges"]


def test_the_loader_of_one_model_refuses_another(monkeypatch):
    monkeypatch.setattr(device, "LOADERS", {"sequential": plan_vm.load_plan})   # a WorkflowSkill device
    with pytest.raises(VerifyError, match="a kernel program: this device runs sequential"):
        device.load(PROGRAMS["kernel"])
    monkeypatch.undo()
    for model, data in PROGRAMS.items():
        _name, name, sections = open_program(data)
        other = "dataflow" if model != "dataflow" else "kernel"
        _rejected(pack_program(other, name, sections))


def _with_checksum(data: bytes) -> bytes:
    return data[:5] + zlib.crc32(data[9:]).to_bytes(4, "big") + data[9:]


def _container(header: list, body: bytes, version: int = F.FORMAT_VERSION) -> bytes:
    """A container of a hand-made header (checksum valid)."""
    raw = msgpack.packb(header)
    return _with_checksum(F.MAGIC + bytes([version]) + bytes(4) + F.uleb128(len(raw)) + raw + body)


def test_header_and_table_limits():
    model, name, sections = open_program(PROGRAMS["sequential"])
    for version in (1, 2, 3, 4, 5, 6, 7, F.FORMAT_VERSION + 1):   # versions 1 to 7 had other layouts: refused
        assert f"unsupported format version {version} (this VM runs 8)" in _rejected(
            pack_program(model, name, sections, version=version))
    assert "scheduling model" in _rejected(pack_program("parallel", name, sections))
    assert "needs a section code" in _rejected(pack_program(model, name, {k: v for k, v in sections.items()
                                                                          if k != "code"}))
    assert "has no section" in _rejected(pack_program(model, name, {**sections, "extra": 1}))
    big = PROGRAMS["sequential"]
    assert big[9] < 0x80   # a one-byte header length
    assert "header" in _rejected(_with_checksum(big[:9] + F.uleb128(len(big)) + big[10:]))
    assert "header" in _rejected(_with_checksum(big[:9] + F.uleb128(F.LIMITS["header_bytes"] + 1) + big[10:]))
    assert "checksum" in _rejected(big[:-1])
    stripped = _compiled("sequential", strip=True)   # its last section, code, is decoded: nothing may follow it
    assert "extra data" in _rejected(_with_checksum(stripped + b"\x00"))
    assert "msgpack" in _rejected(_with_checksum(stripped[:-1]))
    code = msgpack.packb(b"")
    mask = sum(1 << F.SECTIONS.index(s) for s in ("consts", "names", "plan", "code"))
    assert "runs past the end" in _rejected(_container([0, "w", mask, 1, 1, 10], b"\x90\x90" + code))
    assert "is empty" in _rejected(_container([0, "w", mask, 1, 1, 0], b"\x90\x90" + code))
    assert "length of section plan" in _rejected(_container([0, "w", mask, 1, 1, 99], b"\x90\x90" + code))
    assert "is empty" in _rejected(_container([0, "w", mask, 1, 1, 1], b"\x90\x90\x90"))
    assert "all but the last" in _rejected(_container([0, "w", mask, 1, 1], b"\x90\x90\x90" + code))
    assert "section mask" in _rejected(_container([0, "w", -1], b"\x90"))
    assert "header must be an array" in _rejected(_container([0, "w"], b"\x90"))
    flipped = bytearray(big)
    flipped[14] ^= 1   # inside the header
    assert "checksum" in _rejected(bytes(flipped))
    assert "bad magic" in _rejected(b"WFBC" + big[4:])


def test_a_corrupt_skipped_section_is_still_refused():
    data = PROGRAMS["sequential"]
    _model, _name, table = C.open_container(data)
    _start, end = table["srcmap"]
    bad = bytearray(data)
    bad[end - 1] ^= 0x01
    assert "checksum" in _rejected(bytes(bad))


@pytest.mark.parametrize("model", sorted(SOURCES))
def test_disasm_lists_header_plan_and_code(model):
    text = vm.disassemble(PROGRAMS[model])
    assert text.startswith(f"flowc program, format version {F.FORMAT_VERSION}, scheduling model {model}\n")
    assert "sections (" in text
    for sname in open_program(PROGRAMS[model])[2]:
        assert f"\n  {sname} " in text
    plan, code = {"sequential": ("steps (", "\nblock 0:\n"), "kernel": ("steps (", "\nblock 0:\n"),
                  "dataflow": ("graph:\n", "\nblock 0:\n")}[model]
    assert plan in text and code in text and text.index(plan) < text.index(code)


# ------------------------------------------------------------------ fuzz: any bytes, VerifyError or a program

def _mutate(data, raw: bytes) -> bytes:
    b = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        how = data.draw(st.sampled_from(["flip", "set", "cut", "insert", "delete"]))
        if not b:
            break
        i = data.draw(st.integers(0, len(b) - 1))
        if how == "flip":
            b[i] ^= 1 << data.draw(st.integers(0, 7))
        elif how == "set":
            b[i] = data.draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xC0, 0xC4, 0xDC, 0xDD, 0xFF]))
        elif how == "cut":
            del b[i:]
        elif how == "insert":
            b[i:i] = data.draw(st.binary(min_size=1, max_size=4))
        else:
            del b[i:i + data.draw(st.integers(1, 8))]
    return bytes(b)


def _loads_or_refuses(data: bytes) -> None:
    try:
        program = vm.load(data)
    except VerifyError as exc:
        assert str(exc)
        return
    assert hasattr(program, "run")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_and_truncated_containers_only_load_or_raise_verify_error(data):
    model = data.draw(st.sampled_from(sorted(PROGRAMS)))
    _loads_or_refuses(_mutate(data, PROGRAMS[model]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_sections_with_valid_checksums_only_load_or_raise_verify_error(data):
    """The checksums pass, so the section decoders and verifiers see the damage."""
    model = data.draw(st.sampled_from(sorted(PROGRAMS)))
    _m, name, sections = open_program(PROGRAMS[model])
    key = data.draw(st.sampled_from(sorted(sections)))
    import msgpack

    raw = _mutate(data, msgpack.packb(sections[key], use_bin_type=True))
    try:
        sections[key] = msgpack.unpackb(raw, raw=False, strict_map_key=False)
    except Exception:  # noqa: BLE001 - not msgpack any more: give the loader the raw bytes
        sections[key] = raw
    if data.draw(st.booleans()):
        name = data.draw(st.one_of(st.none(), st.integers(-(2**63), 2**64 - 1), st.text(max_size=3)))
    _loads_or_refuses(pack_program(model, name, sections))


# ------------------------------------------------------------------ the string table

def test_strings_are_written_once_and_referred_to():
    import msgpack

    for model, data in PROGRAMS.items():
        _m, _name, table = C.open_container(data)
        names = table["names"][2]
        refs = 0
        for sname, where in table.items():
            if sname == "names":
                continue
            raw = data[where[0]:where[1]]
            refs += raw.count(b"\xd4\x00") + raw.count(b"\xd5\x00")
            # every name that is longer than its reference appears as a reference, never spelled out
            for s in names:
                if len(msgpack.packb(s)) > 3 + (len(names) > 256):
                    assert msgpack.packb(s) not in raw, (model, sname, s)
        assert refs > 0, model


def test_both_decoders_resolve_string_references_alike():
    for data in PROGRAMS.values():
        _m, _name, table = C.open_container(data)
        names = table["names"][2]
        for sname, where in table.items():
            if sname == "names":
                continue
            raw = bytes(data[where[0]:where[1]])
            reader = C._Reader(raw, names)
            assert reader.value(0) == C.unpackb(raw, names), sname
            assert reader.pos == len(raw)
    # an ext 8 of one byte is a reference too
    assert C.unpackb(b"\xc7\x01\x00\x01", ["a", "b"]) == C._Reader(b"\xc7\x01\x00\x01", ["a", "b"]).value(0) == "b"


@pytest.mark.parametrize("raw,message", [
    (b"\xd4\x00\x63", "outside the string table"),         # index 99 of a short table
    (b"\xd5\x00\x00\x07", "outside the string table"),
    (b"\xd4\x01\x00", "ext type 1"),                       # another ext type
    (b"\xc7\x03\x00\x00\x00\x00", "1, 2 or 4 bytes"),        # ext 8 of 3 bytes
    (b"\x92\xd4\x00\x00\xd4\x00\x05", "outside the string table"),
])
def test_bad_string_references_are_refused_by_both_decoders(raw, message):
    names = ["a", "b"]
    with pytest.raises(VerifyError, match=message):
        C.unpackb(raw, names)
    with pytest.raises(VerifyError, match=message):
        r = C._Reader(raw, names)
        r.value(0)
    with pytest.raises(VerifyError):   # no table: no references
        C.unpackb(raw)


def test_the_name_table_holds_no_references_and_unknown_ids_are_refused():
    _model, name, sections = open_program(PROGRAMS["sequential"])
    names = sections["names"]
    bad = F.pack_sections(0, name, [(F.SECTIONS.index(s), F.string_ref(0) if s == "names" else v)
                                    for s, v in sections.items()])
    assert "outside the string table" in _rejected(bad)
    rows = [(F.SECTIONS.index(s), v) for s, v in sections.items()]
    assert "has no section 9" in _rejected(F.pack_sections(0, name, rows + [(9, 0)]))
    assert "scheduling model" in _rejected(F.pack_sections(3, name, rows))
    assert "scheduling model" in _rejected(F.pack_sections("sequential", name, rows))
    assert names == open_program(PROGRAMS["sequential"])[2]["names"]


def test_interned_strings_not_in_the_name_table_are_appended_to_it():
    table, refs = F.intern_table(["x"], [["x", "repeated", "repeated", "once-only-here"], {"repeated": "x"}])
    assert table == ["x", "repeated"]
    assert refs == {"repeated": 1}   # "x" is shorter spelled out (2 bytes) than as a reference (3)


def test_the_corpus_bytecode_is_at_most_40_percent_of_its_source():
    """The figure of benchmarks/bench_vm.py (section Size): stripped programs of the
    WorkflowSkill corpus and the examples, every model, against their source bytes."""
    root = Path(__file__).resolve().parents[1]
    paths = driver.expand_paths([str(root / "tests" / "data" / "workflowskill"), str(root / "examples")])
    source = code = 0
    models = set()
    for path in paths:
        result = driver.compile_file(path)
        if not result.ok:
            continue
        data = vm.compile_workflow(result.workflow, strip=True)
        models.add(C.open_container(data)[0])
        source += Path(path).stat().st_size
        code += len(data)
    assert models == set(F.MODELS)
    assert code <= 0.40 * source, f"{code} bytes of bytecode for {source} bytes of source"
