{#- Logical type string -> {'kind': ..., 'precision': p, 'scale': s}. Raising here turns a
    typo in a spec into a compile error instead of engine-specific SQL noise. -#}
{% macro _parse_type(assay_type) %}
  {%- set t = assay_type | string | lower | replace(' ', '') -%}
  {%- if t in ['string', 'int', 'bool', 'date', 'timestamp', 'variant'] -%}
    {{ return({'kind': t}) }}
  {%- endif -%}
  {%- set m = modules.re.match('^decimal\\((\\d+),(\\d+)\\)$', t) -%}
  {%- if m and (m.group(2) | int) <= (m.group(1) | int) -%}
    {{ return({'kind': 'decimal', 'precision': m.group(1) | int, 'scale': m.group(2) | int}) }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error("assay: unknown logical type '" ~ assay_type ~ "'") }}
{% endmacro %}
