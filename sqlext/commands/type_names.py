"""Spark types as Scala's ``toString`` prints them (``IntegerType``, ``DecimalType(10,2)``), the spelling Hudi's
error messages use; shared by the INSERT and MERGE commands."""

from __future__ import annotations

from pyspark.sql.types import ArrayType, DataType, DecimalType, MapType, StructField, StructType


def scala_type_name(dtype: DataType) -> str:
    """Scala's ``DataType.toString`` (``IntegerType``, ``DecimalType(10,2)``, ``ArrayType(StringType,true)``),
    as Hudi's messages print types."""
    if isinstance(dtype, ArrayType):
        return f"ArrayType({scala_type_name(dtype.elementType)},{str(dtype.containsNull).lower()})"
    if isinstance(dtype, MapType):
        return (f"MapType({scala_type_name(dtype.keyType)},{scala_type_name(dtype.valueType)},"
                f"{str(dtype.valueContainsNull).lower()})")
    if isinstance(dtype, StructType):
        return f"StructType({','.join(scala_field(f) for f in dtype.fields)})"
    if isinstance(dtype, DecimalType):
        return f"DecimalType({dtype.precision},{dtype.scale})"
    text = repr(dtype)
    return text[:-2] if text.endswith("()") else text


def scala_field(f: StructField) -> str:
    """Scala's ``StructField.toString``: ``StructField(name,IntegerType,true)``."""
    return f"StructField({f.name},{scala_type_name(f.dataType)},{str(f.nullable).lower()})"
