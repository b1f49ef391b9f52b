-- Keys with a NULL part are no identity: (NULL, 1) twice and (c, NULL) twice are not repeats.
{{ assay.key_uniqueness_violations(ref('key_repeat_input'), ['k1', 'k2']) }}
