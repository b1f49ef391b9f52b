"""A deterministic many-day feed for the multiday spec (tests/fixtures/specs/multiday), seeded by an int.

`make_feed(seed)` returns the same days for the same seed on every machine (only `random.Random`
is used, never the clock). Each `Day` is one load (`_load_id` `d01`, `d02`, ...) plus what
happens to bronze around it:

- `deliveries`: rows appended to bronze. Bronze is append-only here (decision 0014): a
  re-delivery is a second row with the same `_source_row_id` in a later `_load_id`.
- `age_out`: deliveries `(relation, _source_row_id, _load_id)` deleted from bronze before the
  build (bronze retention).
- `replay`: entities on which `assay replay` runs after the deliveries and the age-out, before
  the build.
- `spec`: `v1`, or `v2` from the day the status rule is relaxed from quarantine to flag.

What the days contain, random in values and in which rows are picked, fixed in shape:

- every day: new customers and orders, a share of them dirty (failed casts, out of range
  values, unknown status or tier, a NULL order date, flag-only defects), orders referring to a
  customer delivered so far, now and then a NULL customer (not an orphan, 001);
- from day 2: at-least-once re-deliveries (same `_source_row_id`, unchanged), corrected
  re-deliveries (same `_source_row_id`, fixed), corrections under a new `_source_row_id` for the
  same order key, a stale delivery (new `_source_row_id`, an older `_ingested_at`: loses its key);
- day 1 -> 4: children of a late parent (the customer arrives on day 4, the children are still
  in bronze);
- day 1 -> 4 -> 6: children of another late parent age out of bronze on day 4 while held,
  the parent arrives on day 6 and `assay replay orders` brings them back; an orphan whose parent
  never comes is aged out, replayed (still held) and genuinely re-delivered on day 7;
- day 3: a corrupt update of a clean order and of a clean customer with children (the children
  become orphans in the same build), both fixed later; an order re-sent with a different key;
- day 4: age-out of held rows, of a clean order, of a held customer, and of superseded day-1
  deliveries (a compacting loader);
- day 5: the spec change (status `in_set` quarantine -> flag); day 6: replay of both entities;
  day 7: a second replay that finds nothing; day 8: a fixed order relapses (its reject row
  reopens), and the parent of a child replayed too early (held on day 6) finally arrives.

`Feed.story` names the source rows each scripted event touched, for hand-written spot checks.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Iterable, Optional

ORDERS = "raw_orders"
CUSTOMERS = "raw_customers"
META = ("_load_id", "_ingested_at", "_source_row_id")
COLUMNS = {
    ORDERS: META + ("id", "customer", "status", "amount", "discount", "qty", "ordered"),
    CUSTOMERS: META + ("id", "email", "tier", "name"),
}
ENTITY_OF = {ORDERS: "orders", CUSTOMERS: "customers"}
RELATIONS_OF = {"orders": (ORDERS,), "customers": (CUSTOMERS,)}
REPLAY_LOAD_ID = "__replay__"
EPOCH = dt.datetime(2026, 3, 1, 6, 0, 0)  # day 1's first instant; nothing reads the clock

DAY_LATE_PARENT = 4  # the first late parent arrives; age-out happens before this day's build
DAY_AGE_OUT = 4
DAY_SPEC_CHANGE = 5
DAY_REPLAY = 6  # the second late parent arrives; replay before the build
DAY_SECOND_REPLAY = 7
MIN_DAYS = 8


@dataclass
class Day:
    number: int
    load_id: str
    spec: str
    deliveries: list = field(default_factory=list)  # (relation, row dict)
    age_out: list = field(default_factory=list)  # (relation, _source_row_id, _load_id)
    replay: tuple = ()
    notes: list = field(default_factory=list)

    def rows(self, relation: str) -> list:
        return [r for rel, r in self.deliveries if rel == relation]

    def __repr__(self) -> str:
        return (f"Day({self.number}, {self.load_id}, spec={self.spec}, deliveries={len(self.deliveries)}, "
                f"age_out={len(self.age_out)}, replay={self.replay})")


@dataclass
class Feed:
    seed: int
    days: list
    story: dict  # label -> list of (relation, _source_row_id) or other small facts

    def srids(self, label: str) -> list:
        return [s for _rel, s in self.story.get(label, [])]


class Bronze:
    """Bronze as the feed leaves it: append-only deliveries, deletions by retention, replays."""

    def __init__(self):
        self.tables: dict = {name: [] for name in COLUMNS}

    def deliver(self, deliveries: Iterable) -> None:
        for relation, row in deliveries:
            self.tables[relation].append(dict(row))

    def delete(self, age_out: Iterable) -> int:
        gone = {tuple(x) for x in age_out}
        before = sum(len(v) for v in self.tables.values())
        for name in self.tables:
            self.tables[name] = [r for r in self.tables[name] if (name, r["_source_row_id"], r["_load_id"]) not in gone]
        return before - sum(len(v) for v in self.tables.values())

    def rows(self) -> dict:
        return {name: [dict(r) for r in rows] for name, rows in self.tables.items()}

    def as_tuples(self, relation: str) -> list:
        cols = COLUMNS[relation]
        return sorted((tuple(r.get(c) for c in cols) for r in self.tables[relation]), key=repr)

    def relations(self):
        from .corpus import Relation

        return [Relation(name, list(COLUMNS[name]), [[r.get(c) for c in COLUMNS[name]] for r in rows])
                for name, rows in self.tables.items()]


# --------------------------------------------------------------------------- values
# Only spellings whose outcome the contract pins (decision 0300): the oracle raises on the rest.

CLEAN_STATUS = ["new", "paid", "shipped", " Paid ", "NEW", "shipped "]
CLEAN_TIERS = ["G", "S", "B", " G", "gold", "silver"]
NAMES = ["ann", "bo", "cy", "dee", "eve", "fay", "gus", None]


class _Gen:
    def __init__(self, seed: int, days: int, orders_per_day: int, customers_per_day: int):
        if days < MIN_DAYS:
            raise ValueError(f"the feed's script needs at least {MIN_DAYS} days")
        self.seed = seed
        self.rng = random.Random(seed)
        self.n_days = days
        self.orders_per_day = orders_per_day
        self.customers_per_day = customers_per_day
        self.day: Optional[Day] = None
        self.latest: dict = {}  # (relation, srid) -> latest row delivered
        self.loads: dict = {}  # (relation, srid) -> [load ids, in delivery order]
        self.dirty: dict = {}  # (relation, srid) -> defect of the latest delivery, or None
        self.reserved: set = set()  # (relation, srid) the script owns: random events leave them alone
        self.aged: set = set()  # (relation, srid) that left bronze: never re-delivered by chance
        self.free_customers: list = []  # keys of customers random orders may refer to
        self.story: dict = {}
        self.n_orders = 0
        self.n_customers = 0
        self.n_srid = 0

    # -- identities and times
    def _srid(self, prefix: str) -> str:
        self.n_srid += 1
        return f"{prefix}{self.n_srid:04d}"

    def _at(self, day: int, minute: Optional[int] = None) -> str:
        minute = self.rng.randint(0, 8 * 60) if minute is None else minute
        instant = EPOCH + dt.timedelta(days=day - 1, minutes=minute)
        if self.rng.random() < 0.15:  # the same instant spelled with an offset (decision 0302)
            return (instant + dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S") + "+02:00"
        return instant.strftime("%Y-%m-%dT%H:%M:%SZ")

    def _spell_key(self, key: str) -> str:
        return self.rng.choice([key, key, key.lower(), f" {key} "])

    def _story(self, label: str, relation: str, srid: str) -> None:
        self.story.setdefault(label, []).append((relation, srid))

    # -- rows
    def _emit(self, relation: str, row: dict, defect: Optional[str], at: Optional[str] = None) -> dict:
        assert self.day is not None
        row = dict(row)
        row["_load_id"] = self.day.load_id
        row["_ingested_at"] = at or self._at(self.day.number)
        ident = (relation, row["_source_row_id"])
        assert self.day.load_id not in self.loads.get(ident, []), f"{ident} twice in one load"
        self.day.deliveries.append((relation, row))
        self.latest[ident] = row
        self.loads.setdefault(ident, []).append(self.day.load_id)
        self.dirty[ident] = defect
        return row

    def customer_row(self, key: str, srid: str, defect: Optional[str] = None) -> tuple:
        n = int(key.split("-")[1])
        row = {
            "_source_row_id": srid,
            "id": self._spell_key(key),
            "email": self.rng.choice([f"c{n}@shop.io", f" C{n}@Shop.io ", f"c.{n}@mail.example"]),
            "tier": self.rng.choice(CLEAN_TIERS),
            "name": self.rng.choice(NAMES),
        }
        if defect is None and self.rng.random() < 0.2:
            defect = self.rng.choice(["email", "tier", "long_name", "dup_email"])
        if defect == "email":
            row["email"] = self.rng.choice(["no email", "x@@y", ""])
        elif defect == "tier":
            row["tier"] = self.rng.choice(["X", "platinum"])
        elif defect == "long_name":
            row["name"] = "bartholomew-" + self.rng.choice("abc")  # length max 10: flag
        elif defect == "dup_email":
            row["email"] = "shared@shop.io"  # unique: flag
        return row, (defect if defect in ("email", "tier") else None)

    def new_customer(self, key: Optional[str] = None, defect: Optional[str] = None, free: bool = True,
                     clean: bool = False) -> tuple:
        if key is None:
            self.n_customers += 1
            key = f"C-{self.n_customers:03d}"
        srid = self._srid("cu")
        row, hard = self.customer_row(key, srid, "none" if clean else defect)
        self._emit(CUSTOMERS, row, hard)
        if free:
            self.free_customers.append(key)
        else:
            self.reserved.add((CUSTOMERS, srid))
        return key, srid

    def order_row(self, key: str, srid: str, customer: Optional[str], defect: Optional[str] = None) -> tuple:
        amount = f"{self.rng.randint(5, 400)}.{self.rng.randint(0, 99):02d}"
        row = {
            "_source_row_id": srid,
            "id": self.rng.choice([key, key, f" {key}"]),
            "customer": None if customer is None else self._spell_key(customer),
            "status": self.rng.choice(CLEAN_STATUS),
            "amount": amount,
            "discount": self.rng.choice(["0.00", "1.50", "5.00", None]),
            "qty": str(self.rng.randint(1, 9)),
            "ordered": f"2025-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}",
        }
        if defect is None and self.rng.random() < 0.35:
            defect = self.rng.choice([
                "amount_cast", "amount_negative", "status", "qty_sane", "date_null", "date_cast",  # hold the row
                "amount_big", "qty_zero", "date_old", "discount",  # flag only
            ])
        if defect == "amount_cast":
            row["amount"] = self.rng.choice(["12,50", "abc", "1.2.3"])
        elif defect == "amount_negative":
            row["amount"] = "-3.00"
            row["discount"] = None
        elif defect == "status":
            row["status"] = self.rng.choice(["lost", " Lost "])
        elif defect == "qty_sane":
            row["qty"] = "75"
        elif defect == "date_null":
            row["ordered"] = None
        elif defect == "date_cast":
            row["ordered"] = self.rng.choice(["2025-02-30", "20250101"])
        elif defect == "amount_big":
            row["amount"] = "7200.00"
        elif defect == "qty_zero":
            row["qty"] = "0"
        elif defect == "date_old":
            row["ordered"] = "2019-11-11"
        elif defect == "discount":
            row["discount"] = "9999.00"
        hard = defect if defect in ("amount_cast", "amount_negative", "status", "qty_sane", "date_null", "date_cast") else None
        return row, hard

    def new_order(self, customer="random", defect: Optional[str] = None, reserve: Optional[str] = None,
                  key: Optional[str] = None, at: Optional[str] = None) -> tuple:
        if key is None:
            self.n_orders += 1
            key = f"O-{self.n_orders:04d}"
        if customer == "random":
            customer = self.rng.choice(self.free_customers) if self.free_customers and self.rng.random() > 0.06 else None
        srid = self._srid("or")
        row, hard = self.order_row(key, srid, customer, defect)
        self._emit(ORDERS, row, hard, at=at)
        if reserve:
            self.reserved.add((ORDERS, srid))
            self._story(reserve, ORDERS, srid)
        return key, srid

    def order_key(self, srid: str) -> str:
        return self.latest[(ORDERS, srid)]["id"].strip()

    # -- picking rows for random events
    def _free(self, relation: str, hard: Optional[bool] = None) -> list:
        out = []
        for (rel, srid), row in self.latest.items():
            ident = (rel, srid)
            if rel != relation or ident in self.reserved or ident in self.aged:
                continue
            if self.day.load_id in self.loads[ident]:
                continue
            if hard is True and not self.dirty[ident]:
                continue
            if hard is False and self.dirty[ident]:
                continue
            out.append(srid)
        return sorted(out)

    def _pick(self, pool: list, k: int) -> list:
        return self.rng.sample(pool, min(k, len(pool)))

    def redeliver(self, relation: str, srid: str, changes: Optional[dict] = None, defect="keep", at: Optional[str] = None) -> dict:
        ident = (relation, srid)
        row = {k: v for k, v in self.latest[ident].items() if k not in ("_load_id", "_ingested_at")}
        row.update(changes or {})
        return self._emit(relation, row, self.dirty[ident] if defect == "keep" else defect, at=at)

    def fixed_order_values(self, srid: str) -> dict:
        """The values a corrected re-send carries: the latest row with every defect mended."""
        key = self.order_key(srid)
        customer = self.latest[(ORDERS, srid)]["customer"]
        clean, _ = self.order_row(key, srid, None, defect="none")
        return {c: clean[c] for c in ("status", "amount", "discount", "qty", "ordered")} | {"customer": customer}

    # -- one day
    def routine(self) -> None:
        d = self.day
        for _ in range(self.customers_per_day):
            self.new_customer()
        for _ in range(self.orders_per_day):
            self.new_order()
        if d.number == 1:
            return
        # at-least-once: a few rows delivered again, unchanged
        for srid in self._pick(self._free(ORDERS), 3):
            self.redeliver(ORDERS, srid)
            d.notes.append(f"unchanged re-delivery {srid}")
        for srid in self._pick(self._free(CUSTOMERS), 1):
            self.redeliver(CUSTOMERS, srid)
            d.notes.append(f"unchanged re-delivery {srid}")
        # corrected re-sends of held rows, same _source_row_id
        for srid in self._pick(self._free(ORDERS, hard=True), 2):
            self.redeliver(ORDERS, srid, self.fixed_order_values(srid), defect=None)
            d.notes.append(f"corrected re-delivery {srid}")
        for srid in self._pick(self._free(CUSTOMERS, hard=True), 1):
            key = self.latest[(CUSTOMERS, srid)]["id"].strip().upper()
            row, _ = self.customer_row(key, srid, "none")
            self.redeliver(CUSTOMERS, srid, {c: row[c] for c in ("email", "tier", "name")}, defect=None)
            d.notes.append(f"corrected re-delivery {srid}")
        # a correction under a new _source_row_id for the same order key
        for srid in self._pick(self._free(ORDERS, hard=True), 1):
            key = self.order_key(srid)
            _k, new = self.new_order(customer=self.latest[(ORDERS, srid)]["customer"], defect="none", key=key)
            self.reserved.add((ORDERS, srid))  # the old source row is left as it is from now on
            self._story("corrected_under_new_srid", ORDERS, srid)
            d.notes.append(f"correction of {srid} as {new}")

    def script(self) -> None:
        d, n = self.day, self.day.number
        if n == 1:
            # customers the script owns
            self.late1 = "C-901"
            self.late2 = "C-902"
            self.never = "C-999"
            self.fixed_key, self.fixed_srid = self.new_customer(key="C-801", defect="email", free=False)
            self._story("customer_fixed_same_srid", CUSTOMERS, self.fixed_srid)
            self.corrupt_key, self.corrupt_srid = self.new_customer(key="C-802", free=False, clean=True)
            self._story("customer_corrupted", CUSTOMERS, self.corrupt_srid)
            self.held_key, self.held_srid = self.new_customer(key="C-803", defect="tier", free=False)
            self._story("customer_held_aged_replayed", CUSTOMERS, self.held_srid)
            self.anchor_key, _s = self.new_customer(key="C-804", free=False, clean=True)
            for _ in range(2):
                self.new_order(customer=self.late1, defect="none", reserve="children_late_parent_in_bronze")
                self.new_order(customer=self.late2, defect="none", reserve="children_late_parent_aged")
                self.new_order(customer=self.fixed_key, defect="none", reserve="children_of_fixed_customer")
                self.new_order(customer=self.corrupt_key, defect="none", reserve="children_of_corrupted_customer")
                self.new_order(customer=self.anchor_key, defect="status", reserve="status_held_aged")
            self.new_order(customer=self.never, defect="none", reserve="orphan_forever")
            self.new_order(customer="C-903", defect="none", reserve="replayed_before_parent")
            self.new_order(customer=self.anchor_key, defect="status", reserve="status_held_in_bronze")
            self.new_order(customer=self.anchor_key, defect="none", reserve="clean_aged")
            self.new_order(customer=None, defect="none", reserve="null_customer")
            self.new_order(customer=self.anchor_key, defect="none", reserve="corrupted_order")
            self.new_order(customer=self.anchor_key, defect="none", reserve="key_changed")
            self.new_order(customer=self.anchor_key, defect="none", reserve="stale_target")
        elif n == 2:
            row, _ = self.customer_row(self.fixed_key, self.fixed_srid, "none")
            self.redeliver(CUSTOMERS, self.fixed_srid, {c: row[c] for c in ("email", "tier", "name")}, defect=None)
            d.notes.append("customer C-801 corrected under its own _source_row_id: its children are admitted")
            # a stale delivery: a new source row for an existing key, ingested before the incumbent
            target = self.story["stale_target"][0][1]
            key = self.order_key(target)
            _k, srid = self.new_order(customer=self.anchor_key, defect="none", key=key, reserve="stale_delivery",
                                      at=(EPOCH - dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))
            d.notes.append(f"stale delivery {srid} for {key}: older than the incumbent, it loses the key")
        elif n == 3:
            srid = self.story["corrupted_order"][0][1]
            self.redeliver(ORDERS, srid, {"amount": "abc"}, defect="amount_cast")
            d.notes.append(f"corrupt update of the clean order {srid}")
            self.redeliver(CUSTOMERS, self.corrupt_srid, {"email": "broken at shop"}, defect="email")
            d.notes.append("corrupt update of customer C-802: its children become orphans")
            srid = self.story["key_changed"][0][1]
            old = self.order_key(srid)
            self.n_orders += 1
            new = f"O-{self.n_orders:04d}"
            self.redeliver(ORDERS, srid, {"id": new})
            self.story["key_changed_keys"] = [(old, new)]
            d.notes.append(f"order {srid} re-sent under a new key {new} (was {old})")
        elif n == DAY_AGE_OUT:
            doomed = [(ORDERS, s) for label in ("children_late_parent_aged", "orphan_forever", "status_held_aged", "clean_aged",
                                                "replayed_before_parent")
                      for _r, s in self.story[label]] + [(CUSTOMERS, self.held_srid)]
            for ident in doomed:
                assert len(self.loads[ident]) == 1 and ident in self.reserved
                d.age_out += [(ident[0], ident[1], load) for load in self.loads[ident]]
                self.aged.add(ident)
            # a compacting loader drops superseded deliveries of day 1
            for ident, loads in sorted(self.loads.items()):
                if len(loads) > 1 and loads[0] == "d01" and ident not in self.aged:
                    d.age_out.append((ident[0], ident[1], "d01"))
                    self._story("superseded_aged", *ident)
            d.notes.append(f"{len(d.age_out)} deliveries age out of bronze before the build")
            self.new_customer(key=self.late1, free=False, clean=True)
            d.notes.append("late parent C-901 arrives: its children, still in bronze, are admitted")
            row, _ = self.customer_row(self.corrupt_key, self.corrupt_srid, "none")
            self.redeliver(CUSTOMERS, self.corrupt_srid, {c: row[c] for c in ("email", "tier", "name")}, defect=None)
            d.notes.append("customer C-802 fixed: its children come back")
        elif n == DAY_SPEC_CHANGE:
            d.notes.append("spec v2: status_in_set relaxed from quarantine to flag")
        elif n == DAY_REPLAY:
            self.new_customer(key=self.late2, free=False, clean=True)
            d.replay = ("customers", "orders")
            d.notes.append("late parent C-902 arrives; replay re-delivers the aged-out held rows of both entities")
            srid = self.story["corrupted_order"][0][1]
            self.redeliver(ORDERS, srid, self.fixed_order_values(srid), defect=None)
            d.notes.append(f"the corrupted order {srid} is fixed")
        elif n == DAY_SECOND_REPLAY:
            orphan = self.story["orphan_forever"][0][1]
            self.redeliver(ORDERS, orphan)
            came_back = self.story["children_late_parent_aged"][0][1]
            self.redeliver(ORDERS, came_back)
            self._story("redelivered_after_replay", ORDERS, orphan)
            self._story("redelivered_after_replay", ORDERS, came_back)
            d.replay = ("orders",)
            d.notes.append("genuine re-deliveries of two replayed rows; a second replay finds nothing")
        elif n == 8:
            srid = self.story["corrupted_order"][0][1]
            self.redeliver(ORDERS, srid, {"qty": "75"}, defect="qty_sane")
            d.notes.append(f"the fixed order {srid} relapses: its reject row reopens")
            self.new_customer(key="C-903", free=False, clean=True)
            d.notes.append("late parent C-903 arrives after its child was replayed (and held): the child, back in "
                           "bronze since the replay, is admitted without another replay")

    def run(self) -> Feed:
        days = []
        for n in range(1, self.n_days + 1):
            self.day = Day(n, f"d{n:02d}", "v2" if n >= DAY_SPEC_CHANGE else "v1")
            self.script()
            self.routine()
            days.append(self.day)
        return Feed(self.seed, days, self.story)


def make_feed(seed: int, days: int = MIN_DAYS, orders_per_day: int = 10, customers_per_day: int = 3) -> Feed:
    """The feed for `seed`: the same days, rows and events on every run."""
    return _Gen(seed, days, orders_per_day, customers_per_day).run()
