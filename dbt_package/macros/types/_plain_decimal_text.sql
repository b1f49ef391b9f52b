{#- Decimal text with an exponent written out without it (`5e-4` is `0.0005`), for DuckDB, whose
    cast of exponent text rounds by the mantissa's first digit wherever it falls: `5e-4` became
    0.01 in `decimal(6,2)` and `5e-10` 1 in `decimal(38,0)`, where PostgreSQL and Spark give 0.00
    and 0 (an outside tester, session 41; decision 1141). The plain text is cast as any decimal
    text is, rounded half away from zero at the scale. Text without an exponent is left as it is.
    `value` is SQL of text the decimal guard has accepted (sign, digits with one optional point,
    an exponent of at most three digits). The SQLMesh macros write the same expression
    (assay_sqlmesh/casts.py, plain_decimal_sql); the primitive table holds the cases. -#}
{% macro _plain_decimal_text(value) -%}
  {%- set sign = "regexp_extract(" ~ value ~ ", '^\\s*([+-]?)', 1)" -%}
  {%- set mantissa = "regexp_extract(" ~ value ~ ", '^\\s*[+-]?([0-9]*[.]?[0-9]*)', 1)" -%}
  {%- set digits = "replace(" ~ mantissa ~ ", '.', '')" -%}
  {%- set point = "(case when strpos(" ~ mantissa ~ ", '.') > 0 then strpos(" ~ mantissa ~ ", '.') - 1 else length(" ~ mantissa ~ ") end"
      ~ " + cast(regexp_extract(" ~ value ~ ", '[eE]([+-]?[0-9]+)', 1) as integer))" -%}
  {{ return("case when regexp_matches(" ~ value ~ ", '[eE]') then " ~ sign ~ " || case when " ~ point ~ " <= 0 then '0.' || repeat('0', -"
      ~ point ~ ") || " ~ digits ~ " when " ~ point ~ " >= length(" ~ digits ~ ") then " ~ digits ~ " || repeat('0', " ~ point ~ " - length("
      ~ digits ~ ")) else left(" ~ digits ~ ", " ~ point ~ ") || '.' || substr(" ~ digits ~ ", " ~ point ~ " + 1) end else " ~ value ~ " end") }}
{%- endmacro %}
