-- What the generic test assay_ingestion_metadata finds in the dirty bronze, row by row.
{{ assay.test_assay_ingestion_metadata(ref('bronze_dirty')) }}
