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
    me = SimpleNamespace(entity=SimpleNamespace(name="shipment"), sqlmesh=False)
    d = _delivery(route)
    return Explainer._summary(me, {"carrier": "DHL", "tracking_no": "T-7"}, None, [d], d, in_entity, rejects)


def test_a_key_never_diverted_says_0_open_reject_rows():
    assert _summary("kept", []) == ["shipment carrier='DHL', tracking_no='T-7': 1 delivery in bronze.",
                                    "It is in the entity (published). 0 open reject rows."]


def test_a_key_whose_reject_row_resolved_says_0_too():
    assert _summary("kept", [{"resolved_at": "2026-12-02"}])[1] == "It is in the entity (published). 0 open reject rows."


def _reject(srid: str = "r1", resolved_at=None) -> dict:
    return {"source_relation": "raw", "_source_row_id": srid, "resolved_at": resolved_at}


def _judged(route: str, rejects: list[dict], in_entity: bool, published=None) -> list[str]:
    me = SimpleNamespace(entity=SimpleNamespace(name="shipment", has_reject=True, scd="type1"), sqlmesh=False)
    d = _delivery(route)
    return Explainer._summary(me, {"carrier": "DHL", "tracking_no": "T-7"}, None, [d], d, in_entity, rejects,
                              published=published)


def test_a_diverted_key_counts_its_open_reject_rows():
    assert _judged("quarantined", [_reject()], in_entity=False)[1] == (
        "It is not in the entity: its judged delivery r1 was quarantined to the reject table. 1 open reject row.")


def test_a_stopped_build_is_not_told_as_published():
    """A build that judged a new delivery and then stopped (a `fail` rule, a blocking check) leaves
    the previous delivery published and its reject rows unwritten (an outside tester, session 49,
    was told the stopped build's delivery was in the entity and a quarantined one in the reject
    table)."""
    assert _judged("kept", [], in_entity=True, published=("r1", "l0"))[1] == (
        "The last build kept its delivery r1 (load l1), but the published table holds delivery r1 of load l0 "
        "(the last build was not published). 0 open reject rows.")
    assert _judged("kept", [], in_entity=True, published=("r1", "l1"))[1] == (
        "It is in the entity (published). 0 open reject rows.")
    assert _judged("quarantined", [], in_entity=True, published=("r0", "l0"))[1] == (
        "The last build did not keep it: its judged delivery r1 was quarantined; the published table still holds "
        "delivery r0 of load l0; the reject table does not hold it: the build that judged it stopped before writing it "
        "(the last build was not published). 0 open reject rows.")
    assert _judged("quarantined", [], in_entity=False)[1] == (
        "The last build did not keep it: its judged delivery r1 was quarantined; the reject table does not hold it: "
        "the build that judged it stopped before writing it (the last build was not published). 0 open reject rows.")
    assert _judged("quarantined", [_reject("r9")], in_entity=False)[1].startswith(
        "The last build did not keep it")  # another delivery's reject row is not this one's

    # bronze no longer delivers it: retention deleted its reject row after a published build (an
    # outside tester, session 49, was told that build had not been published)
    me = SimpleNamespace(entity=SimpleNamespace(name="shipment", has_reject=True, scd="type1"), sqlmesh=False)
    gone = _delivery("quarantined")
    gone.in_bronze = False
    assert Explainer._summary(me, {"carrier": "DHL", "tracking_no": "T-7"}, None, [gone], gone, False, [])[1] == (
        "It is not in the entity: its judged delivery r1 was quarantined to the reject table. 0 open reject rows.")


def _late(srid: str) -> Delivery:
    d = _delivery("quarantined")
    d.source_row_id, d.late, d.failed_rules = srid, True, ["_late_arrival"]
    return d


def test_a_late_delivery_is_said_late_not_judged():
    """A late row on an incremental entity was not ranked or judged (decision 0401): no "judged
    delivery" (decision 1129)."""
    me = SimpleNamespace(entity=SimpleNamespace(name="invoice"), sqlmesh=False)
    d = _late("i2-late")
    assert Explainer._summary(me, {"invoice_id": "INV-LATE1"}, None, [d], None, False, [{"resolved_at": None}]) == [
        "invoice invoice_id='INV-LATE1': 1 delivery in bronze.",
        "It is not in the entity: its delivery i2-late arrived late (older than the ledger's watermark), was not ranked "
        "or judged, and was quarantined as _late_arrival. 1 open reject row."]


def test_a_late_delivery_beside_a_judged_one_is_named_after_it():
    me = SimpleNamespace(entity=SimpleNamespace(name="invoice"), sqlmesh=False)
    kept, late = _delivery("kept"), _late("r9")
    assert Explainer._summary(me, {"invoice_id": "INV-1"}, None, [kept, late], kept, True, [{"resolved_at": None}])[1] == (
        "It is in the entity (published). Its delivery r9 arrived late, was not ranked or judged, and was quarantined "
        "as _late_arrival. 1 open reject row.")


