{{ assay.key_uniqueness_violations(ref('key_repeat_input'), ['case_id']) }}
