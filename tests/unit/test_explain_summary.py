"""`assay explain`'s first lines (docs/operating.md): the second line always ends with the number
of open reject rows, 0 included, whether or not the key was ever diverted (an outside tester saw
`explain shipment DHL T-7` leave it out where `explain carrier UPS` said it)."""

from __future__ import annotations

from types import SimpleNamespace

from assay.explain import Delivery, Explainer


def _delivery(route: str) -> Delivery:
    return Delivery(mapping="m", source_relation="raw", source_row_id="r1", load_id="l1", ingested_at="2026-12-01",
                    route=route, dedupe_rank=1, superseded=False, values={}, failed_rules=[])


def _summary(route: str, rejects: list[dict], in_entity: bool = True) -> list[str]:
    me = SimpleNamespace(entity=SimpleNamespace(name="shipment"))
    d = _delivery(route)
    return Explainer._summary(me, {"carrier": "DHL", "tracking_no": "T-7"}, None, [d], d, in_entity, rejects)


def test_a_key_never_diverted_says_0_open_reject_rows():
    assert _summary("kept", []) == ["shipment carrier='DHL', tracking_no='T-7': 1 delivery in bronze.",
                                    "It is in the entity (published). 0 open reject rows."]


def test_a_key_whose_reject_row_resolved_says_0_too():
    assert _summary("kept", [{"resolved_at": "2026-12-02"}])[1] == "It is in the entity (published). 0 open reject rows."


def test_a_diverted_key_counts_its_open_reject_rows():
    assert _summary("quarantined", [{"resolved_at": None}], in_entity=False)[1] == (
        "It is not in the entity: its judged delivery r1 was quarantined to the reject table. 1 open reject row.")
