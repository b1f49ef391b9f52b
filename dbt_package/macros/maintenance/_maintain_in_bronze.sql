{#- SQL true for a reject row `r` whose source row its bronze source still delivers (any _load_id:
    the next build judges its latest delivery and diverts a failing one into this same row), so
    deleting the row would not last (decision 0951; generator/assay/retention.py's _in_bronze says
    the same). A bronze table that is gone holds nothing. -#}
{% macro _maintain_in_bronze(reject) %}
  {%- set text = assay.sql_type('string') -%}
  {%- set held = [] -%}
  {%- set named = run_query('select distinct source_relation from ' ~ reject ~ ' where resolved_at is null') -%}
  {%- for name in named.columns[0].values() | sort -%}
    {%- for src in graph.sources.values() | sort(attribute='unique_id') -%}
      {%- if src.package_name == project_name and src.source_name == 'bronze' and src.name == name -%}
        {%- set bronze = adapter.get_relation(database=src.database, schema=src.schema, identifier=src.identifier) -%}
        {%- if bronze is not none -%}
          {%- do held.append('(r.source_relation = ' ~ assay.string_literal(name) ~ ' and exists (select 1 from ' ~ bronze
                             ~ ' as b where cast(b._source_row_id as ' ~ text ~ ') = r._source_row_id))') -%}
        {%- endif -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(held | join(' or ') or '1 = 0') }}
{% endmacro %}