def test_deliveries_bronze_no_longer_holds_are_not_counted_as_in_bronze():
    """An incremental ledger keeps deliveries bronze dropped (retention, an upserting loader that
    overwrote a source row delivered twice): explain read them from the ledger and said they were
    all in bronze (outside tester, session 33)."""
    me = SimpleNamespace(entity=SimpleNamespace(name="reading", materialized="incremental"), sqlmesh=False)
    kept, gone = _delivery("kept"), _delivery("deduped")
    gone.source_row_id, gone.in_bronze = "r0", False
    assert Explainer._summary(me, {"reading_id": "R2"}, None, [kept, gone], kept, True, [])[0] == (
        "reading reading_id='R2': 2 deliveries, 1 of them in bronze (1 the ledger kept after bronze dropped it).")
    # A table entity keeps no ledger: its staged rows are the last build's, and a load removed from
    # bronze after it stopped that build is gone (an outside tester, session 44)
    me.entity.materialized, me.entity.scd, me.sqlmesh = "table", "type1", False
    said = Explainer._summary(me, {"reading_id": "R2"}, None, [kept, gone], kept, False, [])
    assert said[0] == "reading reading_id='R2': 2 deliveries, 1 of them in bronze (1 the last build judged; bronze has dropped it since)."
    assert said[1].startswith("The last build kept it, but the published table does not hold it (the last build was not published).")


def _gone(versions: int, current: int, rejects: list[dict]) -> str:
    me = SimpleNamespace(published_name="silver.policy")
    from assay.explain_builds import gone_sentence

    return gone_sentence(me, {"versions": versions, "current": current}, rejects)


def test_a_type2_key_that_left_the_feed_names_its_closed_versions():
    # decision 0968: the history still holds the key; the build that stopped seeing it closed it (0415)
    assert _gone(2, 0, [{"resolved_at": "2026-12-02"}]) == (
        "It is not in the entity: its history silver.policy holds 2 closed versions of it and no current one "
        "(a key bronze no longer delivers has no current version: decision 0415). 0 open reject rows.")


def test_a_type2_key_not_yet_closed_says_the_next_build_closes_it():
    assert _gone(1, 1, [{"resolved_at": None}]) == (
        "Its history silver.policy holds 1 version of it, 1 still current: no build has run since bronze stopped "
        "delivering it, and the next one closes it (decision 0415). 1 open reject row.")


def test_a_type2_key_whose_newest_delivery_was_not_admitted_is_not_said_to_have_left_the_feed():
    # an outside tester (session 45): under "2 deliveries in bronze ... 1 open reject row" the history
    # sentence said bronze no longer delivers the key, and "0 open reject rows"
    me = SimpleNamespace(published_name="silver.subscriber")
    from assay.explain_builds import gone_sentence

    closed = gone_sentence(me, {"versions": 1, "current": 0}, [], delivered=True)
    assert closed == ("Its history silver.subscriber holds 1 closed version of it and no current one: a key whose "
                      "newest delivery is not admitted has its version closed (decision 0415).")
    assert "no longer delivers" not in closed and "open reject" not in closed
    lagging = gone_sentence(me, {"versions": 2, "current": 1}, [], delivered=True)
    assert "1 still current: the build that did not admit its newest delivery has not closed it yet" in lagging


def test_a_kept_key_the_published_table_lacks_is_said_as_the_target_would():
    """On SQLMesh a plan inside an interval already run publishes a type-2 entity's current rows
    and leaves its history to the next `sqlmesh run` (docs/sqlmesh.md): no failure, which the
    sentence must not claim (an outside tester, session 40). dbt and type-1 keep the plain reason."""
    from assay.explanation import unpublished_because

    def because(scd: str, sqlmesh: bool) -> str:
        return unpublished_because(SimpleNamespace(scd=scd), sqlmesh)
    assert because("type2", True).startswith("its history versions it at the next `sqlmesh run`")
    assert because("type2", False) == because("type1", True) == "the last build was not published"


def test_a_reserved_rule_name_is_no_sign_of_a_changed_spec():
    """`_late_arrival` (decision 0401) is in a late row's flags but in no spec: it must not make
    explain say the build ran another spec."""
    from assay.explanation import spec_changed

    entity = SimpleNamespace(columns=[SimpleNamespace(name="invoice_id")], rules=[SimpleNamespace(name="amount_min")])
    late = _late("i2-late")
    assert spec_changed(entity, frozenset({"invoice_id"}), [late]) is None
    late.failed_rules = ["_late_arrival", "old_rule"]
    assert "it fired old_rule, which the spec no longer declares" in spec_changed(entity, frozenset({"invoice_id"}), [late])


def test_an_incremental_entitys_referential_verdict_is_told_as_given_when_it_arrived():
    """An outside tester (session 49): after the parent arrived, explain still said the delivered key
    "matches no merchant" of a payment an incremental entity judged before; such a verdict is the
    one the delivery got when it arrived (docs/incremental.md), and explain says so."""
    from assay.explain_builds import referential_as_judged

    rules = [SimpleNamespace(name="payment_merchant_referential", kind="referential"),
             SimpleNamespace(name="amount_range_min", kind="range")]
    fired = [{"rule": "payment_merchant_referential"}, {"rule": "amount_range_min"}]
    incremental = SimpleNamespace(materialized="incremental", rules=rules)
    assert referential_as_judged(incremental, fired) == [
        "payment_merchant_referential: judged when this delivery arrived; a parent that arrived since does not change "
        "it (an incremental entity judges each delivery once): a full refresh or a re-delivery judges it again "
        "(docs/incremental.md)"]
    assert referential_as_judged(incremental, fired[1:]) == []
    assert referential_as_judged(SimpleNamespace(materialized="table", rules=rules), fired) == []  # every build judges
