{#- PL/pgSQL: run `sql` read-only and keep its one value in `variable`. A transaction may turn
    read-only at any point but never read-write again, so an inner block sets
    `transaction_read_only`, runs the query, and ends by raising `AS000`: catching it rolls the
    block's subtransaction back, and the setting with it, while the variable keeps its value. -#}
{% macro _read_only_into(sql, variable) -%}
      begin
        set local transaction_read_only = on;
        execute {{ assay.string_literal(sql) }} into {{ variable }};
        raise exception using errcode = 'AS000';
      exception when sqlstate 'AS000' then null;
      end;
{%- endmacro %}
