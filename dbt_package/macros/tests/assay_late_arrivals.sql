{#- Rows of an incremental entity's ledger that arrived older than its window: they sit in the
    reject table under `_late_arrival`, unjudged, until a full refresh of the ledger places them.
    Generated at severity warn, so every build says so until someone acts. -#}
{% test assay_late_arrivals(model) %}
  {{ return(adapter.dispatch('test_assay_late_arrivals', 'assay')(model)) }}
{% endtest %}

{% macro default__test_assay_late_arrivals(model) %}
select _mapping, _source_row_id, _load_id, _ingested_at
from {{ model }}
where _late
{% endmacro %}
