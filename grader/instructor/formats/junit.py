"""JUnit XML: the class as <testsuites>, one <testsuite> per student, one <testcase> per check.

    <testsuites name="..." tests= failures= errors= skipped= time=>
      <testsuite name="alice" tests= failures= errors= skipped= time= timestamp=>
        <properties><property name="score" value="45"/><property name="max_score" value="58"/>...</properties>
        <testcase classname="alice.s1_11_softmax" name="book_softmax_examples" time="0.02">   (no time: hidden)
          <failure message="first line" type="check">the whole message</failure>   (a wrong answer)
          <error message=... type="student">...</error>                              (the code could not run)
          <skipped message=.../>
        </testcase>
      </testsuite>
    </testsuites>

A submission that could not be graded is a suite with one <testcase name="submission"> holding
an <error> with the reason. Failures and errors are told apart as in exercism.py.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..batch.records import NOT_GRADED, student_of
from .exercism import ERROR_KINDS

# XML 1.0 cannot hold most control characters, even escaped; a student's output may have them.
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _x(text) -> str:
    return _BAD_XML.sub("\ufffd", str(text))


def suite(name: str, doc: dict) -> ET.Element:
    student = student_of(doc)
    s = ET.Element("testsuite", name=_x(name))
    props = ET.SubElement(s, "properties")
    for key in ("score", "max_score", "kata_version", "sandbox", "submission"):
        ET.SubElement(props, "property", name=key, value=_x(doc.get(key, "")))
    ET.SubElement(props, "property", name="status", value=_x(student.status if student else "graded"))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if student is not None and student.status in NOT_GRADED:
        case = ET.SubElement(s, "testcase", classname=_x(name), name="submission", time="0")
        reason = student.reason or "not graded"
        ET.SubElement(case, "error", message=_x(reason.splitlines()[0]), type=student.status).text = _x(reason)
        counts["tests"] = counts["errors"] = 1
    for c in doc.get("checks", []):
        counts["tests"] += 1
        case = ET.SubElement(
            s,
            "testcase",
            classname=_x(f"{name}.{c.get('exercise', '')}"),
            name=_x(str(c.get("name", "")).removeprefix("test_")),
        )
        if c.get("visibility") != "hidden" and c.get("duration_s") is not None:  # a hidden check's time is
            case.set("time", f"{float(c['duration_s']):.3f}")  # never shown (SECURITY.md)
        status, message = c.get("status"), c.get("message") or ""
        first = message.splitlines()[0] if message else ""
        if status == "skipped":
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=_x(first))
        elif status != "passed":
            tag = "error" if c.get("kind") in ERROR_KINDS else "failure"
            counts["errors" if tag == "error" else "failures"] += 1
            ET.SubElement(case, tag, message=_x(first), type=_x(c.get("kind") or "check")).text = _x(message)
    for k, v in counts.items():
        s.set(k, str(v))
    s.set("time", f"{round(float(doc.get('duration_s') or 0)):d}")  # whole seconds: hidden checks' times are in it
    return s


def document(records: dict[str, dict], title: str = "kata") -> bytes:
    """The whole class; `records`: student name -> report document."""
    root = ET.Element("testsuites", name=_x(title))
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    seconds = 0.0
    for name, doc in records.items():
        s = suite(name, doc)
        root.append(s)
        for k in totals:
            totals[k] += int(s.get(k))
        seconds += float(s.get("time"))
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"
