"""DDL statements from ``HudiSpark`` trees: CREATE TABLE (+ CTAS, LIKE), DROP TABLE, TRUNCATE TABLE, SHOW
PARTITIONS, SHOW CREATE TABLE and the ALTER TABLE forms (Hudi's ``CreateHoodieTableCommand``,
``AlterHoodieTable*Command``s and Spark's ``AlterTableCommand``s).

Each ``build_*`` returns a statement of :mod:`.statements`, or None when the statement is Spark's (another
provider, a view, an ALTER form sqlext leaves to Spark).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from sqlext.errors import UnsupportedStatement
from sqlext.parser import statements as st
from sqlext.parser.dialect import ChangeColumn, ShowCreateTable, ShowPartitions, UnsetProperties
from sqlext.parser.source import Source, expr_sql, name_parts, table_ident
from sqlext.parser.types import InvalidType, spark_type_sql

# CREATE TABLE clauses Hudi tables do not take (sqlglot property class -> how the user wrote it).
_UNSUPPORTED_PROPERTIES: dict[type, str] = {
    exp.ClusteredByProperty: "CLUSTERED BY (bucketing)",
    exp.RowFormatDelimitedProperty: "ROW FORMAT",
    exp.RowFormatSerdeProperty: "ROW FORMAT",
    exp.Cluster: "CLUSTER BY",
}


def property_value(value: exp.Expr) -> str:
    """A property value as the string Spark stores (``TRUE`` -> ``"true"``, ``1.50`` -> ``"1.50"``)."""
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    if isinstance(value, exp.Neg):
        return "-" + property_value(value.this)
    return value.name


def properties_of(props: list[exp.Expr]) -> dict[str, str]:
    """``Property`` nodes (from OPTIONS / TBLPROPERTIES, in written order) as a dict; later keys win."""
    # An unquoted dotted key (hoodie.compact.inline = 'true') is a Dot/Column node: keep every part.
    return {".".join(name_parts(p.this)): property_value(p.args["value"]) for p in props if type(p) is exp.Property}


def column_def(src: Source, node: exp.Expr) -> st.ColumnDef:
    """A :class:`ColumnDef` from an ``exp.ColumnDef`` (name dotted for a nested field)."""
    if not isinstance(node, exp.ColumnDef) or node.args.get("kind") is None:
        raise src.error_at_node(node, f"Expected a data type after column {expr_sql(node)}")
    name = ".".join(name_parts(node.this))
    try:
        type_sql = spark_type_sql(node.args["kind"])
    except InvalidType as exc:
        raise src.error_at_node(node, str(exc)) from None
    comment: str | None = None
    nullable = True
    default_sql: str | None = None
    for constraint in node.args.get("constraints") or ():
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.NotNullColumnConstraint):
            nullable = bool(kind.args.get("allow_null"))
        elif isinstance(kind, exp.CommentColumnConstraint):
            comment = kind.this.name
        elif isinstance(kind, exp.DefaultColumnConstraint):
            default_sql = expr_sql(kind.this)
        elif isinstance(kind, (exp.ComputedColumnConstraint, exp.GeneratedAsIdentityColumnConstraint)):
            raise UnsupportedStatement(f"Generated column {name} is not supported")
    return st.ColumnDef(name, type_sql, comment, nullable, default_sql, _position(node.args.get("position")))


def _position(node: exp.Expr | None) -> str | None:
    if node is None:
        return None
    where = str(node.args.get("position") or "").upper()
    if where == "FIRST":
        return "FIRST"
    return f"AFTER {'.'.join(name_parts(node.this))}"


def _provider(props: list[exp.Expr]) -> tuple[str | None, exp.Expr | None]:
    """The USING provider (lower case) and, for ``USING hudi (SELECT ...)``, the query written right after it."""
    for prop in props:
        if isinstance(prop, exp.FileFormatProperty):
            this = prop.this
            if isinstance(this, exp.Anonymous):
                return this.name.lower(), (this.expressions[0] if this.expressions else None)
            return this.name.lower(), None
    return None, None


def build_create(src: Source, tree: exp.Create) -> st.Statement | None:
    """``CREATE TABLE`` of a Hudi table (``USING hudi``, or ``LIKE`` without ``USING``); None for any other CREATE.

    Raises:
        SqlParseError: duplicate clauses, a query missing after AS, an invalid column type.
        UnsupportedStatement: CREATE OR REPLACE / TEMPORARY, bucketing, skew, row formats, CLUSTER BY, partition
            transforms or generated columns on a Hudi table.
    """
    if str(tree.args.get("kind") or "").upper() != "TABLE":
        return None
    props = list(tree.args["properties"].expressions) if tree.args.get("properties") else []
    provider, paren_query = _provider(props)
    like = next((p for p in props if isinstance(p, exp.LikeProperty)), None)
    if provider != "hudi" and not (like is not None and provider is None):
        return None
    if tree.args.get("replace") or any(isinstance(p, exp.TemporaryProperty) for p in props):
        kind = "CREATE OR REPLACE TABLE" if tree.args.get("replace") else "CREATE TEMPORARY TABLE"
        raise UnsupportedStatement(f"{kind} is not supported for hudi tables")
    ident = table_ident(tree.this)
    if like is not None:
        return _create_like(tree, ident, props, provider, table_ident(like.this))
    columns = [column_def(src, c) for c in tree.this.expressions] if isinstance(tree.this, exp.Schema) else []
    partitioned_by: list[str] = []
    location: str | None = None
    comment: str | None = None
    properties: dict[str, str] = {}
    seen: dict[str, int] = {}
    for prop in props:
        clause = {exp.PartitionedByProperty: "PARTITIONED BY", exp.LocationProperty: "LOCATION",
                  exp.SchemaCommentProperty: "COMMENT", exp.OptionsProperty: "OPTIONS"}.get(type(prop))
        if clause is not None:
            seen[clause] = seen.get(clause, 0) + 1
            if seen[clause] > 1:
                raise src.error_at_word(clause.split()[0], f"Found duplicate clauses: {clause}", nth=seen[clause] - 1)
        if isinstance(prop, exp.PartitionedByProperty):
            partitioned_by.extend(_partition_columns(src, prop.this, columns))
        elif isinstance(prop, exp.LocationProperty):
            location = prop.this.name
        elif isinstance(prop, exp.SchemaCommentProperty):
            comment = prop.this.name
        elif isinstance(prop, exp.OptionsProperty):
            properties.update(properties_of(prop.expressions))
        elif type(prop) is exp.Property:
            properties.update(properties_of([prop]))
        elif isinstance(prop, exp.ExternalProperty):
            continue
        elif isinstance(prop, exp.FileFormatProperty):
            if prop is not next(p for p in props if isinstance(p, exp.FileFormatProperty)):
                raise UnsupportedStatement("STORED AS is not supported for hudi tables")
        elif type(prop) in _UNSUPPORTED_PROPERTIES:
            raise UnsupportedStatement(f"{_UNSUPPORTED_PROPERTIES[type(prop)]} is not supported for hudi tables")
        else:
            raise UnsupportedStatement(
                f"The clause {expr_sql(prop)!r} is not supported in CREATE TABLE of a hudi table")
    as_query = _ctas_query(src, tree, paren_query)
    return st.CreateTable(
        ident, columns=tuple(columns), if_not_exists=bool(tree.args.get("exists")), provider="hudi",
        partitioned_by=tuple(partitioned_by), location=location, properties=properties, comment=comment,
        as_query=as_query, like=None, external=any(isinstance(p, exp.ExternalProperty) for p in props))


def _ctas_query(src: Source, tree: exp.Create, paren_query: exp.Expr | None) -> str | None:
    if src.tokens[-1].token_type == TokenType.ALIAS:
        raise src.error("Expected a query after AS")
    if tree.args.get("expression") is None and paren_query is None:
        return None
    start = next((i + 1 for i, tok in src.depth0() if tok.token_type == TokenType.ALIAS), None)
    if start is None:
        start = src.query_from(2)
    if start is None or start >= len(src.tokens):
        raise src.error("Expected a query after AS")
    return src.slice(start, len(src.tokens) - 1)


def _partition_columns(src: Source, schema: exp.Expr, columns: list[st.ColumnDef]) -> list[str]:
    """PARTITIONED BY ``(col | col type, ...)``; a typed column is added to ``columns`` (Hive style)."""
    names: list[str] = []
    for item in schema.expressions if isinstance(schema, exp.Schema) else [schema]:
        if isinstance(item, exp.ColumnDef):
            columns.append(column_def(src, item))
            names.append(item.name)
        elif isinstance(item, (exp.Identifier, exp.Column)):
            names.append(item.name)
        else:
            raise UnsupportedStatement(
                f"Partition transform {expr_sql(item)} is not supported for hudi tables")
    return names


def _create_like(tree: exp.Create, ident: st.TableIdent, props: list[exp.Expr], provider: str | None,
                 source: st.TableIdent) -> st.CreateTable:
    location: str | None = None
    properties: dict[str, str] = {}
    for prop in props:
        if isinstance(prop, exp.LocationProperty):
            location = prop.this.name
        elif type(prop) is exp.Property:
            properties.update(properties_of([prop]))
        elif isinstance(prop, (exp.RowFormatDelimitedProperty, exp.RowFormatSerdeProperty)):
            raise UnsupportedStatement("ROW FORMAT clause of CREATE TABLE LIKE is not supported for hudi tables")
    return st.CreateTable(ident, if_not_exists=bool(tree.args.get("exists")), provider=provider,
                          location=location, properties=properties, like=source)


def partition_spec(src: Source, partition: exp.Expr | None) -> st.PartitionSpec:
    """A ``PARTITION (...)`` spec: ``(column, value_sql | None)`` in written order.

    Raises:
        SqlParseError: a column given twice, or an entry that is not ``col`` / ``col = constant``.
    """
    if partition is None:
        return ()
    spec: list[tuple[str, str | None]] = []
    for item in partition.expressions:
        if isinstance(item, exp.EQ) and isinstance(item.this, exp.Column):
            name, value = item.this.name, expr_sql(item.expression)
        elif isinstance(item, exp.Column):
            name, value = item.name, None
        else:
            raise src.error_at_node(item, f"Expected a partition column or column = value but found "
                                          f"{expr_sql(item)!r}")
        if any(name.lower() == n.lower() for n, _ in spec):
            raise src.error_at_node(item, f"Partition column {name} is given more than once")
        spec.append((name, value))
    return tuple(spec)


def build_drop(src: Source, tree: exp.Drop) -> st.Statement | None:
    """``DROP TABLE [IF EXISTS] t [PURGE]``; None for other DROP statements."""
    if str(tree.args.get("kind") or "").upper() != "TABLE":
        return None
    if tree.args.get("cascade"):
        raise src.error_at_word("CASCADE", "Syntax error at or near 'CASCADE'")
    return st.DropTable(table_ident(tree.args["tables"][0]), if_exists=bool(tree.args.get("exists")),
                        purge=bool(tree.args.get("purge")))


def build_truncate(src: Source, tree: exp.TruncateTable) -> st.Statement:
    """``TRUNCATE TABLE t [PARTITION (...)]``."""
    return st.TruncateTable(table_ident(tree.expressions[0]), partition_spec(src, tree.args.get("partition")))


def build_show(src: Source, tree: exp.Expr) -> st.Statement | None:
    """``SHOW PARTITIONS t [PARTITION (...)]`` and ``SHOW CREATE TABLE t`` (``AS SERDE`` is Spark's)."""
    if isinstance(tree, ShowPartitions):
        return st.ShowPartitions(table_ident(tree.this), partition_spec(src, tree.args.get("partition")))
    if isinstance(tree, ShowCreateTable) and not tree.args.get("serde"):
        return st.ShowCreateTable(table_ident(tree.this))
    return None


def build_alter(src: Source, tree: exp.Alter) -> st.Statement | None:
    """The ALTER TABLE forms with one action: RENAME TO, ADD COLUMN(S), REPLACE COLUMNS, RENAME COLUMN, DROP
    COLUMN(S), ALTER|CHANGE COLUMN, SET|UNSET TBLPROPERTIES, SET LOCATION, DROP PARTITION; None for the others
    (Spark's)."""
    if str(tree.args.get("kind") or "").upper() != "TABLE" or len(tree.args.get("actions") or []) != 1:
        return None
    ident = table_ident(tree.this)
    action = tree.args["actions"][0]
    if isinstance(action, exp.AlterRename):
        return st.RenameTable(ident, table_ident(action.this))
    if isinstance(action, exp.Schema) or isinstance(action, exp.ColumnDef):
        defs = action.expressions if isinstance(action, exp.Schema) else [action]
        return st.AddColumns(ident, tuple(column_def(src, c) for c in defs))
    if isinstance(action, exp.ReplaceColumns):
        return st.ReplaceColumns(ident, tuple(column_def(src, c) for c in action.expressions))
    if isinstance(action, exp.AlterSet):
        return _alter_set(ident, action)
    if isinstance(action, UnsetProperties):
        return st.UnsetProperties(ident, tuple(k.name for k in action.expressions), bool(action.args.get("exists")))
    if isinstance(action, exp.DropPartition):
        specs = tuple(partition_spec(src, p) for p in action.expressions)
        return st.DropPartitions(ident, specs, bool(action.args.get("exists")), bool(action.meta.get("purge")))
    if isinstance(action, exp.RenameColumn):
        return st.RenameColumn(ident, ".".join(name_parts(action.this)), action.args["to"].name)
    if isinstance(action, exp.Drop) and str(action.args.get("kind") or "").upper() == "COLUMNS":
        names = tuple(".".join(name_parts(c)) for c in action.expressions)
        return st.DropColumns(ident, names, bool(action.args.get("exists")))
    if isinstance(action, ChangeColumn):
        return _change_column(src, ident, action)
    return None


def _alter_set(ident: st.TableIdent, action: exp.AlterSet) -> st.Statement | None:
    if action.args.get("location") is not None:
        return st.SetLocation(ident, action.args["location"].name)
    props = action.expressions
    if len(props) == 1 and isinstance(props[0], exp.Properties):
        return st.SetProperties(ident, properties_of(props[0].expressions))
    return None


def _change_column(src: Source, ident: st.TableIdent, action: ChangeColumn) -> st.Statement:
    name = ".".join(name_parts(action.this))
    dtype = action.args.get("dtype")
    try:
        type_sql = spark_type_sql(dtype) if dtype is not None else None
    except InvalidType as exc:
        raise src.error_at_node(action, str(exc)) from None
    comment = action.args["comment"].name if action.args.get("comment") is not None else None
    position = _position(action.args.get("position"))
    if action.args.get("to") is not None:
        assert type_sql is not None
        return st.ChangeColumn(ident, name, st.ColumnDef(action.args["to"].name, type_sql, comment, position=position))
    nullable = action.args.get("nullable")
    return st.AlterColumn(ident, name, type_sql, comment, position,
                          None if nullable is None else bool(nullable.this))
