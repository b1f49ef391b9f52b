-- The blocking audit of an on_fail: fail rule: the rows whose flags carry it.
select case_id from ({{ assay.fail_rule_violations(ref('it_flags'), 'amount_negative') }}) as v
