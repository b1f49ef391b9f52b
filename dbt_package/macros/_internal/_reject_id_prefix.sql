{#- What is hashed before the source row id: the relation, then `:` and the mapping when given
    (a relation two mappings of one entity read, decision 0947), then `|`. Names hold no `:` or
    `|`, so no two (relation, mapping, row) triples hash the same text. -#}
{% macro _reject_id_prefix(source_relation_literal, mapping_literal) -%}
  {{ assay.string_literal(source_relation_literal ~ (':' ~ mapping_literal if mapping_literal else '') ~ '|') }}
{%- endmacro %}
