{#- strftime directives understood off DuckDB, as [regex, field]. Variable-width numbers
    accept one or two digits like strptime does, except next to another number where that
    would be ambiguous ('%Y%m%d'). Year 0 is refused as in ISO 8601 text (it exists on DuckDB
    only); these are DuckDB's too for a portable format (decision 0961). -#}
{% macro _strftime_directives() %}
  {{ return({
    'Y': ['([1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])', '([1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])', 'year'],
    'y': ['([0-9]{2})', '([0-9]{2})', 'year2'],
    'm': ['(0?[1-9]|1[0-2])', '(0[1-9]|1[0-2])', 'month'],
    'b': ['([A-Za-z]{3})', '([A-Za-z]{3})', 'month_abbr'],
    'B': ['([A-Za-z]{3,9})', '([A-Za-z]{3,9})', 'month_name'],
    'd': ['(0?[1-9]|[12][0-9]|3[01])', '(0[1-9]|[12][0-9]|3[01])', 'day'],
    'H': ['([01]?[0-9]|2[0-3])', '([01][0-9]|2[0-3])', 'hour'],
    'M': ['([0-5]?[0-9])', '([0-5][0-9])', 'minute'],
    'S': ['([0-5]?[0-9])', '([0-5][0-9])', 'second'],
    'f': ['([0-9]{1,6})', '([0-9]{1,6})', 'fraction'],
  }) }}
{% endmacro %}
