"""The only package that imports pyspark: executor functions (``mapInArrow`` / ``applyInArrow`` over file
groups), the driver side of writes, and the ``hudi`` Python data source."""
