"""Words that cannot stand as a bare column name on at least one engine assay targets.

Generated once from DuckDB's `duckdb_keywords()` (reserved, type_function and column_name
categories) and PostgreSQL's reserved key words; a column with one of these names is quoted.
"""

RESERVED_WORDS = frozenset(
    """
    all analyse analyze and anti any array as asc asof asymmetric at authorization between
    bigint binary bit boolean both by case cast char character check coalesce collate collation
    column columns concurrently constraint create cross current_catalog current_date
    current_role current_schema current_time current_timestamp current_user date day dec decimal
    default deferrable desc describe distinct do else end except exists extract false fetch
    float for foreign freeze from full generated glob grant greatest group grouping grouping_id
    having hour ilike in initially inner inout int integer intersect interval into is isnull
    join key lambda lateral leading least left like limit localtime localtimestamp map minute
    month national natural nchar none normalize not notnull null nullif numeric offset on only
    or order out outer over overlaps overlay partition pivot pivot_longer pivot_wider placing
    position positional precision primary qualify range real references returning right row rows
    second select semi session_user setof show similar smallint some struct substring summarize
    symmetric system_user table tablesample then time timestamp to trailing treat trim true
    try_cast union unique unpack unpivot user using value values varchar variadic verbose when
    where window with xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces
    xmlparse xmlpi xmlroot xmlserialize xmltable year
    """.split()
)
