{#
  The failure sentence of a declared check whose sentence holds measured values (`value_range`,
  `key_uniqueness`, `continuity`), as `assay checks` says it (decision 0945).

  The wording is not here: the generator renders each such check's failure sentences through
  assay.checks.detail, the functions `assay checks` uses, with a named slot where each measured
  part goes (assay.checks.frames), and writes them into the check's descriptor as
  `sentences: {frames: {case: [text, slot, text, ...]}, hidden: <the pii marker>}`. This macro
  fills the slots with the values the caller shows through _shown_value and _gap_shown, as
  assay.checks.detail.render_value shows what assay.checks.recorded.parse_value reads from the
  measured texts: text, dates and timestamps quoted (a timestamp in UTC with a `Z`), numbers exact
  without trailing zeros (bare inside a key), NULL for a missing value, the pii marker as it is.
  tests/dbt_package/test_verdict_agreement.py holds the two renderings equal.
#}
{% macro _framed_sentence(check, case, values) %}
  {%- set frame = (check.get('sentences') or {}).get('frames', {}).get(case) -%}
  {%- if frame is none -%}
    {{ return("failed (`assay checks` shows what was measured; run `assay generate dbt` again to see it here)") }}
  {%- endif -%}
  {%- set out = [] -%}
  {%- for part in frame -%}
    {%- do out.append(values[part] ~ '' if loop.index is even else part) -%}
  {%- endfor -%}
  {{ return(out | join('')) }}
{% endmacro %}
