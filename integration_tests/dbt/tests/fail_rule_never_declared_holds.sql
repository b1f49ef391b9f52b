{{ assay.fail_rule_violations(ref('it_flags'), 'never_declared', '_quality_flags') }}
