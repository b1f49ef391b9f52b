select
  cast('42' as {{ assay.sql_type('int') }}) as as_int,
  cast('12.34' as {{ assay.sql_type('decimal(10, 2)') }}) as as_decimal,
  cast('2025-12-31' as {{ assay.sql_type('date') }}) as as_date,
  cast('2025-12-31 10:00:00' as {{ assay.sql_type('timestamp') }}) as as_timestamp,
  cast('true' as {{ assay.sql_type('bool') }}) as as_bool,
  cast('x' as {{ assay.sql_type('string') }}) as as_string,
  cast('{"a": 1}' as {{ assay.sql_type('variant') }}) is not null as variant_ok
